//! The HTTPS GET of `--discovery-file https://…` against a real TLS server on 127.0.0.1, with a CA
//! made here (never added to the host's trust store).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;

use kubeadm_host::https::{HttpsError, get, get_with_roots};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const BODY: &str = "apiVersion: v1\nkind: Config\nclusters: []\n";

/// A CA and a serving certificate for 127.0.0.1 it signed.
struct Pki {
    ca: CertificateDer<'static>,
    leaf: CertificateDer<'static>,
    key: Vec<u8>,
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("leaf");
    Pki {
        ca: ca.der().clone(),
        leaf: leaf.der().clone(),
        key: key.serialize_der(),
    }
}

/// Serves one connection over TLS: answers any request with `status` and `body`. The thread ends
/// when the client goes away (also when it refuses the certificate).
fn serve_once(pki: &Pki, status: &str, body: &str) -> (String, JoinHandle<()>) {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.leaf.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.clone())),
        )
        .expect("server config");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "https://{}/cluster-info.yaml",
        listener.local_addr().expect("address")
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let handle = std::thread::spawn(move || {
        let Ok((tcp, _)) = listener.accept() else { return };
        let Ok(conn) = rustls::ServerConnection::new(Arc::new(config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tls.write_all(response.as_bytes());
        tls.conn.send_close_notify();
        let _ = tls.flush();
    });
    (url, handle)
}

fn roots(ca: &CertificateDer<'static>) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).expect("root");
    roots
}

/// The real path verifies against the host's roots: a server whose CA they do not hold is refused,
/// in Go's words, naming the URL.
#[test]
fn refuses_a_server_the_host_does_not_trust() {
    let pki = pki();
    let (url, server) = serve_once(&pki, "200 OK", BODY);
    let err = get(&url).expect_err("an untrusted certificate must be refused");
    server.join().expect("server");
    assert!(matches!(err, HttpsError::Get { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("Get {url:?}: x509: certificate signed by unknown authority")
    );
}

/// With the CA as the only root the same server is trusted: the body comes back as served, and
/// also for an error status (upstream does not check it).
#[test]
fn fetches_the_body_from_a_trusted_server_whatever_the_status() {
    let pki = pki();
    let (url, server) = serve_once(&pki, "200 OK", BODY);
    let body = get_with_roots(&url, roots(&pki.ca)).expect("trusted fetch");
    server.join().expect("server");
    assert_eq!(String::from_utf8_lossy(&body), BODY);

    let (url, server) = serve_once(&pki, "404 Not Found", "404 page not found\n");
    let body = get_with_roots(&url, roots(&pki.ca)).expect("trusted fetch");
    server.join().expect("server");
    assert_eq!(String::from_utf8_lossy(&body), "404 page not found\n");
}

/// Another CA's certificate is refused even with injected roots.
#[test]
fn refuses_a_certificate_of_another_ca() {
    let pki = pki();
    let other = self::pki();
    let (url, server) = serve_once(&pki, "200 OK", BODY);
    let err = get_with_roots(&url, roots(&other.ca)).expect_err("another CA's certificate");
    server.join().expect("server");
    // Both CAs have the same (empty) name: the other one is tried and its signature fails.
    let text = err.to_string();
    assert!(text.starts_with(&format!("Get {url:?}: ")), "{text}");
    assert!(text.contains("certificate"), "{text}");
}

/// A port nobody listens on: the error names the URL and the address.
#[test]
fn connection_refused_names_the_url() {
    // A port just freed: nothing listens on it.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("address")
        .port();
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} is in use"
    );
    let url = format!("https://127.0.0.1:{port}/cluster-info.yaml");
    let err = get(&url).expect_err("nothing listens");
    // Go's words: `Get "https://…": dial tcp 127.0.0.1:…: connect: connection refused`.
    assert_eq!(
        err.to_string(),
        format!("Get {url:?}: dial tcp 127.0.0.1:{port}: connect: connection refused")
    );
}

/// An unparsable URL is reported as such, naming it.
#[test]
fn bad_url_names_it() {
    let err = get("https://bad host/x").expect_err("bad URL");
    assert!(matches!(err, HttpsError::Url { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("parse \"https://bad host/x\": "),
        "{err}"
    );
}
