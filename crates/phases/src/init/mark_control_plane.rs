//! The `mark-control-plane` phase of `kubeadm init` (upstream's
//! `cmd/phases/init/markcontrolplane.go`), bound to [`crate::mark_control_plane`], which `join
//! --control-plane`'s `control-plane-join mark-control-plane` shares.

use crate::InitData;
use crate::mark_control_plane;

/// The selector the phase binds, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![("mark-control-plane", mark_control_plane::run)]
}
