//! The `control-plane` phase of `kubeadm init` and its sub-phases (upstream's
//! `cmd/phases/init/controlplane.go`): each bound to the static Pod manifest it writes in
//! [`crate::control_plane`], which `join --control-plane`'s `control-plane-prepare control-plane`
//! shares.

use crate::InitData;
use crate::control_plane;

/// Every selector the control-plane phases bind, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![
        ("control-plane", control_plane::run_parent),
        ("control-plane/apiserver", control_plane::run_apiserver),
        (
            "control-plane/controller-manager",
            control_plane::run_controller_manager,
        ),
        ("control-plane/scheduler", control_plane::run_scheduler),
    ]
}
