//! `InitConfiguration`: what `kubeadm init` needs for this node alone.

use serde::{Deserialize, Serialize};

use super::node::{ApiEndpoint, NodeRegistrationOptions, Patches};
use super::token::BootstrapToken;

/// Node-local settings for `kubeadm init` (`kind: InitConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InitConfiguration {
    /// `kubeadm.k8s.io/v1beta3` when written.
    #[serde(rename = "apiVersion", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `InitConfiguration` when written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Tokens to create.
    #[serde(rename = "bootstrapTokens", skip_serializing_if = "Vec::is_empty")]
    pub bootstrap_tokens: Vec<BootstrapToken>,
    /// Node registration.
    #[serde(rename = "nodeRegistration")]
    pub node_registration: NodeRegistrationOptions,
    /// This node's API server endpoint.
    #[serde(rename = "localAPIEndpoint")]
    pub local_api_endpoint: ApiEndpoint,
    /// Key for the certificates uploaded to the cluster.
    #[serde(rename = "certificateKey", skip_serializing_if = "String::is_empty")]
    pub certificate_key: String,
    /// Phases to skip.
    #[serde(rename = "skipPhases", skip_serializing_if = "Vec::is_empty")]
    pub skip_phases: Vec<String>,
    /// Patches to apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Patches>,
}
