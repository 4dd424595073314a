//! The `control-plane-prepare` phases of `kubeadm join` (upstream's
//! `cmd/phases/join/controlplaneprepare.go`): the shared certificates downloaded from the
//! `kubeadm-certs` Secret, this node's own certificates, the kubeconfig files of the control-plane
//! components and the static pod manifests. Each returns at once on a worker.

use std::path::PathBuf;

use kubeadm_core::cluster::upload_certs::{
    self, CertsCryptoError, DownloadCertsError, KUBEADM_CERTS_SECRET, RestoredKind,
};
use kubeadm_effects::cluster::{ClusterError, Resource};
use kubeadm_workflow::PhaseError;

use crate::join::cluster_config::ensure_init_cfg;
use crate::join::discovery::kubeconfig as kc;
use crate::join::{ClientSource, JoinData};
use crate::{certs, control_plane, kubeconfig};

/// What re-uploading the certificates takes, for the errors that need it.
const REUPLOAD_HINT: &str = "the certificates are uploaded again, with a new key, by running \
     'kubeadm init phase upload-certs --upload-certs' on a control-plane node; join with the key it prints";

/// Why the shared certificates could not be downloaded (upstream wraps all in "error downloading
/// certs").
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// The certificate key is not hex.
    #[error("error downloading certs: {0}")]
    Key(CertsCryptoError),
    /// No client from the TLS bootstrap kubeconfig.
    #[error("unable to access the cluster: {0}")]
    Client(String),
    /// The Secret is gone: it lives two hours.
    #[error(
        "error downloading certs: error downloading the secret: Secret \"kubeadm-certs\" was not found in the \"kube-system\" Namespace. This Secret might have expired. Please, run `kubeadm init phase upload-certs --upload-certs` on a control plane to generate a new one"
    )]
    NotFound,
    /// Reading the Secret failed.
    #[error("error downloading certs: error downloading the secret: {0}")]
    Get(ClusterError),
    /// The key does not open the Secret (wrong key, or a key of the wrong length).
    #[error(
        "error downloading certs: {source}. The certificate key does not open the Secret {KUBEADM_CERTS_SECRET:?}: it is not the key the certificates were last uploaded with; {REUPLOAD_HINT}"
    )]
    WrongKey {
        /// What failed.
        #[source]
        source: DownloadCertsError,
    },
    /// The Secret lacks a file or holds something else.
    #[error("error downloading certs: {0}")]
    Content(DownloadCertsError),
    /// A file could not be written.
    #[error("error downloading certs: failed to write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// `control-plane-prepare/download-certs`: upstream's `DownloadCerts` with the TLS bootstrap
/// credentials. Every value is decrypted before any file is written.
pub(crate) fn run_download_certs(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() || data.certificate_key().is_empty() {
        data.effects.reporter.info(
            1,
            "controlplaneprepare.go",
            "[download-certs] Skipping certs download",
        );
        return Ok(());
    }
    ensure_init_cfg(data)?;
    data.say(&format!(
        "[download-certs] Downloading the certificates in Secret {KUBEADM_CERTS_SECRET:?} in the \"kube-system\" Namespace"
    ));
    let key = upload_certs::decode_certificate_key(data.certificate_key()).map_err(DownloadError::Key)?;
    let tls = data.tls_bootstrap.clone().unwrap_or_default();
    let client = data
        .client(&ClientSource::Kubeconfig(&kc::to_text(&tls)))
        .map_err(DownloadError::Client)?;
    let secret = client
        .get(&Resource::secrets(), "kube-system", KUBEADM_CERTS_SECRET)
        .map_err(|e| {
            if e.is_not_found() {
                DownloadError::NotFound
            } else {
                DownloadError::Get(e)
            }
        })?;
    let Some(cfg) = data.init_cfg.as_ref() else {
        return Ok(());
    };
    let files = upload_certs::restore_kubeadm_certs(&secret, &key, &cfg.cluster).map_err(|e| match e {
        DownloadCertsError::Decrypt(_) => DownloadError::WrongKey { source: e },
        other => DownloadError::Content(other),
    })?;
    for f in files {
        let mode = match f.kind {
            RestoredKind::PrivateKey => 0o600,
            RestoredKind::Public => 0o644,
        };
        data.effects
            .fs
            .write(&PathBuf::from(&f.path), &f.data, mode)
            .map_err(|source| DownloadError::Write {
                path: f.path.clone(),
                source,
            })?;
    }
    Ok(())
}

/// `control-plane-prepare/certs`: upstream's `CreatePKIAssets` for this node.
pub(crate) fn run_certs(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    let cp = data.control_plane_data()?;
    cp.say(&format!(
        "[certs] Using certificateDir folder {:?}",
        cp.cfg.cluster.certificates_dir
    ));
    certs::create_pki_assets(cp)
}

/// `control-plane-prepare/kubeconfig`: `admin.conf`, `controller-manager.conf` and
/// `scheduler.conf` (upstream's `CreateJoinControlPlaneKubeConfigFiles`; the kubelet's comes from
/// the TLS bootstrap).
pub(crate) fn run_kubeconfig(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    let cp = data.control_plane_data()?;
    cp.say("[kubeconfig] Generating kubeconfig files");
    // The three client keys, generated together by the parent phase.
    cp.planned = [
        "kubeconfig/admin",
        "kubeconfig/controller-manager",
        "kubeconfig/scheduler",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    kubeconfig::run_parent(cp)?;
    kubeconfig::run_admin(cp)?;
    kubeconfig::run_controller_manager(cp)?;
    kubeconfig::run_scheduler(cp)
}

/// `control-plane-prepare/control-plane`: the three static pod manifests with this node's API
/// endpoint.
pub(crate) fn run_control_plane(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    let cp = data.control_plane_data()?;
    control_plane::run_parent(cp)?;
    control_plane::run_apiserver(cp)?;
    control_plane::run_controller_manager(cp)?;
    control_plane::run_scheduler(cp)
}
