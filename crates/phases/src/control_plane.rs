//! The control plane's static Pods (upstream's `app/phases/controlplane`), as `kubeadm init`'s
//! `control-plane` phases (bound in `init/control_plane.rs`), its local etcd and `join
//! --control-plane` write them: the static pod manifests of kube-apiserver, kube-controller-manager
//! and kube-scheduler, patched when `--patches` says so, written atomically with mode 0600.

use kubeadm_core::manifests::{self, Component, StaticPod};
use kubeadm_workflow::PhaseError;

use crate::InitData;

/// `control-plane`: announces the manifest folder, and, when patches are given, applies them to all
/// three manifests before any is written: a bad patch then leaves the manifest folder as it was
/// (upstream writes the manifests one by one and can stop half way).
pub(crate) fn run_parent(data: &mut InitData) -> Result<(), PhaseError> {
    data.say(&format!(
        "[control-plane] Using manifest folder {:?}",
        data.manifest_dir.display().to_string()
    ));
    // Read (not yet announced: upstream prints its lines at the first manifest it patches).
    if let Some(patches) = &data.patches {
        let pm = match patches.peek() {
            Ok(pm) => pm,
            Err(_) => {
                let source = patches.get(&|l| data.say(l)).expect_err("failed to read");
                return Err(ControlPlaneError::Patch {
                    component: "kube-apiserver".into(),
                    source,
                }
                .into());
            }
        };
        for component in Component::ALL {
            let pod = build(data, component);
            pm.patch_static_pod(&pod)
                .map_err(|source| ControlPlaneError::Patch {
                    component: pod.name.clone(),
                    source,
                })?;
        }
    }
    Ok(())
}

fn build(data: &InitData, component: Component) -> StaticPod {
    manifests::control_plane_pod(
        component,
        &data.cfg.cluster,
        &data.cfg.init.local_api_endpoint,
        &data.cfg.resolved,
        &data.manifest_facts,
    )
}

pub(crate) fn run_apiserver(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, Component::ApiServer)
}

pub(crate) fn run_controller_manager(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, Component::ControllerManager)
}

pub(crate) fn run_scheduler(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, Component::Scheduler)
}

/// Why a control-plane manifest could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ControlPlaneError {
    /// The `RootlessControlPlane` users, groups or file owners could not be set up.
    #[error(transparent)]
    NonRoot(crate::users::NonRootError),
    /// A patch could not be applied.
    #[error("failed to patch static Pod manifest file for {component:?}: {}", .source.detailed())]
    Patch {
        /// The component.
        component: String,
        /// Why.
        #[source]
        source: kubeadm_core::patches::PatchError,
    },
    /// The manifest could not be written.
    #[error("failed to write static pod manifest file for {component:?} ({path:?}): {source}")]
    Write {
        /// The component.
        component: String,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn create(data: &mut InitData, component: Component) -> Result<(), PhaseError> {
    data.say(&format!(
        "[control-plane] Creating static Pod manifest for {:?}",
        component.name()
    ));
    let mut pod = build(data, component);
    // Upstream's phase creates one component at a time: `[kube-apiserver]`.
    let listed = format!("[{}]", component.name());
    as_non_root(data, &mut pod, "[control-plane]", &listed).map_err(ControlPlaneError::NonRoot)?;
    write_static_pod(data, pod)
}

/// Patches (when asked) and writes a static pod manifest, as upstream's `WriteStaticPodToDisk`:
/// the folder is created with mode 0700, the file written with mode 0600.
pub(crate) fn write_static_pod(data: &mut InitData, pod: StaticPod) -> Result<(), PhaseError> {
    for w in &pod.warnings {
        data.effects.reporter.warn("manifests.rs", w);
    }
    let pod = match &data.patches {
        Some(patches) => {
            let pm = patches
                .get(&|l| data.say(l))
                .map_err(|source| ControlPlaneError::Patch {
                    component: pod.name.clone(),
                    source,
                })?;
            let (patched, messages) =
                pm.patch_static_pod(&pod)
                    .map_err(|source| ControlPlaneError::Patch {
                        component: pod.name.clone(),
                        source,
                    })?;
            for m in messages {
                data.say(&m);
            }
            patched
        }
        None => pod,
    };
    let path = data.manifest_dir.join(format!("{}.yaml", pod.name));
    let write = data
        .effects
        .fs
        .create_dir_all(&data.manifest_dir, 0o700)
        .and_then(|()| data.effects.fs.write(&path, pod.to_yaml().as_bytes(), 0o600));
    write.map_err(|source| ControlPlaneError::Write {
        component: pod.name.clone(),
        path: path.display().to_string(),
        source,
    })?;
    data.effects.reporter.info(
        1,
        "manifests.rs",
        &format!(
            "[control-plane] wrote static Pod manifest for component {:?} to {:?}",
            pod.name,
            path.display().to_string()
        ),
    );
    Ok(())
}

/// The `RootlessControlPlane` step of a control-plane or etcd manifest (upstream's
/// `CreateStaticPodFiles` and `prepareAndWriteEtcdStaticPod`): in a dry run what it would do (the
/// lines start with `prefix` and name the components as `listed`), otherwise the users, the file
/// owners and `pod` made to run as non-root. Nothing without the gate.
pub(crate) fn as_non_root(
    data: &InitData,
    pod: &mut StaticPod,
    prefix: &str,
    listed: &str,
) -> Result<(), crate::users::NonRootError> {
    if !manifests::rootless::enabled(&data.cfg.cluster) {
        return Ok(());
    }
    if data.dry_run {
        for line in crate::users::dry_run_lines(prefix, listed, &pod.name) {
            data.say(&line);
        }
        return Ok(());
    }
    crate::users::run_as_non_root(
        &*data.effects.fs,
        &*data.effects.reporter,
        &crate::users::AccountFiles::host(),
        &data.cfg.cluster,
        data.external_ca,
        pod,
    )
}
