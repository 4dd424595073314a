//! Per-node settings shared by `InitConfiguration` and `JoinConfiguration`: node registration, the
//! local API endpoint and patches.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero_i32;
use crate::timestamp::Time;

/// How the node registers itself with the cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeRegistrationOptions {
    /// Node name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// CRI endpoint URL.
    #[serde(rename = "criSocket", skip_serializing_if = "String::is_empty")]
    pub cri_socket: String,
    /// Node taints. `None` (written `null`) means "use the default"; `Some(vec![])` means none at all.
    pub taints: Option<Vec<Taint>>,
    /// Extra kubelet flags.
    #[serde(rename = "kubeletExtraArgs", skip_serializing_if = "BTreeMap::is_empty")]
    pub kubelet_extra_args: BTreeMap<String, String>,
    /// Preflight checks to ignore.
    #[serde(rename = "ignorePreflightErrors", skip_serializing_if = "Vec::is_empty")]
    pub ignore_preflight_errors: Vec<String>,
    /// `Always`, `IfNotPresent` or `Never`.
    #[serde(rename = "imagePullPolicy", skip_serializing_if = "String::is_empty")]
    pub image_pull_policy: String,
}

/// `corev1.Taint`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
    /// When a `NoExecute` taint was added.
    #[serde(rename = "timeAdded", skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

impl Taint {
    /// `node-role.kubernetes.io/control-plane:NoSchedule`, kubeadm's default control-plane taint.
    pub fn control_plane() -> Self {
        Taint {
            key: "node-role.kubernetes.io/control-plane".to_string(),
            effect: "NoSchedule".to_string(),
            ..Taint::default()
        }
    }
}

/// Where this node's API server listens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiEndpoint {
    /// IP address to advertise.
    #[serde(rename = "advertiseAddress", skip_serializing_if = "String::is_empty")]
    pub advertise_address: String,
    /// Secure port.
    #[serde(rename = "bindPort", skip_serializing_if = "is_zero_i32")]
    pub bind_port: i32,
}

/// Where to find patches for the static pod manifests and kubelet configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Patches {
    /// Directory of patch files.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub directory: String,
}
