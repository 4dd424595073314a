//! `parse_documents` against `sigs.k8s.io/yaml.YAMLToJSON` / `YAMLToJSONStrict` output recorded
//! by the Go oracle (`tests/golden/y2j.jsonl`, see `tests/golden/README.md`).

use kubeadm_yaml::{ParseError, parse_documents, parse_documents_lenient};
use serde_json::Value;

struct Row {
    input: String,
    /// YAMLToJSON's output, parsed.
    out: Option<Value>,
    /// YAMLToJSONStrict's error.
    strict_err: Option<String>,
}

/// Inputs libyaml rejects but the YAML 1.2 parser underneath accepts: the `\/` escape (YAML 1.2
/// only), `:` inside an anchor name. Listed so that any other difference fails.
const KNOWN_DIFFERENCES: &[&str] = &["a: \"\\/\"", "&a: v"];

/// Rows Go reads as one document. Left out: inputs with a `---` line, since kubeadm (and so
/// `parse_documents`) splits the stream there before YAML parsing and YAMLToJSON does not; and
/// inputs with NEL, LS or PS, which are line breaks in YAML 1.1 but content for the YAML 1.2
/// parser underneath (a known difference; Kubernetes objects do not contain them).
fn rows() -> Vec<Row> {
    include_str!("golden/y2j.jsonl")
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).expect("golden row is JSON");
            Row {
                input: row["in"].as_str().expect("in").to_owned(),
                out: row["out"]
                    .as_str()
                    .map(|s| serde_json::from_str(s).expect("Go output is JSON")),
                strict_err: row["strict_err"].as_str().map(str::to_owned),
            }
        })
        .filter(|row: &Row| !row.input.lines().any(|l| l.starts_with("---")))
        .filter(|row| !row.input.contains(['\u{85}', '\u{2028}', '\u{2029}']))
        .filter(|row| !KNOWN_DIFFERENCES.contains(&row.input.as_str()))
        .collect()
}

/// YAMLToJSON reads one document; an empty one is `null`.
fn single(docs: Vec<kubeadm_yaml::Document>) -> Value {
    docs.into_iter().next().map_or(Value::Null, |d| d.value)
}

#[test]
fn strict_read_matches_go() {
    let mut failures = Vec::new();
    let rows = rows();
    for row in &rows {
        let got = parse_documents(&row.input);
        match (&row.strict_err, &row.out, got) {
            (None, Some(expected), Ok(docs)) => {
                let v = single(docs);
                if &v != expected {
                    failures.push(format!("{:?}: expected {expected}, got {v}", row.input));
                }
            }
            (Some(_), _, Err(_)) => {}
            (Some(e), _, Ok(docs)) => failures.push(format!(
                "{:?}: Go fails ({e}), we read {}",
                row.input,
                single(docs)
            )),
            (None, _, Err(e)) => failures.push(format!("{:?}: Go reads it, we fail: {e}", row.input)),
            (None, None, Ok(_)) => failures.push(format!("{:?}: malformed golden row", row.input)),
        }
    }
    assert!(rows.len() > 100);
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

#[test]
fn lenient_read_matches_go() {
    let mut failures = Vec::new();
    for row in rows() {
        match (&row.out, parse_documents_lenient(&row.input)) {
            (Some(expected), Ok((docs, _))) => {
                let v = single(docs);
                if &v != expected {
                    failures.push(format!("{:?}: expected {expected}, got {v}", row.input));
                }
            }
            (None, Err(_)) => {}
            (Some(_), Err(e)) => failures.push(format!("{:?}: Go reads it, we fail: {e}", row.input)),
            (None, Ok((docs, _))) => {
                failures.push(format!("{:?}: Go fails, we read {}", row.input, single(docs)))
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn duplicate_keys_match_go_strict_mode() {
    let mut checked = 0;
    for row in rows() {
        let Some(err) = &row.strict_err else { continue };
        if !err.contains("already set in map") || row.out.is_none() {
            continue;
        }
        checked += 1;
        match parse_documents(&row.input) {
            Err(ParseError::DuplicateKey { key, .. }) => {
                // Go's %q escapes the byte order mark (the only unprintable key among the rows).
                let key = key.replace('\u{feff}', "\\ufeff");
                assert!(
                    err.contains(&format!("key \"{key}\" already set in map")),
                    "{:?}: {err} vs {key}",
                    row.input
                );
            }
            other => panic!("{:?}: expected a duplicate key error, got {other:?}", row.input),
        }
        let (_, dups) = parse_documents_lenient(&row.input).expect("lenient read");
        assert!(!dups.is_empty(), "{:?}: no duplicate reported", row.input);
    }
    assert!(checked >= 4, "only {checked} duplicate cases");
}
