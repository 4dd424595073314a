//! `/var/lib/kubelet/config.yaml`: the cluster's `KubeletConfiguration` (already defaulted by
//! kubeadm, see `kubeadm_api::componentconfig::kubelet::default_kubelet`) marshalled with its
//! apiVersion and kind, as upstream's component-config `Marshal` writes it.

use kubeadm_api::componentconfig::kubelet::{KUBELET_API_VERSION, KubeletConfiguration};
use serde_json::Value;

use crate::patches::{PatchError, PatchManager};

/// The configuration as the JSON Go writes for it, with `apiVersion` and `kind` set.
pub fn config_value(kc: &KubeletConfiguration) -> Value {
    // Our wire types serialise infallibly (string keys, finite numbers); an empty object stands in
    // for the impossible error rather than a panic.
    let mut value = serde_json::to_value(kc).unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), KUBELET_API_VERSION.into());
        map.insert("kind".into(), "KubeletConfiguration".into());
    }
    value
}

/// The content of `config.yaml`.
pub fn config_yaml(kc: &KubeletConfiguration) -> String {
    kubeadm_yaml::to_string(&config_value(kc))
}

/// The content of `config.yaml` with the `kubeletconfiguration` patches of `patches` applied, and
/// upstream's `[patches]` lines for what was applied (none without patches).
pub fn patched_config_yaml(
    kc: &KubeletConfiguration,
    patches: Option<&PatchManager>,
) -> Result<(String, Vec<String>), PatchError> {
    match patches {
        Some(pm) => pm.patch_kubelet_config(&config_value(kc)),
        None => Ok((config_yaml(kc), Vec::new())),
    }
}
