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
