//! What the `kubeadm reset` phases share (upstream's `resetData` from `newResetData`): the
//! configuration fetched from the cluster (when there is one), the flags, the well-known
//! directories, the stateful directories the phases collect for emptying, and the effects.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::PathBuf;

use kubeadm_api::internal::InitConfig;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;

pub use crate::etcd_cluster::{EtcdConnector, EtcdTlsFiles};

/// Upstream's default `--cert-dir`.
pub const DEFAULT_CERT_DIR: &str = kubeadm_core::layout::PKI_DIR;

/// What the reset phases work from.
pub struct ResetData {
    /// The configuration fetched from the cluster, `None` when there is no cluster to ask (upstream
    /// only warns then).
    pub cfg: Option<InitConfig>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `-f/--force`: no confirmation prompt.
    pub force: bool,
    /// The preflight checks whose errors become warnings (lower case).
    pub ignore_preflight_errors: BTreeSet<String>,
    /// `--cert-dir`, emptied by `cleanup-node`.
    pub cert_dir: PathBuf,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// `/var/lib/kubelet`.
    pub kubelet_dir: PathBuf,
    /// The mount table (`/proc/self/mountinfo`; a `/proc/mounts` text is read too).
    pub mounts_file: PathBuf,
    /// Where the confirmation answer is read from (standard input).
    pub input: Box<dyn BufRead + Send>,
    /// The directories emptied after the phases, in the order the phases added them.
    pub dirs_to_clean: Vec<PathBuf>,
    /// Whether the directories of `dirs_to_clean` are emptied after the phases
    /// ([`crate::reset::finish::clean_stateful_dirs`]): the whole `kubeadm reset`, not a `reset
    /// phase` command. `cleanup-node` then empties those the phases before it collected (etcd's
    /// data) before it deletes the files that say where they are (see `run_cleanup_node`).
    pub stateful_dirs_after: bool,
    /// The container runtime behind the CRI socket in use.
    pub runtime: Box<dyn Runtime>,
    /// The API server, when `--kubeconfig` gave a usable client.
    pub cluster: Option<Box<dyn Cluster>>,
    /// The effects the phases act through (real, or dry-run), chosen once by the caller.
    pub effects: kubeadm_effects::Effects,
}

impl std::fmt::Debug for ResetData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResetData")
            .field("dry_run", &self.dry_run)
            .field("force", &self.force)
            .field("cert_dir", &self.cert_dir)
            .field("dirs_to_clean", &self.dirs_to_clean)
            .field("stateful_dirs_after", &self.stateful_dirs_after)
            .field("has_cfg", &self.cfg.is_some())
            .finish_non_exhaustive()
    }
}

impl ResetData {
    pub(crate) fn say(&self, line: &str) {
        self.effects.reporter.out(&format!("{line}\n"));
    }
}
