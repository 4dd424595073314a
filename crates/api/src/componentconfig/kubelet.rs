//! `KubeletConfiguration` (`kubelet.config.k8s.io/v1beta1`) as on the wire, every field, and the
//! values kubeadm sets on top of it (upstream `componentconfigs/kubelet.go`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::logging::{LoggingConfiguration, Quantity, TracingConfiguration, go_float};
use crate::duration::Duration;
use crate::omitempty::{is_false, is_zero_i32, is_zero_i64};
use crate::v1beta3::Taint;

/// `kubelet.config.k8s.io/v1beta1`.
pub const KUBELET_API_VERSION: &str = "kubelet.config.k8s.io/v1beta1";

/// `KubeletConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletConfiguration {
    /// The API version, set when written.
    #[serde(rename = "apiVersion", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The kind, set when written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `enableServer`.
    #[serde(rename = "enableServer", skip_serializing_if = "Option::is_none")]
    pub enable_server: Option<bool>,
    /// `staticPodPath`.
    #[serde(rename = "staticPodPath", skip_serializing_if = "String::is_empty")]
    pub static_pod_path: String,
    /// `syncFrequency`.
    #[serde(rename = "syncFrequency")]
    pub sync_frequency: Duration,
    /// `fileCheckFrequency`.
    #[serde(rename = "fileCheckFrequency")]
    pub file_check_frequency: Duration,
    /// `httpCheckFrequency`.
    #[serde(rename = "httpCheckFrequency")]
    pub http_check_frequency: Duration,
    /// `staticPodURL`.
    #[serde(rename = "staticPodURL", skip_serializing_if = "String::is_empty")]
    pub static_pod_url: String,
    /// `staticPodURLHeader`.
    #[serde(rename = "staticPodURLHeader", skip_serializing_if = "BTreeMap::is_empty")]
    pub static_pod_url_header: BTreeMap<String, Vec<String>>,
    /// `address`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub address: String,
    /// `port`.
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub port: i32,
    /// `readOnlyPort`.
    #[serde(rename = "readOnlyPort", skip_serializing_if = "is_zero_i32")]
    pub read_only_port: i32,
    /// `tlsCertFile`.
    #[serde(rename = "tlsCertFile", skip_serializing_if = "String::is_empty")]
    pub tls_cert_file: String,
    /// `tlsPrivateKeyFile`.
    #[serde(rename = "tlsPrivateKeyFile", skip_serializing_if = "String::is_empty")]
    pub tls_private_key_file: String,
    /// `tlsCipherSuites`.
    #[serde(rename = "tlsCipherSuites", skip_serializing_if = "Vec::is_empty")]
    pub tls_cipher_suites: Vec<String>,
    /// `tlsMinVersion`.
    #[serde(rename = "tlsMinVersion", skip_serializing_if = "String::is_empty")]
    pub tls_min_version: String,
    /// `rotateCertificates`.
    #[serde(rename = "rotateCertificates", skip_serializing_if = "is_false")]
    pub rotate_certificates: bool,
    /// `serverTLSBootstrap`.
    #[serde(rename = "serverTLSBootstrap", skip_serializing_if = "is_false")]
    pub server_tls_bootstrap: bool,
    /// `authentication`.
    pub authentication: KubeletAuthentication,
    /// `authorization`.
    pub authorization: KubeletAuthorization,
    /// `registryPullQPS`.
    #[serde(rename = "registryPullQPS", skip_serializing_if = "Option::is_none")]
    pub registry_pull_qps: Option<i32>,
    /// `registryBurst`.
    #[serde(rename = "registryBurst", skip_serializing_if = "is_zero_i32")]
    pub registry_burst: i32,
    /// `eventRecordQPS`.
    #[serde(rename = "eventRecordQPS", skip_serializing_if = "Option::is_none")]
    pub event_record_qps: Option<i32>,
    /// `eventBurst`.
    #[serde(rename = "eventBurst", skip_serializing_if = "is_zero_i32")]
    pub event_burst: i32,
    /// `enableDebuggingHandlers`.
    #[serde(rename = "enableDebuggingHandlers", skip_serializing_if = "Option::is_none")]
    pub enable_debugging_handlers: Option<bool>,
    /// `enableContentionProfiling`.
    #[serde(rename = "enableContentionProfiling", skip_serializing_if = "is_false")]
    pub enable_contention_profiling: bool,
    /// `healthzPort`.
    #[serde(rename = "healthzPort", skip_serializing_if = "Option::is_none")]
    pub healthz_port: Option<i32>,
    /// `healthzBindAddress`.
    #[serde(rename = "healthzBindAddress", skip_serializing_if = "String::is_empty")]
    pub healthz_bind_address: String,
    /// `oomScoreAdj`.
    #[serde(rename = "oomScoreAdj", skip_serializing_if = "Option::is_none")]
    pub oom_score_adj: Option<i32>,
    /// `clusterDomain`.
    #[serde(rename = "clusterDomain", skip_serializing_if = "String::is_empty")]
    pub cluster_domain: String,
    /// `clusterDNS`.
    #[serde(rename = "clusterDNS", skip_serializing_if = "Vec::is_empty")]
    pub cluster_dns: Vec<String>,
    /// `streamingConnectionIdleTimeout`.
    #[serde(rename = "streamingConnectionIdleTimeout")]
    pub streaming_connection_idle_timeout: Duration,
    /// `nodeStatusUpdateFrequency`.
    #[serde(rename = "nodeStatusUpdateFrequency")]
    pub node_status_update_frequency: Duration,
    /// `nodeStatusReportFrequency`.
    #[serde(rename = "nodeStatusReportFrequency")]
    pub node_status_report_frequency: Duration,
    /// `nodeLeaseDurationSeconds`.
    #[serde(rename = "nodeLeaseDurationSeconds", skip_serializing_if = "is_zero_i32")]
    pub node_lease_duration_seconds: i32,
    /// `imageMinimumGCAge`.
    #[serde(rename = "imageMinimumGCAge")]
    pub image_minimum_gc_age: Duration,
    /// `imageGCHighThresholdPercent`.
    #[serde(
        rename = "imageGCHighThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i32>,
    /// `imageGCLowThresholdPercent`.
    #[serde(
        rename = "imageGCLowThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i32>,
    /// `volumeStatsAggPeriod`.
    #[serde(rename = "volumeStatsAggPeriod")]
    pub volume_stats_agg_period: Duration,
    /// `kubeletCgroups`.
    #[serde(rename = "kubeletCgroups", skip_serializing_if = "String::is_empty")]
    pub kubelet_cgroups: String,
    /// `systemCgroups`.
    #[serde(rename = "systemCgroups", skip_serializing_if = "String::is_empty")]
    pub system_cgroups: String,
    /// `cgroupRoot`.
    #[serde(rename = "cgroupRoot", skip_serializing_if = "String::is_empty")]
    pub cgroup_root: String,
    /// `cgroupsPerQOS`.
    #[serde(rename = "cgroupsPerQOS", skip_serializing_if = "Option::is_none")]
    pub cgroups_per_qos: Option<bool>,
    /// `cgroupDriver`.
    #[serde(rename = "cgroupDriver", skip_serializing_if = "String::is_empty")]
    pub cgroup_driver: String,
    /// `cpuManagerPolicy`.
    #[serde(rename = "cpuManagerPolicy", skip_serializing_if = "String::is_empty")]
    pub cpu_manager_policy: String,
    /// `cpuManagerPolicyOptions`.
    #[serde(
        rename = "cpuManagerPolicyOptions",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub cpu_manager_policy_options: BTreeMap<String, String>,
    /// `cpuManagerReconcilePeriod`.
    #[serde(rename = "cpuManagerReconcilePeriod")]
    pub cpu_manager_reconcile_period: Duration,
    /// `memoryManagerPolicy`.
    #[serde(rename = "memoryManagerPolicy", skip_serializing_if = "String::is_empty")]
    pub memory_manager_policy: String,
    /// `topologyManagerPolicy`.
    #[serde(rename = "topologyManagerPolicy", skip_serializing_if = "String::is_empty")]
    pub topology_manager_policy: String,
    /// `topologyManagerScope`.
    #[serde(rename = "topologyManagerScope", skip_serializing_if = "String::is_empty")]
    pub topology_manager_scope: String,
    /// `qosReserved`.
    #[serde(rename = "qosReserved", skip_serializing_if = "BTreeMap::is_empty")]
    pub qos_reserved: BTreeMap<String, String>,
    /// `runtimeRequestTimeout`.
    #[serde(rename = "runtimeRequestTimeout")]
    pub runtime_request_timeout: Duration,
    /// `hairpinMode`.
    #[serde(rename = "hairpinMode", skip_serializing_if = "String::is_empty")]
    pub hairpin_mode: String,
    /// `maxPods`.
    #[serde(rename = "maxPods", skip_serializing_if = "is_zero_i32")]
    pub max_pods: i32,
    /// `podCIDR`.
    #[serde(rename = "podCIDR", skip_serializing_if = "String::is_empty")]
    pub pod_cidr: String,
    /// `podPidsLimit`.
    #[serde(rename = "podPidsLimit", skip_serializing_if = "Option::is_none")]
    pub pod_pids_limit: Option<i64>,
    /// `resolvConf`.
    #[serde(rename = "resolvConf", skip_serializing_if = "Option::is_none")]
    pub resolver_config: Option<String>,
    /// `runOnce`.
    #[serde(rename = "runOnce", skip_serializing_if = "is_false")]
    pub run_once: bool,
    /// `cpuCFSQuota`.
    #[serde(rename = "cpuCFSQuota", skip_serializing_if = "Option::is_none")]
    pub cpu_cfs_quota: Option<bool>,
    /// `cpuCFSQuotaPeriod`.
    #[serde(rename = "cpuCFSQuotaPeriod", skip_serializing_if = "Option::is_none")]
    pub cpu_cfs_quota_period: Option<Duration>,
    /// `nodeStatusMaxImages`.
    #[serde(rename = "nodeStatusMaxImages", skip_serializing_if = "Option::is_none")]
    pub node_status_max_images: Option<i32>,
    /// `maxOpenFiles`.
    #[serde(rename = "maxOpenFiles", skip_serializing_if = "is_zero_i64")]
    pub max_open_files: i64,
    /// `contentType`.
    #[serde(rename = "contentType", skip_serializing_if = "String::is_empty")]
    pub content_type: String,
    /// `kubeAPIQPS`.
    #[serde(rename = "kubeAPIQPS", skip_serializing_if = "Option::is_none")]
    pub kube_api_qps: Option<i32>,
    /// `kubeAPIBurst`.
    #[serde(rename = "kubeAPIBurst", skip_serializing_if = "is_zero_i32")]
    pub kube_api_burst: i32,
    /// `serializeImagePulls`.
    #[serde(rename = "serializeImagePulls", skip_serializing_if = "Option::is_none")]
    pub serialize_image_pulls: Option<bool>,
    /// `evictionHard`.
    #[serde(rename = "evictionHard", skip_serializing_if = "BTreeMap::is_empty")]
    pub eviction_hard: BTreeMap<String, String>,
    /// `evictionSoft`.
    #[serde(rename = "evictionSoft", skip_serializing_if = "BTreeMap::is_empty")]
    pub eviction_soft: BTreeMap<String, String>,
    /// `evictionSoftGracePeriod`.
    #[serde(
        rename = "evictionSoftGracePeriod",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub eviction_soft_grace_period: BTreeMap<String, String>,
    /// `evictionPressureTransitionPeriod`.
    #[serde(rename = "evictionPressureTransitionPeriod")]
    pub eviction_pressure_transition_period: Duration,
    /// `evictionMaxPodGracePeriod`.
    #[serde(rename = "evictionMaxPodGracePeriod", skip_serializing_if = "is_zero_i32")]
    pub eviction_max_pod_grace_period: i32,
    /// `evictionMinimumReclaim`.
    #[serde(rename = "evictionMinimumReclaim", skip_serializing_if = "BTreeMap::is_empty")]
    pub eviction_minimum_reclaim: BTreeMap<String, String>,
    /// `podsPerCore`.
    #[serde(rename = "podsPerCore", skip_serializing_if = "is_zero_i32")]
    pub pods_per_core: i32,
    /// `enableControllerAttachDetach`.
    #[serde(
        rename = "enableControllerAttachDetach",
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_controller_attach_detach: Option<bool>,
    /// `protectKernelDefaults`.
    #[serde(rename = "protectKernelDefaults", skip_serializing_if = "is_false")]
    pub protect_kernel_defaults: bool,
    /// `makeIPTablesUtilChains`.
    #[serde(rename = "makeIPTablesUtilChains", skip_serializing_if = "Option::is_none")]
    pub make_iptables_util_chains: Option<bool>,
    /// `iptablesMasqueradeBit`.
    #[serde(rename = "iptablesMasqueradeBit", skip_serializing_if = "Option::is_none")]
    pub iptables_masquerade_bit: Option<i32>,
    /// `iptablesDropBit`.
    #[serde(rename = "iptablesDropBit", skip_serializing_if = "Option::is_none")]
    pub iptables_drop_bit: Option<i32>,
    /// `featureGates`.
    #[serde(rename = "featureGates", skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// `failSwapOn`.
    #[serde(rename = "failSwapOn", skip_serializing_if = "Option::is_none")]
    pub fail_swap_on: Option<bool>,
    /// `memorySwap`.
    #[serde(rename = "memorySwap")]
    pub memory_swap: MemorySwapConfiguration,
    /// `containerLogMaxSize`.
    #[serde(rename = "containerLogMaxSize", skip_serializing_if = "String::is_empty")]
    pub container_log_max_size: String,
    /// `containerLogMaxFiles`.
    #[serde(rename = "containerLogMaxFiles", skip_serializing_if = "Option::is_none")]
    pub container_log_max_files: Option<i32>,
    /// `configMapAndSecretChangeDetectionStrategy`.
    #[serde(
        rename = "configMapAndSecretChangeDetectionStrategy",
        skip_serializing_if = "String::is_empty"
    )]
    pub config_map_and_secret_change_detection_strategy: String,
    /// `systemReserved`.
    #[serde(rename = "systemReserved", skip_serializing_if = "BTreeMap::is_empty")]
    pub system_reserved: BTreeMap<String, String>,
    /// `kubeReserved`.
    #[serde(rename = "kubeReserved", skip_serializing_if = "BTreeMap::is_empty")]
    pub kube_reserved: BTreeMap<String, String>,
    /// `reservedSystemCPUs`.
    #[serde(rename = "reservedSystemCPUs", skip_serializing_if = "String::is_empty")]
    pub reserved_system_cpus: String,
    /// `showHiddenMetricsForVersion`.
    #[serde(
        rename = "showHiddenMetricsForVersion",
        skip_serializing_if = "String::is_empty"
    )]
    pub show_hidden_metrics_for_version: String,
    /// `systemReservedCgroup`.
    #[serde(rename = "systemReservedCgroup", skip_serializing_if = "String::is_empty")]
    pub system_reserved_cgroup: String,
    /// `kubeReservedCgroup`.
    #[serde(rename = "kubeReservedCgroup", skip_serializing_if = "String::is_empty")]
    pub kube_reserved_cgroup: String,
    /// `enforceNodeAllocatable`.
    #[serde(rename = "enforceNodeAllocatable", skip_serializing_if = "Vec::is_empty")]
    pub enforce_node_allocatable: Vec<String>,
    /// `allowedUnsafeSysctls`.
    #[serde(rename = "allowedUnsafeSysctls", skip_serializing_if = "Vec::is_empty")]
    pub allowed_unsafe_sysctls: Vec<String>,
    /// `volumePluginDir`.
    #[serde(rename = "volumePluginDir", skip_serializing_if = "String::is_empty")]
    pub volume_plugin_dir: String,
    /// `providerID`.
    #[serde(rename = "providerID", skip_serializing_if = "String::is_empty")]
    pub provider_id: String,
    /// `kernelMemcgNotification`.
    #[serde(rename = "kernelMemcgNotification", skip_serializing_if = "is_false")]
    pub kernel_memcg_notification: bool,
    /// `logging`.
    pub logging: LoggingConfiguration,
    /// `enableSystemLogHandler`.
    #[serde(rename = "enableSystemLogHandler", skip_serializing_if = "Option::is_none")]
    pub enable_system_log_handler: Option<bool>,
    /// `shutdownGracePeriod`.
    #[serde(rename = "shutdownGracePeriod")]
    pub shutdown_grace_period: Duration,
    /// `shutdownGracePeriodCriticalPods`.
    #[serde(rename = "shutdownGracePeriodCriticalPods")]
    pub shutdown_grace_period_critical_pods: Duration,
    /// `shutdownGracePeriodByPodPriority`.
    #[serde(
        rename = "shutdownGracePeriodByPodPriority",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub shutdown_grace_period_by_pod_priority: Vec<ShutdownGracePeriodByPodPriority>,
    /// `reservedMemory`.
    #[serde(rename = "reservedMemory", skip_serializing_if = "Vec::is_empty")]
    pub reserved_memory: Vec<MemoryReservation>,
    /// `enableProfilingHandler`.
    #[serde(rename = "enableProfilingHandler", skip_serializing_if = "Option::is_none")]
    pub enable_profiling_handler: Option<bool>,
    /// `enableDebugFlagsHandler`.
    #[serde(rename = "enableDebugFlagsHandler", skip_serializing_if = "Option::is_none")]
    pub enable_debug_flags_handler: Option<bool>,
    /// `seccompDefault`.
    #[serde(rename = "seccompDefault", skip_serializing_if = "Option::is_none")]
    pub seccomp_default: Option<bool>,
    /// `memoryThrottlingFactor`.
    #[serde(
        rename = "memoryThrottlingFactor",
        skip_serializing_if = "Option::is_none",
        serialize_with = "go_float::option"
    )]
    pub memory_throttling_factor: Option<f64>,
    /// `registerWithTaints`.
    #[serde(rename = "registerWithTaints", skip_serializing_if = "Vec::is_empty")]
    pub register_with_taints: Vec<Taint>,
    /// `registerNode`.
    #[serde(rename = "registerNode", skip_serializing_if = "Option::is_none")]
    pub register_node: Option<bool>,
    /// `tracing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracing: Option<TracingConfiguration>,
    /// `localStorageCapacityIsolation`.
    #[serde(
        rename = "localStorageCapacityIsolation",
        skip_serializing_if = "Option::is_none"
    )]
    pub local_storage_capacity_isolation: Option<bool>,
}

