//! What the `kubeadm upgrade node` phases share (upstream's `nodeData`): the cluster's
//! configuration, whether this node runs a control plane, the flags and the effects.

use std::collections::BTreeSet;
use std::path::PathBuf;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::manifests::ManifestHostFacts;
use kubeadm_core::patches::{PatchError, PatchManager};
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;

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
    /// The container runtime (the checks' interface asks for one; the root check does not use it).
    pub runtime: Box<dyn Runtime>,
    /// What only a control-plane node's upgrade uses.
    pub control_plane: ControlPlaneTools,
    /// Whether a phase already printed the `--patches` folder's reading (upstream reads it once).
    pub patches_announced: bool,
    /// The effects the phases act through (real, or dry-run), chosen once by the caller.
    pub effects: kubeadm_effects::Effects,
}

/// What the `control-plane` phase of a control-plane node works with, beyond the rest.
pub struct ControlPlaneTools {
    /// `--etcd-upgrade`.
    pub etcd_upgrade: bool,
    /// `--certificate-renewal`.
    pub renew_certs: bool,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// Facts about the host the manifests depend on.
    pub facts: ManifestHostFacts,
    /// Now, Unix seconds.
    pub now: i64,
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
        self.effects.reporter.out(&format!("{line}\n"));
    }
}
