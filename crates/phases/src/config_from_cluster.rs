//! The cluster's configuration as a node that is not one of its control planes reads it
//! (upstream's `FetchInitConfigurationFromCluster` with `newControlPlane` set): what a joining
//! worker and `kubeadm upgrade node` on a worker work from.

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_core::cluster::upload_config::{
    CLUSTER_CONFIGURATION_KEY, KUBEADM_CONFIG_CONFIG_MAP, KUBELET_CONFIG_CONFIG_MAP, KUBELET_CONFIG_KEY,
};
use kubeadm_effects::cluster::{Cluster, ClusterError};
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
