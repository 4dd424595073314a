//! `ClusterConfiguration` and its parts: cluster-wide settings shared by every control-plane node.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::duration::Duration;
use crate::omitempty::is_false;

/// Cluster-wide configuration (`kind: ClusterConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterConfiguration {
    /// `kubeadm.k8s.io/v1beta3` when written.
    #[serde(rename = "apiVersion", skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ClusterConfiguration` when written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Local or external etcd.
    pub etcd: Etcd,
    /// Service and pod networks and the DNS domain.
    pub networking: Networking,
    /// Target Kubernetes version (a version or a label such as `stable-1`).
    #[serde(rename = "kubernetesVersion", skip_serializing_if = "String::is_empty")]
    pub kubernetes_version: String,
    /// A stable address (`host[:port]`) for the control plane.
    #[serde(rename = "controlPlaneEndpoint", skip_serializing_if = "String::is_empty")]
    pub control_plane_endpoint: String,
    /// kube-apiserver settings.
    #[serde(rename = "apiServer")]
    pub api_server: ApiServer,
    /// kube-controller-manager settings.
    #[serde(rename = "controllerManager")]
    pub controller_manager: ControlPlaneComponent,
    /// kube-scheduler settings.
    pub scheduler: ControlPlaneComponent,
    /// CoreDNS settings.
    pub dns: Dns,
    /// Where certificates live.
    #[serde(rename = "certificatesDir", skip_serializing_if = "String::is_empty")]
    pub certificates_dir: String,
    /// Registry for control-plane images.
    #[serde(rename = "imageRepository", skip_serializing_if = "String::is_empty")]
    pub image_repository: String,
    /// kubeadm feature gates.
    #[serde(rename = "featureGates", skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Cluster name, used in kubeconfigs.
    #[serde(rename = "clusterName", skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
}

/// Settings common to the control-plane components.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ControlPlaneComponent {
    /// Extra `--flag=value` arguments.
    #[serde(rename = "extraArgs", skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_args: BTreeMap<String, String>,
    /// Extra host-path volumes.
    #[serde(rename = "extraVolumes", skip_serializing_if = "Vec::is_empty")]
    pub extra_volumes: Vec<HostPathMount>,
}

/// kube-apiserver settings. Upstream inlines `ControlPlaneComponent` here; we spell its fields out
/// because serde's `flatten` would hide unknown fields from the strict-decoding pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiServer {
    /// Extra `--flag=value` arguments.
    #[serde(rename = "extraArgs", skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_args: BTreeMap<String, String>,
    /// Extra host-path volumes.
    #[serde(rename = "extraVolumes", skip_serializing_if = "Vec::is_empty")]
    pub extra_volumes: Vec<HostPathMount>,
    /// Extra subject alternative names for the serving certificate.
    #[serde(rename = "certSANs", skip_serializing_if = "Vec::is_empty")]
    pub cert_sans: Vec<String>,
    /// How long to wait for the API server to come up.
    #[serde(rename = "timeoutForControlPlane", skip_serializing_if = "Option::is_none")]
    pub timeout_for_control_plane: Option<Duration>,
}

/// CoreDNS settings (upstream inlines `ImageMeta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Dns {
    /// Registry override.
    #[serde(rename = "imageRepository", skip_serializing_if = "String::is_empty")]
    pub image_repository: String,
    /// Tag override.
    #[serde(rename = "imageTag", skip_serializing_if = "String::is_empty")]
    pub image_tag: String,
}

/// An image repository and tag override.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImageMeta {
    /// Registry override.
    #[serde(rename = "imageRepository", skip_serializing_if = "String::is_empty")]
    pub image_repository: String,
    /// Tag override.
    #[serde(rename = "imageTag", skip_serializing_if = "String::is_empty")]
    pub image_tag: String,
}

/// Cluster networks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Networking {
    /// Service CIDR(s), comma separated for dual stack.
    #[serde(rename = "serviceSubnet", skip_serializing_if = "String::is_empty")]
    pub service_subnet: String,
    /// Pod CIDR(s), comma separated for dual stack.
    #[serde(rename = "podSubnet", skip_serializing_if = "String::is_empty")]
    pub pod_subnet: String,
    /// Cluster DNS domain.
    #[serde(rename = "dnsDomain", skip_serializing_if = "String::is_empty")]
    pub dns_domain: String,
}

/// Local (static pod) or external etcd; exactly one is set after defaulting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Etcd {
    /// etcd run by kubeadm as a static pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalEtcd>,
    /// An etcd cluster run elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalEtcd>,
}

/// etcd run by kubeadm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalEtcd {
    /// Registry override.
    #[serde(rename = "imageRepository", skip_serializing_if = "String::is_empty")]
    pub image_repository: String,
    /// Tag override.
    #[serde(rename = "imageTag", skip_serializing_if = "String::is_empty")]
    pub image_tag: String,
    /// Data directory; always written (no `omitempty` upstream).
    #[serde(rename = "dataDir")]
    pub data_dir: String,
    /// Extra `--flag=value` arguments.
    #[serde(rename = "extraArgs", skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_args: BTreeMap<String, String>,
    /// Extra SANs for the etcd server certificate.
    #[serde(rename = "serverCertSANs", skip_serializing_if = "Vec::is_empty")]
    pub server_cert_sans: Vec<String>,
    /// Extra SANs for the etcd peer certificate.
    #[serde(rename = "peerCertSANs", skip_serializing_if = "Vec::is_empty")]
    pub peer_cert_sans: Vec<String>,
}

/// An external etcd cluster; every field is written even when empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExternalEtcd {
    /// Client URLs; `null` when unset.
    pub endpoints: Option<Vec<String>>,
    /// CA bundle.
    #[serde(rename = "caFile")]
    pub ca_file: String,
    /// Client certificate.
    #[serde(rename = "certFile")]
    pub cert_file: String,
    /// Client key.
    #[serde(rename = "keyFile")]
    pub key_file: String,
}

/// A host path mounted into a control-plane static pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostPathMount {
    /// Volume name.
    pub name: String,
    /// Path on the host.
    #[serde(rename = "hostPath")]
    pub host_path: String,
    /// Path in the container.
    #[serde(rename = "mountPath")]
    pub mount_path: String,
    /// Mount read-only.
    #[serde(rename = "readOnly", skip_serializing_if = "is_false")]
    pub read_only: bool,
    /// `corev1.HostPathType` (`DirectoryOrCreate`, `File`, …).
    #[serde(rename = "pathType", skip_serializing_if = "String::is_empty")]
    pub path_type: String,
}
