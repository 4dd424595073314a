//! The `upload-certs` phase's objects: the `kubeadm-certs` Secret holding the control-plane CAs and
//! keys, each sealed with AES-GCM under the certificate key (the random nonce prepended, as
//! kubeadm's util/crypto does), owned by a short-lived bootstrap token whose expiry removes it; and
//! the Role/RoleBinding letting bootstrap tokens read it. Also the reverse, for `join`.

use std::collections::BTreeMap;

use aes_gcm::AesGcm;
use aes_gcm::aead::Nonce;
use aes_gcm::aes::cipher::consts::U12;
use aes_gcm::aes::{Aes128, Aes192, Aes256};
use kubeadm_api::duration::Duration;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString, ClusterConfiguration};
use serde_json::{Value, json};

use super::bootstrap_token::token_secret_name;
use super::meta::{NAMESPACE_SYSTEM, object_meta, secret};
use super::rbac::{NODE_BOOTSTRAP_TOKEN_AUTH_GROUP, Subject, get_named_role_and_binding};

/// `KubeadmCertsSecret`.
pub const KUBEADM_CERTS_SECRET: &str = "kubeadm-certs";
/// `KubeadmCertsClusterRoleName`.
pub const KUBEADM_CERTS_ROLE: &str = "kubeadm:kubeadm-certs";
/// `CertificateKeySize`: bytes of a generated certificate key.
pub const CERTIFICATE_KEY_SIZE: usize = 32;
/// The AES-GCM standard nonce size Go's `cipher.NewGCM` uses.
pub const NONCE_SIZE: usize = 12;
/// The description of the token that owns the Secret.
pub const UPLOAD_CERTS_TOKEN_DESCRIPTION: &str = "Proxy for managing TTL for the kubeadm-certs secret";
/// `DefaultCertTokenDuration`: how long the uploaded certificates live.
pub const UPLOAD_CERTS_TOKEN_TTL: Duration = Duration::from_hours(2);

/// Why sealing or opening failed; messages follow Go's where upstream shows them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertsCryptoError {
    /// The key is not hex.
    #[error("error decoding certificate key: {0}")]
    KeyNotHex(String),
    /// The key is not an AES key size.
    #[error("crypto/aes: invalid key size {0}")]
    KeySize(usize),
    /// Sealed data shorter than its nonce.
    #[error("size of data is less than the nonce")]
    TooShort,
    /// Authentication failed (wrong key or tampered data).
    #[error("cipher: message authentication failed")]
    Open,
}

/// A certificate key as the user sees it: hex of [`CERTIFICATE_KEY_SIZE`] random bytes.
pub fn certificate_key(random: &[u8; CERTIFICATE_KEY_SIZE]) -> String {
    hex::encode(random)
}

/// Decodes a hex certificate key as upstream's `hex.DecodeString`, with Go's errors (the AES key
/// size is checked when sealing or opening).
pub fn decode_certificate_key(key: &str) -> Result<Vec<u8>, CertsCryptoError> {
    let bytes = key.as_bytes();
    let invalid = |b: u8| {
        let c = char::from(b);
        // Go's `%#U` quotes what `strconv.IsPrint` accepts (of Latin-1: all but the controls,
        // U+00A0 and U+00AD).
        let printable = c.is_ascii_graphic() || c == ' ' || (b >= 0xA1 && b != 0xAD);
        let quoted = if printable {
            format!(" '{c}'")
        } else {
            String::new()
        };
        CertsCryptoError::KeyNotHex(format!("encoding/hex: invalid byte: U+{:04X}{quoted}", b))
    };
    // Go checks each pair before the length, and the odd last byte before reporting the length.
    for pair in bytes.chunks(2) {
        if let Some(&b) = pair.iter().find(|b| !b.is_ascii_hexdigit()) {
            return Err(invalid(b));
        }
    }
    if bytes.len() % 2 == 1 {
        return Err(CertsCryptoError::KeyNotHex(
            "encoding/hex: odd length hex string".into(),
        ));
    }
    hex::decode(key).map_err(|e| CertsCryptoError::KeyNotHex(e.to_string()))
}

fn seal_with<C>(key: &[u8], nonce: &[u8; NONCE_SIZE], data: &[u8]) -> Result<Vec<u8>, CertsCryptoError>
where
    C: aes_gcm::aead::Aead + aes_gcm::KeyInit + aes_gcm::AeadCore<NonceSize = U12>,
{
    let cipher = C::new_from_slice(key).map_err(|_| CertsCryptoError::KeySize(key.len()))?;
    let n = Nonce::<C>::from(*nonce);
    let sealed = cipher.encrypt(&n, data).map_err(|_| CertsCryptoError::Open)?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    Ok(out)
}

