//! Certificates and keys of a control-plane node (upstream's `app/phases/certs`), as `kubeadm init`'s
//! `certs` phases (bound in `init/certs.rs`) and `join --control-plane`'s `control-plane-prepare
//! certs` create them: one run per entry of the certificate table plus `sa`, with upstream's
//! lines, reuse of valid existing files, errors for mismatching ones, external CA and external etcd
//! modes. The parent phase fills the key pool ([`crate::pki::KeyPool`]) with every key the
//! run will need, in one parallel batch.

use std::path::Path;

use kubeadm_core::pki::{
    CertId, CertInfo, CertTemplate, CertsMessage, ExistingError, KeyAlgorithm, PkiInputs, PrivateKey,
    SA_KEY_BASE_NAME, cert_list, cert_spec, check_existing_chain, check_existing_signed, issue_ca,
    issue_signed,
};
use kubeadm_effects::fs::Fs;
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::pki::{
    CERT_MODE, CertsError, KEY_MODE, cert_and_key_paths, load_ca, open_error, pki_inputs, read_text,
};

/// The keys this run will generate, for the phases in `planned` whose files do not exist yet.
fn keys_needed(data: &InitData, inputs: &PkiInputs) -> Vec<KeyAlgorithm> {
    let mut wanted = Vec::new();
    if data.planned.is_empty() || data.external_ca {
        return wanted;
    }
    let dir = data.cert_dir();
    for spec in cert_list(&inputs.etcd) {
        if !data.planned.contains(&format!("certs/{}", spec.name)) {
            continue;
        }
        let (crt, key) = cert_and_key_paths(&dir, spec.base_name);
        if !data.effects.fs.exists(&crt) && !data.effects.fs.exists(&key) {
            wanted.push(inputs.key_algorithm);
        }
    }
    if data.planned.contains("certs/sa") && !data.effects.fs.exists(&dir.join("sa.key")) {
        wanted.push(inputs.key_algorithm);
    }
    wanted.extend(crate::kubeconfig::keys_needed(data));
    wanted
}

/// Starts generating, in the background, every key the planned phases will need (see
/// [`crate::KeyPool::prefetch`]): called once the run's data is known, before the preflight checks,
/// so that the keys are made while those run. The `certs` parent phase collects them.
pub fn prefetch_keys(data: &mut InitData) {
    let inputs = pki_inputs(&data.cfg);
    let wanted = keys_needed(data, &inputs);
    data.keys.prefetch(data.effects.keygen.clone(), wanted);
}

/// `certs`: announces the folder and generates every key the run needs in one parallel batch
/// (those a prefetch did not make).
pub(crate) fn run_parent(data: &mut InitData) -> Result<(), PhaseError> {
    data.say_certs(&CertsMessage::UsingCertificateDir(
        data.cfg.cluster.certificates_dir.clone(),
    ));
    let inputs = pki_inputs(&data.cfg);
    let wanted = keys_needed(data, &inputs);
    data.keys.fill(&*data.effects.keygen, &wanted)?;
    Ok(())
}

/// One run function per table entry (function pointers cannot capture the entry).
macro_rules! cert_phase {
    ($name:ident, $id:expr) => {
        pub(crate) fn $name(data: &mut InitData) -> Result<(), PhaseError> {
            run_cert(data, $id)
        }
    };
}
cert_phase!(run_ca, CertId::Ca);
cert_phase!(run_apiserver, CertId::ApiServer);
cert_phase!(run_apiserver_kubelet_client, CertId::ApiServerKubeletClient);
cert_phase!(run_front_proxy_ca, CertId::FrontProxyCa);
cert_phase!(run_front_proxy_client, CertId::FrontProxyClient);
cert_phase!(run_etcd_ca, CertId::EtcdCa);
cert_phase!(run_etcd_server, CertId::EtcdServer);
cert_phase!(run_etcd_peer, CertId::EtcdPeer);
cert_phase!(run_etcd_healthcheck_client, CertId::EtcdHealthcheckClient);
cert_phase!(run_apiserver_etcd_client, CertId::ApiServerEtcdClient);

