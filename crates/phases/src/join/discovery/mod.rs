//! Discovery for `kubeadm join` (upstream's `discovery.For` with `discovery/token`,
//! `discovery/file` and `discovery/https`): establish trust in the API server, then build the
//! kubeconfig the kubelet bootstraps with.
//!
//! **Token discovery** reads `kube-public/cluster-info` anonymously over TLS that does not verify
//! the server (nothing is known about the CA yet), and trusts its kubeconfig only when the detached
//! JWS signature under `jws-kubeconfig-<token-id>`, recomputed with the token's secret, matches (in
//! constant time). With CA pins (`--discovery-token-ca-cert-hash`) the CA in that kubeconfig must
//! match one, and `cluster-info` is read a second time over TLS verified against that CA; both
//! reads must agree byte for byte. Without pins (`--discovery-token-unsafe-skip-ca-verification`)
//! the signed kubeconfig is used as is.
//!
//! **File discovery** reads a kubeconfig file (or GETs it through [`JoinData::fetch_url`], for an
//! `https://` URL), embeds the CA (and, when the file carries credentials, the client
//! certificate, key and token files it names), and reads `cluster-info` with it to prove the TLS
//! connection, refreshing the server and CA from it.
//!
//! Then the TLS bootstrap kubeconfig: with a TLS bootstrap token, a kubeconfig for the discovered
//! server and CA authenticating with it; else the discovered kubeconfig itself, when it carries
//! credentials (a discovery file with a token, client certificate, exec plugin or auth provider).

pub(crate) mod kubeconfig;

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use kubeadm_api::v1beta3::{BootstrapTokenError, BootstrapTokenString};
use kubeadm_core::cluster::cluster_info::{
    CLUSTER_INFO_CONFIG_MAP, KUBECONFIG_KEY, detached_jws, jws_signature_key,
};
use kubeadm_core::kubeconfig::Config;
use kubeadm_core::pki::CertInfo;
use kubeadm_effects::cluster::{Cluster, ClusterError, Resource};
use serde_json::{Value, json};

use crate::join::discovery::kubeconfig as kc;
use crate::join::{ClientSource, JoinData};
use crate::pki::public_key_pin;

/// `kubeadmapiv1.DefaultClusterName`.
pub const DEFAULT_CLUSTER_NAME: &str = "kubernetes";
/// The user of the kubeconfig token discovery reads `cluster-info` with (`token.BootstrapUser`).
const BOOTSTRAP_USER: &str = "token-bootstrap-client";
/// The user of the TLS bootstrap kubeconfig (`discovery.TokenUser`).
pub const TLS_BOOTSTRAP_USER: &str = "tls-bootstrap-token-user";
/// `DiscoveryRetryInterval`.
const RETRY_INTERVAL: Duration = Duration::from_secs(5);
/// The default `discovery.timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
const PUBLIC: &str = "kube-public";