/// `KubeletAuthentication`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletAuthentication {
    /// `x509`.
    pub x509: KubeletX509Authentication,
    /// `webhook`.
    pub webhook: KubeletWebhookAuthentication,
    /// `anonymous`.
    pub anonymous: KubeletAnonymousAuthentication,
}

/// `KubeletX509Authentication`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletX509Authentication {
    /// `clientCAFile`.
    #[serde(rename = "clientCAFile", skip_serializing_if = "String::is_empty")]
    pub client_ca_file: String,
}

/// `KubeletWebhookAuthentication`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletWebhookAuthentication {
    /// `enabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `cacheTTL`.
    #[serde(rename = "cacheTTL")]
    pub cache_ttl: Duration,
}

/// `KubeletAnonymousAuthentication`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletAnonymousAuthentication {
    /// `enabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `KubeletAuthorization`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletAuthorization {
    /// `mode`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mode: String,
    /// `webhook`.
    pub webhook: KubeletWebhookAuthorization,
}

/// `KubeletWebhookAuthorization`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KubeletWebhookAuthorization {
    /// `cacheAuthorizedTTL`.
    #[serde(rename = "cacheAuthorizedTTL")]
    pub cache_authorized_ttl: Duration,
    /// `cacheUnauthorizedTTL`.
    #[serde(rename = "cacheUnauthorizedTTL")]
    pub cache_unauthorized_ttl: Duration,
}

