//! The `control-plane` phase of `kubeadm upgrade node` (upstream's
//! `cmd/phases/upgrade/node/controlplane.go`): nothing on a worker; on a control-plane node, the
//! static-pod upgrade `upgrade apply` runs (etcd first, with backups and rollback), to the version
//! the cluster's configuration now names, or in a dry run the new manifests printed.

use kubeadm_workflow::PhaseError;

use crate::upgrade::node::NodeData;
use crate::upgrade::staticpods::{self, StaticPodUpgrade, StaticPodUpgradeError};

/// The static-pod upgrade failed (upstream's wrapping).
#[derive(Debug, thiserror::Error)]
#[error("couldn't complete the static pod upgrade: {0}")]
struct StaticPodsError(#[source] StaticPodUpgradeError);

/// Upstream's `runControlPlane`.
pub(crate) fn run_control_plane(data: &mut NodeData) -> Result<(), PhaseError> {
    if !data.is_control_plane {
        data.say("[upgrade] Skipping phase. Not a control plane node.");
        return Ok(());
    }
    data.say(&format!(
        "[upgrade] Upgrading your Static Pod-hosted control plane instance to version {:?}...",
        data.cfg.cluster.kubernetes_version
    ));
    // Upstream announces the patch folder where it first reads it: here, for the later phases.
    let announced = std::mem::replace(&mut data.patches_announced, data.patches.is_some());
    let patches = match &data.patches {
        Some((_, Ok(pm))) => Some(pm),
        Some((_, Err(e))) => {
            return Err(StaticPodsError(StaticPodUpgradeError(format!(
                "error creating init static pod manifest files: {}",
                e.detailed()
            )))
            .into());
        }
        None => None,
    };
    let tools = &data.control_plane;
    if data.dry_run {
        staticpods::dry_run(
            &data.cfg,
            &*data.effects.fs,
            patches,
            !announced,
            &tools.facts,
            &tools.kubernetes_dir,
            &*data.effects.reporter,
        )?;
        return Ok(());
    }
    StaticPodUpgrade {
        cfg: &data.cfg,
        kubernetes_dir: tools.kubernetes_dir.clone(),
        fs: &*data.effects.fs,
        cluster: &*data.cluster,
        etcd: &data.effects.etcd,
        runtime: &*data.runtime,
        patches,
        facts: &tools.facts,
        etcd_upgrade: tools.etcd_upgrade,
        renew_certs: tools.renew_certs,
        keygen: &*data.effects.keygen,
        timeout: tools.timeout,
        now: tools.now,
        random: data.effects.random,
        reporter: &*data.effects.reporter,
        patches_announced: announced.into(),
    }
    .perform()
    .map_err(StaticPodsError)?;
    data.say("[upgrade] The control plane instance for this node was successfully updated!");
    Ok(())
}
