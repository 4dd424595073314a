//! Progress on long waits: on a terminal (a pseudo-terminal made by util-linux's `script`), the wait
//! for the control plane shows what it waits for and the seconds so far on one line rewritten in
//! place; through a pipe the output is upstream's, with no trace of it.
//!
//! The wait is `kubeadm init` with every phase before `wait-control-plane` skipped, in a `--rootfs`
//! (so root) holding only an admin.conf for an API server on port 1 of the loopback, where nothing
//! listens: the wait goes on until the test's `timeout` stops it.
//! The second test does the same for an image pull.
// A test sets up its files and runs programs directly.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::{Command, Output};

const CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 192.0.2.1
  bindPort: 1
nodeRegistration:
  name: node1
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
controlPlaneEndpoint: 127.0.0.1:1
";

const WAITING: &str = "[wait-control-plane] Waiting for the API server to answer /healthz";

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("TERM", "xterm")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

/// The rootfs with the admin.conf, and the shell words of the waiting init (stopped after 3 s).
fn waiting_init(root: &Path) -> String {
    std::fs::write(root.join("kubeadm.yaml"), CONFIG).expect("config");
    let bin = env!("CARGO_BIN_EXE_kubeadm");
    let root = root.to_str().expect("utf-8");
    for phase in [["certs", "ca"], ["kubeconfig", "admin"]] {
        let out = run(
            bin,
            &[
                "--rootfs",
                root,
                "init",
                "phase",
                phase[0],
                phase[1],
                "--config",
                "/kubeadm.yaml",
            ],
        );
        assert!(
            out.status.success(),
            "{phase:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    format!(
        "timeout 3 {bin} --rootfs {root} init --config /kubeadm.yaml \
         --skip-phases=preflight,certs,kubeconfig,kubelet-start,control-plane,etcd"
    )
}

#[test]
fn a_terminal_shows_the_wait_and_a_pipe_does_not() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let command = waiting_init(dir.path());

    // On a terminal: `script` gives the command a pseudo-terminal and copies what it shows.
    let shown = run("script", &["-qfec", &command, "/dev/null"]);
    let shown = String::from_utf8_lossy(&shown.stdout).replace("\r\n", "\n");
    assert!(
        shown.contains("[wait-control-plane] Waiting for the kubelet to boot up the control plane"),
        "{shown:?}"
    );
    // The line is drawn, then rewritten in place (carriage return, erase line) as the seconds pass.
    for second in ["(0s)", "(1s)", "(2s)"] {
        let line = format!("\r\x1b[2K{WAITING} {second}");
        assert!(shown.contains(&line), "no {line:?} in {shown:?}");
    }
    assert!(
        !shown.contains(&format!("{WAITING} (0s)\n")),
        "the line never ends: {shown:?}"
    );

    // Through pipes: upstream's lines only.
    let piped = run("sh", &["-c", &command]);
    let stdout = String::from_utf8_lossy(&piped.stdout);
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert_eq!(
        stdout,
        "[init] Using Kubernetes version: v1.25.16\n[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory \"/etc/kubernetes/manifests\". This can take up to 4m0s\n"
    );
    assert!(
        !stderr.contains(WAITING) && !stderr.contains('\x1b'),
        "{stderr:?}"
    );
}

/// An image pull from a runtime that takes the connection and never answers: on a terminal the pull
/// shows with its seconds so far; through a pipe nothing is printed while it lasts.
#[test]
fn a_terminal_shows_an_image_pull_and_a_pipe_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("cri.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    // Connections are accepted and kept open, unanswered, until the test ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let command = format!(
        "timeout 3 {} config images pull --kubernetes-version v1.25.16 --cri-socket unix://{}",
        env!("CARGO_BIN_EXE_kubeadm"),
        socket.display()
    );
    let pulling = "[config/images] Pulling registry.k8s.io/kube-apiserver:v1.25.16";

    let shown = run("script", &["-qfec", &command, "/dev/null"]);
    let shown = String::from_utf8_lossy(&shown.stdout).replace("\r\n", "\n");
    let line = format!("\r\x1b[2K{pulling} (0s)");
    assert!(shown.contains(&line), "no {line:?} in {shown:?}");
    assert!(
        !shown.contains(&format!("{pulling} (0s)\n")),
        "the line never ends: {shown:?}"
    );

    let piped = run("sh", &["-c", &command]);
    assert_eq!(String::from_utf8_lossy(&piped.stdout), "");
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains(pulling) && !stderr.contains('\x1b'),
        "{stderr:?}"
    );
}
