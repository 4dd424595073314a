//! What `kubeadm reset` asks the cluster: the configuration (upstream's
//! `FetchInitConfigurationFromCluster` for an existing node: the `kubeadm-config` ConfigMap, the
//! node's registration from its Node object, its API endpoint from the kube-apiserver Pod's
//! annotation) and the removal of this node's stacked etcd member (upstream's
//! `RemoveStackedEtcdMemberFromCluster` with `etcdutil.NewFromCluster`).
//!
//! The pure parts (reading the node name from a kubeconfig's client certificate, parsing an
//! endpoint, choosing the member to remove) are plain functions tested on their own; the API and
//! etcd calls go through the `Cluster` and `Etcd` traits.

use std::path::Path;

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::internal::{ConfigError, InitConfig, load_init_config};
use kubeadm_api::v1beta3::{ApiEndpoint, Taint};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::etcd::{EtcdError, Member};
use kubeadm_effects::fs::Fs;
use serde_json::Value;

use crate::etcd_cluster::{EtcdClientError, client_from_cluster, client_url, peer_url};
use crate::reset::ResetData;

/// The node annotation holding the node's CRI socket.
const CRI_SOCKET_ANNOTATION: &str = "kubeadm.alpha.kubernetes.io/cri-socket";
/// The kube-apiserver Pod annotation holding its advertise endpoint.
const API_ENDPOINT_ANNOTATION: &str = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint";

/// Why the configuration could not be fetched (upstream only warns and goes on without one).
#[derive(Debug, thiserror::Error)]
pub enum FetchConfigError {
    /// The `kubeadm-config` ConfigMap could not be read.
    #[error("failed to get config map: {0}")]
    ConfigMap(#[source] ClusterError),
    /// The ConfigMap has no `ClusterConfiguration` key.
    #[error(
        "unexpected error when reading kubeadm-config ConfigMap: ClusterConfiguration key value pair missing"
    )]
    MissingKey,
    /// The ClusterConfiguration could not be decoded, defaulted or validated.
    #[error("failed to decode cluster configuration data: {0}")]
    Decode(#[source] ConfigError),
    /// A component configuration ConfigMap could not be read.
    #[error("failed to get component configs: {0}")]
    ComponentConfigs(String),
    /// The node's registration could not be read.
    #[error("failed to get node registration: {0}")]
    NodeRegistration(String),
    /// The node's API endpoint could not be read.
    #[error(
        "failed to getAPIEndpoint: could not retrieve API endpoints for node {node:?} using pod annotations: {reason}"
    )]
    ApiEndpoint {
        /// The node name.
        node: String,
        /// The last error.
        reason: String,
    },
}

/// The node name a kubelet kubeconfig authenticates as: its current context's client certificate's
/// common name without `system:node:` (upstream's `getNodeNameFromKubeletConfig`). The certificate
/// is embedded (`client-certificate-data`) or a file (`client-certificate`, read through `fs`).
pub fn node_name_from_kubelet_conf(fs: &dyn Fs, path: &Path) -> Result<String, String> {
    let bytes = fs
        .read(path)
        .map_err(|e| format!("open {}: {}", path.display(), kubeadm_api::gofmt::io_error(&e)))?;
    let doc = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(&bytes))
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let file = path.display();
    let current = doc.get("current-context").and_then(Value::as_str).unwrap_or("");
    let named = |list: &str, name: &str, inner: &str| {
        doc.get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|e| e.get(inner))
            .cloned()
    };
    let ctx = named("contexts", current, "context")
        .ok_or_else(|| format!("invalid kubeconfig file {file}: missing context {current}"))?;
    let user_name = ctx.get("user").and_then(Value::as_str).unwrap_or("");
    let user = named("users", user_name, "user")
        .ok_or_else(|| format!("invalid kubeconfig file {file}: missing AuthInfo {user_name}"))?;
    let pem = if let Some(data) = user.get("client-certificate-data").and_then(Value::as_str) {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| e.to_string())?
    } else if let Some(cert) = user.get("client-certificate").and_then(Value::as_str) {
        fs.read(Path::new(cert))
            .map_err(|e| format!("open {cert}: {}", kubeadm_api::gofmt::io_error(&e)))?
    } else {
        return Err(format!(
            "invalid kubeconfig file {file}. x509 certificate expected"
        ));
    };
    let cert =
        kubeadm_core::pki::CertInfo::from_pem(&String::from_utf8_lossy(&pem)).map_err(|e| e.to_string())?;
    Ok(cert
        .common_name
        .strip_prefix("system:node:")
        .unwrap_or(&cert.common_name)
        .to_string())
}

