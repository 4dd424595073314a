//! What the `kubeadm upgrade node` phases share (upstream's `nodeData`): the cluster's
//! configuration, whether this node runs a control plane, the flags and the effects.

use std::collections::BTreeSet;
use std::path::PathBuf;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::manifests::ManifestHostFacts;
use kubeadm_core::patches::{PatchError, PatchManager};
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::keygen::KeyGen;
use kubeadm_effects::report::Reporter;

use crate::etcd_cluster::EtcdConnector;

/// What the `upgrade node` phases work from (upstream's `nodeData`).
pub struct NodeData {
    /// The cluster's configuration (for a worker, without this node's registration).
    pub cfg: InitConfig,
    /// `--dry-run`.
    pub dry_run: bool,
    /// Whether this node runs a control plane (its kube-apiserver manifest exists).
    pub is_control_plane: bool,
    /// The API server, through `--kubeconfig` (a dry-run decorator in a dry run).
    pub cluster: Box<dyn Cluster>,
    /// `--kubeconfig`: also where the node's name is read from.
    pub kubeconfig_path: PathBuf,
    /// `--patches`: the directory, and what reading it gave (an error is the phase's to report).
    pub patches: Option<(String, Result<PatchManager, PatchError>)>,
    /// The preflight checks whose errors become warnings (lower case).
    pub ignore_preflight_errors: BTreeSet<String>,
    /// `/var/lib/kubelet`.
    pub kubelet_dir: PathBuf,
    /// The file system (a dry-run overlay in a dry run).
    pub fs: Box<dyn Fs>,
    /// What the root check reads.
    pub host_probe: Box<dyn HostProbe>,
    /// The container runtime (the checks' interface asks for one; the root check does not use it).
    pub runtime: Box<dyn Runtime>,
    /// Where output goes.
    pub reporter: Box<dyn Reporter>,
    /// What only a control-plane node's upgrade uses.
    pub control_plane: ControlPlaneTools,
    /// Whether a phase already printed the `--patches` folder's reading (upstream reads it once).
    pub patches_announced: bool,
}

/// What the `control-plane` phase of a control-plane node works with, beyond the rest.
pub struct ControlPlaneTools {
    /// `--etcd-upgrade`.
    pub etcd_upgrade: bool,
    /// `--certificate-renewal`.
    pub renew_certs: bool,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// Opens etcd clients.
    pub etcd: EtcdConnector,
    /// Generates the keys of renewed certificates.
    pub keygen: Box<dyn KeyGen>,
    /// Facts about the host the manifests depend on.
    pub facts: ManifestHostFacts,
    /// Now, Unix seconds.
    pub now: i64,
    /// Random values (temporary folder names, serial numbers).
    pub random: fn() -> u64,
    /// How long each upgraded component gets.
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for ControlPlaneTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlaneTools")
            .field("etcd_upgrade", &self.etcd_upgrade)
            .field("renew_certs", &self.renew_certs)
            .field("kubernetes_dir", &self.kubernetes_dir)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NodeData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeData")
            .field("dry_run", &self.dry_run)
            .field("is_control_plane", &self.is_control_plane)
            .field("kubeconfig_path", &self.kubeconfig_path)
            .field("kubelet_dir", &self.kubelet_dir)
            .finish_non_exhaustive()
    }
}

impl NodeData {
    pub(crate) fn say(&self, line: &str) {
        self.reporter.out(&format!("{line}\n"));
    }
}
