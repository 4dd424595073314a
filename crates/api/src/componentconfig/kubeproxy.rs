//! `KubeProxyConfiguration` (`kubeproxy.config.k8s.io/v1alpha1`) as on the wire, every field, and
//! the values kubeadm sets on top of it (upstream `componentconfigs/kubeproxy.go`).
//!
//! Unlike the kubelet's, most of these fields have no `omitempty`, so zero values are written out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::logging::go_float;
use crate::duration::Duration;

/// `kubeproxy.config.k8s.io/v1alpha1`.
pub const KUBE_PROXY_API_VERSION: &str = "kubeproxy.config.k8s.io/v1alpha1";

/// `KubeProxyConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeProxyConfiguration {
    /// The API version, set when written.
    #[serde(rename = "apiVersion", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The kind, set when written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `featureGates`.
    #[serde(rename = "featureGates", skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// `bindAddress`.
    #[serde(rename = "bindAddress")]
    pub bind_address: String,
    /// `healthzBindAddress`.
    #[serde(rename = "healthzBindAddress")]
    pub healthz_bind_address: String,
    /// `metricsBindAddress`.
    #[serde(rename = "metricsBindAddress")]
    pub metrics_bind_address: String,
    /// `bindAddressHardFail`.
    #[serde(rename = "bindAddressHardFail")]
    pub bind_address_hard_fail: bool,
    /// `enableProfiling`.
    #[serde(rename = "enableProfiling")]
    pub enable_profiling: bool,
    /// `clusterCIDR`.
    #[serde(rename = "clusterCIDR")]
    pub cluster_cidr: String,
    /// `hostnameOverride`.
    #[serde(rename = "hostnameOverride")]
    pub hostname_override: String,
    /// `clientConnection`.
    #[serde(rename = "clientConnection")]
    pub client_connection: ClientConnectionConfiguration,
    /// `iptables`.
    #[serde(rename = "iptables")]
    pub iptables: KubeProxyIPTablesConfiguration,
    /// `ipvs`.
    pub ipvs: KubeProxyIPVSConfiguration,
    /// `oomScoreAdj`.
    #[serde(rename = "oomScoreAdj")]
    pub oom_score_adj: Option<i32>,
    /// `mode`.
    pub mode: String,
    /// `portRange`.
    #[serde(rename = "portRange")]
    pub port_range: String,
    /// `udpIdleTimeout`.
    #[serde(rename = "udpIdleTimeout")]
    pub udp_idle_timeout: Duration,
    /// `conntrack`.
    pub conntrack: KubeProxyConntrackConfiguration,
    /// `configSyncPeriod`.
    #[serde(rename = "configSyncPeriod")]
    pub config_sync_period: Duration,
    /// `nodePortAddresses`.
    #[serde(rename = "nodePortAddresses")]
    pub node_port_addresses: Option<Vec<String>>,
    /// `winkernel`.
    pub winkernel: KubeProxyWinkernelConfiguration,
    /// `showHiddenMetricsForVersion`.
    #[serde(rename = "showHiddenMetricsForVersion")]
    pub show_hidden_metrics_for_version: String,
    /// `detectLocalMode`.
    #[serde(rename = "detectLocalMode")]
    pub detect_local_mode: String,
    /// `detectLocal`.
    #[serde(rename = "detectLocal")]
    pub detect_local: DetectLocalConfiguration,
}

/// `KubeProxyIPTablesConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeProxyIPTablesConfiguration {
    /// `masqueradeBit`.
    #[serde(rename = "masqueradeBit")]
    pub masquerade_bit: Option<i32>,
    /// `masqueradeAll`.
    #[serde(rename = "masqueradeAll")]
    pub masquerade_all: bool,
    /// `syncPeriod`.
    #[serde(rename = "syncPeriod")]
    pub sync_period: Duration,
    /// `minSyncPeriod`.
    #[serde(rename = "minSyncPeriod")]
    pub min_sync_period: Duration,
}

/// `KubeProxyIPVSConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeProxyIPVSConfiguration {
    /// `syncPeriod`.
    #[serde(rename = "syncPeriod")]
    pub sync_period: Duration,
    /// `minSyncPeriod`.
    #[serde(rename = "minSyncPeriod")]
    pub min_sync_period: Duration,
    /// `scheduler`.
    pub scheduler: String,
    /// `excludeCIDRs`.
    #[serde(rename = "excludeCIDRs")]
    pub exclude_cidrs: Option<Vec<String>>,
    /// `strictARP`.
    #[serde(rename = "strictARP")]
    pub strict_arp: bool,
    /// `tcpTimeout`.
    #[serde(rename = "tcpTimeout")]
    pub tcp_timeout: Duration,
    /// `tcpFinTimeout`.
    #[serde(rename = "tcpFinTimeout")]
    pub tcp_fin_timeout: Duration,
    /// `udpTimeout`.
    #[serde(rename = "udpTimeout")]
    pub udp_timeout: Duration,
}

