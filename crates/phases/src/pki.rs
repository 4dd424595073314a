//! What the certificates and kubeconfig files of a node share (and `upgrade`'s renewal, and the
//! discovery's CA pins): where certificates and keys
//! go and with which modes, reading them back (the CAs, as upstream's
//! `LoadCertificateAuthority`), the inputs of the certificate table, and the pool of keys generated
//! ahead of time (RSA generation dominates the run, so the `certs` parent phase asks the
//! key-generation effect for every key the run will need in one parallel batch).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::pki::{
    CertId, CertInfo, CertsMessage, EtcdMode, KeyAlgorithm, PkiInputs, PrivateKey, cert_spec, period_warning,
    serial_from_random,
};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::keygen::{GeneratedKey, KeyAlgorithm as GenAlgorithm, KeyGen, KeyGenError};

use crate::InitData;

/// Mode of `.crt` files.
pub(crate) const CERT_MODE: u32 = kubeadm_core::pki::CERT_FILE_MODE;
/// Mode of `.key` files and `sa.pub`.
pub(crate) const KEY_MODE: u32 = kubeadm_core::pki::KEY_FILE_MODE;

/// Why a `certs` phase failed. Texts follow upstream's wrapped errors.
#[derive(Debug, thiserror::Error)]
pub enum CertsError {
    /// Key generation failed.
    #[error(transparent)]
    KeyGen(#[from] kubeadm_effects::keygen::KeyGenError),
    /// A generated key could not be used.
    #[error("unable to load generated private key: {0}")]
    Key(#[source] kubeadm_core::pki::KeyError),
    /// Issuing failed.
    #[error("couldn't create {name:?} certificate: {source}")]
    Issue {
        /// The table name.
        name: String,
        /// Why.
        #[source]
        source: kubeadm_core::pki::IssueError,
    },
    /// The signing CA could not be used.
    #[error("couldn't load CA certificate {ca}: {reason}")]
    LoadCa {
        /// The CA's table name.
        ca: String,
        /// Why.
        reason: String,
    },
    /// An existing file is unusable.
    #[error("{0}")]
    Existing(String),
    /// Writing failed.
    #[error("failure while saving {base_name} certificate and key: unable to write {path}: {source}")]
    Write {
        /// The base name.
        base_name: String,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Keys generated ahead of time, handed out by type. A batch may be started in the background
/// ([`KeyPool::prefetch`]) as soon as the run knows what it needs, so that it is made while the
/// preflight checks run; the first use waits for it.
#[derive(Debug, Default)]
pub struct KeyPool {
    keys: Vec<GeneratedKey>,
    pending: Option<std::thread::JoinHandle<Result<Vec<GeneratedKey>, KeyGenError>>>,
}

fn gen_algorithm(a: KeyAlgorithm) -> GenAlgorithm {
    match a {
        KeyAlgorithm::Rsa2048 => GenAlgorithm::Rsa2048,
        KeyAlgorithm::EcdsaP256 => GenAlgorithm::EcdsaP256,
    }
}

impl KeyPool {
    /// Starts generating `wanted` on another thread (on top of any batch already started).
    pub fn prefetch(&mut self, keygen: Arc<dyn KeyGen>, wanted: Vec<KeyAlgorithm>) {
        if wanted.is_empty() {
            return;
        }
        // One batch at a time: an earlier one is collected first.
        if self.settle().is_err() {
            return;
        }
        let algs: Vec<GenAlgorithm> = wanted.iter().map(|a| gen_algorithm(*a)).collect();
        self.pending = Some(std::thread::spawn(move || keygen.generate(&algs)));
    }

    /// Collects the background batch, if any. A failed batch is reported; a panicked one is
    /// forgotten (the keys are then made on demand).
    fn settle(&mut self) -> Result<(), CertsError> {
        if let Some(handle) = self.pending.take()
            && let Ok(batch) = handle.join()
        {
            self.keys.extend(batch?);
        }
        Ok(())
    }

    /// Makes sure `wanted` are in the pool: what the background batch did not make is generated
    /// now, in one batch.
    pub fn fill(&mut self, keygen: &dyn KeyGen, wanted: &[KeyAlgorithm]) -> Result<(), CertsError> {
        self.settle()?;
        let mut have: Vec<GenAlgorithm> = self.keys.iter().map(|k| k.algorithm).collect();
        let mut missing = Vec::new();
        for a in wanted.iter().map(|a| gen_algorithm(*a)) {
            match have.iter().position(|h| *h == a) {
                Some(i) => {
                    have.swap_remove(i);
                }
                None => missing.push(a),
            }
        }
        if !missing.is_empty() {
            self.keys.extend(keygen.generate(&missing)?);
        }
        Ok(())
    }

    /// How many keys of `alg` are waiting.
    pub fn available(&mut self, alg: KeyAlgorithm) -> Result<usize, CertsError> {
        self.settle()?;
        let g = gen_algorithm(alg);
        Ok(self.keys.iter().filter(|k| k.algorithm == g).count())
    }

    /// A key of `alg`: one from the pool, else a new one.
    pub fn take(&mut self, keygen: &dyn KeyGen, alg: KeyAlgorithm) -> Result<PrivateKey, CertsError> {
        self.settle()?;
        let g = gen_algorithm(alg);
        let key = match self.keys.iter().position(|k| k.algorithm == g) {
            Some(i) => self.keys.swap_remove(i),
            None => keygen.generate_one(g)?,
        };
        PrivateKey::from_pkcs8_der(&key.pkcs8_der).map_err(CertsError::Key)
    }
}

/// What the certificate and kubeconfig builders read from the configuration.
pub fn pki_inputs(cfg: &InitConfig) -> PkiInputs {
    let c = &cfg.cluster;
    let i = &cfg.init;
    let etcd = match (&c.etcd.local, &c.etcd.external) {
        (Some(local), None) => EtcdMode::Local {
            server_cert_sans: local.server_cert_sans.clone(),
            peer_cert_sans: local.peer_cert_sans.clone(),
        },
        (_, Some(_)) => EtcdMode::External,
        (None, None) => EtcdMode::Local {
            server_cert_sans: Vec::new(),
            peer_cert_sans: Vec::new(),
        },
    };
    PkiInputs {
        node_name: i.node_registration.name.clone(),
        advertise_address: i.local_api_endpoint.advertise_address.clone(),
        bind_port: u16::try_from(i.local_api_endpoint.bind_port).unwrap_or(0),
        control_plane_endpoint: c.control_plane_endpoint.clone(),
        service_subnet: c.networking.service_subnet.clone(),
        dns_domain: c.networking.dns_domain.clone(),
        cert_sans: c.api_server.cert_sans.clone(),
        cluster_name: c.cluster_name.clone(),
        etcd,
        key_algorithm: if kubeadm_api::features::enabled(&c.feature_gates, "PublicKeysECDSA") {
            KeyAlgorithm::EcdsaP256
        } else {
            KeyAlgorithm::Rsa2048
        },
    }
}

/// `<dir>/<base>.crt` and `<dir>/<base>.key`.
pub fn cert_and_key_paths(dir: &Path, base_name: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{base_name}.crt")),
        dir.join(format!("{base_name}.key")),
    )
}

/// A file's text, `None` when it cannot be read.
pub fn read_text(fs: &dyn Fs, path: &Path) -> Option<String> {
    fs.read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Go's `os.Open` error text for a missing or unreadable file.
pub(crate) fn open_error(fs: &dyn Fs, path: &Path) -> String {
    match fs.read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            format!("open {}: no such file or directory", path.display())
        }
        Err(e) => format!("open {}: {e}", path.display()),
        Ok(_) => "data does not contain any valid RSA or ECDSA certificates".to_string(),
    }
}

impl InitData {
    pub(crate) fn cert_dir(&self) -> PathBuf {
        PathBuf::from(&self.cfg.cluster.certificates_dir)
    }

    pub(crate) fn serial(&self) -> u64 {
        serial_from_random((self.effects.random)())
    }

    /// Upstream's `CheckCertificatePeriodValidity`: a klog warning, once per name and run.
    pub(crate) fn check_period(&mut self, name: &str, cert: &CertInfo) {
        if !self.period_checked.insert(name.to_string()) {
            return;
        }
        if let Some(w) = period_warning(name, cert, self.now) {
            self.effects.reporter.warn("certs.go", &w);
        }
    }

    pub(crate) fn say_certs(&self, m: &CertsMessage) {
        self.say(&format!("[certs] {m}"));
    }

    pub(crate) fn external_etcd(&self) -> bool {
        self.cfg.cluster.etcd.external.is_some()
    }

    pub(crate) fn write_file(
        &self,
        base_name: &str,
        path: &Path,
        text: &str,
        mode: u32,
    ) -> Result<(), CertsError> {
        self.effects
            .fs
            .write(path, text.as_bytes(), mode)
            .map_err(|source| CertsError::Write {
                base_name: base_name.to_string(),
                path: path.display().to_string(),
                source,
            })
    }

    /// Writes a new key and its certificate so that a process killed at any point leaves a state
    /// the next run finishes. Upstream writes the key, then the certificate, and a run after a
    /// kill between the two refuses the lone key ("failure loading … certificate"). Here the
    /// certificate is first written beside its place (`.<name>.crt.pending`), then the key, then
    /// the certificate, and the copy is removed; [`InitData::recover_pending`] completes or drops
    /// a copy left behind. Each write is atomic (see `RealFs`).
    pub(crate) fn write_pair(
        &self,
        base_name: &str,
        (key, key_pem): (&Path, &str),
        (crt, crt_pem): (&Path, &str),
        modes: (u32, u32),
    ) -> Result<(), CertsError> {
        let pending = pending_path(crt);
        self.write_file(base_name, &pending, crt_pem, modes.1)?;
        self.write_file(base_name, key, key_pem, modes.0)?;
        self.write_file(base_name, crt, crt_pem, modes.1)?;
        self.remove_pending(base_name, &pending)
    }

    /// What a run killed inside [`InitData::write_pair`] left: with the key written and the
    /// certificate not, the pending copy becomes the certificate; otherwise the copy is dropped.
    pub(crate) fn recover_pending(&self, base_name: &str, crt: &Path, key: &Path) -> Result<(), CertsError> {
        let pending = pending_path(crt);
        let Some(text) = read_text(&*self.effects.fs, &pending) else {
            return Ok(());
        };
        if !self.effects.fs.exists(crt) && self.effects.fs.exists(key) {
            self.write_file(base_name, crt, &text, CERT_MODE)?;
        }
        self.remove_pending(base_name, &pending)
    }

    fn remove_pending(&self, base_name: &str, pending: &Path) -> Result<(), CertsError> {
        self.effects
            .fs
            .remove_file(pending)
            .map_err(|source| CertsError::Write {
                base_name: base_name.to_string(),
                path: pending.display().to_string(),
                source,
            })
    }
}

/// Where [`InitData::write_pair`] puts a certificate before its key: `.<name>.crt.pending` beside it.
fn pending_path(crt: &Path) -> PathBuf {
    let name = crt
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    crt.with_file_name(format!(".{name}.pending"))
}

/// Loads a CA as upstream's `LoadCertificateAuthority`.
pub(crate) fn load_ca(data: &mut InitData, ca: CertId) -> Result<(CertInfo, PrivateKey), CertsError> {
    let ca_spec = cert_spec(ca);
    let base = ca_spec.base_name;
    let dir = data.cert_dir();
    let (crt, key) = cert_and_key_paths(&dir, base);
    let fail = |reason: String| CertsError::LoadCa {
        ca: ca_spec.name.to_string(),
        reason,
    };
    if !data.effects.fs.exists(&crt) && !data.effects.fs.exists(&key) {
        return Err(fail(format!(
            "couldn't load {base} certificate authority from {}",
            dir.display()
        )));
    }
    let cert = read_text(&*data.effects.fs, &crt)
        .and_then(|t| CertInfo::from_pem(&t).ok())
        .ok_or_else(|| {
            fail(format!(
                "failure loading {base} certificate authority: failed to load certificate: couldn't load the certificate file {}: {}",
                crt.display(),
                open_error(&*data.effects.fs, &crt)
            ))
        })?;
    let private = match read_text(&*data.effects.fs, &key) {
        None => {
            return Err(fail(format!(
                "failure loading {base} certificate authority: failed to load key: couldn't load the private key file {}: open {}: no such file or directory",
                key.display(),
                key.display()
            )));
        }
        Some(t) => PrivateKey::from_pem(&t).map_err(|e| {
            fail(format!(
                "failure loading {base} certificate authority: failed to load key: couldn't load the private key file {}: {e}",
                key.display()
            ))
        })?,
    };
    data.check_period(base, &cert);
    if !cert.is_ca {
        return Err(fail(format!("{base} certificate is not a certificate authority")));
    }
    Ok((cert, private))
}

/// `pubkeypin.Hash`: `sha256:` and the hex SHA-256 of the certificate's SubjectPublicKeyInfo.
pub fn public_key_pin(cert: &kubeadm_core::pki::CertInfo) -> String {
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&cert.spki);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