fn run_cert(data: &mut InitData, id: CertId) -> Result<(), PhaseError> {
    let spec = cert_spec(id);
    match spec.ca {
        None => run_ca_phase(data, id).map_err(Into::into),
        Some(ca) => run_leaf_phase(data, id, ca, Existing::SignedByCa).map_err(Into::into),
    }
}

/// How a leaf certificate already on disk is checked before it is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// `init phase certs <name>` (upstream's `runCertPhase`): signed by its CA.
    SignedByCa,
    /// `CreatePKIAssets` (upstream's `writeCertificateFilesIfNotExist`): signed by its CA, and with
    /// the subject and SANs this node's configuration gives.
    MatchingConfig,
}

/// Upstream's `CreatePKIAssets`, as a joining control plane runs it after downloading the shared
/// CAs: for each CA, the one on disk (silently; without its key, every certificate it signs must
/// exist and be signed by it) or a new one; then the certificates each signs, generated or checked
/// against this node's configuration; then the service-account key pair. Upstream walks the CAs in
/// Go map order, which varies from run to run; ours is the table's.
pub(crate) fn create_pki_assets(data: &mut InitData) -> Result<(), PhaseError> {
    let inputs = pki_inputs(&data.cfg);
    let dir = data.cert_dir();
    let specs: Vec<&'static kubeadm_core::pki::CertSpec> = cert_list(&inputs.etcd).collect();
    // What a run killed while writing a pair left (see `InitData::write_pair`), completed or
    // dropped first: the checks below read the certificates directly.
    for spec in &specs {
        let (crt, key) = cert_and_key_paths(&dir, spec.base_name);
        data.recover_pending(spec.base_name, &crt, &key)?;
    }
    // Every missing key at once, in one parallel batch (upstream makes them one after another).
    let mut wanted: Vec<KeyAlgorithm> = specs
        .iter()
        .filter(|s| {
            let (crt, key) = cert_and_key_paths(&dir, s.base_name);
            !data.effects.fs.exists(&crt) && !data.effects.fs.exists(&key)
        })
        .map(|_| inputs.key_algorithm)
        .collect();
    if !data
        .effects
        .fs
        .exists(&dir.join(format!("{SA_KEY_BASE_NAME}.key")))
    {
        wanted.push(inputs.key_algorithm);
    }
    data.keys.fill(&*data.effects.keygen, &wanted)?;
    for ca in specs.iter().filter(|s| s.ca.is_none()) {
        let (crt, key) = cert_and_key_paths(&dir, ca.base_name);
        let leaves = specs.iter().filter(|s| s.ca == Some(ca.id));
        match read_text(&*data.effects.fs, &crt).and_then(|t| CertInfo::from_pem(&t).ok()) {
            Some(cert) => {
                data.check_period(ca.base_name, &cert);
                if !cert.is_ca {
                    return Err(
                        CertsError::Existing(format!("certificate {:?} is not a CA", ca.name)).into(),
                    );
                }
                let has_key =
                    read_text(&*data.effects.fs, &key).is_some_and(|t| PrivateKey::from_pem(&t).is_ok());
                if !has_key {
                    // An external CA: every certificate it signs must be there already.
                    for leaf in leaves {
                        let (leaf_crt, _) = cert_and_key_paths(&dir, leaf.base_name);
                        let text = read_text(&*data.effects.fs, &leaf_crt).unwrap_or_default();
                        check_existing_chain(leaf.base_name, ca.base_name, &text, &cert, data.now).map_err(
                            |e| {
                                CertsError::Existing(format!(
                                    "could not load expected certificate {:?} or validate the existence of key {:?} for it: {e}",
                                    leaf.name, ca.name
                                ))
                            },
                        )?;
                    }
                    continue;
                }
            }
            None => run_ca_phase(data, ca.id)?,
        }
        for leaf in leaves {
            run_leaf_phase(data, leaf.id, ca.id, Existing::MatchingConfig)?;
        }
    }
    data.say(&format!(
        "[certs] Valid certificates and keys now exist in {:?}",
        data.cfg.cluster.certificates_dir
    ));
    // Upstream's CreatePKIAssets has no external-CA case for the service-account keys.
    service_account_key_pair(data)
}