/// Upstream's `APIEndpointFromString`: `host:port` with an IP host and a numeric port.
pub fn api_endpoint_from_string(raw: &str) -> Result<ApiEndpoint, String> {
    let (host, port) = raw
        .rsplit_once(':')
        .ok_or_else(|| format!("invalid advertise address endpoint: {raw}"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: i32 = port
        .parse()
        .map_err(|_| format!("invalid advertise address endpoint port: {port}"))?;
    if host.parse::<std::net::IpAddr>().is_err() {
        return Err(format!(
            "invalid advertise address endpoint: {host} is not a valid IP address"
        ));
    }
    Ok(ApiEndpoint {
        advertise_address: host.to_string(),
        bind_port: port,
    })
}

/// Fetches the configuration of this node from the cluster. `inputs` drives the defaulting of
/// what the ConfigMap does not hold (upstream's `SetInitDynamicDefaults`); the node's name, CRI
/// socket and taints and its API endpoint then replace the host-derived defaults. Warnings
/// upstream logs on the way (a missing kube-proxy ConfigMap) are appended to `warnings`.
pub fn fetch_init_config(
    cluster: &dyn Cluster,
    fs: &dyn Fs,
    kubelet_conf: &Path,
    inputs: &mut DynamicInputs<'_>,
    warnings: &mut Vec<String>,
) -> Result<InitConfig, FetchConfigError> {
    fetch(cluster, fs, kubelet_conf, inputs, warnings, None)
}

/// [`fetch_init_config`] with the kubelet's and kube-proxy's configurations read from their
/// ConfigMaps rather than defaulted (upstream's `skipComponentConfigs` false, as `upgrade apply`
/// loads them). A configuration whose ConfigMap carries kubeadm's valid signature counts as
/// generated, any other as the user's. `local` (upstream's `FetchFromClusterWithLocalOverwrites`):
/// a file's documents, whose `KubeletConfiguration` or `KubeProxyConfiguration` replaces the
/// cluster's (and counts as the user's).
pub fn fetch_init_config_with_components(
    cluster: &dyn Cluster,
    fs: &dyn Fs,
    kubelet_conf: &Path,
    inputs: &mut DynamicInputs<'_>,
    warnings: &mut Vec<String>,
    local: &str,
) -> Result<InitConfig, FetchConfigError> {
    fetch(cluster, fs, kubelet_conf, inputs, warnings, Some(local))
}

/// The document of `kind` among `text`'s (`---`-separated), if any.
fn document_of_kind<'t>(text: &'t str, kind: &str) -> Option<&'t str> {
    text.split("\n---")
        .find(|doc| doc.lines().any(|l| l.trim_end() == format!("kind: {kind}")))
}

