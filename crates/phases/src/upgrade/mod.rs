//! `kubeadm upgrade` (upstream's `cmd/upgrade/` and `phases/upgrade/`): [`apply`], the workflow of
//! `kubeadm upgrade apply` once its flags are read; [`common`], what the
//! upgrade commands share (the output printer, the configuration, the registry move, the CRI socket
//! repair, the root and CoreDNS checks); [`diff`], `upgrade diff`; [`health`], the cluster health checks run before planning
//! or applying an upgrade; [`versions`], the versions a cluster runs; [`plan`], how `upgrade plan`
//! prints an upgrade; [`component_configs`], the state of the component configs it reports;
//! [`staticpods`], the static-pod upgrade of a control-plane node (with its backups and rollback);
//! [`postupgrade`], what `upgrade apply` uploads and applies afterwards; and [`node`], the
//! workflow of `kubeadm upgrade node`. The version skew policy of `apply` is
//! `kubeadm_core::upgrade::policy`.

pub mod apply;
pub mod common;
pub mod component_configs;
pub mod diff;
pub mod health;
pub mod node;
pub mod plan;
pub mod postupgrade;
pub mod staticpods;
pub mod versions;

/// Why an upgrade command failed, by the exit code it gives.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    /// Exit code 1.
    #[error("{0}")]
    Failed(String),
    /// A preflight check failed: exit code 2.
    #[error("{0}")]
    Preflight(String),
    /// Bad input: exit code 3.
    #[error("{0}")]
    Validation(String),
}

/// The rule between the sections of `kubeadm upgrade plan`'s text output.
pub const SEPARATOR: &str = "_____________________________________________________________________\n\n";
