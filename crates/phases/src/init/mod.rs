//! `kubeadm init` (upstream's `cmd/init.go` and `cmd/phases/init/`): the generated phase tree
//! ([`tree`]), one file per phase named after it, and [`finish`], the text `init` prints when it is
//! done. What other workflows share with init (the data its phases work on, [`InitData`], upstream's
//! `newInitData`; certificates, kubeconfig files, static Pods, marking the control plane, addons,
//! uploading the configuration) lives in the crate's shared modules, as upstream's `app/phases/*`
//! do; the phase files here bind init's phases to them.

pub mod tree;

mod addon;
mod bootstrap_token;
mod certs;
mod control_plane;
mod etcd;
pub mod finish;
mod kubeconfig;
mod kubelet_finalize;
mod kubelet_start;
mod mark_control_plane;
mod preflight;
mod upload_certs;
mod upload_config;
mod wait_control_plane;

pub use crate::control_plane_data::InitData;
pub use bootstrap_token::{CreateTokensError, create_new_tokens};

use kubeadm_workflow::Workflow;

/// The `kubeadm init` workflow with its phases bound to their run functions.
pub fn workflow() -> Workflow<InitData> {
    let mut wf = tree::workflow();
    let generated = certs::bindings()
        .into_iter()
        .chain(kubeconfig::bindings())
        .chain(control_plane::bindings())
        .chain(upload_config::bindings())
        .chain(mark_control_plane::bindings())
        .chain(addon::bindings())
        .map(|(selector, run)| wf.bind(selector, run))
        .collect::<Vec<_>>();
    let bound = [
        wf.bind("etcd/local", etcd::run_local),
        wf.bind("kubelet-start", kubelet_start::run_start),
        wf.bind("preflight", preflight::run),
        wf.bind("wait-control-plane", wait_control_plane::run),
        wf.bind("upload-certs", upload_certs::run),
        wf.bind("bootstrap-token", bootstrap_token::run),
        wf.bind(
            "kubelet-finalize/experimental-cert-rotation",
            kubelet_finalize::run_cert_rotation,
        ),
    ];
    debug_assert!(
        bound.iter().chain(&generated).all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
