//! The hidden `check-etcd` phase of `kubeadm join` (upstream's `cmd/phases/join/checketcd.go`): with
//! a local etcd, every member answers before this node's kubelet starts. Returns at once on a worker
//! and, after its line, in a dry run.

use kubeadm_workflow::PhaseError;

use crate::etcd_cluster::check_cluster_health;
use crate::join::JoinData;
use crate::join::control_plane_join::{JoinEtcdError, etcd_client};

/// The hidden `check-etcd` phase: with local etcd, every member answers before this node joins.
pub(crate) fn run_check_etcd(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    data.control_plane_data()?;
    let (Some(cp), connect) = (data.control_plane.as_ref(), &data.effects.etcd) else {
        return Ok(());
    };
    if cp.cfg.cluster.etcd.external.is_some() {
        cp.say("[check-etcd] Skipping etcd check in external mode");
        return Ok(());
    }
    cp.say("[check-etcd] Checking that the etcd cluster is healthy");
    // A dry run does not contact etcd (upstream's does, for this read-only check; ours keeps every
    // dry run off etcd, as reset's).
    if data.dry_run {
        return Ok(());
    }
    let etcd = etcd_client(cp, connect)?;
    check_cluster_health(&*etcd).map_err(JoinEtcdError::Unhealthy)?;
    Ok(())
}
