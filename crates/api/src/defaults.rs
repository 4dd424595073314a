//! Static defaults of `kubeadm.k8s.io/v1beta3` (upstream's `SetDefaults_*`): values filled in when a
//! field is empty, with no look at the host. Dynamic, host-dependent defaults live in `dynamic`.

use crate::duration::Duration;
use crate::v1beta3::{
    ApiEndpoint, BootstrapToken, ClusterConfiguration, Discovery, InitConfiguration, JoinConfiguration,
    LocalEtcd, NodeRegistrationOptions,
};

/// `cluster.local`.
pub const DEFAULT_SERVICE_DNS_DOMAIN: &str = "cluster.local";
/// `10.96.0.0/12`.
pub const DEFAULT_SERVICES_SUBNET: &str = "10.96.0.0/12";
/// `10.96.0.10`, the cluster DNS service IP for the default service subnet.
pub const DEFAULT_CLUSTER_DNS_IP: &str = "10.96.0.10";
/// The version label used when none is configured.
pub const DEFAULT_KUBERNETES_VERSION: &str = "stable-1";
/// The API server's default secure port.
pub const DEFAULT_API_BIND_PORT: i32 = 6443;
/// `/etc/kubernetes/pki`.
pub const DEFAULT_CERTIFICATES_DIR: &str = "/etc/kubernetes/pki";
/// The default image registry.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "registry.k8s.io";
/// Registry of CI builds (`ci/...` versions).
pub const DEFAULT_CI_IMAGE_REPOSITORY: &str = "gcr.io/k8s-staging-ci-images";
/// `/etc/kubernetes/manifests`.
pub const DEFAULT_MANIFESTS_DIR: &str = "/etc/kubernetes/manifests";
/// `kubernetes`.
pub const DEFAULT_CLUSTER_NAME: &str = "kubernetes";
/// `/var/lib/etcd`.
pub const DEFAULT_ETCD_DATA_DIR: &str = "/var/lib/etcd";
/// `/etc/kubernetes/pki/ca.crt`.
pub const DEFAULT_CA_CERT_PATH: &str = "/etc/kubernetes/pki/ca.crt";
/// `IfNotPresent`.
pub const DEFAULT_IMAGE_PULL_POLICY: &str = "IfNotPresent";
/// The containerd socket, kubeadm's default CRI endpoint on Linux.
pub const DEFAULT_CRI_SOCKET: &str = "unix:///var/run/containerd/containerd.sock";
/// The CRI endpoints kubeadm looks for, in order.
pub const KNOWN_CRI_SOCKETS: [&str; 3] = [
    "unix:///var/run/containerd/containerd.sock",
    "unix:///var/run/crio/crio.sock",
    "unix:///var/run/cri-dockerd.sock",
];
/// Group bootstrap tokens authenticate as by default.
pub const DEFAULT_TOKEN_GROUP: &str = "system:bootstrappers:kubeadm:default-node-token";
/// What a bootstrap token may be used for by default.
pub const DEFAULT_TOKEN_USAGES: [&str; 2] = ["signing", "authentication"];

/// 5 minutes: the default discovery timeout.
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_mins(5);
/// 4 minutes: how long to wait for the control plane by default.
pub const DEFAULT_CONTROL_PLANE_TIMEOUT: Duration = Duration::from_mins(4);
/// 24 hours: a bootstrap token's default lifetime.
pub const DEFAULT_TOKEN_DURATION: Duration = Duration::from_hours(24);

/// Fills the empty fields of an `InitConfiguration`.
pub fn default_init_configuration(cfg: &mut InitConfiguration) {
    if cfg.bootstrap_tokens.is_empty() {
        cfg.bootstrap_tokens = vec![BootstrapToken::default()];
    }
    for bt in &mut cfg.bootstrap_tokens {
        default_bootstrap_token(bt);
    }
    default_api_endpoint(&mut cfg.local_api_endpoint);
    default_node_registration(&mut cfg.node_registration);
}

