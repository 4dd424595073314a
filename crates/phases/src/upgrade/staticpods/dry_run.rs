//! The static-pod upgrade of a dry run (upstream's `DryRunStaticPodUpgrade`).

use super::*;

/// Upstream's `DryRunStaticPodUpgrade`: the three new manifests written to the dry-run file system
/// and printed as if in the manifests folder. `announce_patches`: print the patch folder's reading
/// (upstream does where it first reads it).
pub fn dry_run(
    cfg: &InitConfig,
    fs: &dyn Fs,
    patches: Option<&PatchManager>,
    announce_patches: bool,
    facts: &ManifestHostFacts,
    kubernetes_dir: &Path,
    reporter: &dyn Reporter,
) -> Result<(), StaticPodUpgradeError> {
    let dir = kubernetes_dir.join("tmp/kubeadm-upgrade-dryrun");
    let rootless = manifests::rootless::enabled(&cfg.cluster);
    if rootless {
        let names = kubeadm_api::gofmt::list(Component::ALL.iter().map(|c| c.name()));
        let [create, _] = crate::users::dry_run_lines("[control-plane]", &names, "");
        reporter.out(&format!("{create}\n"));
    }
    let mut announce = patches.filter(|_| announce_patches);
    for c in Component::ALL {
        if rootless {
            let [_, update] = crate::users::dry_run_lines("[control-plane]", "", c.name());
            reporter.out(&format!("{update}\n"));
        }
        // Upstream reads (and announces) the patch folder where it first patches.
        if let Some(pm) = announce.take() {
            for m in pm.messages() {
                reporter.out(&format!("{m}\n"));
            }
        }
        let pod = manifests::control_plane_pod(
            c,
            &cfg.cluster,
            &cfg.init.local_api_endpoint,
            &cfg.resolved,
            facts,
        );
        for w in &pod.warnings {
            reporter.warn("manifests.go", w);
        }
        let pod = match patches {
            Some(pm) => {
                let (patched, messages) = pm.patch_static_pod(&pod).map_err(|e| {
                    failed(format!(
                        "failed to patch static Pod manifest file for {:?}: {}",
                        pod.name,
                        e.detailed()
                    ))
                })?;
                for m in messages {
                    reporter.out(&format!("{m}\n"));
                }
                patched
            }
            None => pod,
        };
        fs.write(
            &dir.join(format!("{}.yaml", pod.name)),
            pod.to_yaml().as_bytes(),
            0o600,
        )
        .map_err(|e| {
            failed(format!(
                "failed to create static pod manifest file for {:?}: {e}",
                pod.name
            ))
        })?;
    }
    for c in Component::ALL {
        let file = format!("{}.yaml", c.name());
        crate::dry_run::print_file(
            fs,
            reporter,
            &dir.join(&file),
            &kubernetes_dir.join("manifests").join(&file),
        );
    }
    Ok(())
}
