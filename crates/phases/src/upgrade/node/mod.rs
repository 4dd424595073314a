//! `kubeadm upgrade node` (upstream's `cmd/upgrade/node.go` and `cmd/phases/upgrade/node/`): the
//! generated phase tree ([`tree`]), the data its phases share ([`NodeData`]) and one file per phase.
//!
//! On a worker: `preflight` checks for root and skips the image pull, `control-plane` says it has
//! nothing to do, `kubelet-config` rewrites the kubelet's configuration from the cluster. On a
//! control-plane node, `preflight` pulls the control-plane images and `control-plane` runs the
//! static-pod upgrade of [`crate::upgrade::staticpods`].

pub mod tree;

mod control_plane;
mod data;
mod kubelet_config;
mod preflight;

pub use data::{ControlPlaneTools, NodeData};
pub use kubelet_config::{KubeletConfigError, NodeRegistrationError};

use kubeadm_workflow::Workflow;

/// The `kubeadm upgrade node` workflow with its three phases bound to their run functions.
pub fn workflow() -> Workflow<NodeData> {
    let mut wf = tree::workflow();
    let bound = [
        wf.bind("preflight", preflight::run_preflight),
        wf.bind("control-plane", control_plane::run_control_plane),
        wf.bind("kubelet-config", kubelet_config::run_kubelet_config),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
