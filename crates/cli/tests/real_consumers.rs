//! Real consumers of what our `kubeadm` writes: etcd serving with our etcd server and peer
//! certificates, kube-apiserver serving with ours and reaching etcd over mutual TLS with our
//! apiserver-etcd-client certificate, and kubectl using our admin.conf. All are the upstream
//! v1.25.16 programs (etcd 3.5.9), on 127.0.0.1 only.

use std::path::PathBuf;
use std::process::Command;

use kubeadm_testkit::apiserver::{ApiServer, upstream_bin};

#[test]
fn etcd_apiserver_and_kubectl_accept_our_pki() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    // Our certs, admin.conf and manifests; the harness fails unless etcd and the API server come up
    // and /readyz answers with our CA.
    let server = ApiServer::start_with(&ours);
    let out = Command::new(upstream_bin("kubectl"))
        .args([
            "--kubeconfig",
            &server.kubeconfig().to_string_lossy(),
            "get",
            "namespaces",
            "-o",
            "name",
        ])
        .env_clear()
        // kubectl keeps a discovery cache under $HOME/.kube.
        .env("HOME", server.root())
        .output()
        .expect("run kubectl");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kubectl failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    for ns in [
        "namespace/default",
        "namespace/kube-system",
        "namespace/kube-public",
    ] {
        assert!(stdout.lines().any(|l| l == ns), "{ns} missing from:\n{stdout}");
    }
    // kube-apiserver reaches etcd with our apiserver-etcd-client certificate.
    let health = Command::new(upstream_bin("kubectl"))
        .args([
            "--kubeconfig",
            &server.kubeconfig().to_string_lossy(),
            "get",
            "--raw",
            "/readyz/etcd",
        ])
        .env_clear()
        // kubectl keeps a discovery cache under $HOME/.kube.
        .env("HOME", server.root())
        .output()
        .expect("run kubectl");
    assert_eq!(
        String::from_utf8_lossy(&health.stdout).trim(),
        "ok",
        "{}",
        String::from_utf8_lossy(&health.stderr)
    );
    // etcd accepts our healthcheck client certificate over mutual TLS, as the liveness probe uses it.
    let pki = server.root().join("etc/kubernetes/pki/etcd");
    let p = |f: &str| pki.join(f).to_string_lossy().into_owned();
    let curl = Command::new("curl")
        .args([
            "-sS",
            "--cacert",
            &p("ca.crt"),
            "--cert",
            &p("healthcheck-client.crt"),
            "--key",
            &p("healthcheck-client.key"),
        ])
        .arg(format!("{}/health", server.etcd_client_url()))
        .output()
        .expect("run curl");
    let body = String::from_utf8_lossy(&curl.stdout);
    assert!(
        body.contains("\"health\":\"true\""),
        "etcd /health: {body}{}",
        String::from_utf8_lossy(&curl.stderr)
    );
    // Without a client certificate, etcd refuses the handshake.
    let anon = Command::new("curl")
        .args(["-sS", "--cacert", &p("ca.crt")])
        .arg(format!("{}/health", server.etcd_client_url()))
        .output()
        .expect("run curl");
    assert!(
        !anon.status.success(),
        "etcd served a client without a certificate"
    );
}
