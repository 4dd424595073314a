//! The certificate renewal manager (upstream's `phases/certs/renewal`) that `kubeadm certs renew`
//! and `certs check-expiration` use: the certificates of the table plus the client certificates
//! embedded in admin.conf, controller-manager.conf and scheduler.conf, how each is read, whether
//! its CA is managed outside kubeadm, and how a renewed one is written back.

use std::path::{Path, PathBuf};

use kubeadm_core::kubeconfig::embedded_client_certificate;
use kubeadm_core::pki::{
    CERT_FILE_MODE, CertId, CertInfo, EtcdMode, KEY_FILE_MODE, KUBECONFIG_FILE_MODE, KeyAlgorithm,
    PrivateKey, cert_list, cert_spec,
};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::keygen::KeyGen;

use crate::KeyPool;
use crate::external_ca_check;
use crate::pki::read_text;

/// Why a renewal or an expiration check failed; upstream's words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RenewalError(pub String);

fn failed(e: impl std::fmt::Display) -> RenewalError {
    RenewalError(e.to_string())
}

/// The kubeconfig files whose client certificates are renewed, with upstream's long names.
const KUBECONFIG_RENEWALS: [(&str, &str); 3] = [
    (
        "admin.conf",
        "certificate embedded in the kubeconfig file for the admin to use and for kubeadm itself",
    ),
    (
        "controller-manager.conf",
        "certificate embedded in the kubeconfig file for the controller manager to use",
    ),
    (
        "scheduler.conf",
        "certificate embedded in the kubeconfig file for the scheduler manager to use",
    ),
];

pub fn ca_ux_name(ca: CertId) -> &'static str {
    match ca {
        CertId::FrontProxyCa => "front-proxy CA",
        CertId::EtcdCa => "etcd CA",
        _ => "CA",
    }
}

/// Upstream's `IsExternallyManaged`.
pub fn externally_managed(fs: &dyn Fs, cert_dir: &Path, ca: CertId, now: i64) -> Result<bool, RenewalError> {
    let status = external_ca_check(fs, cert_dir, ca, ca_ux_name(ca), now);
    match status.error {
        Some(e) => Err(RenewalError(format!(
            "Error checking external CA condition for {} certificate authority: {e}",
            cert_spec(ca).base_name
        ))),
        None => Ok(status.external),
    }
}

/// One certificate the renewal manager knows.
#[derive(Debug, Clone)]
pub struct Handler {
    /// The name `certs renew` takes.
    pub name: String,
    /// Upstream's long name, printed on renewal.
    pub long_name: &'static str,
    /// The `.crt` file, or the kubeconfig file.
    pub path: PathBuf,
    /// The `.key` file for certificates in the PKI dir.
    pub key_path: Option<PathBuf>,
    /// The CA that signs it.
    pub ca: CertId,
}