/// `MemorySwapConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemorySwapConfiguration {
    /// `swapBehavior`.
    #[serde(rename = "swapBehavior", skip_serializing_if = "String::is_empty")]
    pub swap_behavior: String,
}

/// `ShutdownGracePeriodByPodPriority`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShutdownGracePeriodByPodPriority {
    /// `priority`.
    pub priority: i32,
    /// `shutdownGracePeriodSeconds`.
    #[serde(rename = "shutdownGracePeriodSeconds")]
    pub shutdown_grace_period_seconds: i64,
}

/// `MemoryReservation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryReservation {
    /// `numaNode`.
    #[serde(rename = "numaNode")]
    pub numa_node: i32,
    /// `limits`.
    pub limits: Option<BTreeMap<String, Quantity>>,
}

/// The recommended value of a field differs from what the user set; upstream's warning text.
pub(crate) fn recommended(kind: &str, param: &str, default: &str, user: &str) -> String {
    format!("The recommended value for {param:?} in {kind:?} is: {default}; the provided value is: {user}")
}

/// The cluster DNS service IP: the 10th address of the first service subnet (upstream `GetDNSIP`).
pub fn dns_ip(service_subnets: &str) -> Option<std::net::IpAddr> {
    let first = service_subnets.split(',').next()?;
    let (ip, bits) = first.split_once('/')?;
    let ip: std::net::IpAddr = ip.parse().ok()?;
    let bits: u32 = bits.parse().ok()?;
    match ip {
        std::net::IpAddr::V4(v4) if bits <= 32 => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            let size = 1u64 << (32 - bits);
            (size > 10).then(|| std::net::IpAddr::from(std::net::Ipv4Addr::from((u32::from(v4) & mask) + 10)))
        }
        std::net::IpAddr::V6(v6) if bits <= 128 => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            let big = bits < 124;
            (big || (1u128 << (128 - bits)) > 10)
                .then(|| std::net::IpAddr::from(std::net::Ipv6Addr::from((u128::from(v6) & mask) + 10)))
        }
        _ => None,
    }
}

