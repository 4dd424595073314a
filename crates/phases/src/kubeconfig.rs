//! The kubeconfig files of a control-plane node (upstream's `app/phases/kubeconfig`), as `kubeadm
//! init`'s `kubeconfig` phases (bound in `init/kubeconfig.rs`) and `join --control-plane`'s
//! `control-plane-prepare kubeconfig` write them: admin, kubelet, controller-manager and scheduler kubeconfig
//! files with a client certificate signed by the cluster CA; an existing file is kept when its CA
//! matches (a different server URL only earns a warning), refused otherwise.

use std::path::PathBuf;

use kubeadm_core::kubeconfig::{
    CLIENT_KEY_ALGORITHM, KUBECONFIG_SPECS, KubeconfigSpec, UserAuth, build_kubeconfig,
    check_existing_kubeconfig, control_plane_endpoint, server_url,
};
use kubeadm_core::pki::{
    AltNames, CertId, CertTemplate, ExtKeyUsage, KUBECONFIG_FILE_MODE, KeyAlgorithm, issue_signed,
};
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::pki::{CertsError, load_ca, pki_inputs, read_text};

/// Why a kubeconfig phase failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    /// The CA could not be loaded.
    #[error("couldn't create a kubeconfig; the CA files couldn't be loaded: {0}")]
    Ca(String),
    /// The server URL could not be formed.
    #[error(transparent)]
    Endpoint(#[from] kubeadm_core::kubeconfig::EndpointError),
    /// The client certificate could not be issued.
    #[error("failure while creating {user} client certificate: {source}")]
    ClientCert {
        /// The user.
        user: String,
        /// Why.
        #[source]
        source: kubeadm_core::pki::IssueError,
    },
    /// A key problem.
    #[error(transparent)]
    Certs(#[from] CertsError),
    /// The existing file does not parse.
    #[error("failed to load kubeconfig file {path} that already exists on disk: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The existing file does not match.
    #[error(transparent)]
    Mismatch(#[from] kubeadm_core::kubeconfig::KubeconfigCheckError),
    /// Writing failed.
    #[error("failed to save kubeconfig file {path:?} on disk: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The client keys the planned kubeconfig phases will need (files that do not exist yet).
pub(crate) fn keys_needed(data: &InitData) -> Vec<KeyAlgorithm> {
    if data.external_ca {
        return Vec::new();
    }
    KUBECONFIG_SPECS
        .iter()
        .filter(|s| data.planned.contains(&format!("kubeconfig/{}", s.phase)))
        .filter(|s| !data.effects.fs.exists(&data.kubeconfig_dir.join(s.file_name)))
        .map(|_| CLIENT_KEY_ALGORITHM)
        .collect()
}

/// `kubeconfig`: announces the folder; generates the client keys unless the `certs` phase did.
pub(crate) fn run_parent(data: &mut InitData) -> Result<(), PhaseError> {
    data.say(&format!(
        "[kubeconfig] Using kubeconfig folder {:?}",
        data.kubeconfig_dir.display().to_string()
    ));
    let wanted = keys_needed(data);
    data.keys
        .fill(&*data.effects.keygen, &wanted)
        .map_err(KubeconfigError::from)?;
    Ok(())
}

pub(crate) fn run_admin(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, &KUBECONFIG_SPECS[0]).map_err(Into::into)
}

pub(crate) fn run_kubelet(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, &KUBECONFIG_SPECS[1]).map_err(Into::into)
}

pub(crate) fn run_controller_manager(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, &KUBECONFIG_SPECS[2]).map_err(Into::into)
}

pub(crate) fn run_scheduler(data: &mut InitData) -> Result<(), PhaseError> {
    create(data, &KUBECONFIG_SPECS[3]).map_err(Into::into)
}

