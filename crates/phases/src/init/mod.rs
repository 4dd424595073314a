//! `kubeadm init` (upstream's `cmd/init.go` and `cmd/phases/init/`): the generated phase tree
//! ([`tree`]), the data its phases share ([`InitData`], upstream's `newInitData`), one file per
//! phase named after it, and [`finish`], the text `init` prints when it is done.

pub mod tree;

pub(crate) mod addon;
mod bootstrap_token;
pub mod certs;
pub(crate) mod control_plane;
mod data;
mod etcd;
pub mod finish;
pub mod kubeconfig;
mod kubelet_finalize;
mod kubelet_start;
pub(crate) mod mark_control_plane;
pub mod pki;
mod preflight;
mod upload_certs;
pub(crate) mod upload_config;
pub(crate) mod wait_control_plane;

pub use bootstrap_token::{CreateTokensError, create_new_tokens};
pub use certs::{ExternalCaCheck, detect_external_ca, external_ca_check};
pub use data::{ClusterAccess, ClusterConnectError, ClusterConnector, InitData};
pub use pki::{CertsError, KeyPool, pki_inputs};

use kubeadm_workflow::Workflow;

/// The `kubeadm init` workflow with its phases bound to their run functions.
pub fn workflow() -> Workflow<InitData> {
    let mut wf = tree::workflow();
    let generated = certs::bindings()
        .into_iter()
        .chain(kubeconfig::bindings())
        .map(|(selector, run)| wf.bind(selector, run))
        .collect::<Vec<_>>();
    let bound = [
        wf.bind("control-plane", control_plane::run_parent),
        wf.bind("control-plane/apiserver", control_plane::run_apiserver),
        wf.bind(
            "control-plane/controller-manager",
            control_plane::run_controller_manager,
        ),
        wf.bind("control-plane/scheduler", control_plane::run_scheduler),
        wf.bind("etcd/local", etcd::run_local),
        wf.bind("kubelet-start", kubelet_start::run_start),
        wf.bind("preflight", preflight::run),
        wf.bind("wait-control-plane", wait_control_plane::run),
        wf.bind("upload-config/kubeadm", upload_config::run_kubeadm),
        wf.bind("upload-config/kubelet", upload_config::run_kubelet),
        wf.bind("upload-certs", upload_certs::run),
        wf.bind("mark-control-plane", mark_control_plane::run),
        wf.bind("bootstrap-token", bootstrap_token::run),
        wf.bind(
            "kubelet-finalize/experimental-cert-rotation",
            kubelet_finalize::run_cert_rotation,
        ),
        wf.bind("addon/coredns", addon::run_coredns),
        wf.bind("addon/kube-proxy", addon::run_kube_proxy),
    ];
    debug_assert!(
        bound.iter().chain(&generated).all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}