pub fn handlers(kubernetes_dir: &Path, cert_dir: &Path, etcd: &EtcdMode) -> Vec<Handler> {
    let mut out: Vec<Handler> = cert_list(etcd)
        .filter_map(|spec| {
            spec.ca.map(|ca| Handler {
                name: spec.name.to_string(),
                long_name: spec.long_name,
                path: cert_dir.join(format!("{}.crt", spec.base_name)),
                key_path: Some(cert_dir.join(format!("{}.key", spec.base_name))),
                ca,
            })
        })
        .collect();
    for (file, long_name) in KUBECONFIG_RENEWALS {
        out.push(Handler {
            name: file.to_string(),
            long_name,
            path: kubernetes_dir.join(file),
            key_path: None,
            ca: CertId::Ca,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn load_kubeconfig(fs: &dyn Fs, path: &Path) -> Result<serde_json::Value, RenewalError> {
    let text = read_text(fs, path).ok_or_else(|| {
        failed(format!(
            "failed to load kubeConfig file {}: open {}: no such file or directory",
            path.display(),
            path.display()
        ))
    })?;
    kubeadm_yaml::parse_documents(&text)
        .ok()
        .and_then(|d| d.into_iter().next())
        .map(|d| d.value)
        .ok_or_else(|| failed(format!("failed to load kubeConfig file {}", path.display())))
}

/// The certificate a handler reads (`certificateReadWriter.Read`).
pub fn read_handler_cert(fs: &dyn Fs, h: &Handler, cert_dir: &Path) -> Result<CertInfo, RenewalError> {
    if h.key_path.is_some() {
        return read_text(fs, &h.path)
            .and_then(|t| CertInfo::from_pem(&t).ok())
            .ok_or_else(|| {
                failed(format!(
                    "failed to load existing certificate {}",
                    h.path.display()
                ))
            });
    }
    let doc = load_kubeconfig(fs, &h.path)?;
    if read_text(fs, &cert_dir.join("ca.crt")).is_none_or(|t| CertInfo::from_pem(&t).is_err()) {
        return Err(failed("failed to load existing certificate ca"));
    }
    embedded_client_certificate(&doc).ok_or_else(|| {
        failed(format!(
            "kubeConfig file {} does not have an embedded client certificate",
            h.path.display()
        ))
    })
}

/// Upstream's `LoadCertificateAuthority` for a renewal.
pub fn load_ca(fs: &dyn Fs, cert_dir: &Path, ca: CertId) -> Result<(CertInfo, PrivateKey), RenewalError> {
    let base = cert_spec(ca).base_name;
    let crt = cert_dir.join(format!("{base}.crt"));
    let key = cert_dir.join(format!("{base}.key"));
    if !fs.exists(&crt) && !fs.exists(&key) {
        return Err(failed(format!(
            "couldn't load {base} certificate authority from {}",
            cert_dir.display()
        )));
    }
    let cert = read_text(fs, &crt)
        .and_then(|t| CertInfo::from_pem(&t).ok())
        .ok_or_else(|| {
            failed(format!(
                "failure loading {base} certificate authority: failed to load certificate"
            ))
        })?;
    let private = read_text(fs, &key)
        .and_then(|t| PrivateKey::from_pem(&t).ok())
        .ok_or_else(|| {
            failed(format!(
                "failure loading {base} certificate authority: failed to load key"
            ))
        })?;
    if !cert.is_ca {
        return Err(failed(format!(
            "{base} certificate is not a certificate authority"
        )));
    }
    Ok((cert, private))
}

pub fn write_renewed(
    fs: &dyn Fs,
    h: &Handler,
    ca: &CertInfo,
    cert_pem: &str,
    key_pem: &str,
) -> Result<(), RenewalError> {
    use base64::Engine as _;
    let write = |path: &Path, text: &str, mode: u32| {
        fs.write(path, text.as_bytes(), mode)
            .map_err(|e| failed(format!("unable to write {}: {e}", path.display())))
    };
    if let Some(key_path) = &h.key_path {
        write(key_path, key_pem, KEY_FILE_MODE)?;
        return write(&h.path, cert_pem, CERT_FILE_MODE);
    }
    // Replace the CA and the current user's credentials, keep the rest of the file.
    let mut doc = load_kubeconfig(fs, &h.path)?;
    let b64 = |s: &str| serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(s));
    let (cluster, user) = kubeadm_core::kubeconfig::Config::from_value(&doc)
        .current()
        .map(|c| (c.cluster.clone(), c.auth_info.clone()))
        .unwrap_or_default();
    if let Some(cs) = doc["clusters"].as_array_mut() {
        for c in cs.iter_mut().filter(|c| c["name"] == cluster.as_str()) {
            c["cluster"]["certificate-authority-data"] = b64(&ca.to_pem());
        }
    }
    if let Some(us) = doc["users"].as_array_mut() {
        for u in us.iter_mut().filter(|u| u["name"] == user.as_str()) {
            u["user"]["client-certificate-data"] = b64(cert_pem);
            u["user"]["client-key-data"] = b64(key_pem);
        }
    }
    write(&h.path, &kubeadm_yaml::to_string(&doc), KUBECONFIG_FILE_MODE)
}

/// Upstream's `RenewUsingLocalCA` for one handler: a new key and a certificate like the old one,
/// signed by the local CA, written back. `Ok(false)` when the CA is managed outside kubeadm (its
/// key is absent), so nothing can be renewed.
pub fn renew_using_local_ca(
    fs: &dyn Fs,
    h: &Handler,
    cert_dir: &Path,
    key: &PrivateKey,
    now: i64,
    random: u64,
) -> Result<bool, RenewalError> {
    if externally_managed(fs, cert_dir, h.ca, now)? {
        return Ok(false);
    }
    let cert = read_handler_cert(fs, h, cert_dir)?;
    let template = kubeadm_core::pki::CertTemplate::from_existing(&cert);
    let (ca_cert, ca_key) = load_ca(fs, cert_dir, h.ca)?;
    let issued = kubeadm_core::pki::issue_signed(
        &template,
        &ca_cert,
        &ca_key,
        key,
        now,
        None,
        kubeadm_core::pki::serial_from_random(random),
    )
    .map_err(|e| failed(format!("failed to renew certificate {}: {e}", h.name)))?;
    write_renewed(fs, h, &ca_cert, &issued.pem, &key.to_pem())?;
    Ok(true)
}

/// What `kubeadm certs renew` renews and with what.
#[derive(Debug, Clone)]
pub struct RenewRequest<'a> {
    /// A handler's name, or `all`.
    pub which: &'a str,
    pub kubernetes_dir: &'a Path,
    pub cert_dir: &'a Path,
    /// The configuration's etcd: with external etcd, its certificates are not kubeadm's.
    pub etcd: &'a EtcdMode,
    pub key_algorithm: KeyAlgorithm,
    pub now: i64,
}

/// `kubeadm certs renew <name>|all` (upstream's `cmd/certs.go` over the renewal manager): each
/// selected certificate that exists gets a new key and a certificate like the old one, signed by
/// its local CA; a missing one prints `MISSING!`, one whose CA is managed outside kubeadm is left
/// as it is. What it prints goes to `out` as it goes, so an error leaves the lines before it.
/// A run killed part-way leaves every file whole (each write is atomic), and running it again
/// renews everything (the crash-point test shows it): between a key and its certificate the pair
/// does not match until then, as upstream's.
pub fn renew_certificates(
    fs: &dyn Fs,
    keygen: &dyn KeyGen,
    req: &RenewRequest<'_>,
    random: &mut dyn FnMut() -> u64,
    out: &mut String,
) -> Result<(), RenewalError> {
    let active = handlers(req.kubernetes_dir, req.cert_dir, req.etcd);
    let all = req.which == "all";
    let mut pool = KeyPool::default();
    if all {
        // Every existing certificate gets a new key: generate them in one parallel batch.
        let wanted: Vec<_> = active
            .iter()
            .filter(|h| fs.exists(&h.path))
            .map(|_| req.key_algorithm)
            .collect();
        pool.fill(keygen, &wanted).map_err(failed)?;
    }
    // A single renewal looks its name up in the full table: an etcd certificate with external
    // etcd is simply missing.
    let full = handlers(
        req.kubernetes_dir,
        req.cert_dir,
        &EtcdMode::Local {
            server_cert_sans: Vec::new(),
            peer_cert_sans: Vec::new(),
        },
    );
    let selected: Vec<&Handler> = if all {
        active.iter().collect()
    } else {
        full.iter().filter(|h| h.name == req.which).collect()
    };
    for h in selected {
        if !(active.iter().any(|a| a.name == h.name) && fs.exists(&h.path)) {
            out.push_str(&format!("MISSING! {}\n", h.long_name));
            continue;
        }
        let key = pool.take(keygen, req.key_algorithm).map_err(failed)?;
        if !renew_using_local_ca(fs, h, req.cert_dir, &key, req.now, random())? {
            out.push_str(&format!(
                "Detected external {}, {} can't be renewed\n",
                cert_spec(h.ca).base_name,
                h.long_name
            ));
            continue;
        }
        out.push_str(&format!("{} renewed\n", h.long_name));
    }
    if all {
        out.push_str("\nDone renewing certificates. You must restart the kube-apiserver, kube-controller-manager, kube-scheduler and etcd, so that they can use the new certificates.\n");
    }
    Ok(())
}
