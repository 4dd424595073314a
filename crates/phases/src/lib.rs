//! The kubeadm workflows, one folder each, shaped like upstream's phase tree: [`init`], [`join`],
//! [`reset`] and [`upgrade`] (`upgrade node` so far), with [`preflight`] (the checks every workflow
//! runs) and what several workflows share: [`config_from_cluster`] (the cluster's configuration as
//! a new node reads it) and the kubelet's files and service.
//!
//! A workflow folder holds `tree.rs`, the phase tree ([`kubeadm_workflow::Workflow`]) with
//! upstream's exact phase names, help texts and flags, generated from upstream's own tree by
//! `crates/cli/gen/gen.py` (the `phase` subcommands, `--skip-phases` and the phase list in help
//! are all derived from it); the typed data its phases share (upstream's `newInitData`,
//! `newJoinData`, …); and the phases, one file per phase where they are more than a few lines: a
//! phase printed as `[upload-certs]` or `control-plane-join/etcd` lives in
//! `<workflow>/<phase>.rs`. Each workflow's `workflow()` binds the run functions to the tree.
//!
//! Phases are glue: they compute with kubeadm-core and apply the result through kubeadm-effects.
//! They do no I/O of their own, so every phase runs on the recording fakes of kubeadm-testkit.
//!
//! Depends on kubeadm-yaml, kubeadm-api, kubeadm-core, kubeadm-effects and kubeadm-workflow only.

use kubeadm_workflow::PhaseError;

pub(crate) mod addons;
pub mod certs;
pub mod config_from_cluster;
pub(crate) mod control_plane;
pub mod control_plane_data;
mod diagnose;
mod dry_run;
pub mod etcd_cluster;
pub mod init;
pub mod join;
pub mod kubeconfig;
mod kubelet;
pub(crate) mod mark_control_plane;
mod mirror_pods;
pub mod patches;
pub mod pki;
pub mod preflight;
pub mod renewal;
pub mod reset;
pub mod upgrade;
pub(crate) mod upload_config;
pub mod users;

pub use certs::{ExternalCaCheck, detect_external_ca, external_ca_check};
pub use config_from_cluster::{FetchError, fetch_new_node_config, log_config_warnings};
pub use control_plane_data::{ClusterAccess, ClusterConnectError, ClusterConnector, InitData};
pub use init::{CreateTokensError, create_new_tokens};
pub use join::{ClientSource, JoinConnector, JoinData};
pub use pki::{KeyPool, pki_inputs};
pub use reset::ResetData;
pub use upgrade::node::NodeData;

pub use kubeadm_effects::SuppliedError;

/// A timeout variable's value that is not a positive Go duration; the message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={text:?}: not a positive duration such as \"90s\" or \"10m\"")]
pub struct TimeoutEnvError {
    /// The variable.
    pub var: String,
    /// Its value.
    pub text: String,
}

/// A wait's timeout set by an environment variable beyond upstream 1.25 (which has no setting for
/// it; later releases added `timeouts` to their configuration): `default` when `value` (the
/// variable's) is unset, else the Go duration it holds; a value that is not a positive duration is
/// refused with a message naming the variable.
pub fn timeout_from_env(
    var: &str,
    value: Option<&str>,
    default: std::time::Duration,
) -> Result<std::time::Duration, TimeoutEnvError> {
    let Some(text) = value else {
        return Ok(default);
    };
    let bad = || TimeoutEnvError {
        var: var.to_string(),
        text: text.to_string(),
    };
    let d = kubeadm_api::duration::Duration::parse(text).map_err(|_| bad())?;
    u64::try_from(d.as_nanos())
        .ok()
        .filter(|n| *n > 0)
        .map(std::time::Duration::from_nanos)
        .ok_or_else(bad)
}

/// The error of a phase that is not implemented yet.
#[derive(Debug, thiserror::Error)]
#[error("not implemented yet in kubeadm-rs")]
pub struct NotImplemented;

/// Run function of every phase until it is implemented.
pub(crate) fn pending<C>(_: &mut C) -> Result<(), PhaseError> {
    Err(NotImplemented.into())
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
        let init = init::tree::workflow().selectors();
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
        let join = join::tree::workflow().selectors();
        assert!(join.contains(&"control-plane-join/etcd".to_string()));
        assert_eq!(
            reset::tree::workflow().selectors(),
            ["preflight", "remove-etcd-member", "cleanup-node"]
        );
        assert_eq!(
            upgrade::node::tree::workflow().selectors(),
            ["preflight", "control-plane", "kubelet-config"]
        );
    }

    /// Every run function is bound to a phase of the generated tree: `bind` returns false for a
    /// selector that names no phase, and each `workflow()` debug-asserts that none did, so building
    /// them here (a debug build) fails on a binding whose phase is missing or misspelt.
    #[test]
    fn every_binding_names_a_phase_of_the_tree() {
        let _ = init::workflow();
        let _ = join::workflow();
        let _ = reset::workflow();
        let _ = upgrade::node::workflow();
    }

    #[test]
    fn placeholders_fail() {
        let err = pending::<()>(&mut ()).expect_err("placeholders fail");
        assert_eq!(err.to_string(), "not implemented yet in kubeadm-rs");
    }
}
