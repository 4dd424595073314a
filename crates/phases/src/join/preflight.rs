//! The `preflight` phase of `kubeadm join` (upstream's `cmd/phases/join/preflight.go`): the node
//! checks, then discovery and the cluster's configuration, then, for a control plane, whether the
//! cluster can take one more (a stable `controlPlaneEndpoint`, the shared certificates), `init`'s
//! node checks for a secondary control plane and the image pull.

use std::path::Path;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::pki::{CertInfo, PrivateKey};
use kubeadm_effects::cri::PullProgress;
use kubeadm_effects::fs::Fs;
use kubeadm_workflow::PhaseError;

use crate::join::JoinData;
use crate::join::cluster_config::ensure_init_cfg;
use crate::preflight::{
    IgnoreSet, PreflightRun, Stream, control_plane_join_checks, pull_images, run_checks, run_join_preflight,
};

/// The cluster cannot take another control plane (upstream's `notReadyToJoinControlPlaneTemp`).
#[derive(Debug, thiserror::Error)]
#[error(
    "\nOne or more conditions for hosting a new control plane instance is not satisfied.\n\n{0}\n\n\
     Please ensure that:\n* The cluster has a stable controlPlaneEndpoint address.\n\
     * The certificates that must be shared among control plane instances are provided.\n\n"
)]
pub struct NotReadyForControlPlane(pub NotReadyReason);

/// Upstream's `runPreflight`.
pub(crate) fn run_preflight(data: &mut JoinData) -> Result<(), PhaseError> {
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    let run = run_join_preflight(&data.cfg, &ignore, &*data.effects.host_probe, &*data.runtime);
    report(data, run)?;
    ensure_init_cfg(data)?;
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    let Some(cfg) = data.init_cfg.as_ref() else {
        return Ok(());
    };
    let has_key = !data.certificate_key().is_empty();
    ready_for_additional_control_plane(cfg, has_key, &*data.effects.fs, &|w| {
        data.effects.reporter.warn("certs.go", w)
    })
    .map_err(NotReadyForControlPlane)?;
    data.say("[preflight] Running pre-flight checks before initializing the new control plane instance");
    let checks = control_plane_join_checks(cfg, has_key);
    let run = run_checks(&checks, &*data.effects.host_probe, &*data.runtime, &ignore);
    report(data, run)?;
    let runtime = PullProgress {
        runtime: &*data.runtime,
        reporter: &*data.effects.reporter,
        prefix: "preflight",
    };
    let pull = pull_images(
        cfg,
        &ignore,
        &*data.effects.host_probe,
        &runtime,
        data.dry_run,
        "preflight",
    );
    report(data, pull)
}

/// Prints what the checks printed and fails with their error (exit code 2 in the CLI).
fn report(data: &JoinData, run: PreflightRun) -> Result<(), PhaseError> {
    for (stream, text) in &run.output {
        match stream {
            Stream::Stdout => data.effects.reporter.out(text),
            Stream::Stderr => data.effects.reporter.err(text),
        }
    }
    match run.error {
        Some(e) => Err(PhaseError::preflight(e)),
        None => Ok(()),
    }
}

/// Why the cluster cannot take another control plane, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum NotReadyReason {
    /// The cluster has no `controlPlaneEndpoint`.
    #[error(
        "unable to add a new control plane instance to a cluster that doesn't have a stable controlPlaneEndpoint address"
    )]
    NoControlPlaneEndpoint,
    /// Shared certificates or keys are missing or unusable (Go's aggregate: one as itself,
    /// several as `[a, b]`); never empty.
    #[error("{}", aggregate(.0))]
    SharedCertificates(Vec<SharedCertError>),
}

fn aggregate(errors: &[SharedCertError]) -> String {
    match errors {
        [one] => one.to_string(),
        many => {
            let texts: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", texts.join(", "))
        }
    }
}