fn fetch(
    cluster: &dyn Cluster,
    fs: &dyn Fs,
    kubelet_conf: &Path,
    inputs: &mut DynamicInputs<'_>,
    warnings: &mut Vec<String>,
    with_components: Option<&str>,
) -> Result<InitConfig, FetchConfigError> {
    let cm = cluster
        .get_config_map_with_retry("kube-system", "kubeadm-config")
        .map_err(FetchConfigError::ConfigMap)?;
    let text = cm
        .pointer("/data/ClusterConfiguration")
        .and_then(Value::as_str)
        .ok_or(FetchConfigError::MissingKey)?;
    // Upstream reads the component configurations right away, except when a file brings some:
    // then after this node's registration (and the file's replace the cluster's).
    let local = with_components.filter(|l| !l.is_empty());
    // Without them (reset, plan), the ClusterConfiguration is decoded first, as upstream does.
    let early = match with_components {
        None => Some(load_init_config("kubeadm-config", text, inputs).map_err(FetchConfigError::Decode)?),
        Some(_) => None,
    };
    let mut components = match local {
        None => Some(component_configs_present(cluster, warnings)?),
        Some(_) => None,
    };

    let node_name = node_name_from_kubelet_conf(fs, kubelet_conf).map_err(|e| {
        FetchConfigError::NodeRegistration(format!("failed to get node name from kubelet config: {e}"))
    })?;
    let node = cluster
        .get(&Resource::nodes(), "", &node_name)
        .map_err(|e| FetchConfigError::NodeRegistration(format!("failed to get corresponding node: {e}")))?;
    let cri_socket = node
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CRI_SOCKET_ANNOTATION))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            FetchConfigError::NodeRegistration(format!(
                "node {node_name} doesn't have {CRI_SOCKET_ANNOTATION} annotation"
            ))
        })?;
    let raw = crate::mirror_pods::retry(cluster, || api_endpoint_of_node(cluster, &node_name)).map_err(
        |reason| FetchConfigError::ApiEndpoint {
            node: node_name.clone(),
            reason,
        },
    )?;
    let endpoint = api_endpoint_from_string(&raw).map_err(|e| FetchConfigError::ApiEndpoint {
        node: node_name.clone(),
        reason: format!("could not parse API endpoint for node {node_name:?}: {e}"),
    })?;

    const KINDS: [&str; 2] = ["KubeProxyConfiguration", "KubeletConfiguration"];
    if local.is_some() {
        components = Some(component_configs_present(cluster, warnings)?);
    }
    let mut cfg = match (early, with_components, components) {
        (Some(cfg), _, _) => cfg,
        (None, Some(local), Some(components)) => {
            // kube-proxy's, then the kubelet's: the file's when it has one (the user's), else
            // the cluster's (generated when kubeadm's signature holds).
            let mut all = text.to_string();
            let mut user_supplied = [true, true];
            for (i, kind) in KINDS.iter().enumerate() {
                let doc = match (document_of_kind(local, kind), &components[i]) {
                    (Some(doc), _) => doc,
                    (None, Some((doc, signed))) => {
                        user_supplied[i] = !signed;
                        doc.as_str()
                    }
                    (None, None) => continue,
                };
                all.push_str("\n---\n");
                all.push_str(doc.trim_start_matches('\n'));
            }
            let mut cfg =
                load_init_config("kubeadm-config", &all, inputs).map_err(FetchConfigError::Decode)?;
            cfg.user_supplied = (user_supplied[1], user_supplied[0]);
            cfg
        }
        _ => load_init_config("kubeadm-config", text, inputs).map_err(FetchConfigError::Decode)?,
    };
    let reg = &mut cfg.init.node_registration;
    reg.name = node_name.clone();
    reg.cri_socket = cri_socket.to_string();
    reg.taints = node
        .pointer("/spec/taints")
        .map(|t| serde_json::from_value::<Vec<Taint>>(t.clone()).unwrap_or_default());
    cfg.init.local_api_endpoint = endpoint;
    Ok(cfg)
}