fn open_with<C>(key: &[u8], data: &[u8]) -> Result<Vec<u8>, CertsCryptoError>
where
    C: aes_gcm::aead::Aead + aes_gcm::KeyInit + aes_gcm::AeadCore<NonceSize = U12>,
{
    let cipher = C::new_from_slice(key).map_err(|_| CertsCryptoError::KeySize(key.len()))?;
    if data.len() < NONCE_SIZE {
        return Err(CertsCryptoError::TooShort);
    }
    let (nonce, sealed) = data.split_at(NONCE_SIZE);
    let n = Nonce::<C>::try_from(nonce).map_err(|_| CertsCryptoError::TooShort)?;
    cipher.decrypt(&n, sealed).map_err(|_| CertsCryptoError::Open)
}

/// `EncryptBytes` with the nonce given: `nonce || AES-GCM(key, nonce, data)`. The key selects
/// AES-128, -192 or -256 by its length.
pub fn encrypt_bytes(data: &[u8], key: &[u8], nonce: &[u8; NONCE_SIZE]) -> Result<Vec<u8>, CertsCryptoError> {
    match key.len() {
        16 => seal_with::<AesGcm<Aes128, U12>>(key, nonce, data),
        24 => seal_with::<AesGcm<Aes192, U12>>(key, nonce, data),
        32 => seal_with::<AesGcm<Aes256, U12>>(key, nonce, data),
        n => Err(CertsCryptoError::KeySize(n)),
    }
}

/// `DecryptBytes`: opens what [`encrypt_bytes`] sealed.
pub fn decrypt_bytes(data: &[u8], key: &[u8]) -> Result<Vec<u8>, CertsCryptoError> {
    match key.len() {
        16 => open_with::<AesGcm<Aes128, U12>>(key, data),
        24 => open_with::<AesGcm<Aes192, U12>>(key, data),
        32 => open_with::<AesGcm<Aes256, U12>>(key, data),
        n => Err(CertsCryptoError::KeySize(n)),
    }
}

/// One file carried in `kubeadm-certs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferredFile {
    /// Upstream's name for it (`etcd/ca.crt`, `external-etcd.key`), used in messages.
    pub name: String,
    /// The Secret data key (`etcd/ca.crt` becomes `etcd-ca.crt`).
    pub secret_key: String,
    /// Where the file lives on a control-plane node.
    pub path: String,
}

/// `certsToTransfer`, sorted by Secret key: the cluster CA, front-proxy CA and service-account keys,
/// plus the etcd CA for local etcd or the external etcd client files (from the configuration).
pub fn certs_to_transfer(cluster: &ClusterConfiguration) -> Vec<TransferredFile> {
    let dir = cluster.certificates_dir.trim_end_matches('/');
    // Go's path.Join: no separator after an empty directory.
    let in_dir = |name: &str| {
        if dir.is_empty() && !cluster.certificates_dir.starts_with('/') {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        }
    };
    let mut files: Vec<(String, String)> = [
        "ca.crt",
        "ca.key",
        "front-proxy-ca.crt",
        "front-proxy-ca.key",
        "sa.pub",
        "sa.key",
    ]
    .iter()
    .map(|n| (n.to_string(), in_dir(n)))
    .collect();
    match &cluster.etcd.external {
        None => {
            files.push(("etcd/ca.crt".into(), in_dir("etcd/ca.crt")));
            files.push(("etcd/ca.key".into(), in_dir("etcd/ca.key")));
        }
        Some(ext) => {
            files.push(("external-etcd-ca.crt".into(), ext.ca_file.clone()));
            files.push(("external-etcd.crt".into(), ext.cert_file.clone()));
            files.push(("external-etcd.key".into(), ext.key_file.clone()));
        }
    }
    let mut out: Vec<TransferredFile> = files
        .into_iter()
        .map(|(name, path)| TransferredFile {
            secret_key: name.replace('/', "-"),
            name,
            path,
        })
        .collect();
    out.sort_by(|a, b| a.secret_key.cmp(&b.secret_key));
    out
}

/// The short-lived token owning the Secret (no usages or groups: it only carries the TTL).
pub fn upload_certs_token(token: BootstrapTokenString) -> BootstrapToken {
    BootstrapToken {
        token: Some(token),
        description: UPLOAD_CERTS_TOKEN_DESCRIPTION.to_string(),
        ttl: Some(UPLOAD_CERTS_TOKEN_TTL),
        ..BootstrapToken::default()
    }
}

