//! `kubeadm join` (upstream's `cmd/join.go` and `cmd/phases/join/`): the generated phase tree
//! ([`tree`]), the data its phases share ([`JoinData`], upstream's `newJoinData`), [`discovery`]
//! (trust in the API server and the TLS bootstrap kubeconfig), what the node then reads from the
//! cluster (`cluster_config`), and one file per phase.

pub mod tree;

mod cluster_config;
mod control_plane;
mod data;
pub mod discovery;
mod kubelet_start;
mod preflight;

pub use data::{ClientSource, JoinConnector, JoinData};
pub use kubelet_start::KubeletStartError;

use kubeadm_workflow::Workflow;

/// The `kubeadm join` workflow for worker nodes: preflight and kubelet-start, and the control-plane
/// phases, which do nothing on a worker as upstream's (a control-plane join is refused before the
/// workflow runs, and they fail with [`crate::NotImplemented`] should one reach them).
pub fn workflow() -> Workflow<JoinData> {
    let mut wf = tree::workflow();
    let bound = [
        wf.bind("preflight", preflight::run_preflight),
        wf.bind("kubelet-start", kubelet_start::run_kubelet_start),
        wf.bind(
            "control-plane-prepare/download-certs",
            control_plane::run_download_certs,
        ),
        wf.bind(
            "control-plane-prepare/certs",
            control_plane::run_control_plane_only,
        ),
        wf.bind(
            "control-plane-prepare/kubeconfig",
            control_plane::run_control_plane_only,
        ),
        wf.bind(
            "control-plane-prepare/control-plane",
            control_plane::run_control_plane_only,
        ),
        wf.bind("check-etcd", control_plane::run_control_plane_only),
        wf.bind("control-plane-join/etcd", control_plane::run_control_plane_only),
        wf.bind(
            "control-plane-join/update-status",
            control_plane::run_control_plane_only,
        ),
        wf.bind(
            "control-plane-join/mark-control-plane",
            control_plane::run_control_plane_only,
        ),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