/// Upstream's `componentconfigs.FetchFromCluster` as far as reset depends on it: the fetch fails
/// without the `kubelet-config` ConfigMap (or its `kubelet` key) and with a `kube-proxy` ConfigMap
/// lacking `config.conf`; a kube-proxy ConfigMap that is missing or forbidden is only a warning.
/// Returns each configuration found (kube-proxy's, the kubelet's) with whether its ConfigMap
/// carries kubeadm's valid signature.
fn component_configs_present(
    cluster: &dyn Cluster,
    warnings: &mut Vec<String>,
) -> Result<[Option<(String, bool)>; 2], FetchConfigError> {
    let fail = FetchConfigError::ComponentConfigs;
    let found = |cm: &Value, key: &str| {
        let doc = cm
            .pointer(&format!("/data/{key}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let signed = cm
            .pointer("/metadata/annotations/kubeadm.kubernetes.io~1component-config.hash")
            .and_then(Value::as_str)
            .is_some_and(|h| h == kubeadm_core::cluster::upload_config::config_map_checksum(cm));
        Some((doc, signed))
    };
    let kube_proxy = match cluster.get_config_map_with_retry("kube-system", "kube-proxy") {
        Ok(cm) if cm.pointer("/data/config.conf").is_none() => {
            return Err(fail(
                "unexpected error when reading kube-proxy ConfigMap: config.conf key value pair missing"
                    .into(),
            ));
        }
        Ok(cm) => found(&cm, "config.conf"),
        Err(e) if e.is_not_found() || matches!(e, ClusterError::Forbidden { .. }) => {
            warnings.push(format!(
                "Warning: No kubeproxy.config.k8s.io/v1alpha1 config is loaded. Continuing without it: {e}"
            ));
            None
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    let kubelet = |reason: String| {
        fail(format!(
            "could not download the kubelet configuration from ConfigMap \"kubelet-config\": {reason}"
        ))
    };
    let cm = cluster
        .get_config_map_with_retry("kube-system", "kubelet-config")
        .map_err(|e| kubelet(e.to_string()))?;
    if cm.pointer("/data/kubelet").is_none() {
        return Err(kubelet(
            "unexpected error when reading kubelet-config ConfigMap: kubelet key value pair missing".into(),
        ));
    }
    Ok([kube_proxy, found(&cm, "kubelet")])
}

/// The raw `kube-apiserver.advertise-address.endpoint` annotation of the node's API server Pod.
fn api_endpoint_of_node(cluster: &dyn Cluster, node: &str) -> Result<String, String> {
    let pods = cluster
        .list(
            &Resource::core("pods"),
            "kube-system",
            &ListOptions {
                label_selector: "component=kube-apiserver,tier=control-plane".into(),
                field_selector: format!("spec.nodeName={node}"),
            },
        )
        .map_err(|e| format!("could not retrieve list of pods to determine api server endpoints: {e}"))?;
    if pods.len() != 1 {
        return Err(format!(
            "API server pod for node name {node:?} has {} entries, only one was expected",
            pods.len()
        ));
    }
    pods[0]
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(API_ENDPOINT_ANNOTATION))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "API server pod for node name {node:?} hasn't got a {API_ENDPOINT_ANNOTATION:?} annotation, cannot retrieve API endpoint"
            )
        })
}

/// Why the etcd member could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveMemberError {
    /// No API client (the configuration came from somewhere else).
    #[error("no client to reach the cluster")]
    NoClient,
    /// No etcd client.
    #[error(transparent)]
    Client(#[from] EtcdClientError),
    /// An etcd call failed.
    #[error(transparent)]
    Etcd(#[from] EtcdError),
}

/// What to do with this node's member, given the members and the client's endpoints (the pure
/// part of upstream's `RemoveStackedEtcdMemberFromCluster`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberAction {
    /// It is the only member and the client reaches it through this node's URL: leave it.
    KeepLastMember,
    /// No member has this node's peer URL: it was removed already.
    AlreadyGone,
    /// Remove the member with this id.
    Remove(u64),
}

/// Decides what to do with the member of the node advertising `endpoint`.
pub fn member_action(
    members: &[Member],
    client_endpoints: &[String],
    endpoint: &ApiEndpoint,
) -> MemberAction {
    if members.len() == 1 && client_endpoints.contains(&client_url(endpoint)) {
        return MemberAction::KeepLastMember;
    }
    let peer_url = peer_url(endpoint);
    members
        .iter()
        .find(|m| m.peer_urls.first() == Some(&peer_url))
        .map_or(MemberAction::AlreadyGone, |m| MemberAction::Remove(m.id))
}