/// A shared certificate or key that is missing or unusable (upstream's `validateCACertAndKey`
/// and `validatePrivatePublicKey`); paths are as Go prints them.
#[derive(Debug, thiserror::Error)]
pub enum SharedCertError {
    /// A CA certificate could not be read.
    #[error(
        "failure loading certificate for {ux}: couldn't load the certificate file {path}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    ReadCa {
        /// The CA's name for users.
        ux: String,
        /// The certificate file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A CA certificate holds no certificate.
    #[error(
        "failure loading certificate for {ux}: couldn't load the certificate file {path}: data does not contain any valid RSA or ECDSA certificates"
    )]
    InvalidCa {
        /// The CA's name for users.
        ux: String,
        /// The certificate file.
        path: String,
    },
    /// The certificate is not a CA.
    #[error("certificate {0} is not a CA")]
    NotCa(String),
    /// The service-account private key could not be read.
    #[error(
        "failure loading key for service account: couldn't load the private key file {path}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    ReadServiceAccountKey {
        /// The key file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The service-account private key holds no key.
    #[error(
        "failure loading key for service account: error reading private key file {0}: data does not contain a valid RSA or ECDSA private key"
    )]
    InvalidServiceAccountKey(String),
    /// The service-account public key could not be read.
    #[error(
        "failure loading key for service account: couldn't load the public key file {path}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    ReadServiceAccountPublicKey {
        /// The key file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Upstream's `checkIfReadyForAdditionalControlPlane`: a `controlPlaneEndpoint`, and, without a
/// certificate key to download them with, the shared CAs and service-account keys on disk
/// (`SharedCertificateExists`; a CA without its key is only warned about, through `warn`).
pub fn ready_for_additional_control_plane(
    cfg: &InitConfig,
    has_certificate_key: bool,
    fs: &dyn Fs,
    warn: &dyn Fn(&str),
) -> Result<(), NotReadyReason> {
    if cfg.cluster.control_plane_endpoint.is_empty() {
        return Err(NotReadyReason::NoControlPlaneEndpoint);
    }
    if has_certificate_key {
        return Ok(());
    }
    let dir = Path::new(&cfg.cluster.certificates_dir);
    let ca = |base: &str, ux: &str| ca_cert_and_key(fs, dir, base, ux, warn).err();
    let mut errors: Vec<SharedCertError> = Vec::new();
    errors.extend(ca("ca", "CA"));
    errors.extend(service_account_keys(fs, dir).err());
    errors.extend(ca("front-proxy-ca", "front-proxy CA"));
    if cfg.cluster.etcd.external.is_none() {
        errors.extend(ca("etcd/ca", "etcd CA"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(NotReadyReason::SharedCertificates(errors))
    }
}

/// Upstream's `validatePrivatePublicKey` for the service-account key pair.
fn service_account_keys(fs: &dyn Fs, dir: &Path) -> Result<(), SharedCertError> {
    let key = dir.join("sa.key");
    let public = dir.join("sa.pub");
    match fs.read(&key) {
        Err(source) => Err(SharedCertError::ReadServiceAccountKey {
            path: key.display().to_string(),
            source,
        }),
        Ok(k) if PrivateKey::from_pem(&String::from_utf8_lossy(&k)).is_err() => Err(
            SharedCertError::InvalidServiceAccountKey(key.display().to_string()),
        ),
        Ok(_) => match fs.read(&public) {
            Err(source) => Err(SharedCertError::ReadServiceAccountPublicKey {
                path: public.display().to_string(),
                source,
            }),
            Ok(_) => Ok(()),
        },
    }
}

fn open_error(path: &Path, e: &std::io::Error) -> String {
    format!("open {}: {}", path.display(), kubeadm_api::gofmt::io_error(e))
}

/// Upstream's `validateCACertAndKey`: the CA certificate loads and is a CA; a missing key is a
/// warning ("assuming external key").
fn ca_cert_and_key(
    fs: &dyn Fs,
    dir: &Path,
    base: &str,
    ux: &str,
    warn: &dyn Fn(&str),
) -> Result<(), SharedCertError> {
    let crt = dir.join(format!("{base}.crt"));
    let cert = match fs.read(&crt) {
        Err(source) => {
            return Err(SharedCertError::ReadCa {
                ux: ux.to_string(),
                path: crt.display().to_string(),
                source,
            });
        }
        Ok(b) => {
            CertInfo::from_pem(&String::from_utf8_lossy(&b)).map_err(|_| SharedCertError::InvalidCa {
                ux: ux.to_string(),
                path: crt.display().to_string(),
            })?
        }
    };
    if !cert.is_ca {
        return Err(SharedCertError::NotCa(ux.to_string()));
    }
    let key = dir.join(format!("{base}.key"));
    if let Err(e) = fs.read(&key) {
        warn(&format!(
            "assuming external key for {ux}: couldn't load the private key file {}: {}",
            key.display(),
            open_error(&key, &e)
        ));
    }
    Ok(())
}
