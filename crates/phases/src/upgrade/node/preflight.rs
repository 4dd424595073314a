//! The `preflight` phase of `kubeadm upgrade node` (upstream's `cmd/phases/upgrade/node/preflight.go`):
//! the root check, then the image pull of a control-plane node (a worker skips it).

use kubeadm_workflow::PhaseError;

use crate::preflight::{IgnoreSet, control_plane_images, image_pull_checks, root_checks, run_checks};
use crate::upgrade::node::NodeData;

/// Upstream's `runPreflight`: the root check, then the image pull of a control-plane node.
pub(crate) fn run_preflight(data: &mut NodeData) -> Result<(), PhaseError> {
    data.say("[preflight] Running pre-flight checks");
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    run_checks(&root_checks(), &*data.host_probe, &*data.runtime, &ignore).report(&*data.reporter)?;
    if !data.is_control_plane {
        data.say("[preflight] Skipping prepull. Not a control plane node.");
        return Ok(());
    }
    if data.dry_run {
        data.say("[preflight] Would pull the required images (like 'kubeadm config images pull')");
        return Ok(());
    }
    data.say("[preflight] Pulling images required for setting up a Kubernetes cluster");
    data.say(
        "[preflight] This might take a minute or two, depending on the speed of your internet connection",
    );
    data.say("[preflight] You can also perform this action in beforehand using 'kubeadm config images pull'");
    let pull = image_pull_checks(
        control_plane_images(&data.cfg),
        &data.cfg.init.node_registration.image_pull_policy,
    );
    run_checks(&pull, &*data.host_probe, &*data.runtime, &ignore).report(&*data.reporter)?;
    Ok(())
}