/// Upstream's `RemoveStackedEtcdMemberFromCluster`.
pub(crate) fn remove_stacked_etcd_member(data: &ResetData) -> Result<(), RemoveMemberError> {
    let (Some(cfg), Some(cluster)) = (data.cfg.as_ref(), data.cluster.as_deref()) else {
        return Err(RemoveMemberError::NoClient);
    };
    let log = |line: &str| data.reporter.info(1, "etcd.go", line);
    let dir = Path::new(&cfg.cluster.certificates_dir);
    let etcd = client_from_cluster(cluster, dir, &data.etcd, &log)?;
    let members = etcd.list_members()?;
    match member_action(&members, &etcd.endpoints(), &cfg.init.local_api_endpoint) {
        MemberAction::KeepLastMember => {
            data.reporter.info(
                1,
                "local.go",
                "[etcd] This is the only remaining etcd member in the etcd cluster, skip removing it",
            );
            Ok(())
        }
        MemberAction::AlreadyGone => Ok(()),
        MemberAction::Remove(id) => {
            let left = etcd.remove_member(id)?;
            let names: Vec<&str> = left.iter().map(|m| m.name.as_str()).collect();
            data.reporter.info(
                1,
                "local.go",
                &format!("[etcd] Updated etcd member list: {names:?}"),
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u64, ip: &str) -> Member {
        Member {
            id,
            name: format!("node-{id}"),
            peer_urls: vec![format!("https://{ip}:2380")],
            client_urls: vec![format!("https://{ip}:2379")],
        }
    }

    fn endpoint(ip: &str) -> ApiEndpoint {
        ApiEndpoint {
            advertise_address: ip.into(),
            bind_port: 6443,
        }
    }

    #[test]
    fn the_last_member_is_kept_only_when_reached_through_this_node() {
        let members = [member(7, "10.0.0.1")];
        let here = vec!["https://10.0.0.1:2379".to_string()];
        assert_eq!(
            member_action(&members, &here, &endpoint("10.0.0.1")),
            MemberAction::KeepLastMember
        );
        // One member, but the client reaches another address: upstream goes on and removes by peer URL.
        let elsewhere = vec!["https://10.0.0.9:2379".to_string()];
        assert_eq!(
            member_action(&members, &elsewhere, &endpoint("10.0.0.1")),
            MemberAction::Remove(7)
        );
    }

    #[test]
    fn a_member_among_several_is_removed_by_its_peer_url() {
        let members = [member(1, "10.0.0.1"), member(2, "10.0.0.2"), member(3, "fd00::3")];
        let eps: Vec<String> = members.iter().map(|m| m.client_urls[0].clone()).collect();
        assert_eq!(
            member_action(&members, &eps, &endpoint("10.0.0.2")),
            MemberAction::Remove(2)
        );
        assert_eq!(
            member_action(&members, &eps, &endpoint("10.0.0.4")),
            MemberAction::AlreadyGone
        );
        // IPv6 peer URLs are bracketed, as Go's JoinHostPort writes them.
        let v6 = [member(1, "10.0.0.1"), {
            let mut m = member(3, "x");
            m.peer_urls = vec!["https://[fd00::3]:2380".into()];
            m
        }];
        assert_eq!(
            member_action(&v6, &eps, &endpoint("fd00::3")),
            MemberAction::Remove(3)
        );
    }

    #[test]
    fn endpoints_parse_as_upstream() {
        assert_eq!(
            api_endpoint_from_string("192.0.2.2:6443"),
            Ok(endpoint("192.0.2.2"))
        );
        assert_eq!(
            api_endpoint_from_string("[fd00::1]:6443").map(|e| e.advertise_address),
            Ok("fd00::1".to_string())
        );
        assert!(api_endpoint_from_string("example.com:6443").is_err());
        assert!(api_endpoint_from_string("192.0.2.2").is_err());
        assert!(api_endpoint_from_string("192.0.2.2:https").is_err());
    }
}
