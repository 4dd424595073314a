//! `parse_documents` on multi-document streams against the Go oracle's `docs` mode: kubeadm's
//! document split (apimachinery's `YAMLReader`) followed by `YAMLToJSONStrict` on each document
//! (`tests/golden/docs.jsonl`, see `tests/golden/README.md`).

use kubeadm_yaml::parse_documents;
use serde_json::Value;

/// Known differences of the YAML 1.2 parser underneath (see `golden_yaml_to_json.rs`).
const KNOWN_DIFFERENCES: &[&str] = &["a: \"\\/\"", "\ta: 1", "&a: v"];

#[test]
fn documents_match_kubeadm_split() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for line in include_str!("golden/docs.jsonl").lines() {
        let row: Value = serde_json::from_str(line).expect("golden row is JSON");
        let input = row["in"].as_str().expect("in");
        if KNOWN_DIFFERENCES.contains(&input) {
            continue;
        }
        compared += 1;
        let expected: Option<Vec<Value>> = row["out"]
            .as_str()
            .map(|s| serde_json::from_str(s).expect("Go output is a JSON array"));
        match (expected, parse_documents(input)) {
            (Some(expected), Ok(docs)) => {
                let got: Vec<Value> = docs.into_iter().map(|d| d.value).collect();
                if got != expected {
                    failures.push(format!("{input:?}: expected {expected:?}, got {got:?}"));
                }
            }
            (None, Err(_)) => {}
            (Some(_), Err(e)) => failures.push(format!("{input:?}: Go reads it, we fail: {e}")),
            (None, Ok(docs)) => failures.push(format!(
                "{input:?}: Go fails ({}), we read {} documents",
                row["err"],
                docs.len()
            )),
        }
    }
    assert!(compared > 100, "only {compared} cases");
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn separator_errors_carry_the_line() {
    let err = parse_documents("a: 1\nb: 2\n--- x\nc: 3\n").expect_err("bad separator");
    assert_eq!(err.position().line, 3);
    assert!(
        err.to_string().contains("invalid Yaml document separator: x"),
        "{err}"
    );
}
