//! The control-plane phases of `kubeadm join` (upstream's `cmd/phases/join/controlplane*.go` and
//! `checketcd.go`) as a worker runs them: they return at once.

use kubeadm_workflow::PhaseError;

use crate::join::JoinData;

/// The control-plane phases on a worker: upstream's run functions return at once when the join
/// configuration has no `controlPlane` (a control-plane join is not implemented yet).
pub(crate) fn run_control_plane_only(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    Err(Box::new(crate::NotImplemented))
}

/// `control-plane-prepare/download-certs` on a worker (upstream logs that it skips).
pub(crate) fn run_download_certs(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        data.reporter.info(
            1,
            "controlplaneprepare.go",
            "[download-certs] Skipping certs download",
        );
    }
    run_control_plane_only(data)
}