/// Upstream's `runCAPhase`.
fn run_ca_phase(data: &mut InitData, id: CertId) -> Result<(), CertsError> {
    let spec = cert_spec(id);
    let base = spec.base_name;
    if id == CertId::EtcdCa && data.external_etcd() {
        data.say_certs(&CertsMessage::ExternalEtcdSkipCa(base.to_string()));
        return Ok(());
    }
    let dir = data.cert_dir();
    let (crt, key) = cert_and_key_paths(&dir, base);
    data.recover_pending(base, &crt, &key)?;
    if let Some(cert) = read_text(&*data.effects.fs, &crt).and_then(|t| CertInfo::from_pem(&t).ok()) {
        data.check_period(base, &cert);
        let key_ok = read_text(&*data.effects.fs, &key).is_some_and(|t| PrivateKey::from_pem(&t).is_ok());
        data.say_certs(&if key_ok {
            CertsMessage::UsingExistingCa(base.to_string())
        } else {
            CertsMessage::UsingExistingKeylessCa(base.to_string())
        });
        return Ok(());
    }
    let inputs = pki_inputs(&data.cfg);
    let private = data.keys.take(&*data.effects.keygen, inputs.key_algorithm)?;
    let serial = data.serial();
    let issued = issue_ca(spec, &inputs, &private, data.now, serial).map_err(|source| CertsError::Issue {
        name: spec.name.to_string(),
        source,
    })?;
    if data.effects.fs.exists(&crt) || data.effects.fs.exists(&key) {
        // The certificate did not load above, so reusing fails as upstream's does.
        return Err(CertsError::Existing(format!(
            "failure loading {base} certificate: failed to load certificate: couldn't load the certificate file {}: {}",
            crt.display(),
            open_error(&*data.effects.fs, &crt)
        )));
    }
    data.say_certs(&CertsMessage::Generating(base.to_string()));
    data.write_pair(
        base,
        (&key, &private.to_pem()),
        (&crt, &issued.pem),
        (KEY_MODE, CERT_MODE),
    )
}

/// Upstream's `runCertPhase`.
fn run_leaf_phase(data: &mut InitData, id: CertId, ca: CertId, existing: Existing) -> Result<(), CertsError> {
    let spec = cert_spec(id);
    let ca_spec = cert_spec(ca);
    let base = spec.base_name;
    if ca == CertId::EtcdCa && data.external_etcd() {
        data.say_certs(&CertsMessage::ExternalEtcdSkipCert(base.to_string()));
        return Ok(());
    }
    let dir = data.cert_dir();
    let (crt, key) = cert_and_key_paths(&dir, base);
    data.recover_pending(base, &crt, &key)?;
    if existing == Existing::SignedByCa
        && let Some(text) = read_text(&*data.effects.fs, &crt)
        && let Ok(chain) = CertInfo::chain_from_pem(&text)
    {
        data.check_period(base, &chain[0]);
        let (ca_crt, _) = cert_and_key_paths(&dir, ca_spec.base_name);
        let ca_cert = read_text(&*data.effects.fs, &ca_crt)
            .and_then(|t| CertInfo::from_pem(&t).ok())
            .ok_or_else(|| CertsError::LoadCa {
                ca: ca_spec.name.to_string(),
                reason: format!(
                    "couldn't load the certificate file {}: {}",
                    ca_crt.display(),
                    open_error(&*data.effects.fs, &ca_crt)
                ),
            })?;
        data.check_period(ca_spec.base_name, &ca_cert);
        check_existing_chain(base, ca_spec.base_name, &text, &ca_cert, data.now)
            .map_err(|e| CertsError::Existing(e.to_string()))?;
        data.say_certs(&CertsMessage::UsingExistingCert(base.to_string()));
        return Ok(());
    }
    let (ca_cert, ca_key) = load_ca(data, ca)?;
    let inputs = pki_inputs(&data.cfg);
    let template = CertTemplate::for_spec(spec, &inputs).map_err(|source| CertsError::Issue {
        name: spec.name.to_string(),
        source: source.into(),
    })?;
    for w in &template.alt_names.warnings {
        data.effects.reporter.warn("certlist.go", w);
    }
    let private = data.keys.take(&*data.effects.keygen, inputs.key_algorithm)?;
    let serial = data.serial();
    let issued =
        issue_signed(&template, &ca_cert, &ca_key, &private, data.now, None, serial).map_err(|source| {
            CertsError::Issue {
                name: spec.name.to_string(),
                source,
            }
        })?;
    let wrap = |e: String| {
        CertsError::Existing(format!(
            "failed to write or validate certificate {:?}: {e}",
            spec.name
        ))
    };
    if data.effects.fs.exists(&crt) || data.effects.fs.exists(&key) {
        let key_text = read_text(&*data.effects.fs, &key).unwrap_or_default();
        let cert_text = read_text(&*data.effects.fs, &crt);
        // Upstream loads the key first, then fails opening the certificate.
        if cert_text.is_none() && PrivateKey::from_pem(&key_text).is_ok() {
            return Err(wrap(format!(
                "failure loading {base} certificate: couldn't load the certificate file {}: {}",
                crt.display(),
                open_error(&*data.effects.fs, &crt)
            )));
        }
        let cert_text = cert_text.unwrap_or_default();
        let cert = check_existing_signed(
            base,
            &cert_text,
            &key_text,
            &ca_cert,
            &template.alt_names,
            data.now,
        )
        .map_err(|e| wrap(e.to_string()))?;
        data.check_period(base, &cert);
        data.say(&format!(
            "[certs] Using the existing {base:?} certificate and key"
        ));
        return Ok(());
    }
    data.say_certs(&CertsMessage::Generating(base.to_string()));
    data.write_pair(
        base,
        (&key, &private.to_pem()),
        (&crt, &issued.pem),
        (KEY_MODE, CERT_MODE),
    )?;
    if spec.has_server_auth() {
        data.say(&format!("[certs] {}", template.alt_names.serving_message(base)));
    }
    Ok(())
}

