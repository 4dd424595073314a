//! `JoinConfiguration`: what `kubeadm join` needs, including how to discover the cluster.

use serde::{Deserialize, Serialize};

use super::node::{ApiEndpoint, NodeRegistrationOptions, Patches};
use crate::duration::Duration;
use crate::omitempty::is_false;

/// Settings for `kubeadm join` (`kind: JoinConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JoinConfiguration {
    /// `kubeadm.k8s.io/v1beta3` when written.
    #[serde(rename = "apiVersion", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `JoinConfiguration` when written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Node registration.
    #[serde(rename = "nodeRegistration")]
    pub node_registration: NodeRegistrationOptions,
    /// Where the cluster CA certificate is written.
    #[serde(rename = "caCertPath", skip_serializing_if = "String::is_empty")]
    pub ca_cert_path: String,
    /// How to find and trust the cluster.
    pub discovery: Discovery,
    /// Set when joining as a control-plane node.
    #[serde(rename = "controlPlane", skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<JoinControlPlane>,
    /// Phases to skip.
    #[serde(rename = "skipPhases", skip_serializing_if = "Vec::is_empty")]
    pub skip_phases: Vec<String>,
    /// Patches to apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Patches>,
}

/// Control-plane specifics of a join.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JoinControlPlane {
    /// This node's API server endpoint.
    #[serde(rename = "localAPIEndpoint")]
    pub local_api_endpoint: ApiEndpoint,
    /// Key to decrypt the uploaded certificates.
    #[serde(rename = "certificateKey", skip_serializing_if = "String::is_empty")]
    pub certificate_key: String,
}

/// Cluster discovery: by token or by kubeconfig file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Discovery {
    /// Token-based discovery.
    #[serde(rename = "bootstrapToken", skip_serializing_if = "Option::is_none")]
    pub bootstrap_token: Option<BootstrapTokenDiscovery>,
    /// File- or URL-based discovery.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<FileDiscovery>,
    /// Token for the TLS bootstrap.
    #[serde(rename = "tlsBootstrapToken", skip_serializing_if = "String::is_empty")]
    pub tls_bootstrap_token: String,
    /// How long discovery may take.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
}

/// Token-based discovery.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BootstrapTokenDiscovery {
    /// Token to validate cluster-info with; always written.
    pub token: String,
    /// API server to fetch cluster-info from.
    #[serde(rename = "apiServerEndpoint", skip_serializing_if = "String::is_empty")]
    pub api_server_endpoint: String,
    /// `sha256:<hex>` pins of the CA public key.
    #[serde(rename = "caCertHashes", skip_serializing_if = "Vec::is_empty")]
    pub ca_cert_hashes: Vec<String>,
    /// Trust without pinning.
    #[serde(rename = "unsafeSkipCAVerification", skip_serializing_if = "is_false")]
    pub unsafe_skip_ca_verification: bool,
}

/// File- or URL-based discovery.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileDiscovery {
    /// Path or URL of a kubeconfig; always written.
    #[serde(rename = "kubeConfigPath")]
    pub kube_config_path: String,
}
