//! The checks `kubeadm join` runs on a worker node before discovery (upstream's
//! `RunJoinNodeChecks`): the root check alone first, then the kubelet's kubeconfig files and the
//! cluster CA must not exist yet, the checks shared with `init`, the proxy check for the API server
//! address of token discovery, and the IPv6 sysctls when that address is IPv6.

use kubeadm_api::v1beta3::JoinConfiguration;
use kubeadm_core::layout::KUBERNETES_DIR;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::host_probe::HostProbe;

use super::{
    BRIDGE_NF6, Check, IPV6_DEFAULT_FORWARDING, IgnoreSet, PreflightRun, common_checks, file_content,
    root_then_node_checks,
};

/// The checks of `RunJoinNodeChecks` after the root check, in upstream's order.
pub fn join_node_checks(cfg: &JoinConfiguration) -> Vec<Check> {
    let file = |path: String| Check::FileAvailable { path, label: None };
    let mut checks = vec![
        file(format!("{KUBERNETES_DIR}/kubelet.conf")),
        file(format!("{KUBERNETES_DIR}/bootstrap-kubelet.conf")),
    ];
    // The kubelet version is not compared with a control plane version on join.
    checks.extend(common_checks("", &cfg.node_registration.name));
    if cfg.control_plane.is_none() {
        checks.push(file(cfg.ca_cert_path.clone()));
    }
    let mut ipv6 = false;
    if let Some(bt) = &cfg.discovery.bootstrap_token
        && let Some(host) = split_host(&bt.api_server_endpoint)
    {
        checks.push(Check::HttpProxy {
            proto: "https".into(),
            host: host.clone(),
        });
        ipv6 = kubeadm_api::dynamic::parse_ip_sloppy(&host).is_some_and(|ip| ip.is_ipv6());
    }
    if ipv6 {
        checks.push(file_content(BRIDGE_NF6));
        checks.push(file_content(IPV6_DEFAULT_FORWARDING));
    }
    checks
}

/// Go's `net.SplitHostPort`, host only: `host:port` or `[host]:port`; `None` when the endpoint has
/// no port or is malformed.
fn split_host(endpoint: &str) -> Option<String> {
    if let Some(rest) = endpoint.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return (!port.contains(':') && !port.contains('[') && !port.contains(']')).then(|| host.to_string());
    }
    let (host, port) = endpoint.rsplit_once(':')?;
    if host.contains(':') || host.contains('[') || host.contains(']') || port.contains(']') {
        return None;
    }
    Some(host.to_string())
}

/// Upstream's join `preflight` checks: the root check alone (stopping at its error), then the join
/// node checks. `run.error` set means the phase fails with it (exit code 2 in the CLI).
pub fn run_join_preflight(
    cfg: &JoinConfiguration,
    ignore: &IgnoreSet,
    host: &dyn HostProbe,
    runtime: &dyn Runtime,
) -> PreflightRun {
    root_then_node_checks(&join_node_checks(cfg), ignore, host, runtime)
}

#[cfg(test)]
mod tests {
    use kubeadm_api::v1beta3::{BootstrapTokenDiscovery, Discovery, JoinControlPlane};

    use super::*;

    fn names(cfg: &JoinConfiguration) -> Vec<String> {
        join_node_checks(cfg).iter().map(Check::name).collect()
    }

    fn with_endpoint(endpoint: &str) -> JoinConfiguration {
        JoinConfiguration {
            ca_cert_path: kubeadm_api::defaults::DEFAULT_CA_CERT_PATH.into(),
            discovery: Discovery {
                bootstrap_token: Some(BootstrapTokenDiscovery {
                    api_server_endpoint: endpoint.into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The names upstream's `RunJoinNodeChecks` produces (they are what `--ignore-preflight-errors`
    /// takes): read from upstream's checks.go for a worker with token discovery.
    #[test]
    fn worker_checks_in_upstream_order() {
        let n = names(&with_endpoint("10.0.0.1:6443"));
        assert_eq!(
            n[..2],
            [
                "FileAvailable--etc-kubernetes-kubelet.conf",
                "FileAvailable--etc-kubernetes-bootstrap-kubelet.conf"
            ]
        );
        assert_eq!(n[2], "CRI");
        let tail: Vec<&str> = n[n.len() - 7..].iter().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "SystemVerification",
                "Hostname",
                "KubeletVersion",
                "Service-Kubelet",
                "Port-10250",
                "FileAvailable--etc-kubernetes-pki-ca.crt",
                "HTTPProxy"
            ]
        );
    }

    #[test]
    fn ipv6_endpoint_adds_the_ipv6_sysctls_and_control_plane_drops_the_ca() {
        let n = names(&with_endpoint("[fd00::1]:6443"));
        assert!(n.ends_with(&[
            "HTTPProxy".to_string(),
            "FileContent--proc-sys-net-bridge-bridge-nf-call-ip6tables".to_string(),
            "FileContent--proc-sys-net-ipv6-conf-default-forwarding".to_string(),
        ]));
        let mut cp = with_endpoint("no-port");
        cp.control_plane = Some(JoinControlPlane::default());
        let n = names(&cp);
        assert!(
            !n.iter().any(|c| c.contains("ca.crt") || c == "HTTPProxy"),
            "{n:?}"
        );
    }

    #[test]
    fn host_of_endpoint_as_go_splits_it() {
        assert_eq!(split_host("1.2.3.4:6443").as_deref(), Some("1.2.3.4"));
        assert_eq!(split_host("[fd00::1]:6443").as_deref(), Some("fd00::1"));
        assert_eq!(split_host("example.com:443").as_deref(), Some("example.com"));
        assert_eq!(split_host("fd00::1:6443"), None);
        assert_eq!(split_host("1.2.3.4"), None);
    }
}