/// `certs sa`: the service-account key pair (upstream's `CreateServiceAccountKeyAndPublicKeyFiles`).
pub(crate) fn run_sa(data: &mut InitData) -> Result<(), PhaseError> {
    if data.external_ca {
        data.say_certs(&CertsMessage::UsingExistingSaKeys);
        return Ok(());
    }
    service_account_key_pair(data)
}

/// Upstream's `CreateServiceAccountKeyAndPublicKeyFiles`: an existing `sa.key` is used, else the
/// pair is generated. Upstream writes `sa.key` first, so a run killed before `sa.pub` leaves a key
/// the next run uses without ever writing `sa.pub` (the API server then cannot start); here
/// `sa.pub` comes first, and a lone `sa.pub` is replaced with the pair.
fn service_account_key_pair(data: &mut InitData) -> Result<(), PhaseError> {
    let dir = data.cert_dir();
    let key_path = dir.join(format!("{SA_KEY_BASE_NAME}.key"));
    if let Some(text) = read_text(&*data.effects.fs, &key_path) {
        return match PrivateKey::from_pem(&text) {
            Ok(_) => {
                data.say_certs(&CertsMessage::UsingExistingSa);
                Ok(())
            }
            Err(e) => Err(CertsError::Existing(format!(
                "file sa.key existed but it could not be loaded properly: {e}"
            ))
            .into()),
        };
    }
    let inputs = pki_inputs(&data.cfg);
    let private = data.keys.take(&*data.effects.keygen, inputs.key_algorithm)?;
    data.say_certs(&CertsMessage::GeneratingSa);
    data.write_file(
        SA_KEY_BASE_NAME,
        &dir.join(format!("{SA_KEY_BASE_NAME}.pub")),
        &private.public_key_pem(),
        KEY_MODE,
    )?;
    data.write_file(SA_KEY_BASE_NAME, &key_path, &private.to_pem(), KEY_MODE)?;
    Ok(())
}