/// Why discovery failed, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// Trust in the API server could not be established.
    #[error("couldn't validate the identity of the API Server: {0}")]
    Identity(#[source] Box<DiscoveryError>),
    /// Neither discovery method is configured.
    #[error("couldn't find a valid discovery configuration")]
    NoMethod,
    /// Neither a TLS bootstrap token nor credentials in the discovered kubeconfig.
    #[error(
        "couldn't find authentication credentials for the TLS boostrap process. Please use Token discovery, a discovery file with embedded authentication credentials or a discovery file without authentication credentials but with the TLSBootstrapToken flag"
    )]
    NoCredentials,
    /// The discovery file given as an `https://` URL could not be fetched (upstream's
    /// `Get "https://…": …`).
    #[error("{0}")]
    Https(String),
    /// The discovery token is malformed.
    #[error(transparent)]
    Token(#[from] BootstrapTokenError),
    /// A `--discovery-token-ca-cert-hash` is malformed.
    #[error("invalid discovery token CA certificate hash: {0}")]
    Hash(String),
    /// `cluster-info` could not be read (the last error before the timeout).
    #[error("{0}")]
    Fetch(String),
    /// An API client could not be created.
    #[error("{0}")]
    Client(String),
    /// The discovery kubeconfig's user authenticates with an auth provider: client-go finds no
    /// plugin of that name in kubeadm (it registers none), and kubeadm-rs never runs one (a `gcp`
    /// provider's `cmd-path` would run as root).
    #[error("failed to create API client: no Auth Provider found for name {}", kubeadm_api::gofmt::quote(.0))]
    AuthProvider(String),
    /// `cluster-info` has no kubeconfig.
    #[error(
        "there is no {KUBECONFIG_KEY} key in the {CLUSTER_INFO_CONFIG_MAP} ConfigMap. This API Server isn't set up for token bootstrapping, can't connect"
    )]
    NoKubeconfig,
    /// `cluster-info` has no signature for the token.
    #[error(
        "token id {0:?} is invalid for this cluster or it has expired. Use \"kubeadm token create\" on the control-plane node to create a new valid token"
    )]
    UnknownTokenId(String),
    /// The signature does not match the token.
    #[error("failed to verify JWS signature of received cluster info object, can't trust this API Server")]
    BadSignature,
    /// The kubeconfig in `cluster-info` does not parse.
    #[error("couldn't parse the kubeconfig file in the {CLUSTER_INFO_CONFIG_MAP} ConfigMap: {0}")]
    Parse(String),
    /// The kubeconfig in `cluster-info` has not exactly one cluster.
    #[error(
        "expected the kubeconfig file in the {CLUSTER_INFO_CONFIG_MAP} ConfigMap to have a single cluster, but it had {0}"
    )]
    ClusterCount(usize),
    /// The CA in `cluster-info` does not parse.
    #[error("failed to parse cluster CA from the {CLUSTER_INFO_CONFIG_MAP} ConfigMap: {0}")]
    Ca(String),
    /// No CA public key matches a pin.
    #[error(
        "cluster CA found in {CLUSTER_INFO_CONFIG_MAP} ConfigMap is invalid: none of the public keys {0:?} are pinned"
    )]
    NotPinned(String),
    /// The verified read differs from the unverified one.
    #[error(
        "the second kubeconfig from the {CLUSTER_INFO_CONFIG_MAP} ConfigMap (using validated TLS) was different from the first"
    )]
    SecondReadDiffers,
    /// The discovery file is unusable (upstream's message).
    #[error("{0}")]
    File(String),
}

/// Upstream's `discovery.For`: the TLS bootstrap kubeconfig.
pub fn tls_bootstrap_config(data: &JoinData) -> Result<Value, DiscoveryError> {
    let config = validated_config(data).map_err(|e| DiscoveryError::Identity(Box::new(e)))?;
    let token = &data.cfg.discovery.tls_bootstrap_token;
    if !token.is_empty() {
        data.effects.reporter.info(
            1,
            "discovery.go",
            "[discovery] Using provided TLSBootstrapToken as authentication credentials for the join process",
        );
        let cluster = kc::default_cluster(&config);
        return Ok(kc::create_with_token(
            &cluster.server,
            DEFAULT_CLUSTER_NAME,
            TLS_BOOTSTRAP_USER,
            &cluster.certificate_authority_data,
            token,
        ));
    }
    if kc::has_authentication_credentials(&config) {
        return Ok(config);
    }
    Err(DiscoveryError::NoCredentials)
}

