//! The component config version table of `kubeadm upgrade plan` (upstream's
//! `componentconfigs.GetVersionStates` and `printComponentConfigVersionStates`): for the kube-proxy
//! and kubelet configs, the version the cluster (or the `--config` file) holds, the version this
//! kubeadm writes, and whether the user must convert it by hand.

use serde_json::Value;

use kubeadm_api::gofmt::tabwrite;
use kubeadm_core::cluster::upload_config::{COMPONENT_CONFIG_HASH_ANNOTATION, config_map_checksum};
use kubeadm_effects::cluster::{Cluster, ClusterError};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;

use crate::upgrade::SEPARATOR;

/// One row of upstream's component config version table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigVersionState {
    group: String,
    current: String,
    preferred: String,
    manual_upgrade: bool,
}

/// The component configs kubeadm knows, in upstream's order: group, version, ConfigMap, key.
const COMPONENT_CONFIGS: [(&str, &str, &str, &str); 2] = [
    ("kubeproxy.config.k8s.io", "v1alpha1", "kube-proxy", "config.conf"),
    ("kubelet.config.k8s.io", "v1beta1", "kubelet-config", "kubelet"),
];

/// Why the component configs' states could not be read, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum ComponentConfigError {
    /// A component config's ConfigMap could not be read.
    #[error(transparent)]
    ConfigMap(ClusterError),
    /// The ConfigMap lacks its key.
    #[error("unexpected error when reading {name} ConfigMap: {key} key value pair missing")]
    MissingKey {
        /// The ConfigMap.
        name: &'static str,
        /// The key.
        key: &'static str,
    },
    /// The ConfigMap's or the file's YAML does not parse.
    #[error(transparent)]
    Parse(kubeadm_yaml::ParseError),
    /// `--config` could not be read.
    #[error(
        "unable to read config file {path:?}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    ReadFile {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Upstream's `componentconfigs.GetVersionStates` without a `--config` of component configs:
/// a config found in its ConfigMap at the supported version is fine; one at another version needs
/// a manual upgrade unless kubeadm generated it (its hash annotation matches); a generated one at
/// another version, or none at all, is listed with only the preferred version, as kubeadm will
/// (re)generate it.
pub fn component_config_states(
    cluster: &dyn Cluster,
    fs: &dyn Fs,
    config_path: &str,
    rep: &dyn Reporter,
) -> Result<Vec<ConfigVersionState>, ComponentConfigError> {
    let mut states = Vec::new();
    for (group, version, name, key) in COMPONENT_CONFIGS {
        let state = |current: &str, manual_upgrade: bool| ConfigVersionState {
            group: group.into(),
            current: current.into(),
            preferred: version.into(),
            manual_upgrade,
        };
        let cm = match cluster.get_config_map_with_retry("kube-system", name) {
            Ok(cm) => cm,
            Err(e) if e.is_not_found() || matches!(e, ClusterError::Forbidden { .. }) => {
                rep.warn(
                    "configset.go",
                    &format!("Warning: No {group}/{version} config is loaded. Continuing without it: {e}"),
                );
                states.push(state("", false));
                continue;
            }
            Err(e) => return Err(ComponentConfigError::ConfigMap(e)),
        };
        let Some(text) = cm.pointer(&format!("/data/{key}")).and_then(Value::as_str) else {
            return Err(ComponentConfigError::MissingKey { name, key });
        };
        let docs = kubeadm_yaml::parse_documents(text).map_err(ComponentConfigError::Parse)?;
        let found = docs.iter().find_map(|d| {
            let api_version = d.value.get("apiVersion").and_then(Value::as_str)?;
            let (g, v) = api_version.split_once('/')?;
            (g == group).then(|| v.to_string())
        });
        let generated = cm
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(COMPONENT_CONFIG_HASH_ANNOTATION))
            .and_then(Value::as_str)
            .is_some_and(|h| h == config_map_checksum(&cm));
        states.push(match found {
            Some(current) if current == version => state(version, false),
            Some(current) if !generated => state(&current, true),
            _ => state("", false),
        });
    }
    // A config of the group in the `--config` file is the user's and wins over the cluster's.
    if !config_path.is_empty() {
        let bytes =
            fs.read(std::path::Path::new(config_path))
                .map_err(|source| ComponentConfigError::ReadFile {
                    path: config_path.to_string(),
                    source,
                })?;
        let text = String::from_utf8_lossy(&bytes);
        let docs = kubeadm_yaml::parse_documents(&text).map_err(ComponentConfigError::Parse)?;
        for (state, (group, version, _, _)) in states.iter_mut().zip(COMPONENT_CONFIGS) {
            let in_file = docs.iter().find_map(|d| {
                let (g, v) = d
                    .value
                    .get("apiVersion")
                    .and_then(Value::as_str)?
                    .split_once('/')?;
                (g == group).then(|| v.to_string())
            });
            if let Some(current) = in_file {
                state.manual_upgrade = current != version;
                state.current = current;
            }
        }
    }
    Ok(states)
}

/// Upstream's `printComponentConfigVersionStates` (text output only).
pub fn config_states_text(states: &[ConfigVersionState]) -> String {
    if states.is_empty() {
        return "No information available on component configs.\n".into();
    }
    let mut text = String::from(
        "\nThe table below shows the current state of component configs as understood by this version of kubeadm.\n\
         Configs that have a \"yes\" mark in the \"MANUAL UPGRADE REQUIRED\" column require manual config upgrade or\n\
         resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually\n\
         upgrade to is denoted in the \"PREFERRED VERSION\" column.\n\n",
    );
    let or_dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    let mut lines =
        vec!["API GROUP\tCURRENT VERSION\tPREFERRED VERSION\tMANUAL UPGRADE REQUIRED".to_string()];
    for s in states {
        lines.push(format!(
            "{}\t{}\t{}\t{}",
            s.group,
            or_dash(&s.current),
            or_dash(&s.preferred),
            if s.manual_upgrade { "yes" } else { "no" }
        ));
    }
    text.push_str(&tabwrite(&lines, 10, 3));
    text.push_str(SEPARATOR);
    text
}
