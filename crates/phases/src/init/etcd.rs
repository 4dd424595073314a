//! The `etcd local` phase: the data directory and the static pod manifest of a local etcd member.

use std::path::Path;

use kubeadm_core::manifests;
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::control_plane::write_static_pod;

/// Why the local etcd manifest could not be created.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EtcdError {
    /// The manifest could not be built.
    #[error("error creating local etcd static pod manifest file: {0}")]
    Manifest(#[from] manifests::ManifestError),
    /// The data directory could not be created.
    #[error("failed to create etcd directory {path:?}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The manifest could not be patched or written.
    #[error("error creating local etcd static pod manifest file: {0}")]
    Write(String),
}

/// `etcd local`.
pub(crate) fn run_local(data: &mut InitData) -> Result<(), PhaseError> {
    let Some(local) = data.cfg.cluster.etcd.local.clone() else {
        data.effects.reporter.info(
            1,
            "etcd.rs",
            "[etcd] External etcd mode. Skipping the creation of a manifest for local etcd",
        );
        return Ok(());
    };
    if data.dry_run {
        data.say(&format!(
            "[etcd] Would ensure that {:?} directory is present",
            local.data_dir
        ));
    } else {
        // Upstream's CreateDataDirectory: mode 0700, as etcd itself insists on.
        data.effects
            .fs
            .create_dir_all(Path::new(&local.data_dir), 0o700)
            .map_err(|source| EtcdError::DataDir {
                path: local.data_dir.clone(),
                source,
            })?;
    }
    data.say(&format!(
        "[etcd] Creating static Pod manifest for local etcd in {:?}",
        data.manifest_dir.display().to_string()
    ));
    let mut pod = manifests::etcd_pod(
        &data.cfg.cluster,
        &data.cfg.init.local_api_endpoint,
        &data.cfg.init.node_registration.name,
        &[],
        &data.cfg.resolved,
    )
    .map_err(EtcdError::from)?;
    crate::control_plane::as_non_root(data, &mut pod, "[etcd]", "\"etcd\"")
        .map_err(|e| EtcdError::Write(e.to_string()))?;
    // Upstream wraps whatever CreateLocalEtcdStaticPodManifestFile returns, the patching and
    // the writing included.
    write_static_pod(data, pod).map_err(|e| PhaseError::from(EtcdError::Write(e.to_string())))
}
