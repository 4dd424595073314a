//! The secrets audit ([`kubeadm_testkit::secrets`]) on the runs that handle the most secrets, at
//! the highest verbosity: `init --dry-run` with `--upload-certs` (bootstrap token, certificate key,
//! every private key generated, the kubeadm-certs Secret) and `token create --dry-run` (audited as
//! every run of ours through `kubeadm_testkit::oracle::run` is). Each must succeed, with its
//! secrets only where upstream prints them on purpose (the join commands on standard output).

use std::path::PathBuf;

use kubeadm_testkit::oracle::run;

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

#[test]
fn verbose_init_dry_run_prints_secrets_only_in_its_join_commands() {
    let root = tempfile::tempdir().expect("root");
    let rootfs = root.path().to_string_lossy().into_owned();
    let r = run(
        &ours(),
        &[
            "--rootfs",
            &rootfs,
            "init",
            "--dry-run",
            "--upload-certs",
            "--ignore-preflight-errors=all",
            "--kubernetes-version=v1.25.16",
            "--control-plane-endpoint=cp.example:6443",
            "-v=10",
        ],
        root.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // What the audit let through is there: the join commands' token and certificate key.
    assert!(r.stdout.contains("--certificate-key "), "{}", r.stdout);
    assert!(
        r.stderr.lines().count() > 20,
        "too little logged at -v=10:\n{}",
        r.stderr
    );
}

#[test]
fn verbose_token_create_dry_run_logs_no_token() {
    let dir = tempfile::tempdir().expect("dir");
    let r = run(
        &ours(),
        &["token", "create", "--dry-run", "-v=10"],
        dir.path(),
        &[],
    );
    // Without a kubeconfig it fails as upstream does; whatever it logged is audited.
    assert_ne!(r.stderr, "", "nothing logged");
}