/// The `kube-system/kubeadm-certs` Secret. `sealed` maps Secret keys to sealed file contents, `None`
/// for a file that does not exist (upstream then stores a nil value, written `null`). The Secret is
/// controlled by the token Secret `bootstrap-token-<owner_token_id>` whose UID is `owner_uid`.
pub fn kubeadm_certs_secret(
    sealed: &BTreeMap<String, Option<Vec<u8>>>,
    owner_token_id: &str,
    owner_uid: &str,
) -> Value {
    let mut meta = object_meta(KUBEADM_CERTS_SECRET, NAMESPACE_SYSTEM);
    meta.insert(
        "ownerReferences".into(),
        json!([{
            "apiVersion": "v1",
            "kind": "Secret",
            "name": token_secret_name(owner_token_id),
            "uid": owner_uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]),
    );
    secret(meta, "", sealed)
}

/// The Role and RoleBinding letting bootstrap tokens read `kubeadm-certs`.
pub fn kubeadm_certs_rbac() -> [Value; 2] {
    get_named_role_and_binding(
        KUBEADM_CERTS_ROLE,
        NAMESPACE_SYSTEM,
        "secrets",
        KUBEADM_CERTS_SECRET,
        &[Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP)],
    )
}

/// Why the certificates of `kubeadm-certs` cannot be restored; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadCertsError {
    /// A value does not open with the key (upstream returns no partial result).
    #[error("error decoding secret data with provided key: {0}")]
    Decrypt(#[source] CertsCryptoError),
    /// A value is not base64.
    #[error("error decoding secret data with provided key: illegal base64 data in key {0:?}")]
    Base64(String),
    /// A file this node needs is not in the Secret.
    #[error("the Secret does not include the required certificate or key - name: {name}, path: {path}")]
    Missing {
        /// Upstream's file name.
        name: String,
        /// Where it would be written.
        path: String,
    },
    /// A value is neither a private key nor certificates or public keys.
    #[error("unknown data found in Secret entry")]
    UnknownData,
}

/// How a restored file is written: keys with mode 0600, certificates and public keys 0644.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoredKind {
    /// A private key PEM (`keyutil.WriteKey`).
    PrivateKey,
    /// Certificates or public keys PEM (`certutil.WriteCert`).
    Public,
}

/// A file to write on a joining control-plane node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredFile {
    /// Destination path.
    pub path: String,
    /// Decrypted contents.
    pub data: Vec<u8>,
    /// How to write it.
    pub kind: RestoredKind,
}

/// The PEM block types of `data`, in order.
fn pem_types(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("-----BEGIN "))
        .filter_map(|l| l.strip_suffix("-----"))
        .map(str::to_string)
        .collect()
}

/// `DownloadCerts` without the I/O: opens every value of the `kubeadm-certs` Secret (`secret`, as
/// JSON) with the certificate key and pairs the files this cluster needs with their paths, in
/// Secret-key order. Empty values (files missing at upload) are skipped. A file is a private key
/// when its first PEM block is one, and public when all its blocks are certificates or public
/// keys (upstream parses them; the block types decide the same for files kubeadm wrote).
pub fn restore_kubeadm_certs(
    secret: &Value,
    key: &[u8],
    cluster: &ClusterConfiguration,
) -> Result<Vec<RestoredFile>, DownloadCertsError> {
    use base64::Engine as _;
    let data = secret.get("data").and_then(Value::as_object);
    // Every value is opened first: one bad value fails the whole download.
    let mut opened: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (k, v) in data.into_iter().flatten() {
        let raw = match v.as_str() {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|_| DownloadCertsError::Base64(k.clone()))?,
            None => Vec::new(),
        };
        let plain = if raw.is_empty() {
            Vec::new()
        } else {
            decrypt_bytes(&raw, key).map_err(DownloadCertsError::Decrypt)?
        };
        opened.insert(k.clone(), plain);
    }
    let mut out = Vec::new();
    for f in certs_to_transfer(cluster) {
        let Some(plain) = opened.remove(&f.secret_key) else {
            return Err(DownloadCertsError::Missing {
                name: f.name,
                path: f.path,
            });
        };
        if plain.is_empty() {
            continue;
        }
        let types = pem_types(&plain);
        let kind = match types.first().map(String::as_str) {
            Some("RSA PRIVATE KEY" | "PRIVATE KEY" | "EC PRIVATE KEY") => RestoredKind::PrivateKey,
            Some(_)
                if types
                    .iter()
                    .all(|t| matches!(t.as_str(), "CERTIFICATE" | "PUBLIC KEY" | "RSA PUBLIC KEY")) =>
            {
                RestoredKind::Public
            }
            _ => return Err(DownloadCertsError::UnknownData),
        };
        out.push(RestoredFile {
            path: f.path,
            data: plain,
            kind,
        });
    }
    Ok(out)
}
