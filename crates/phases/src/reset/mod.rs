//! `kubeadm reset` (upstream's `cmd/reset.go` and `cmd/phases/reset/`): the generated phase tree
//! ([`tree`]), the data its phases share ([`ResetData`], upstream's `newResetData`), one file per
//! phase, and [`finish`] (what `kubeadm reset` does after its phases). What reset reads of the
//! cluster's configuration is in [`crate::config_from_cluster`].

pub mod tree;

mod cleanup_node;
mod data;
pub mod finish;
mod mount_table;
mod preflight;
mod remove_etcd_member;

pub use cleanup_node::clean_dir;
pub use data::{DEFAULT_CERT_DIR, EtcdConnector, EtcdTlsFiles, ResetData};
pub use mount_table::{decode_mount_path, mount_points, mounts_below};
pub use preflight::ConfirmError;
pub use remove_etcd_member::{
    DataDirRefusal, EtcdDataDirError, SYSTEM_DIRS, check_etcd_data_dir, etcd_data_dir,
};

use kubeadm_workflow::Workflow;

/// The `kubeadm reset` workflow with its three phases bound to their run functions. What follows
/// the phases in `kubeadm reset` itself ([`finish::clean_stateful_dirs`], the instructions)
/// is the caller's, as upstream's command runs it after the workflow and phase subcommands do not.
pub fn workflow() -> Workflow<ResetData> {
    let mut wf = tree::workflow();
    let bound = [
        wf.bind("preflight", preflight::run_preflight),
        wf.bind("remove-etcd-member", remove_etcd_member::run_remove_etcd_member),
        wf.bind("cleanup-node", cleanup_node::run_cleanup_node),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