fn timeout(data: &JoinData) -> Duration {
    data.cfg
        .discovery
        .timeout
        .map(|d| Duration::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(0)))
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// Upstream's `DiscoverValidatedKubeConfig`.
fn validated_config(data: &JoinData) -> Result<Value, DiscoveryError> {
    let discovery = &data.cfg.discovery;
    if let Some(file) = &discovery.file {
        let path = &file.kube_config_path;
        if is_https_url(path) {
            return https_config(data, path, timeout(data));
        }
        return file_config(data, path, timeout(data));
    }
    let Some(bt) = &discovery.bootstrap_token else {
        return Err(DiscoveryError::NoMethod);
    };
    let token = BootstrapTokenString::parse(&bt.token)?;
    let pins = parse_pins(&bt.ca_cert_hashes)?;
    let duration = timeout(data);
    let interval = RETRY_INTERVAL.min(duration);
    let server = format!("https://{}", bt.api_server_endpoint);
    let info = |m: String| data.effects.reporter.info(1, "token.go", &m);

    info(format!(
        "[discovery] Created cluster-info discovery client, requesting info from {:?}",
        bt.api_server_endpoint
    ));
    let insecure = data
        .client(&ClientSource::InsecureAnonymous(&server, duration))
        .map_err(DiscoveryError::Client)?;
    let cm = poll_cluster_info(data, &*insecure, &token.id, interval, duration)?;
    let kubeconfig = verify_cluster_info(&cm, &token)?;
    let doc = parse_kubeconfig(&kubeconfig)?;
    let config = Config::from_value(&doc);
    let [only] = config.clusters.as_slice() else {
        return Err(DiscoveryError::ClusterCount(config.clusters.len()));
    };
    if pins.is_empty() {
        info(format!(
            "[discovery] Cluster info signature and contents are valid and no TLS pinning was specified, will use API Server {:?}",
            bt.api_server_endpoint
        ));
        return Ok(doc);
    }
    let ca_data = &only.cluster.certificate_authority_data;
    check_pins(ca_data, &pins)?;

    // Trust established: read again, verifying TLS against the pinned CA.
    let secure = kc::create_basic(&server, DEFAULT_CLUSTER_NAME, BOOTSTRAP_USER, ca_data);
    info(format!(
        "[discovery] Requesting info from {:?} again to validate TLS against the pinned public key",
        bt.api_server_endpoint
    ));
    let client = data
        .client(&ClientSource::Kubeconfig(&kc::to_text(&secure)))
        .map_err(DiscoveryError::Client)?;
    let cm = poll_cluster_info(data, &*client, &token.id, interval, duration)?;
    let second = cm
        .pointer(&format!("/data/{KUBECONFIG_KEY}"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if second != kubeconfig {
        return Err(DiscoveryError::SecondReadDiffers);
    }
    info(format!(
        "[discovery] Cluster info signature and contents are valid and TLS certificate validates against pinned roots, will use API Server {:?}",
        bt.api_server_endpoint
    ));
    parse_kubeconfig(second)
}

fn parse_kubeconfig(text: &str) -> Result<Value, DiscoveryError> {
    let docs = kubeadm_yaml::parse_documents(text).map_err(|e| DiscoveryError::Parse(e.to_string()))?;
    Ok(docs.into_iter().next().map(|d| d.value).unwrap_or(json!({})))
}

/// How long discovery has been at it since `start` (the clock's seconds): the time the clock
/// shows or, when that is less (a clock that does not move in tests), the pauses made.
fn elapsed(data: &JoinData, start: i64, paused: Duration) -> Duration {
    let shown = u64::try_from(data.effects.now().saturating_sub(start)).unwrap_or(0);
    paused.max(Duration::from_secs(shown))
}

/// Reads `cluster-info` until it carries the token's signature or the timeout passes (upstream's
/// `getClusterInfo`: the signature is added by the controller manager a little after the
/// ConfigMap is created). The time the reads take counts, not only the pauses between them, so
/// slow answers cannot stretch the wait past the timeout.
fn poll_cluster_info(
    data: &JoinData,
    client: &dyn Cluster,
    token_id: &str,
    interval: Duration,
    timeout: Duration,
) -> Result<Value, DiscoveryError> {
    let start = data.effects.now();
    let mut waited = Duration::ZERO;
    loop {
        let error = match client.get(&Resource::config_maps(), PUBLIC, CLUSTER_INFO_CONFIG_MAP) {
            Ok(cm)
                if cm
                    .pointer(&format!("/data/{}", jws_signature_key(token_id)))
                    .is_some() =>
            {
                return Ok(cm);
            }
            Ok(_) => {
                data.effects.reporter.info(1, "token.go", &format!("[discovery] The cluster-info ConfigMap does not yet contain a JWS signature for token ID {token_id:?}, will try again"));
                format!(
                    "could not find a JWS signature in the cluster-info ConfigMap for token ID {token_id:?}"
                )
            }
            Err(e) => {
                data.effects.reporter.info(
                    1,
                    "token.go",
                    &format!("[discovery] Failed to request cluster-info, will try again: {e}"),
                );
                e.to_string()
            }
        };
        if interval.is_zero() || elapsed(data, start, waited) + interval > timeout {
            return Err(DiscoveryError::Fetch(error));
        }
        client.pause(interval);
        waited += interval;
    }
}

/// Upstream's `validateClusterInfoToken`: the kubeconfig in `cluster-info`, once its detached JWS
/// signature for the token is verified.
pub fn verify_cluster_info(cm: &Value, token: &BootstrapTokenString) -> Result<String, DiscoveryError> {
    let kubeconfig = cm
        .pointer(&format!("/data/{KUBECONFIG_KEY}"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(DiscoveryError::NoKubeconfig)?;
    let signature = cm
        .get("data")
        .and_then(|d| d.get(jws_signature_key(&token.id)))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| DiscoveryError::UnknownTokenId(token.id.clone()))?;
    let expected = detached_jws(kubeconfig, &token.id, &token.secret);
    if !constant_time_eq(expected.as_bytes(), signature.as_bytes()) {
        return Err(DiscoveryError::BadSignature);
    }
    Ok(kubeconfig.to_string())
}

/// Equality whose time depends only on the lengths, so a forged signature cannot be guessed a byte
/// at a time.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Upstream's `pubkeypin.Set.Allow`: the pinned SPKI SHA-256 hashes, lower-case hex.
pub fn parse_pins(hashes: &[String]) -> Result<Vec<String>, DiscoveryError> {
    let mut pins = Vec::new();
    for hash in hashes {
        let parts: Vec<&str> = hash.split(':').collect();
        let [format, value] = parts[..] else {
            return Err(DiscoveryError::Hash(
                "invalid hash, expected \"format:hex-value\". Known format(s) are: sha256".into(),
            ));
        };
        if !format.eq_ignore_ascii_case("sha256") {
            return Err(DiscoveryError::Hash(format!(
                "unknown hash format {format:?}. Known format(s) are: sha256"
            )));
        }
        let invalid = |why: String| DiscoveryError::Hash(format!("invalid hash {hash:?}, {why}"));
        if value.len() / 2 != 32 {
            return Err(invalid(format!(
                "expected a 32 byte SHA-256 hash, found {} bytes",
                value.len() / 2
            )));
        }
        if let Some(c) = value.chars().find(|c| !c.is_ascii_hexdigit()) {
            return Err(invalid(format!(
                "could not decode SHA-256 from hex: encoding/hex: invalid byte: U+{:04X} {c:?}",
                u32::from(c)
            )));
        }
        if value.len() % 2 == 1 {
            return Err(invalid(
                "could not decode SHA-256 from hex: encoding/hex: odd length hex string".into(),
            ));
        }
        pins.push(format!("sha256:{}", value.to_ascii_lowercase()));
    }
    Ok(pins)
}

/// Upstream's `validateClusterCA`: some certificate of the CA bundle (base64 in `ca_data`) has a
/// pinned public key.
pub fn check_pins(ca_data: &str, pins: &[String]) -> Result<(), DiscoveryError> {
    let no_certs = || DiscoveryError::Ca("data does not contain any valid RSA or ECDSA certificates".into());
    let pem = base64::engine::general_purpose::STANDARD
        .decode(ca_data.trim())
        .map_err(|_| no_certs())?;
    let certs = CertInfo::chain_from_pem(&String::from_utf8_lossy(&pem)).map_err(|_| no_certs())?;
    if certs.is_empty() {
        return Err(no_certs());
    }
    let hashes: Vec<String> = certs.iter().map(public_key_pin).collect();
    if hashes.iter().any(|h| pins.contains(h)) {
        return Ok(());
    }
    Err(DiscoveryError::NotPinned(hashes.join(":")))
}

/// Upstream's `isHTTPSURL`: the scheme (case-insensitive, as `url.Parse` lowers it) is `https`.
/// Anything else, `http://…` included, is a local path.
fn is_https_url(path: &str) -> bool {
    path.get(..6)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https:"))
}

/// Upstream's `https.RetrieveValidatedConfigInfo`: the kubeconfig at `url` (the body whatever the
/// status code), then the same checks as a local file.
fn https_config(data: &JoinData, url: &str, timeout: Duration) -> Result<Value, DiscoveryError> {
    let bytes = (data.fetch_url)(url, timeout).map_err(DiscoveryError::Https)?;
    validated_config_info(data, &bytes, timeout)
}

/// Upstream's `file.RetrieveValidatedConfigInfo` for a local file.
fn file_config(data: &JoinData, path: &str, timeout: Duration) -> Result<Value, DiscoveryError> {
    let bytes =
        data.effects.fs.read(Path::new(path)).map_err(|e| {
            DiscoveryError::File(format!("open {path}: {}", kubeadm_api::gofmt::io_error(&e)))
        })?;
    validated_config_info(data, &bytes, timeout)
}

/// Upstream's `clientcmd.Load` and `file.ValidateConfigInfo`: the discovery kubeconfig (the text
/// of a file or of an HTTPS answer) with the files it names embedded, its TLS connection proven by
/// reading `cluster-info`, and its server and CA refreshed from it.
fn validated_config_info(data: &JoinData, bytes: &[u8], timeout: Duration) -> Result<Value, DiscoveryError> {
    let file_err = DiscoveryError::File;
    let mut config = read_discovery_kubeconfig(bytes, &|path| data.effects.fs.read(Path::new(path)))?;
    let server = kc::default_cluster(&config).server;
    let info = |m: &str| data.effects.reporter.info(1, "file.go", m);
    let with_credentials = kc::has_authentication_credentials(&config);
    if with_credentials {
        info(
            "[discovery] Using authentication credentials from the discovery file for validating TLS connection",
        );
    } else {
        info(
            "[discovery] Discovery file does not contains authentication credentials, using unauthenticated request for validating TLS connection",
        );
        config = kc::create_basic(
            &server,
            DEFAULT_CLUSTER_NAME,
            "",
            &kc::default_cluster(&config).certificate_authority_data,
        );
    }
    // Upstream fails here, building the client: no auth provider plugin is registered in kubeadm.
    if let Some(name) = kc::current_auth_provider(&config) {
        return Err(DiscoveryError::AuthProvider(name));
    }
    if let Some(command) = kc::current_exec_command(&config) {
        info(&format!(
            "[discovery] The discovery file's user authenticates with an exec credential plugin: running {}",
            kubeadm_api::gofmt::quote(&command)
        ));
    }
    let client = data
        .client(&ClientSource::Kubeconfig(&kc::to_text(&config)))
        .map_err(DiscoveryError::Client)?;
    info(&format!(
        "[discovery] Created cluster-info discovery client, requesting info from {server:?}\n"
    ));
    // Upstream's `wait.Poll` pauses one interval before each read, the first one included, so
    // every join with a discovery file waited 5 s for nothing. Here each read comes one interval
    // earlier: the same reads, the same timeout and messages, the pause after a failed read.
    let start = data.effects.now();
    let mut waited = Duration::ZERO;
    let cm = loop {
        if elapsed(data, start, waited) + RETRY_INTERVAL > timeout {
            return Err(file_err(format!(
                "Abort reading the {CLUSTER_INFO_CONFIG_MAP} ConfigMap after timeout of {}",
                kubeadm_api::duration::Duration::from_nanos(
                    i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX)
                )
            )));
        }
        if waited > Duration::ZERO {
            client.pause(RETRY_INTERVAL);
        }
        waited += RETRY_INTERVAL;
        match client.get(&Resource::config_maps(), PUBLIC, CLUSTER_INFO_CONFIG_MAP) {
            Ok(cm) => break cm,
            Err(ClusterError::Forbidden { .. }) => {
                data.effects.reporter.warn("file.go", &format!("[discovery] Could not access the {CLUSTER_INFO_CONFIG_MAP} ConfigMap for refreshing the cluster-info information, but the TLS cert is valid so proceeding...\n"));
                return Ok(config);
            }
            Err(e) => info(&format!(
                "[discovery] Error reading the {CLUSTER_INFO_CONFIG_MAP} ConfigMap, will try again: {e}\n"
            )),
        }
    };
    let refreshed = cm
        .pointer(&format!("/data/{KUBECONFIG_KEY}"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("no {KUBECONFIG_KEY} key in ConfigMap"))
        .and_then(|t| parse_kubeconfig(t).map_err(|e| e.to_string()));
    let refreshed = match refreshed {
        Ok(r) => r,
        Err(e) => {
            info(&format!(
                "[discovery] The {CLUSTER_INFO_CONFIG_MAP} ConfigMap isn't set up properly ({e}), but the TLS cert is valid so proceeding...\n"
            ));
            return Ok(config);
        }
    };
    // Upstream refreshes the cluster of the file's kubeconfig; without credentials it returns the
    // new basic kubeconfig instead, which keeps the file's server and CA.
    if with_credentials
        && let (Some(fresh), Some(current)) = (
            kc::current_cluster(&refreshed).cloned(),
            kc::current_cluster_mut(&mut config),
        )
    {
        for key in ["server", "certificate-authority-data"] {
            current[key] = fresh.get(key).cloned().unwrap_or(json!(""));
        }
        info("[discovery] Synced Server and CertificateAuthorityData from the cluster-info ConfigMap");
    }
    Ok(config)
}

/// A discovery kubeconfig (a file's bytes or an HTTPS answer) as `kubeadm join` reads it before
/// connecting with it (upstream's `clientcmd.Load` and the checks of `ValidateConfigInfo`): parsed,
/// validated as client-go validates it, and the files it names (CA, client certificate and key,
/// token file) read through `read` and embedded.
pub fn read_discovery_kubeconfig(
    bytes: &[u8],
    read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Value, DiscoveryError> {
    let mut config =
        parse_kubeconfig(&String::from_utf8_lossy(bytes)).map_err(|e| DiscoveryError::File(e.to_string()))?;
    embed_file_references(read, &mut config)?;
    Ok(config)
}

/// Upstream's checks of a discovery file and `EnsureCertificateAuthorityIsEmbedded` /
/// `EnsureAuthenticationInfoAreEmbedded`: the files it names are read into it, so it works as
/// `bootstrap-kubelet.conf` from anywhere.
fn embed_file_references(
    read_file: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
    config: &mut Value,
) -> Result<(), DiscoveryError> {
    let file_err = DiscoveryError::File;
    let clusters = config
        .get("clusters")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if clusters < 1 {
        return Err(file_err(
            "the provided kubeconfig file must have at least one Cluster defined".into(),
        ));
    }
    let read = |path: &str, what: &str| -> Result<Vec<u8>, DiscoveryError> {
        read_file(path).map_err(|e| {
            file_err(format!(
                "error while reading {what} defined in kubeconfig: open {path}: {}",
                kubeadm_api::gofmt::io_error(&e)
            ))
        })
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    if kc::current_cluster(config).is_none() {
        return Err(file_err("the provided kubeconfig file must have a unnamed Cluster or a CurrentContext that specifies a non-nil Cluster".into()));
    }
    let unreadable = |path: &str| {
        read_file(path)
            .err()
            .map(|e| format!("open {path}: {}", kubeadm_api::gofmt::io_error(&e)))
    };
    kc::validate(config, &unreadable).map_err(file_err)?;
    let Some(cluster) = kc::current_cluster_mut(config) else {
        return Err(file_err("the provided kubeconfig file must have a unnamed Cluster or a CurrentContext that specifies a non-nil Cluster".into()));
    };
    let set = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    if !set(cluster, "certificate-authority-data") && set(cluster, "certificate-authority") {
        let file = cluster["certificate-authority"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        cluster["certificate-authority-data"] = json!(b64(&read(&file, "certificate authority file")?));
        cluster["certificate-authority"] = json!("");
    }
    if !kc::has_authentication_credentials(config) {
        return Ok(());
    }
    let Some(user) = kc::current_user_mut(config) else {
        return Err(file_err(
            "invalid kubeconfig file. AuthInfo is not defined for the current user".into(),
        ));
    };
    for (data_key, file_key, what) in [
        (
            "client-certificate-data",
            "client-certificate",
            "client cert file",
        ),
        ("client-key-data", "client-key", "client key file"),
    ] {
        if !set(user, data_key) && set(user, file_key) {
            let file = user[file_key].as_str().unwrap_or_default().to_string();
            user[data_key] = json!(b64(&read(&file, what)?));
            user[file_key] = json!("");
        }
    }
    if !set(user, "token") && set(user, "tokenFile") {
        let file = user["tokenFile"].as_str().unwrap_or_default().to_string();
        let token = read(&file, "token file")?;
        user["token"] = json!(String::from_utf8_lossy(&token));
        user["tokenFile"] = json!("");
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
