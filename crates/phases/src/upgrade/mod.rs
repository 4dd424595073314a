//! `kubeadm upgrade` (upstream's `cmd/upgrade/` and `phases/upgrade/`): [`health`], the cluster
//! health checks run before planning or applying an upgrade; [`component_configs`], the state of
//! the component configs `upgrade plan` reports; and [`node`], the workflow of `kubeadm upgrade
//! node`.

pub mod component_configs;
pub mod health;
pub mod node;

/// The rule between the sections of `kubeadm upgrade plan`'s text output.
pub const SEPARATOR: &str = "_____________________________________________________________________\n\n";
