//! Marking a control-plane node (upstream's `app/phases/markcontrolplane`), for `kubeadm init`'s
//! `mark-control-plane` phase and `join --control-plane`'s: the control-plane labels and the configured taints on this
//! node's Node object, as one strategic merge patch.

use kubeadm_core::cluster::node;
use kubeadm_effects::cluster::ClusterError;
use kubeadm_workflow::PhaseError;

use crate::ClusterConnectError;
use crate::InitData;

/// Why the node could not be marked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MarkError {
    /// No client.
    #[error(transparent)]
    Client(#[from] ClusterConnectError),
    /// The patch failed (upstream returns the patch error unwrapped).
    #[error(transparent)]
    Patch(ClusterError),
}

/// `mark-control-plane`.
pub(crate) fn run(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(MarkError::Client)?;
    let reg = &data.cfg.init.node_registration;
    let taints = reg.taints.clone().unwrap_or_default();
    for line in node::mark_control_plane_messages(&reg.name, &taints) {
        data.say(&line);
    }
    c.patch_node(&reg.name, &mut |current| {
        let mut marked = current.clone();
        node::mark_control_plane(&mut marked, &taints);
        node::two_way_merge_patch(current, &marked)
    })
    .map_err(MarkError::Patch)?;
    Ok(())
}