/// Upstream's `UsingExternalCA` (and the front-proxy variant), checked before the phases run:
/// `Ok(true)` when the CA certificate is present without its key and everything it signs is
/// already there; an error when the CA is external but a certificate it must have signed is
/// missing or invalid.
pub fn detect_external_ca(data: &mut InitData) -> Result<bool, CertsError> {
    let mut external_ca = false;
    let mut any_external = false;
    for (ca, what) in [(CertId::Ca, "CA"), (CertId::FrontProxyCa, "front-proxy CA")] {
        let status = external_status(data, ca, what);
        if status.external {
            any_external = true;
            if let Some(e) = status.error {
                return Err(CertsError::Existing(format!(
                    "invalid or incomplete external {}: {e}",
                    if ca == CertId::Ca { "CA" } else { "front-proxy CA" }
                )));
            }
            if ca == CertId::Ca {
                external_ca = true;
                crate::kubeconfig::validate_for_external_ca(data).map_err(CertsError::Existing)?;
            }
        }
    }
    if data.upload_certs && any_external {
        return Err(CertsError::Existing(
            "can't use upload-certs with an external CA or an external front-proxy CA".to_string(),
        ));
    }
    data.external_ca = external_ca;
    Ok(external_ca)
}

fn external_status(data: &InitData, ca: CertId, ux_name: &str) -> ExternalCaCheck {
    external_ca_check(&*data.effects.fs, &data.cert_dir(), ca, ux_name, data.now)
}

/// The answer of [`external_ca_check`].
#[derive(Debug)]
pub struct ExternalCaCheck {
    /// The CA certificate is present and its key is not.
    pub external: bool,
    /// What is wrong, in upstream's words.
    pub error: Option<String>,
}

/// Upstream's `UsingExternalCA` / `UsingExternalFrontProxyCA` / `UsingExternalEtcdCA` for the CA
/// `ca` (`ux_name` as upstream names it in errors: `CA`, `front-proxy CA`, `etcd CA`), reading
/// the files under `cert_dir`.
pub fn external_ca_check(
    fs: &dyn Fs,
    cert_dir: &Path,
    ca: CertId,
    ux_name: &str,
    now: i64,
) -> ExternalCaCheck {
    let base = cert_spec(ca).base_name;
    let (crt, key) = cert_and_key_paths(cert_dir, base);
    let ca_text = read_text(fs, &crt);
    let key_present = fs.exists(&key);
    let leaf_ids = kubeadm_core::pki::external_ca_leaves(ca);
    let leaves: Vec<(String, Option<String>, Option<String>)> = leaf_ids
        .iter()
        .map(|(id, ux)| {
            let (c, k) = cert_and_key_paths(cert_dir, cert_spec(*id).base_name);
            ((*ux).to_string(), read_text(fs, &c), read_text(fs, &k))
        })
        .collect();
    let leaves_ref: Vec<(&str, Option<&str>, Option<&str>)> = leaves
        .iter()
        .map(|(u, c, k)| (u.as_str(), c.as_deref(), k.as_deref()))
        .collect();
    let status = kubeadm_core::pki::external_ca_status(
        base,
        ux_name,
        ca_text.as_deref(),
        key_present,
        &leaves_ref,
        now,
    );
    // Missing files: upstream reports the path and Go's open error.
    let leaf_base = |ux: &str| {
        leaf_ids
            .iter()
            .find(|(_, u)| *u == ux)
            .map_or(base, |(id, _)| cert_spec(*id).base_name)
    };
    let not_found = |p: &Path| format!("open {}: no such file or directory", p.display());
    let error = status.error.map(|e| match e {
        ExistingError::CertMissing { ux_name: ux } => {
            let (c, _) = cert_and_key_paths(cert_dir, leaf_base(&ux));
            format!(
                "failure loading certificate for {ux}: couldn't load the certificate file {}: {}",
                c.display(),
                not_found(&c)
            )
        }
        ExistingError::KeyMissing { base_name: ux } => {
            let leaf = leaf_base(&ux);
            let (_, k) = cert_and_key_paths(cert_dir, leaf);
            format!(
                "failure loading key for {leaf}: couldn't load the private key file {}: {}",
                k.display(),
                not_found(&k)
            )
        }
        other => other.to_string(),
    });
    ExternalCaCheck {
        external: status.external,
        error,
    }
}
