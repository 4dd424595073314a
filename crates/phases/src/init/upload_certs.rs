//! The `upload-certs` phase: with `--upload-certs`, the cluster CAs, service-account keys and etcd
//! client files sealed with the certificate key (AES-GCM) into the `kubeadm-certs` Secret, owned
//! by a short-lived bootstrap token so it disappears with it; skipped otherwise, as upstream.

use std::collections::BTreeMap;
use std::path::Path;

use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_core::cluster::{bootstrap_token, upload_certs};
use kubeadm_effects::cluster::{ClusterError, Resource};
use kubeadm_workflow::PhaseError;

use crate::ClusterConnectError;
use crate::InitData;
use crate::upload_config::apply_rbac;

/// Why the upload failed (upstream's wrapping texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum UploadCertsError {
    /// No client.
    #[error(transparent)]
    Client(#[from] ClusterConnectError),
    /// The key is not usable.
    #[error("error uploading certs: error decoding certificate key: {0}")]
    Key(#[source] upload_certs::CertsCryptoError),
    /// The clock is out of range.
    #[error("error uploading certs: the current time is out of range")]
    Clock,
    /// The token Secret could not be built.
    #[error("error uploading certs: error creating token: {0}")]
    TokenSecret(#[source] bootstrap_token::TokenSecretError),
    /// The token Secret could not be created.
    #[error("error uploading certs: error creating token: {0}")]
    Token(#[source] ClusterError),
    /// A file could not be read.
    #[error("error uploading certs: failed to read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be sealed.
    #[error("error uploading certs: {0}")]
    Seal(#[source] upload_certs::CertsCryptoError),
    /// The owner token could not be read back.
    #[error("error uploading certs: error to get token reference: {0}")]
    Owner(#[source] ClusterError),
    /// The Secret or its RBAC.
    #[error("error uploading certs: {0}")]
    Api(#[source] ClusterError),
}

/// `n` random bytes from the run's 64-bit random source.
fn random_bytes(random: fn() -> u64, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        out.extend_from_slice(&random().to_le_bytes());
    }
    out.truncate(n);
    out
}

/// `upload-certs`.
pub(crate) fn run(data: &mut InitData) -> Result<(), PhaseError> {
    if !data.upload_certs {
        data.say("[upload-certs] Skipping phase. Please see --upload-certs");
        return Ok(());
    }
    data.cluster.client().map_err(UploadCertsError::Client)?;
    if data.cfg.init.certificate_key.is_empty() {
        let mut key = [0u8; upload_certs::CERTIFICATE_KEY_SIZE];
        key.copy_from_slice(&random_bytes(
            data.effects.random,
            upload_certs::CERTIFICATE_KEY_SIZE,
        ));
        data.cfg.init.certificate_key = upload_certs::certificate_key(&key);
    }
    upload(data)?;
    if !data.skip_certificate_key_print {
        data.say(&format!(
            "[upload-certs] Using certificate key:\n{}",
            data.cfg.init.certificate_key
        ));
    }
    Ok(())
}

/// Upstream's `copycerts.UploadCerts`.
fn upload(data: &InitData) -> Result<(), UploadCertsError> {
    let c = data.cluster.client()?;
    data.say(&format!(
        "[upload-certs] Storing the certificates in Secret {:?} in the {:?} Namespace",
        upload_certs::KUBEADM_CERTS_SECRET,
        kubeadm_core::cluster::meta::NAMESPACE_SYSTEM
    ));
    let key = upload_certs::decode_certificate_key(&data.cfg.init.certificate_key)
        .map_err(UploadCertsError::Key)?;

    // The short-lived token owning the Secret.
    let random = data.effects.random;
    let token_string = BootstrapTokenString::generate(|| random().to_le_bytes()[0]);
    let id = token_string.id.clone();
    let token = upload_certs::upload_certs_token(token_string);
    let now = Time::from_unix_seconds(data.now).ok_or(UploadCertsError::Clock)?;
    let secret = bootstrap_token::token_secret(&token, 0, now).map_err(UploadCertsError::TokenSecret)?;
    // A fresh token: upstream's `CreateNewTokens` refuses one that exists.
    c.create_or_update_token_secret(&id, &secret, true)
        .map_err(UploadCertsError::Token)?;

    // Missing files are stored as null values, as upstream does. Read from disk: a dry run's
    // certificates are not there, so upstream's dry run stores nulls (and prints no sealed key).
    let mut sealed = BTreeMap::new();
    for file in upload_certs::certs_to_transfer(&data.cfg.cluster) {
        let value = match data.effects.fs.read_on_disk(Path::new(&file.path)) {
            Ok(content) => {
                let nonce: [u8; upload_certs::NONCE_SIZE] = random_bytes(random, upload_certs::NONCE_SIZE)
                    .try_into()
                    .unwrap_or([0; upload_certs::NONCE_SIZE]);
                Some(upload_certs::encrypt_bytes(&content, &key, &nonce).map_err(UploadCertsError::Seal)?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(UploadCertsError::Read {
                    path: file.path,
                    source,
                });
            }
        };
        sealed.insert(file.secret_key, value);
    }

    let owner = c
        .get(
            &Resource::secrets(),
            kubeadm_core::cluster::meta::NAMESPACE_SYSTEM,
            &bootstrap_token::token_secret_name(&id),
        )
        .map_err(UploadCertsError::Owner)?;
    let uid = owner
        .pointer("/metadata/uid")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let certs = upload_certs::kubeadm_certs_secret(&sealed, &id, uid);
    c.create_or_update(&Resource::secrets(), &certs)
        .map_err(UploadCertsError::Api)?;
    apply_rbac(c, &upload_certs::kubeadm_certs_rbac()).map_err(UploadCertsError::Api)?;
    Ok(())
}
