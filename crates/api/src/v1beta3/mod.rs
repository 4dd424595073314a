//! `kubeadm.k8s.io/v1beta3` as on the wire, also used as our internal model: field names, `omitempty`
//! and `null`s follow the Go struct tags so that serialising gives what Go's `encoding/json` gives.

mod cluster;
mod init;
mod join;
mod node;
mod token;

pub use cluster::{
    ApiServer, ClusterConfiguration, ControlPlaneComponent, Dns, Etcd, ExternalEtcd, HostPathMount,
    ImageMeta, LocalEtcd, Networking,
};
pub use init::InitConfiguration;
pub use join::{BootstrapTokenDiscovery, Discovery, FileDiscovery, JoinConfiguration, JoinControlPlane};
pub use node::{ApiEndpoint, NodeRegistrationOptions, Patches, Taint};
pub use token::{BootstrapToken, BootstrapTokenError, BootstrapTokenString};

/// The group of kubeadm's own configuration kinds.
pub const GROUP: &str = "kubeadm.k8s.io";
/// `kubeadm.k8s.io/v1beta3`.
pub const API_VERSION: &str = "kubeadm.k8s.io/v1beta3";