/// `KubeProxyConntrackConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeProxyConntrackConfiguration {
    /// `maxPerCore`.
    #[serde(rename = "maxPerCore")]
    pub max_per_core: Option<i32>,
    /// `min`.
    pub min: Option<i32>,
    /// `tcpEstablishedTimeout`.
    #[serde(rename = "tcpEstablishedTimeout")]
    pub tcp_established_timeout: Option<Duration>,
    /// `tcpCloseWaitTimeout`.
    #[serde(rename = "tcpCloseWaitTimeout")]
    pub tcp_close_wait_timeout: Option<Duration>,
}

/// `KubeProxyWinkernelConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeProxyWinkernelConfiguration {
    /// `networkName`.
    #[serde(rename = "networkName")]
    pub network_name: String,
    /// `sourceVip`.
    #[serde(rename = "sourceVip")]
    pub source_vip: String,
    /// `enableDSR`.
    #[serde(rename = "enableDSR")]
    pub enable_dsr: bool,
    /// `rootHnsEndpointName`.
    #[serde(rename = "rootHnsEndpointName")]
    pub root_hns_endpoint_name: String,
    /// `forwardHealthCheckVip`.
    #[serde(rename = "forwardHealthCheckVip")]
    pub forward_health_check_vip: bool,
}

/// `DetectLocalConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DetectLocalConfiguration {
    /// `bridgeInterface`.
    #[serde(rename = "bridgeInterface")]
    pub bridge_interface: String,
    /// `interfaceNamePrefix`.
    #[serde(rename = "interfaceNamePrefix")]
    pub interface_name_prefix: String,
}

/// `ClientConnectionConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientConnectionConfiguration {
    /// `kubeconfig`.
    pub kubeconfig: String,
    /// `acceptContentTypes`.
    #[serde(rename = "acceptContentTypes")]
    pub accept_content_types: String,
    /// `contentType`.
    #[serde(rename = "contentType")]
    pub content_type: String,
    /// `qps`.
    #[serde(serialize_with = "go_float::plain")]
    pub qps: f64,
    /// `burst`.
    pub burst: i32,
}

/// What kubeadm sets on a kube-proxy configuration (upstream `kubeProxyConfig.Default`); returns
/// warnings for values the user set that differ from kubeadm's recommendation.
pub fn default_kube_proxy(
    kp: &mut KubeProxyConfiguration,
    cluster: &crate::v1beta3::ClusterConfiguration,
    local: &crate::v1beta3::ApiEndpoint,
) -> Vec<String> {
    use super::kubelet::recommended;
    const KIND: &str = "KubeProxyConfiguration";
    let mut warnings = Vec::new();
    let is_v4 = match crate::dynamic::parse_ip_sloppy(&local.advertise_address) {
        Some(std::net::IpAddr::V4(_)) => true,
        Some(std::net::IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_some(),
        None => false,
    };
    let bind = if is_v4 { "0.0.0.0" } else { "::" };
    if kp.bind_address.is_empty() {
        kp.bind_address = bind.to_string();
    } else if kp.bind_address != bind {
        warnings.push(recommended(KIND, "bindAddress", bind, &kp.bind_address));
    }
    let pods = &cluster.networking.pod_subnet;
    if kp.cluster_cidr.is_empty() && !pods.is_empty() {
        kp.cluster_cidr = pods.clone();
    } else if !pods.is_empty() && &kp.cluster_cidr != pods {
        warnings.push(recommended(KIND, "clusterCIDR", pods, &kp.cluster_cidr));
    }
    const KUBECONFIG: &str = "/var/lib/kube-proxy/kubeconfig.conf";
    let cc = &mut kp.client_connection;
    if cc.kubeconfig.is_empty() {
        cc.kubeconfig = KUBECONFIG.to_string();
    } else if cc.kubeconfig != KUBECONFIG {
        warnings.push(recommended(
            KIND,
            "clientConnection.kubeconfig",
            KUBECONFIG,
            &cc.kubeconfig,
        ));
    }
    warnings
}
