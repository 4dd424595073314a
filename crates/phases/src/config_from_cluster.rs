//! The cluster's configuration as kubeadm reads it back from the cluster (upstream's
//! `FetchInitConfigurationFromCluster`), in its two forms:
//!
//! - for a node that is not one of the control planes yet ([`fetch_new_node_config`],
//!   `newControlPlane` set): what a joining node and `kubeadm upgrade node` on a worker work from;
//! - for an existing node ([`fetch_init_config`], [`fetch_init_config_with_components`]): the
//!   `kubeadm-config` ConfigMap, the node's registration from its Node object, its API endpoint from
//!   the kube-apiserver Pod's annotation; what `reset`, `upgrade plan|apply|diff` and `upgrade node`
//!   on a control plane work from. The pure parts (reading the node name from a kubeconfig's client
//!   certificate, parsing an endpoint) are plain functions tested on their own.

use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, InitConfig, load_init_config};
use kubeadm_api::v1beta3::{ApiEndpoint, BootstrapTokenString, Taint};
use kubeadm_core::cluster::upload_config::{
    CLUSTER_CONFIGURATION_KEY, KUBEADM_CONFIG_CONFIG_MAP, KUBELET_CONFIG_CONFIG_MAP, KUBELET_CONFIG_KEY,
};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use serde_json::Value;

/// The kube-proxy ConfigMap and its key.
const KUBE_PROXY_CONFIG_MAP: &str = "kube-proxy";
const KUBE_PROXY_CONFIG_KEY: &str = "config.conf";
const KUBE_SYSTEM: &str = "kube-system";

/// Why fetching the cluster's configuration failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No client with the bootstrap credentials.
    #[error("unable to access the cluster: {0}")]
    Client(String),
    /// A ConfigMap could not be read or used.
    #[error("unable to fetch the kubeadm-config ConfigMap: {0}")]
    Fetch(String),
    /// The fetched configuration is invalid.
    #[error("unable to fetch the kubeadm-config ConfigMap: {0}")]
    Config(#[source] ConfigError),
}

/// Upstream's `FetchInitConfigurationFromCluster` with `newControlPlane` set, as a joining node and
/// `upgrade node` on a worker use it: the `ClusterConfiguration` of `kubeadm-config`, the kube-proxy
/// and kubelet component configs from their ConfigMaps, then the dynamic defaults of `init` for
/// this host (the node's own registration and API endpoint are not read). `prefix` is the log
/// prefix of the lines printed first (`preflight`, `upgrade`).
pub fn fetch_new_node_config(
    client: &dyn Cluster,
    host: &HostFacts,
    reporter: &dyn Reporter,
    prefix: &str,
) -> Result<InitConfig, FetchError> {
    reporter.out(&format!("[{prefix}] Reading configuration from the cluster...\n"));
    reporter.out(&format!(
        "[{prefix}] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n"
    ));
    let fetch = FetchError::Fetch;
    let cm = client
        .get_config_map_with_retry(KUBE_SYSTEM, KUBEADM_CONFIG_CONFIG_MAP)
        .map_err(|e| fetch(format!("failed to get config map: {e}")))?;
    let mut text = cm
        .pointer(&format!("/data/{CLUSTER_CONFIGURATION_KEY}"))
        .and_then(Value::as_str)
        .ok_or_else(|| fetch(format!("unexpected error when reading {KUBEADM_CONFIG_CONFIG_MAP} ConfigMap: {CLUSTER_CONFIGURATION_KEY} key value pair missing")))?
        .to_string();
    for (name, key, group, must_exist) in [
        (
            KUBE_PROXY_CONFIG_MAP,
            KUBE_PROXY_CONFIG_KEY,
            "kubeproxy.config.k8s.io/v1alpha1",
            false,
        ),
        (
            KUBELET_CONFIG_CONFIG_MAP,
            KUBELET_CONFIG_KEY,
            "kubelet.config.k8s.io/v1beta1",
            true,
        ),
    ] {
        if must_exist {
            reporter.info(
                1,
                "kubelet.go",
                &format!("attempting to download the KubeletConfiguration from ConfigMap {name:?}"),
            );
        }
        let cm = match client.get_config_map_with_retry(KUBE_SYSTEM, name) {
            Ok(cm) => cm,
            Err(e @ (ClusterError::NotFound { .. } | ClusterError::Forbidden { .. })) if !must_exist => {
                reporter.warn(
                    "configset.go",
                    &format!("Warning: No {group} config is loaded. Continuing without it: {e}"),
                );
                continue;
            }
            Err(e) => return Err(fetch(format!("failed to get component configs: {e}"))),
        };
        let doc = cm
            .pointer(&format!("/data/{key}"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                fetch(format!(
                    "failed to get component configs: unexpected error when reading {name} ConfigMap: {key} key value pair missing"
                ))
            })?;
        text.push_str("\n---\n");
        text.push_str(doc);
    }
    // The node's own registration replaces what defaulting derives from this host; only an
    // unambiguous CRI socket is wanted meanwhile (upstream sets a placeholder for the same reason).
    let mut host = host.clone();
    host.existing_cri_sockets.clear();
    let mut new_token = || BootstrapTokenString::generate(|| 0);
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config(KUBEADM_CONFIG_CONFIG_MAP, &text, &mut inputs).map_err(FetchError::Config)
}

/// Prints defaulting and loading warnings as upstream logs them. Upstream first tries to fetch
/// release markers from the internet and warns when that fails; we resolve labels offline on purpose,
/// so those two warnings become a `-v=1` note.
pub fn log_config_warnings(rep: &dyn Reporter, warnings: &[String]) {
    for w in warnings {
        if w.starts_with("could not fetch a Kubernetes version from the internet")
            || w.starts_with("falling back to the local client version")
        {
            rep.info(
                1,
                "version.rs",
                &format!("[version] {w} (labels are resolved offline)"),
            );
        } else {
            rep.warn("config.rs", w);
        }
    }
}

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
    let config = kubeadm_core::kubeconfig::Config::from_value(&doc);
    let user = config
        .current_auth_info()
        .map_err(|e| format!("invalid kubeconfig file {file}: {e}"))?;
    let pem = if !user.client_certificate_data.is_empty() {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(&user.client_certificate_data)
            .map_err(|e| e.to_string())?
    } else if !user.client_certificate.is_empty() {
        let cert = &user.client_certificate;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(ip: &str) -> ApiEndpoint {
        ApiEndpoint {
            advertise_address: ip.to_string(),
            bind_port: 6443,
        }
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
