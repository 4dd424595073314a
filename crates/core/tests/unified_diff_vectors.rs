//! The unified diff against vectors printed by go-difflib itself (`tests/gen/unified_diff/main.go`),
//! the library `kubeadm upgrade diff` prints with: hand-picked cases, random line sequences with
//! many repeated lines and every context count upstream accepts, and long inputs where the
//! autojunk heuristic changes the hunks.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use kubeadm_core::unified_diff::{split_lines, unified_diff};
use serde_json::Value;

#[test]
fn unified_diff_matches_go_difflib() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen/unified_diff.json");
    let vectors: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("json");
    let cases = vectors.as_array().expect("array");
    assert!(cases.len() >= 200, "{} vectors", cases.len());
    let (mut failed, mut non_empty) = (Vec::new(), 0);
    for c in cases {
        let text = |k: &str| c[k].as_str().unwrap_or_else(|| panic!("{k} in {c}")).to_string();
        let (a, b, want) = (split_lines(&text("a")), split_lines(&text("b")), text("out"));
        let context = c["context"].as_i64().expect("context");
        let got = unified_diff(
            &a,
            &b,
            "/etc/kubernetes/manifests/x.yaml",
            "new manifest",
            context,
        );
        non_empty += usize::from(!want.is_empty());
        if got != want {
            failed.push(format!("{}:\n--- want\n{want}\n--- got\n{got}", text("name")));
        }
    }
    assert!(non_empty > cases.len() / 2);
    assert!(
        failed.is_empty(),
        "{} of {} differ:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}
