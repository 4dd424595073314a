//! The kubeadm workflows: init, join, reset and upgrade node.
//!
//! Each workflow is a phase tree ([`kubeadm_workflow::Workflow`]) with upstream's exact phase
//! names, help texts and flags; the `phase` subcommands, `--skip-phases` and the phase list in
//! help are all derived from it. The trees are generated from upstream's own tree by
//! `crates/cli/gen/gen.py` so that every text matches.
//!
//! Each phase will be glue: compute with kubeadm-core and apply the result through
//! kubeadm-effects, with a typed context per workflow. Until then the run functions are
//! placeholders that fail with [`NotImplemented`].

use kubeadm_workflow::PhaseError;

pub mod init;
pub mod join;
pub mod preflight;
pub mod reset;
pub mod upgrade_node;
pub mod upgrade_node_phases;

mod addon;
mod bootstrap_token;
pub mod certs;
mod cluster_config;
mod context;
mod control_plane;
mod etcd;
pub mod join_command;
mod join_data;
pub mod join_discovery;
mod join_kubeconfig;
mod join_phases;
pub mod kubeconfig;
mod kubelet;
mod kubelet_finalize;
mod mark_control_plane;
pub mod reset_cluster;
pub mod reset_phases;
mod upload_certs;
mod upload_config;
mod wait;

pub use bootstrap_token::{CreateTokensError, create_new_tokens};
pub use certs::{ExternalCaCheck, KeyPool, detect_external_ca, external_ca_check, pki_inputs};
pub use context::{ClusterAccess, ClusterConnectError, ClusterConnector, InitData};
pub use join_data::{ClientSource, JoinConnector, JoinData};
pub use reset_phases::ResetData;

/// The `kubeadm init` workflow with the phases implemented so far bound to their run functions.
pub fn init_workflow() -> kubeadm_workflow::Workflow<InitData> {
    let mut wf = init::workflow();
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
        wf.bind("kubelet-start", kubelet::run_start),
        wf.bind("preflight", preflight::run_phase),
        wf.bind("wait-control-plane", wait::run),
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

/// The `kubeadm join` workflow for worker nodes: preflight and kubelet-start, and the control-plane
/// phases, which do nothing on a worker as upstream's (a control-plane join is refused before the
/// workflow runs, and they fail with [`NotImplemented`] should one reach them).
pub fn join_workflow() -> kubeadm_workflow::Workflow<JoinData> {
    let mut wf = join::workflow();
    let bound = [
        wf.bind("preflight", join_phases::run_preflight),
        wf.bind("kubelet-start", join_phases::run_kubelet_start),
        wf.bind(
            "control-plane-prepare/download-certs",
            join_phases::run_download_certs,
        ),
        wf.bind("control-plane-prepare/certs", join_phases::run_control_plane_only),
        wf.bind(
            "control-plane-prepare/kubeconfig",
            join_phases::run_control_plane_only,
        ),
        wf.bind(
            "control-plane-prepare/control-plane",
            join_phases::run_control_plane_only,
        ),
        wf.bind("check-etcd", join_phases::run_control_plane_only),
        wf.bind("control-plane-join/etcd", join_phases::run_control_plane_only),
        wf.bind(
            "control-plane-join/update-status",
            join_phases::run_control_plane_only,
        ),
        wf.bind(
            "control-plane-join/mark-control-plane",
            join_phases::run_control_plane_only,
        ),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}

/// The `kubeadm upgrade node` workflow with its three phases bound to their run functions.
pub fn upgrade_node_workflow() -> kubeadm_workflow::Workflow<NodeData> {
    let mut wf = upgrade_node::workflow();
    let bound = [
        wf.bind("preflight", upgrade_node_phases::run_preflight),
        wf.bind("control-plane", upgrade_node_phases::run_control_plane),
        wf.bind("kubelet-config", upgrade_node_phases::run_kubelet_config),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}

/// The `kubeadm reset` workflow with its three phases bound to their run functions. What follows
/// the phases in `kubeadm reset` itself ([`reset_phases::clean_stateful_dirs`], the instructions)
/// is the caller's, as upstream's command runs it after the workflow and phase subcommands do not.
pub fn reset_workflow() -> kubeadm_workflow::Workflow<ResetData> {
    let mut wf = reset::workflow();
    let bound = [
        wf.bind("preflight", reset_phases::run_preflight),
        wf.bind("remove-etcd-member", reset_phases::run_remove_etcd_member),
        wf.bind("cleanup-node", reset_phases::run_cleanup_node),
    ];
    debug_assert!(
        bound.iter().all(|b| *b),
        "a bound phase is missing from the generated tree"
    );
    wf
}

pub use cluster_config::{FetchError, fetch_new_node_config};
pub use upgrade_node_phases::NodeData;

/// The error of a phase that is not implemented yet.
#[derive(Debug, thiserror::Error)]
#[error("not implemented yet in kubeadm-rs")]
pub struct NotImplemented;

/// Run function of every phase until it is implemented.
pub(crate) fn pending<C>(_: &mut C) -> Result<(), PhaseError> {
    Err(Box::new(NotImplemented))
}

/// Run-if condition of every conditional phase until it is implemented: the phase is considered.
#[allow(dead_code)] // upstream 1.25 phases decide inside their run functions; kept for the generator.
pub(crate) fn pending_condition<C>(_: &C) -> Result<bool, PhaseError> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skip selectors users write must exist in the trees (checked against upstream's docs).
    #[test]
    fn known_selectors_exist() {
        let init = init::workflow().selectors();
        for s in [
            "preflight",
            "certs",
            "certs/ca",
            "certs/all",
            "kubeconfig/admin",
            "wait-control-plane",
            "addon/kube-proxy",
        ] {
            assert!(init.contains(&s.to_string()), "{s} missing from {init:?}");
        }
        let join = join::workflow().selectors();
        assert!(join.contains(&"control-plane-join/etcd".to_string()));
        assert_eq!(
            reset::workflow().selectors(),
            ["preflight", "remove-etcd-member", "cleanup-node"]
        );
        assert_eq!(
            upgrade_node::workflow().selectors(),
            ["preflight", "control-plane", "kubelet-config"]
        );
    }

    #[test]
    fn placeholders_fail() {
        let err = pending::<()>(&mut ()).expect_err("placeholders fail");
        assert_eq!(err.to_string(), "not implemented yet in kubeadm-rs");
    }
}
