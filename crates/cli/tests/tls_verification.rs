//! TLS verification is on everywhere but where upstream switches it off by name (issue: the
//! unverified first read of `cluster-info` in token discovery, `--discovery-token-unsafe-skip-ca-
//! verification`, and what a kubeconfig itself asks for with `insecure-skip-tls-verify`).
//!
//! - In the code: the only constructs that weaken verification are the ones listed in `ALLOWED`,
//!   each with its reason; a new one fails this test until it is listed (and reviewed).
//! - On a real kube-apiserver: every command that reads the cluster, given a kubeconfig whose CA did
//!   not sign the server's certificate, is refused at the TLS handshake as upstream v1.25.16 is (same
//!   exit code; the error in client-go's words, `x509: certificate signed by unknown authority`),
//!   while the same command with the right CA gets through (so the CA is what failed it). A join
//!   whose discovery file trusts the wrong CA stops there too.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::apiserver::ApiServer;
use kubeadm_testkit::oracle::{Run, run, upstream_kubeadm};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// What weakens TLS verification, as it is spelled in the code.
const WEAKENING: &[&str] = &[
    "accept_invalid_certs",
    "insecure_anonymous(",
    "InsecureAnonymous(",
    "dangerous()",
    "ServerCertVerifier",
    "danger_accept",
    "with_no_verifier",
    "InsecureSkipVerify",
];

/// Where the code may weaken it (file under `crates/`, the construct) and why.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "host/src/cluster/bootstrap.rs",
        "accept_invalid_certs",
        "the anonymous client of token discovery's first cluster-info read, before any CA is known",
    ),
    (
        "host/src/cluster/bootstrap.rs",
        "insecure_anonymous(",
        "where that client is defined (and its unit test)",
    ),
    (
        "cli/src/commands/join.rs",
        "insecure_anonymous(",
        "the effect handler that makes the client the discovery phase asks for",
    ),
    (
        "cli/src/commands/join.rs",
        "InsecureAnonymous(",
        "the same handler's match arm",
    ),
    (
        "phases/src/join/data.rs",
        "InsecureAnonymous(",
        "the kind of client, declared (for the first read only)",
    ),
    (
        "phases/src/join/discovery/mod.rs",
        "InsecureAnonymous(",
        "token discovery's first read of cluster-info, verified afterwards by the token's JWS and the CA pins",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_listed_places_weaken_tls_verification() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    // Unit-test files (`#[cfg(test)] mod tests;`) are not the binary.
    files.retain(|f| {
        f.file_name().is_none_or(|n| n != "tests.rs") && !f.components().any(|c| c.as_os_str() == "tests")
    });
    assert!(
        files.len() > 50,
        "too few sources found under {}",
        crates.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        let rel = file
            .strip_prefix(&crates)
            .expect("under crates")
            .to_string_lossy()
            .into_owned();
        // Test modules of a source file (`#[cfg(test)] mod tests { … }` at its end) are not the binary.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(&text);
        for construct in WEAKENING {
            if code.contains(construct) {
                found.push((rel.clone(), *construct));
            }
        }
    }
    let unlisted: Vec<_> = found
        .iter()
        .filter(|(f, c)| !ALLOWED.iter().any(|(af, ac, _)| af == f && ac == c))
        .collect();
    assert!(
        unlisted.is_empty(),
        "TLS verification weakened where it is not allowed: {unlisted:?}"
    );
    // The list holds nothing stale.
    let stale: Vec<_> = ALLOWED
        .iter()
        .filter(|(af, ac, _)| !found.iter().any(|(f, c)| f == af && c == ac))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed but not found (remove from ALLOWED): {stale:?}"
    );
}

const REFUSAL: &str = "x509: certificate signed by unknown authority";

#[test]
fn commands_reading_the_cluster_refuse_a_server_their_kubeconfig_does_not_trust() {
    let up = upstream_kubeadm();
    let server = ApiServer::start_with(&up);
    let dir = tempfile::tempdir().expect("dir");
    let admin = std::fs::read_to_string(server.kubeconfig()).expect("admin.conf");
    let trusting = dir.path().join("trusting.conf");
    let wrong = dir.path().join("untrusting.conf");
    std::fs::write(&trusting, &admin).expect("write");
    std::fs::write(&wrong, server.untrusting_kubeconfig()).expect("write");
    let (trusting, wrong) = (
        trusting.to_string_lossy().into_owned(),
        wrong.to_string_lossy().into_owned(),
    );
    let go = |bin: &Path, args: &[&str], kubeconfig: &str| -> Run {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--kubeconfig", kubeconfig]);
        run(bin, &all, dir.path(), &[])
    };
    // The commands that read the cluster and fail fast on an error (the ones that retry until a
    // timeout, such as `token create`, take the same client).
    let commands: &[&[&str]] = &[
        &["token", "list"],
        &["token", "delete", "abcdef"],
        &["upgrade", "plan"],
        &[
            "init",
            "phase",
            "addon",
            "coredns",
            "--kubernetes-version=v1.25.16",
        ],
        &[
            "init",
            "phase",
            "addon",
            "kube-proxy",
            "--kubernetes-version=v1.25.16",
            "--apiserver-advertise-address=192.0.2.10",
        ],
    ];
    let mut problems = Vec::new();
    for args in commands {
        let theirs = go(&up, args, &wrong);
        let mine = go(&ours(), args, &wrong);
        let trusted = go(&ours(), args, &trusting);
        let what = args.join(" ");
        if !(theirs.code != 0 && theirs.stderr.contains(REFUSAL)) {
            problems.push(format!("{what}: upstream was not refused: {theirs:?}"));
        }
        if mine.code != theirs.code
            || !mine
                .stderr
                .contains(&format!("tls: failed to verify certificate: {REFUSAL}"))
        {
            problems.push(format!(
                "{what}: ours (exit {}) was not refused as upstream (exit {}): {}",
                mine.code, theirs.code, mine.stderr
            ));
        }
        if trusted.stderr.contains("x509") || trusted.stderr.contains("certificate was refused") {
            problems.push(format!(
                "{what}: refused with the right CA too: {}",
                trusted.stderr
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