/// What kubeadm sets on a kubelet configuration (upstream `kubeletConfig.Default`); returns warnings
/// for values the user set that differ from kubeadm's recommendation.
pub fn default_kubelet(
    kc: &mut KubeletConfiguration,
    cluster: &crate::v1beta3::ClusterConfiguration,
    systemd_resolved_active: bool,
) -> Vec<String> {
    const KIND: &str = "KubeletConfiguration";
    let mut warnings = Vec::new();
    let manifests = crate::defaults::DEFAULT_MANIFESTS_DIR;
    if kc.static_pod_path.is_empty() {
        kc.static_pod_path = manifests.to_string();
    } else if kc.static_pod_path != manifests {
        warnings.push(recommended(KIND, "staticPodPath", manifests, &kc.static_pod_path));
    }
    let cluster_dns = dns_ip(&cluster.networking.service_subnet)
        .map(crate::dynamic::go_ip_string)
        .unwrap_or_else(|| crate::defaults::DEFAULT_CLUSTER_DNS_IP.to_string());
    if kc.cluster_dns.is_empty() {
        kc.cluster_dns = vec![cluster_dns];
    } else if kc.cluster_dns != [cluster_dns.clone()] {
        warnings.push(recommended(
            KIND,
            "clusterDNS",
            &format!("[{cluster_dns}]"),
            &format!("[{}]", kc.cluster_dns.join(" ")),
        ));
    }
    let domain = &cluster.networking.dns_domain;
    if kc.cluster_domain.is_empty() {
        kc.cluster_domain = domain.clone();
    } else if !domain.is_empty() && &kc.cluster_domain != domain {
        warnings.push(recommended(KIND, "clusterDomain", domain, &kc.cluster_domain));
    }
    let ca = format!("{}/ca.crt", cluster.certificates_dir.trim_end_matches('/'));
    let x509 = &mut kc.authentication.x509;
    if x509.client_ca_file.is_empty() {
        x509.client_ca_file = ca;
    } else if x509.client_ca_file != ca {
        warnings.push(recommended(
            KIND,
            "authentication.x509.clientCAFile",
            &ca,
            &x509.client_ca_file,
        ));
    }
    match kc.authentication.anonymous.enabled {
        None => kc.authentication.anonymous.enabled = Some(false),
        Some(true) => warnings.push(recommended(
            KIND,
            "authentication.anonymous.enabled",
            "false",
            "true",
        )),
        Some(false) => {}
    }
    if kc.authorization.mode.is_empty() {
        kc.authorization.mode = "Webhook".to_string();
    } else if kc.authorization.mode != "Webhook" {
        warnings.push(recommended(
            KIND,
            "authorization.mode",
            "Webhook",
            &kc.authorization.mode,
        ));
    }
    match kc.authentication.webhook.enabled {
        None => kc.authentication.webhook.enabled = Some(true),
        Some(false) => warnings.push(recommended(
            KIND,
            "authentication.webhook.enabled",
            "true",
            "false",
        )),
        Some(true) => {}
    }
    if kc.healthz_bind_address.is_empty() {
        kc.healthz_bind_address = "127.0.0.1".to_string();
    } else if kc.healthz_bind_address != "127.0.0.1" {
        warnings.push(recommended(
            KIND,
            "healthzBindAddress",
            "127.0.0.1",
            &kc.healthz_bind_address,
        ));
    }
    match kc.healthz_port {
        None => kc.healthz_port = Some(10248),
        Some(p) if p != 10248 => warnings.push(recommended(KIND, "healthzPort", "10248", &p.to_string())),
        Some(_) => {}
    }
    if kc.read_only_port != 0 {
        warnings.push(recommended(
            KIND,
            "readOnlyPort",
            "0",
            &kc.read_only_port.to_string(),
        ));
    }
    kc.rotate_certificates = true;
    if kc.cgroup_driver.is_empty() {
        kc.cgroup_driver = "systemd".to_string();
    }
    if systemd_resolved_active {
        const RESOLV: &str = "/run/systemd/resolve/resolv.conf";
        match &kc.resolver_config {
            None => kc.resolver_config = Some(RESOLV.to_string()),
            Some(r) if r != RESOLV => warnings.push(recommended(KIND, "resolvConf", RESOLV, r)),
            Some(_) => {}
        }
    }
    warnings
}