/// Fills the empty fields of a `ClusterConfiguration`.
pub fn default_cluster_configuration(cfg: &mut ClusterConfiguration) {
    fill(&mut cfg.kubernetes_version, DEFAULT_KUBERNETES_VERSION);
    fill(&mut cfg.networking.service_subnet, DEFAULT_SERVICES_SUBNET);
    fill(&mut cfg.networking.dns_domain, DEFAULT_SERVICE_DNS_DOMAIN);
    fill(&mut cfg.certificates_dir, DEFAULT_CERTIFICATES_DIR);
    fill(&mut cfg.image_repository, DEFAULT_IMAGE_REPOSITORY);
    fill(&mut cfg.cluster_name, DEFAULT_CLUSTER_NAME);
    if cfg.etcd.external.is_none() && cfg.etcd.local.is_none() {
        cfg.etcd.local = Some(LocalEtcd::default());
    }
    if let Some(local) = &mut cfg.etcd.local {
        fill(&mut local.data_dir, DEFAULT_ETCD_DATA_DIR);
    }
    cfg.api_server
        .timeout_for_control_plane
        .get_or_insert(DEFAULT_CONTROL_PLANE_TIMEOUT);
}

/// Fills the empty fields of a `JoinConfiguration`.
pub fn default_join_configuration(cfg: &mut JoinConfiguration) {
    fill(&mut cfg.ca_cert_path, DEFAULT_CA_CERT_PATH);
    if let Some(cp) = &mut cfg.control_plane {
        default_api_endpoint(&mut cp.local_api_endpoint);
    }
    default_discovery(&mut cfg.discovery);
    default_node_registration(&mut cfg.node_registration);
}

fn default_discovery(d: &mut Discovery) {
    if d.tls_bootstrap_token.is_empty()
        && let Some(bt) = &d.bootstrap_token
    {
        d.tls_bootstrap_token = bt.token.clone();
    }
    d.timeout.get_or_insert(DEFAULT_DISCOVERY_TIMEOUT);
    if let Some(file) = &mut d.file {
        // A `file://` URL names a local path; upstream keeps only the URL's path.
        if let Some(rest) = file.kube_config_path.strip_prefix("file://") {
            let path = match rest.find('/') {
                Some(i) => &rest[i..],
                None => "",
            };
            let path = path.split(['?', '#']).next().unwrap_or_default();
            file.kube_config_path = path.to_string();
        }
    }
}

/// Fills a bootstrap token's TTL, usages and groups.
pub fn default_bootstrap_token(bt: &mut BootstrapToken) {
    bt.ttl.get_or_insert(DEFAULT_TOKEN_DURATION);
    if bt.usages.is_empty() {
        bt.usages = DEFAULT_TOKEN_USAGES.iter().map(|s| s.to_string()).collect();
    }
    if bt.groups.is_empty() {
        bt.groups = vec![DEFAULT_TOKEN_GROUP.to_string()];
    }
}

fn default_api_endpoint(ep: &mut ApiEndpoint) {
    if ep.bind_port == 0 {
        ep.bind_port = DEFAULT_API_BIND_PORT;
    }
}

fn default_node_registration(nr: &mut NodeRegistrationOptions) {
    fill(&mut nr.image_pull_policy, DEFAULT_IMAGE_PULL_POLICY);
}

fn fill(field: &mut String, default: &str) {
    if field.is_empty() {
        *field = default.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1beta3::{BootstrapTokenDiscovery, FileDiscovery};

    #[test]
    fn file_discovery_urls_become_paths() {
        let cases = [
            (
                "file:///etc/kubernetes/discovery.conf",
                "/etc/kubernetes/discovery.conf",
            ),
            ("/etc/kubernetes/discovery.conf", "/etc/kubernetes/discovery.conf"),
            (
                "https://example.test/cluster-info.yaml",
                "https://example.test/cluster-info.yaml",
            ),
            ("file://host/a/b", "/a/b"),
        ];
        for (input, want) in cases {
            let mut d = Discovery {
                file: Some(FileDiscovery {
                    kube_config_path: input.to_string(),
                }),
                ..Discovery::default()
            };
            default_discovery(&mut d);
            assert_eq!(
                d.file.map(|f| f.kube_config_path).as_deref(),
                Some(want),
                "{input}"
            );
        }
    }

    #[test]
    fn tls_bootstrap_token_follows_discovery_token() {
        let mut d = Discovery {
            bootstrap_token: Some(BootstrapTokenDiscovery {
                token: "abcdef.0123456789abcdef".into(),
                ..BootstrapTokenDiscovery::default()
            }),
            ..Discovery::default()
        };
        default_discovery(&mut d);
        assert_eq!(d.tls_bootstrap_token, "abcdef.0123456789abcdef");
        assert_eq!(d.timeout, Some(Duration::from_mins(5)));
    }
}
