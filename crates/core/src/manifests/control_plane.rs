//! The kube-apiserver, kube-controller-manager and kube-scheduler commands (upstream
//! `controlplane/manifests.go`): kubeadm's default flags for each, merged with `extraArgs`.

use std::collections::BTreeMap;

use kubeadm_api::v1beta3::{ApiEndpoint, ClusterConfiguration};

use super::args::{argument_list, is_ipv6, join, join_host_port};
use super::volumes::kubeconfig_path;

const ETCD_CLIENT_PORT: u16 = 2379;
/// The authorization modes kube-apiserver knows.
const AUTHZ_MODES: [&str; 6] = ["Node", "RBAC", "Webhook", "ABAC", "AlwaysAllow", "AlwaysDeny"];

fn args(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// The kube-apiserver command and the warnings upstream logs about `authorization-mode`.
pub(crate) fn api_server_command(
    cfg: &ClusterConfiguration,
    endpoint: &ApiEndpoint,
) -> (Vec<String>, Vec<String>) {
    let certs = cfg.certificates_dir.as_str();
    let pki = |name: &str| join(certs, name);
    let mut defaults = args(&[
        ("advertise-address", endpoint.advertise_address.clone()),
        ("enable-admission-plugins", "NodeRestriction".into()),
        ("service-cluster-ip-range", cfg.networking.service_subnet.clone()),
        ("service-account-key-file", pki("sa.pub")),
        ("service-account-signing-key-file", pki("sa.key")),
        (
            "service-account-issuer",
            format!("https://kubernetes.default.svc.{}", cfg.networking.dns_domain),
        ),
        ("client-ca-file", pki("ca.crt")),
        ("tls-cert-file", pki("apiserver.crt")),
        ("tls-private-key-file", pki("apiserver.key")),
        ("kubelet-client-certificate", pki("apiserver-kubelet-client.crt")),
        ("kubelet-client-key", pki("apiserver-kubelet-client.key")),
        ("enable-bootstrap-token-auth", "true".into()),
        ("secure-port", endpoint.bind_port.to_string()),
        ("allow-privileged", "true".into()),
        (
            "kubelet-preferred-address-types",
            "InternalIP,ExternalIP,Hostname".into(),
        ),
        ("requestheader-username-headers", "X-Remote-User".into()),
        ("requestheader-group-headers", "X-Remote-Group".into()),
        ("requestheader-extra-headers-prefix", "X-Remote-Extra-".into()),
        ("requestheader-client-ca-file", pki("front-proxy-ca.crt")),
        ("requestheader-allowed-names", "front-proxy-client".into()),
        ("proxy-client-cert-file", pki("front-proxy-client.crt")),
        ("proxy-client-key-file", pki("front-proxy-client.key")),
    ]);
    if let Some(ext) = &cfg.etcd.external {
        let endpoints = ext.endpoints.clone().unwrap_or_default().join(",");
        defaults.insert("etcd-servers".into(), endpoints);
        if !ext.ca_file.is_empty() {
            defaults.insert("etcd-cafile".into(), ext.ca_file.clone());
        }
        if !ext.cert_file.is_empty() && !ext.key_file.is_empty() {
            defaults.insert("etcd-certfile".into(), ext.cert_file.clone());
            defaults.insert("etcd-keyfile".into(), ext.key_file.clone());
        }
    } else {
        let localhost = if is_ipv6(&endpoint.advertise_address) {
            "::1"
        } else {
            "127.0.0.1"
        };
        let mut servers = format!("https://{}", join_host_port(localhost, ETCD_CLIENT_PORT));
        if let Some(url) = cfg
            .etcd
            .local
            .as_ref()
            .and_then(|l| l.extra_args.get("advertise-client-urls"))
        {
            servers = url.clone();
        }
        defaults.insert("etcd-servers".into(), servers);
        defaults.insert("etcd-cafile".into(), pki("etcd/ca.crt"));
        defaults.insert("etcd-certfile".into(), pki("apiserver-etcd-client.crt"));
        defaults.insert("etcd-keyfile".into(), pki("apiserver-etcd-client.key"));
    }
    let mut extra = cfg.api_server.extra_args.clone();
    let requested = extra.get("authorization-mode").cloned().unwrap_or_default();
    let (modes, warnings) = authorization_modes(&requested);
    extra.insert("authorization-mode".into(), modes);
    let mut command = vec!["kube-apiserver".to_string()];
    command.extend(argument_list(&defaults, &extra));
    (command, warnings)
}

/// `getAuthzModes`: the requested modes that are known, else `Node,RBAC`, with upstream's warnings.
pub(crate) fn authorization_modes(requested: &str) -> (String, Vec<String>) {
    let default = "Node,RBAC";
    let mut warnings = Vec::new();
    if requested.is_empty() {
        return (default.to_string(), warnings);
    }
    let mut modes = Vec::new();
    for m in requested.split(',') {
        if AUTHZ_MODES.contains(&m) {
            modes.push(m);
        } else {
            warnings.push(format!(
                "ignoring unknown kube-apiserver authorization-mode {m:?}"
            ));
        }
    }
    if modes.is_empty() {
        return (default.to_string(), warnings);
    }
    let chosen = modes.join(",");
    if chosen != default {
        warnings.push(format!(
            "the default kube-apiserver authorization-mode is {default:?}; using {chosen:?}"
        ));
    }
    (chosen, warnings)
}

/// The kube-controller-manager command. `external_ca` is upstream's `UsingExternalCA` (a CA
/// certificate without its key): the cluster-signing flags are then written empty.
pub(crate) fn controller_manager_command(cfg: &ClusterConfiguration, external_ca: bool) -> Vec<String> {
    let certs = cfg.certificates_dir.as_str();
    let pki = |name: &str| join(certs, name);
    let kubeconfig = kubeconfig_path("controller-manager.conf");
    let ca = pki("ca.crt");
    let mut defaults = args(&[
        ("bind-address", "127.0.0.1".into()),
        ("leader-elect", "true".into()),
        ("kubeconfig", kubeconfig.clone()),
        ("authentication-kubeconfig", kubeconfig.clone()),
        ("authorization-kubeconfig", kubeconfig),
        ("client-ca-file", ca.clone()),
        ("requestheader-client-ca-file", pki("front-proxy-ca.crt")),
        ("root-ca-file", ca.clone()),
        ("service-account-private-key-file", pki("sa.key")),
        ("cluster-signing-cert-file", ca),
        ("cluster-signing-key-file", pki("ca.key")),
        ("use-service-account-credentials", "true".into()),
        ("controllers", "*,bootstrapsigner,tokencleaner".into()),
    ]);
    if external_ca {
        defaults.insert("cluster-signing-key-file".into(), String::new());
        defaults.insert("cluster-signing-cert-file".into(), String::new());
    }
    if !cfg.networking.pod_subnet.is_empty() {
        defaults.insert("allocate-node-cidrs".into(), "true".into());
        defaults.insert("cluster-cidr".into(), cfg.networking.pod_subnet.clone());
        if !cfg.networking.service_subnet.is_empty() {
            defaults.insert(
                "service-cluster-ip-range".into(),
                cfg.networking.service_subnet.clone(),
            );
        }
    }
    if !cfg.cluster_name.is_empty() {
        defaults.insert("cluster-name".into(), cfg.cluster_name.clone());
    }
    let mut command = vec!["kube-controller-manager".to_string()];
    command.extend(argument_list(&defaults, &cfg.controller_manager.extra_args));
    command
}

/// The kube-scheduler command.
pub(crate) fn scheduler_command(cfg: &ClusterConfiguration) -> Vec<String> {
    let kubeconfig = kubeconfig_path("scheduler.conf");
    let defaults = args(&[
        ("bind-address", "127.0.0.1".into()),
        ("leader-elect", "true".into()),
        ("kubeconfig", kubeconfig.clone()),
        ("authentication-kubeconfig", kubeconfig.clone()),
        ("authorization-kubeconfig", kubeconfig),
    ]);
    let mut command = vec!["kube-scheduler".to_string()];
    command.extend(argument_list(&defaults, &cfg.scheduler.extra_args));
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_modes_keep_known_ones() {
        assert_eq!(authorization_modes(""), ("Node,RBAC".to_string(), vec![]));
        assert_eq!(
            authorization_modes("Node,RBAC"),
            ("Node,RBAC".to_string(), vec![])
        );
        let (modes, warnings) = authorization_modes("RBAC,Bogus");
        assert_eq!(modes, "RBAC");
        assert_eq!(
            warnings,
            [
                "ignoring unknown kube-apiserver authorization-mode \"Bogus\"",
                "the default kube-apiserver authorization-mode is \"Node,RBAC\"; using \"RBAC\"",
            ]
        );
    }
}
