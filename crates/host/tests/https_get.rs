//! The HTTPS GET of `--discovery-file https://…` against a real TLS server on 127.0.0.1, with a CA
//! made here (never added to the host's trust store); and, against the same server, the bounded
//! reads of token discovery's client of a server not trusted yet (`KubeCluster::insecure_anonymous`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kubeadm_host::https::{HttpsError, get, get_with_roots};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Long enough for any answer of these tests.
const TIMEOUT: Duration = Duration::from_secs(60);

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
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    serve_with(pki, move |tls| {
        let _ = tls.write_all(response.as_bytes());
    })
}

/// Serves one connection over TLS: once a request is read, `respond` writes the answer (it stops
/// when a write fails: the client went away).
fn serve_with(pki: &Pki, respond: impl FnOnce(&mut dyn Write) + Send + 'static) -> (String, JoinHandle<()>) {
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
        respond(&mut tls);
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
    let err = get(&url, TIMEOUT).expect_err("an untrusted certificate must be refused");
    server.join().expect("server");
    assert!(matches!(err, HttpsError::Get { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "Get {url:?}: tls: failed to verify certificate: x509: certificate signed by unknown authority"
        )
    );
}

/// A server whose certificate is itself a CA certificate, self-signed, also when that certificate is
/// the one root: refused (webpki takes no CA certificate as a server's own; Go would accept it when
/// trusted, see docs/limitations.md), in words that name the cause rather than webpki's variant.
#[test]
fn refuses_a_ca_certificate_as_the_servers_own_naming_it() {
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("self-signed CA");
    let pki = Pki {
        ca: cert.der().clone(),
        leaf: cert.der().clone(),
        key: key.serialize_der(),
    };
    for trusted in [false, true] {
        let (url, server) = serve_once(&pki, "200 OK", BODY);
        let err = if trusted {
            get_with_roots(&url, roots(&pki.ca), TIMEOUT)
                .expect_err("a CA certificate as the server's must be refused")
        } else {
            get(&url, TIMEOUT).expect_err("an untrusted certificate must be refused")
        };
        server.join().expect("server");
        assert_eq!(
            err.to_string(),
            format!(
                "Get {url:?}: tls: failed to verify certificate: x509: the server's certificate is a CA certificate \
                 (basicConstraints CA:TRUE), which kubeadm-rs does not accept as a server's own"
            ),
            "trusted: {trusted}"
        );
    }
}

/// With the CA as the only root the same server is trusted: the body comes back as served, and
/// also for an error status (upstream does not check it).
#[test]
fn fetches_the_body_from_a_trusted_server_whatever_the_status() {
    let pki = pki();
    let (url, server) = serve_once(&pki, "200 OK", BODY);
    let body = get_with_roots(&url, roots(&pki.ca), TIMEOUT).expect("trusted fetch");
    server.join().expect("server");
    assert_eq!(String::from_utf8_lossy(&body), BODY);

    let (url, server) = serve_once(&pki, "404 Not Found", "404 page not found\n");
    let body = get_with_roots(&url, roots(&pki.ca), TIMEOUT).expect("trusted fetch");
    server.join().expect("server");
    assert_eq!(String::from_utf8_lossy(&body), "404 page not found\n");
}

/// Another CA's certificate is refused even with injected roots.
#[test]
fn refuses_a_certificate_of_another_ca() {
    let pki = pki();
    let other = self::pki();
    let (url, server) = serve_once(&pki, "200 OK", BODY);
    let err = get_with_roots(&url, roots(&other.ca), TIMEOUT).expect_err("another CA's certificate");
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
    let err = get(&url, TIMEOUT).expect_err("nothing listens");
    // Go's words: `Get "https://…": dial tcp 127.0.0.1:…: connect: connection refused`.
    assert_eq!(
        err.to_string(),
        format!("Get {url:?}: dial tcp 127.0.0.1:{port}: connect: connection refused")
    );
}

/// An unparsable URL is reported as such, naming it.
#[test]
fn bad_url_names_it() {
    let err = get("https://bad host/x", TIMEOUT).expect_err("bad URL");
    assert!(matches!(err, HttpsError::Url { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("parse \"https://bad host/x\": "),
        "{err}"
    );
}

/// An answer over the limit (sent without end, no length announced) is refused, naming the URL
/// and the limit, once the limit is passed.
#[test]
fn an_answer_over_the_limit_is_refused() {
    let pki = pki();
    let (url, server) = serve_with(&pki, |tls| {
        let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n");
        let chunk = vec![b'a'; 64 << 10];
        for _ in 0..(kubeadm_host::https::MAX_BODY / chunk.len() + 2) {
            if tls.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let err = get_with_roots(&url, roots(&pki.ca), TIMEOUT)
        .map(|body| body.len())
        .expect_err("too large");
    server.join().expect("server");
    assert_eq!(
        err.to_string(),
        format!("Get {url:?}: the answer is larger than the limit of 4 MiB")
    );
    // At the limit, it is read.
    let body = "a".repeat(kubeadm_host::https::MAX_BODY);
    let (url, server) = serve_once(&pki, "200 OK", &body);
    let got = get_with_roots(&url, roots(&pki.ca), TIMEOUT).expect("at the limit");
    server.join().expect("server");
    assert_eq!(got.len(), body.len());
}

/// A server that sends a byte a second: the GET fails when the time given is up, not later.
#[test]
fn a_trickling_answer_fails_at_the_deadline() {
    let pki = pki();
    let (url, server) = serve_with(&pki, |tls| {
        let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
        for _ in 0..1000 {
            if tls.write_all(b"a").and_then(|()| tls.flush()).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let start = Instant::now();
    let err = get_with_roots(&url, roots(&pki.ca), Duration::from_secs(3)).expect_err("too slow");
    let took = start.elapsed();
    assert_eq!(
        err.to_string(),
        format!("Get {url:?}: no complete answer within 3s")
    );
    assert!(took < Duration::from_secs(5), "failed after {took:?}");
    drop(server);
}

/// Token discovery's first read, from a server nobody vouches for yet: an answer over the limit
/// fails naming the URL and the limit; one that trickles fails when the time given is up; a
/// small one reads.
#[test]
fn the_untrusted_clients_answers_are_bounded() {
    use kubeadm_effects::cluster::{Cluster, Resource};
    use kubeadm_host::cluster::{KubeCluster, MAX_UNTRUSTED_ANSWER};

    let pki = pki();
    let base = |url: &str| url.trim_end_matches("/cluster-info.yaml").to_string();
    let get = |server: &str, within: Duration| {
        KubeCluster::insecure_anonymous(server, within)
            .expect("client")
            .get(&Resource::config_maps(), "kube-public", "cluster-info")
    };

    let (url, server) = serve_with(&pki, |tls| {
        let _ =
            tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
        let chunk = vec![b' '; 64 << 10];
        for _ in 0..(MAX_UNTRUSTED_ANSWER / chunk.len() + 2) {
            if tls.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let err = get(&base(&url), TIMEOUT)
        .map(|cm| cm.to_string().len())
        .expect_err("too large");
    server.join().expect("server");
    assert_eq!(
        err.to_string(),
        format!(
            "GET configmaps \"cluster-info\" in namespace \"kube-public\": {}/api/v1/namespaces/\
             kube-public/configmaps/cluster-info: the answer is larger than the limit of 4 MiB",
            base(&url)
        )
    );

    let (url, server) = serve_with(&pki, |tls| {
        let _ = tls
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
        for _ in 0..1000 {
            if tls.write_all(b" ").and_then(|()| tls.flush()).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let start = Instant::now();
    let err = get(&base(&url), Duration::from_secs(3)).expect_err("too slow");
    let took = start.elapsed();
    assert!(
        err.to_string()
            .ends_with("/configmaps/cluster-info: no complete answer within the 3s discovery allows"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "failed after {took:?}");
    drop(server);

    let body =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cluster-info"},"data":{"a":"b"}}"#;
    let (url, server) = serve_once(&pki, "200 OK", body);
    let cm = get(&base(&url), TIMEOUT).expect("small answer");
    server.join().expect("server");
    assert_eq!(cm["data"]["a"], "b");

    let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"cluster-info\" is forbidden","reason":"Forbidden","code":403}"#;
    let (url, server) = serve_once(&pki, "403 Forbidden", status);
    let err = get(&base(&url), TIMEOUT).expect_err("forbidden");
    server.join().expect("server");
    assert!(
        matches!(err, kubeadm_effects::cluster::ClusterError::Forbidden { .. }),
        "{err:?}"
    );
}
