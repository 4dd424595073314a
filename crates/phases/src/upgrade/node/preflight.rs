//! The `preflight` phase of `kubeadm upgrade node` (upstream's `cmd/phases/upgrade/node/preflight.go`):
//! the root check, then the image pull of a control-plane node (a worker skips it).

use kubeadm_effects::cri::PullProgress;
use kubeadm_workflow::PhaseError;

use crate::preflight::{IgnoreSet, pull_images, root_checks, run_checks};
use crate::upgrade::node::NodeData;

/// Upstream's `runPreflight`: the root check, then the image pull of a control-plane node.
pub(crate) fn run_preflight(data: &mut NodeData) -> Result<(), PhaseError> {
    data.say("[preflight] Running pre-flight checks");
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    run_checks(&root_checks(), &*data.effects.host_probe, &*data.runtime, &ignore)
        .report(&*data.effects.reporter)
        .map_err(PhaseError::preflight)?;
    if !data.is_control_plane {
        data.say("[preflight] Skipping prepull. Not a control plane node.");
        return Ok(());
    }
    let runtime = PullProgress {
        runtime: &*data.runtime,
        reporter: &*data.effects.reporter,
        prefix: "preflight",
    };
    pull_images(
        &data.cfg,
        &ignore,
        &*data.effects.host_probe,
        &runtime,
        data.dry_run,
        "preflight",
    )
    .report(&*data.effects.reporter)
    .map_err(PhaseError::preflight)?;
    Ok(())
}
