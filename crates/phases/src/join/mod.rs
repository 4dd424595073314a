//! `kubeadm join` (upstream's `cmd/join.go` and `cmd/phases/join/`): the generated phase tree
//! ([`tree`]), the data its phases share ([`JoinData`], upstream's `newJoinData`), [`discovery`]
//! (trust in the API server and the TLS bootstrap kubeconfig), what the node then reads from the
//! cluster (`cluster_config`), and one file per phase.

pub mod tree;

mod check_etcd;
mod cluster_config;
mod control_plane_join;
mod control_plane_prepare;
mod data;
pub mod discovery;
pub mod kubelet_start;
mod preflight;

pub use control_plane_join::JoinEtcdError;
pub use control_plane_prepare::DownloadError;
pub use data::{ClientSource, ControlPlaneContext, ControlPlaneContextError, JoinConnector, JoinData};
pub use kubelet_start::KubeletStartError;
pub use preflight::{
    NotReadyForControlPlane, NotReadyReason, SharedCertError, ready_for_additional_control_plane,
};

use kubeadm_workflow::Workflow;

/// The `kubeadm join` workflow: preflight and kubelet-start on every node, and the control-plane
/// phases, which return at once on a worker.
pub fn workflow() -> Workflow<JoinData> {
    let mut wf = tree::workflow();
    let bound = [
        wf.bind("preflight", preflight::run_preflight),
        wf.bind(
            "control-plane-prepare/download-certs",
            control_plane_prepare::run_download_certs,
        ),
        wf.bind("control-plane-prepare/certs", control_plane_prepare::run_certs),
        wf.bind(
            "control-plane-prepare/kubeconfig",
            control_plane_prepare::run_kubeconfig,
        ),
        wf.bind(
            "control-plane-prepare/control-plane",
            control_plane_prepare::run_control_plane,
        ),
        wf.bind("check-etcd", check_etcd::run_check_etcd),
        wf.bind("kubelet-start", kubelet_start::run_kubelet_start),
        wf.bind("control-plane-join/etcd", control_plane_join::run_etcd),
        wf.bind(
            "control-plane-join/update-status",
            control_plane_join::run_update_status,
        ),
        wf.bind(
            "control-plane-join/mark-control-plane",
            control_plane_join::run_mark_control_plane,
        ),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