/// Upstream's `CreateKubeConfigFile` for one file.
fn create(data: &mut InitData, spec: &KubeconfigSpec) -> Result<(), KubeconfigError> {
    if data.external_ca {
        data.say(&format!(
            "[kubeconfig] External CA mode: Using user provided {}",
            spec.file_name
        ));
        return Ok(());
    }
    let (ca_cert, ca_key) = load_ca(data, CertId::Ca).map_err(|e| match e {
        CertsError::LoadCa { reason, .. } => KubeconfigError::Ca(reason),
        other => KubeconfigError::Certs(other),
    })?;
    let inputs = pki_inputs(&data.cfg);
    // Upstream resolves the control-plane endpoint for every spec, warning each time.
    if let (_, Some(w)) = control_plane_endpoint(&inputs)? {
        data.effects.reporter.warn("endpoint.go", &w);
    }
    let server = server_url(spec, &inputs)?;
    let user = spec.client_name(&inputs);
    let path: PathBuf = data.kubeconfig_dir.join(spec.file_name);
    let path_text = path.display().to_string();
    if data.effects.fs.exists(&path) {
        let expected = build_kubeconfig(
            &server,
            &inputs.cluster_name,
            &user,
            Some(&ca_cert),
            &UserAuth::Token(String::new()),
        );
        let text = read_text(&*data.effects.fs, &path).unwrap_or_default();
        let existing = kubeadm_yaml::parse_documents(&text)
            .ok()
            .and_then(|docs| docs.into_iter().next())
            .map(|d| d.value)
            .unwrap_or(serde_json::Value::Null);
        if let Some(w) = check_existing_kubeconfig(&path_text, &existing, &expected)? {
            data.effects.reporter.warn("kubeconfig.go", &w);
        }
        data.say(&format!(
            "[kubeconfig] Using existing kubeconfig file: {path_text:?}"
        ));
        return Ok(());
    }
    let key = data.keys.take(&*data.effects.keygen, CLIENT_KEY_ALGORITHM)?;
    let template = CertTemplate {
        common_name: user.clone(),
        organization: spec.organizations.iter().map(|s| (*s).to_string()).collect(),
        alt_names: AltNames::default(),
        ext_key_usages: vec![ExtKeyUsage::ClientAuth],
    };
    let serial = data.serial();
    let cert =
        issue_signed(&template, &ca_cert, &ca_key, &key, data.now, None, serial).map_err(|source| {
            KubeconfigError::ClientCert {
                user: user.clone(),
                source,
            }
        })?;
    let doc = build_kubeconfig(
        &server,
        &inputs.cluster_name,
        &user,
        Some(&ca_cert),
        &UserAuth::ClientCert {
            cert_pem: cert.pem,
            key_pem: key.to_pem(),
        },
    );
    data.say(&format!(
        "[kubeconfig] Writing {:?} kubeconfig file",
        spec.file_name
    ));
    data.effects
        .fs
        .write(
            &path,
            kubeadm_yaml::to_string(&doc).as_bytes(),
            KUBECONFIG_FILE_MODE,
        )
        .map_err(|source| KubeconfigError::Write {
            path: path_text,
            source,
        })
}

/// Upstream's `ValidateKubeconfigsForExternalCA`: with an external CA kubeadm cannot write
/// kubeconfig files, so the four must exist already and embed the CA (a different server URL only
/// earns a warning).
pub(crate) fn validate_for_external_ca(data: &mut InitData) -> Result<(), String> {
    let crt = data.cert_dir().join("ca.crt");
    let ca = read_text(&*data.effects.fs, &crt)
        .and_then(|t| kubeadm_core::pki::CertInfo::from_pem(&t).ok())
        .ok_or_else(|| {
            format!(
                "the CA file couldn't be loaded: couldn't load the certificate file {}",
                crt.display()
            )
        })?;
    data.check_period("ca", &ca);
    let inputs = pki_inputs(&data.cfg);
    let local = kubeadm_core::kubeconfig::local_api_endpoint(&inputs).map_err(|e| e.to_string())?;
    let (cpe, warning) = control_plane_endpoint(&inputs).map_err(|e| e.to_string())?;
    if let Some(w) = warning {
        data.effects.reporter.warn("endpoint.go", &w);
    }
    for (file, server) in [
        ("controller-manager.conf", &local),
        ("scheduler.conf", &local),
        ("admin.conf", &cpe),
        ("kubelet.conf", &cpe),
    ] {
        let expected = build_kubeconfig(
            server,
            "dummy",
            "dummy",
            Some(&ca),
            &UserAuth::Token(String::new()),
        );
        let path = data.kubeconfig_dir.join(file);
        let path_text = path.display().to_string();
        let wrap = |e: String| format!("the {file} file does not exists or it is not valid: {e}");
        let Some(text) = read_text(&*data.effects.fs, &path) else {
            return Err(wrap(format!("stat {path_text}: no such file or directory")));
        };
        let existing = kubeadm_yaml::parse_documents(&text)
            .ok()
            .and_then(|docs| docs.into_iter().next())
            .map(|d| d.value)
            .unwrap_or(serde_json::Value::Null);
        match check_existing_kubeconfig(&path_text, &existing, &expected) {
            Ok(Some(w)) => data.effects.reporter.warn("kubeconfig.go", &w),
            Ok(None) => {}
            Err(e) => return Err(wrap(e.to_string())),
        }
    }
    Ok(())
}
