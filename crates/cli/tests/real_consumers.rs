//! Real consumers of what our `kubeadm` writes: etcd serving with our etcd server and peer
//! certificates, kube-apiserver serving with ours and reaching etcd over mutual TLS with our
//! apiserver-etcd-client certificate, and kubectl using our admin.conf; then the same after our
//! `certs renew all` and a restart of etcd and kube-apiserver. All are the upstream v1.25.16
//! programs (etcd 3.5.9), on 127.0.0.1 only.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::Command;

use kubeadm_testkit::apiserver::{ApiServer, upstream_bin};

#[test]
fn etcd_apiserver_and_kubectl_accept_our_pki() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    // Our certs, admin.conf and manifests; the harness fails unless etcd and the API server come up
    // and /readyz answers with our CA.
    let mut server = ApiServer::start_with(&ours);
    consumers_accept(&server);

    // `certs renew all` with ours: every leaf certificate and the kubeconfig files are replaced,
    // and once etcd and kube-apiserver have restarted with them, everything works as before.
    let root = server.root();
    let watched = [
        "etc/kubernetes/pki/apiserver.crt",
        "etc/kubernetes/pki/apiserver-kubelet-client.crt",
        "etc/kubernetes/pki/apiserver-etcd-client.crt",
        "etc/kubernetes/pki/front-proxy-client.crt",
        "etc/kubernetes/pki/etcd/server.crt",
        "etc/kubernetes/pki/etcd/peer.crt",
        "etc/kubernetes/pki/etcd/healthcheck-client.crt",
        "etc/kubernetes/admin.conf",
    ];
    let read = |f: &str| std::fs::read(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let before: Vec<Vec<u8>> = watched.iter().map(|f| read(f)).collect();
    let ca_before = read("etc/kubernetes/pki/ca.crt");
    let renew = Command::new(&ours)
        .args([
            "--rootfs",
            &root.to_string_lossy(),
            "certs",
            "renew",
            "all",
            "--config",
            "/kubeadm.yaml",
        ])
        .env_clear()
        .output()
        .expect("run kubeadm certs renew all");
    assert!(
        renew.status.success(),
        "certs renew all: {}{}",
        String::from_utf8_lossy(&renew.stdout),
        String::from_utf8_lossy(&renew.stderr)
    );
    for (f, old) in watched.iter().zip(&before) {
        assert_ne!(&read(f), old, "{f} was not renewed");
    }
    assert_eq!(
        read("etc/kubernetes/pki/ca.crt"),
        ca_before,
        "the CA must be kept"
    );
    server.restart();
    consumers_accept(&server);
}

/// kubectl with admin.conf lists namespaces; kube-apiserver reaches etcd; etcd serves a client with
/// the healthcheck certificate over mutual TLS and refuses one without.
fn consumers_accept(server: &ApiServer) {
    let namespaces = || {
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
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl failed: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    // kube-apiserver's bootstrap controller creates `default` soon after it is ready, not before:
    // on a loaded machine, a few seconds later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut stdout = namespaces();
    while !stdout.lines().any(|l| l == "namespace/default") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(500));
        stdout = namespaces();
    }
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
