//! The `control-plane` phase of `kubeadm upgrade node` (upstream's
//! `cmd/phases/upgrade/node/controlplane.go`): nothing on a worker; the static-pod upgrade of a
//! control-plane node is not implemented yet and says so.

use kubeadm_workflow::PhaseError;

use crate::NotImplemented;
use crate::upgrade::node::NodeData;

/// Upstream's `runControlPlane`: nothing on a worker.
pub(crate) fn run_control_plane(data: &mut NodeData) -> Result<(), PhaseError> {
    if data.is_control_plane {
        return Err(Box::new(NotImplemented));
    }
    data.say("[upgrade] Skipping phase. Not a control plane node.");
    Ok(())
}
