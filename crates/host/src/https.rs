//! The HTTPS GET of `kubeadm join --discovery-file https://…` (upstream's `discovery/https`: an
//! `http.Client` whose TLS is verified against the host's root certificates).
//!
//! The body is returned whatever the status code (upstream does not check it: a 404 page then
//! fails to parse as a kubeconfig). HTTP/1.1 only; no proxy (upstream honours `HTTPS_PROXY`, see
//! [`get`]). Unlike upstream, the answer is bounded: at most [`MAX_BODY`] bytes, complete within
//! the time the caller gives (the discovery timeout), so that a server sending without end, or a
//! byte at a time, cannot fill the memory or hang the join.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::RootCertStore;

/// Go's default dialer timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read: a discovery kubeconfig is a few KiB (its CA bundle, perhaps client
/// credentials).
pub const MAX_BODY: usize = 4 << 20;

/// Why a GET failed, worded as Go's `http.Client.Get` prints it, naming the URL.
#[derive(Debug, thiserror::Error)]
pub enum HttpsError {
    /// The URL does not parse.
    #[error("parse {url:?}: {reason}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// Connecting, the TLS handshake or the exchange failed.
    #[error("Get {url:?}: {reason}")]
    Get {
        /// The URL.
        url: String,
        /// The cause, innermost last.
        reason: String,
    },
    /// The request did not finish in time.
    #[error("Get {url:?}: no complete answer within {}", go_duration(*.after))]
    Timeout {
        /// The URL.
        url: String,
        /// How long it waited.
        after: Duration,
    },
    /// The answer is larger than [`MAX_BODY`].
    #[error("Get {url:?}: the answer is larger than the limit of {} MiB", .limit >> 20)]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The I/O runtime or the TLS configuration could not be made.
    #[error("Get {url:?}: {reason}")]
    Setup {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
}

/// A duration as Go prints it (`5m0s`, `1.5s`).
fn go_duration(d: Duration) -> String {
    kubeadm_api::duration::Duration::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)).to_string()
}

/// GETs `url` (an `https://` URL) and returns the body, TLS verified against the host's root
/// certificates (the native store, as Go's `x509.SystemCertPool`): the whole answer within
/// `timeout`, at most [`MAX_BODY`] bytes of it.
///
/// Unlike upstream, `HTTPS_PROXY` / `NO_PROXY` are not honoured: the connection is always direct.
pub fn get(url: &str, timeout: Duration) -> Result<Vec<u8>, HttpsError> {
    get_with_roots(url, native_roots(), timeout)
}

/// [`get`], verifying the server against `roots` instead of the host's (for tests with their own
/// CA; verification is never turned off).
pub fn get_with_roots(url: &str, roots: RootCertStore, timeout: Duration) -> Result<Vec<u8>, HttpsError> {
    let uri = http::Uri::try_from(url).map_err(|e| HttpsError::Url {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    let dial = format!(
        "dial tcp {}:{}",
        uri.host().unwrap_or_default(),
        uri.port_u16().unwrap_or(443)
    );
    let setup = |reason: String| HttpsError::Setup {
        url: url.to_string(),
        reason,
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| setup(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| setup(format!("cannot start the I/O runtime: {e}")))?;
    let fetch = async {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build::<_, String>(https);
        let response = client.get(uri).await.map_err(|e| Some(chain(&e, &dial)))?;
        let body = http_body_util::Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| match e.downcast_ref::<http_body_util::LengthLimitError>() {
                Some(_) => None,
                None => Some(chain(&*e, &dial)),
            })?;
        Ok::<_, Option<String>>(body.to_bytes().to_vec())
    };
    match runtime.block_on(async { tokio::time::timeout(timeout, fetch).await }) {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(Some(reason))) => Err(HttpsError::Get {
            url: url.to_string(),
            reason,
        }),
        Ok(Err(None)) => Err(HttpsError::TooLarge {
            url: url.to_string(),
            limit: MAX_BODY,
        }),
        Err(_) => Err(HttpsError::Timeout {
            url: url.to_string(),
            after: timeout,
        }),
    }
}

/// The host's root certificates; those that do not parse are skipped (as Go does), and none at all
/// only means that no server verifies.
fn native_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    roots
}

/// An error and its causes, `: `-separated as Go chains them, without hyper's generic wrappers
/// ("client error (Connect)") when a cause says more; OS errors and a refused certificate in Go's
/// words (`dial tcp 127.0.0.1:1: connect: connection refused`, `tls: failed to verify certificate:
/// x509: certificate signed by unknown authority`, as Go 1.20's TLS stack, upstream v1.25.16's, says).
fn chain(error: &(dyn std::error::Error + 'static), dial: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let io = e.downcast_ref::<std::io::Error>();
        let tls = rustls_error(e);
        let text = if let Some(rustls::Error::InvalidCertificate(c)) = tls {
            verification_failed(c)
        } else if let Some(io) = io {
            kubeadm_api::gofmt::io_error(io)
        } else if e.to_string() == "tcp connect error" {
            format!("{dial}: connect")
        } else {
            e.to_string()
        };
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    if parts.len() > 1 {
        parts.remove(0);
    }
    parts.join(": ")
}

/// When `error` (or one of its causes) is the server's certificate failing verification: what Go's
/// TLS stack says of it (`tls: failed to verify certificate: x509: certificate signed by unknown
/// authority`), rustls' words where Go's need more than rustls keeps.
pub(crate) fn certificate_rejected(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(rustls::Error::InvalidCertificate(c)) = rustls_error(e) {
            return Some(verification_failed(c));
        }
        next = e.source();
    }
    None
}

/// Go's words for a certificate that failed verification (rustls' where Go's need more than rustls
/// keeps), with Go 1.20's `tls: failed to verify certificate: ` before them.
fn verification_failed(c: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    let words = match c {
        C::UnknownIssuer => "x509: certificate signed by unknown authority".to_string(),
        C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
            "x509: certificate has expired or is not yet valid".to_string()
        }
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            "x509: certificate is not valid for the server's name".to_string()
        }
        // webpki refuses a CA certificate as the server's own before it looks for its
        // issuer; Go accepts one the host trusts (docs/limitations.md).
        C::Other(e) if e.to_string() == "CaUsedAsEndEntity" => {
            "x509: the server's certificate is a CA certificate (basicConstraints CA:TRUE), \
                     which kubeadm-rs does not accept as a server's own"
                .to_string()
        }
        other => format!("x509: {other}"),
    };
    format!("tls: failed to verify certificate: {words}")
}

/// The rustls error `error` is or wraps in (nested) `io::Error`s, whose `source` skips it.
fn rustls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut current = error;
    for _ in 0..8 {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        let inner = current.downcast_ref::<std::io::Error>()?.get_ref()?;
        current = inner;
    }
    None
}
