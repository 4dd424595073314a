//! The `upload-config` phase's objects: the `kubeadm-config` ConfigMap holding the
//! ClusterConfiguration, the unversioned `kubelet-config` ConfigMap holding the kubelet's
//! configuration, and the Role/RoleBinding pairs that let nodes and bootstrap tokens read them.

use std::collections::BTreeMap;

use kubeadm_api::componentconfig::kubelet::KubeletConfiguration;
use kubeadm_api::componentconfig::kubelet_yaml;
use kubeadm_api::dynamic::ResolvedCluster;
use kubeadm_api::v1beta3::ClusterConfiguration;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::meta::{NAMESPACE_SYSTEM, config_map, object_meta, set_meta_entry};
use super::rbac::{NODE_BOOTSTRAP_TOKEN_AUTH_GROUP, NODES_GROUP, Subject, get_named_role_and_binding};

/// `KubeadmConfigConfigMap`.
pub const KUBEADM_CONFIG_CONFIG_MAP: &str = "kubeadm-config";
/// `ClusterConfigurationConfigMapKey`.
pub const CLUSTER_CONFIGURATION_KEY: &str = "ClusterConfiguration";
/// `NodesKubeadmConfigClusterRoleName`.
pub const NODES_KUBEADM_CONFIG_ROLE: &str = "kubeadm:nodes-kubeadm-config";
/// `KubeletBaseConfigurationConfigMap` (unversioned: `UnversionedKubeletConfigMap` is locked on in 1.25).
pub const KUBELET_CONFIG_CONFIG_MAP: &str = "kubelet-config";
/// `KubeletBaseConfigurationConfigMapKey`.
pub const KUBELET_CONFIG_KEY: &str = "kubelet";
/// `KubeletBaseConfigMapRole`.
pub const KUBELET_CONFIG_ROLE: &str = "kubeadm:kubelet-config";
/// `ComponentConfigHashAnnotationKey`.
pub const COMPONENT_CONFIG_HASH_ANNOTATION: &str = "kubeadm.kubernetes.io/component-config.hash";

/// The ClusterConfiguration document as upstream stores it: the v1beta3 YAML of the configuration,
/// with the CI version label restored when one was resolved.
///
/// During `init` the control-plane phase has already written the chosen `authorization-mode` into
/// `apiServer.extraArgs` (see `manifests::record_authorization_mode`), and that is what is
/// uploaded; callers pass the configuration after that step.
pub fn cluster_configuration_yaml(cluster: &ClusterConfiguration, resolved: &ResolvedCluster) -> String {
    let mut upload = cluster.clone();
    if let Some(ci) = resolved.ci_kubernetes_version.as_ref().filter(|v| !v.is_empty()) {
        upload.kubernetes_version = ci.clone();
    }
    kubeadm_api::print::to_yaml(&upload, "ClusterConfiguration")
}

/// The `kube-system/kubeadm-config` ConfigMap.
pub fn kubeadm_config_map(cluster: &ClusterConfiguration, resolved: &ResolvedCluster) -> Value {
    let data = BTreeMap::from([(
        CLUSTER_CONFIGURATION_KEY.to_string(),
        cluster_configuration_yaml(cluster, resolved),
    )]);
    config_map(object_meta(KUBEADM_CONFIG_CONFIG_MAP, NAMESPACE_SYSTEM), &data)
}

/// The Role and RoleBinding letting bootstrap tokens and nodes read `kubeadm-config`.
pub fn kubeadm_config_rbac() -> [Value; 2] {
    get_named_role_and_binding(
        NODES_KUBEADM_CONFIG_ROLE,
        NAMESPACE_SYSTEM,
        "configmaps",
        KUBEADM_CONFIG_CONFIG_MAP,
        &[
            Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP),
            Subject::Group(NODES_GROUP),
        ],
    )
}

/// The `kube-system/kubelet-config` ConfigMap. A configuration kubeadm generated (not supplied by
/// the user) is signed with the component-config hash annotation, so a later upgrade knows it may
/// regenerate it.
pub fn kubelet_config_map(kubelet: &KubeletConfiguration, user_supplied: bool) -> Value {
    let data = BTreeMap::from([(KUBELET_CONFIG_KEY.to_string(), kubelet_yaml(kubelet))]);
    let mut cm = config_map(object_meta(KUBELET_CONFIG_CONFIG_MAP, NAMESPACE_SYSTEM), &data);
    if !user_supplied {
        sign_config_map(&mut cm);
    }
    cm
}

/// The Role and RoleBinding letting nodes and bootstrap tokens read `kubelet-config`.
pub fn kubelet_config_rbac() -> [Value; 2] {
    get_named_role_and_binding(
        KUBELET_CONFIG_ROLE,
        NAMESPACE_SYSTEM,
        "configmaps",
        KUBELET_CONFIG_CONFIG_MAP,
        &[
            Subject::Group(NODES_GROUP),
            Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP),
        ],
    )
}

/// `ChecksumForConfigMap`: SHA-256 over the `data` values, then the `binaryData` values (base64
/// decoded), each in key order, written `sha256:<hex>`.
pub fn config_map_checksum(cm: &Value) -> String {
    use base64::Engine as _;
    let mut hash = Sha256::new();
    // serde_json maps keep insertion order here, so sort explicitly as upstream does.
    let sorted = |field: &str| -> Vec<(String, Value)> {
        let mut entries: Vec<(String, Value)> = cm
            .get(field)
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries
    };
    for (_, v) in sorted("data") {
        hash.update(v.as_str().unwrap_or_default().as_bytes());
    }
    for (_, v) in sorted("binaryData") {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .unwrap_or_default();
        hash.update(&bytes);
    }
    format!("sha256:{}", hex::encode(hash.finalize()))
}

/// `SignConfigMap`: annotates a ConfigMap with its checksum.
pub fn sign_config_map(cm: &mut Value) {
    let sum = config_map_checksum(cm);
    set_meta_entry(cm, "annotations", COMPONENT_CONFIG_HASH_ANNOTATION, &sum);
}
