//! Input built to crash or to leak: refused with an error that names the place, never a crash,
//! and never a fragment of a secret the input holds.
// Tests run the binary on real files.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;

use kubeadm_testkit::oracle::run;

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// 10 000 nested block sequences (20 KB) overflowed the main thread's stack; they are refused at
/// the depth limit, with the file, line and column, as bad input (exit 3; upstream reads them and
/// refuses the document's type, exit 1).
#[test]
fn deeply_nested_config_is_refused_with_its_place() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("deep.yaml"), "- ".repeat(10_000)).expect("write");
    let r = run(
        &ours(),
        &["config", "images", "list", "--config", "deep.yaml"],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("deep.yaml: line 1, column 401: exceeded max depth of 200"),
        "{}",
        r.stderr
    );
}

/// A made-up private key's base64 (its first bytes `KKKK…`, then varied).
const KEY_DATA: &str = "S0tLS0tLS0tLS0tLS0tLS0tLS0srHpbdl9bm168px0NAkZfQWxhZGRpbkFuZFRoZUxhbXBtYWdpYw==";

/// Whether `text` holds any 8 characters of `secret` in a row.
fn holds_part_of(text: &str, secret: &str) -> bool {
    secret
        .as_bytes()
        .windows(8)
        .any(|w| text.contains(std::str::from_utf8(w).expect("ASCII")))
}

/// A malformed `--kubeconfig` (a badly indented line after `client-key-data`) is refused with
/// the file, line and column and the parser's message, never a snippet of the lines around it,
/// which showed the client key (`oracle::run`'s secrets audit refuses snippets too).
#[test]
fn malformed_kubeconfig_error_shows_no_key() {
    let dir = tempfile::tempdir().expect("dir");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-key-data: {KEY_DATA}\n   bad: indentation\n"
    );
    std::fs::write(dir.path().join("kc.yaml"), kubeconfig).expect("write");
    let r = run(
        &ours(),
        &["token", "list", "--kubeconfig", "kc.yaml"],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "failed to load admin kubeconfig kc.yaml: failed to parse kubeconfig YAML: line 7, \
             column 4: while parsing a block mapping, did not find expected key\n"
        ),
        "{}",
        r.stderr
    );
    assert!(!holds_part_of(&r.stderr, KEY_DATA), "{}", r.stderr);
}

/// An exec plugin whose output does not parse: its place and the message, not its token.
#[test]
fn unparsable_exec_plugin_output_shows_no_token() {
    let token = "SECRETtokenABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let dir = tempfile::tempdir().expect("dir");
    let plugin = dir.path().join("plugin.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nprintf 'apiVersion: client.authentication.k8s.io/v1\\nkind: ExecCredential\\n\
             status:\\n  token: {token}\\n bad: indentation\\n'\n"
        ),
    )
    .expect("write");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://127.0.0.1:1\n  name: k\n\
         contexts:\n- context: {{cluster: k, user: u}}\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  \
         user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      \
         interactiveMode: Never\n",
        plugin.display()
    );
    std::fs::write(dir.path().join("kc.yaml"), kubeconfig).expect("write");
    let r = run(
        &ours(),
        &["token", "list", "--kubeconfig", "kc.yaml"],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "failed to parse auth exec output: line 5, column 2: while parsing a block mapping, \
             did not find expected key\n"
        ),
        "{}",
        r.stderr
    );
    assert!(!holds_part_of(&r.stderr, token), "{}", r.stderr);
}
