//! Source positions recorded by `parse_documents`: 1-based line and column of each node (of the
//! key, for mapping entries), with lines counted across the whole stream.

use kubeadm_yaml::{ParseError, Position, parse_documents};

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: x
  labels: {app: web, 'tier': \"front\"}
spec:
  containers:
  - name: a
    image: \"b\"
    args:
    - --v=2
    - |
      multi
  - name: c
list: [1, {k: v}]
a/b~c: 1
---
apiVersion: v1
kind: ConfigMap
data:
    key: value
";

fn pos(line: usize, column: usize) -> Position {
    Position { line, column }
}

#[test]
fn every_node_has_its_source_position() {
    let docs = parse_documents(POD).expect("valid YAML");
    assert_eq!(docs.len(), 2);
    let cases: &[(usize, &str, Position)] = &[
        (0, "", pos(1, 1)),
        (0, "/apiVersion", pos(1, 1)),
        (0, "/kind", pos(2, 1)),
        (0, "/metadata", pos(3, 1)),
        (0, "/metadata/name", pos(4, 3)),
        (0, "/metadata/labels", pos(5, 3)),
        (0, "/metadata/labels/app", pos(5, 12)),
        (0, "/metadata/labels/tier", pos(5, 22)),
        (0, "/spec/containers", pos(7, 3)),
        (0, "/spec/containers/0", pos(8, 5)),
        (0, "/spec/containers/0/name", pos(8, 5)),
        (0, "/spec/containers/0/image", pos(9, 5)),
        (0, "/spec/containers/0/args/0", pos(11, 7)),
        (0, "/spec/containers/0/args/1", pos(12, 7)),
        (0, "/spec/containers/1/name", pos(14, 5)),
        (0, "/list", pos(15, 1)),
        (0, "/list/0", pos(15, 8)),
        (0, "/list/1", pos(15, 11)),
        (0, "/list/1/k", pos(15, 12)),
        (0, "/a~1b~0c", pos(16, 1)),
        (1, "", pos(18, 1)),
        (1, "/kind", pos(19, 1)),
        (1, "/data/key", pos(21, 5)),
    ];
    for (doc, pointer, expected) in cases {
        assert_eq!(
            docs[*doc].positions.get(*pointer),
            Some(expected),
            "document {doc}, pointer {pointer:?}"
        );
    }
    // Nodes without an entry of their own fall back to the nearest ancestor.
    assert_eq!(docs[0].position("/spec/containers/0/args/9"), Some(pos(10, 5)));
}

#[test]
fn values_are_read_alongside_positions() {
    let docs = parse_documents(POD).expect("valid YAML");
    assert_eq!(docs[0].value["metadata"]["labels"]["tier"], "front");
    assert_eq!(docs[0].value["spec"]["containers"][0]["args"][1], "multi\n");
    assert_eq!(docs[0].value["a/b~c"], 1);
    assert_eq!(docs[1].value["data"]["key"], "value");
}

#[test]
fn duplicate_key_points_at_the_second_occurrence() {
    let src = "a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n";
    match parse_documents(src) {
        Err(ParseError::DuplicateKey { position, key }) => {
            assert_eq!(key, "c");
            assert_eq!(position, pos(5, 3));
        }
        other => panic!("expected a duplicate key error, got {other:?}"),
    }
    // In a later document, the line counts from the start of the stream.
    match parse_documents("a: 1\n---\nx: 1\nx: 2\n") {
        Err(e @ ParseError::DuplicateKey { .. }) => {
            assert_eq!(e.position(), pos(4, 1));
            assert_eq!(e.to_string(), "line 4, column 1: key \"x\" already set in map");
        }
        other => panic!("expected a duplicate key error, got {other:?}"),
    }
}

#[test]
fn lenient_reading_keeps_the_last_value_and_reports_duplicates() {
    let (docs, dups) = kubeadm_yaml::parse_documents_lenient("a: 1\nb: 2\na: 3\n").expect("reads");
    assert_eq!(docs[0].value, serde_json::json!({"a": 3, "b": 2}));
    assert_eq!(dups.len(), 1);
    assert_eq!(dups[0].position(), pos(3, 1));
}

#[test]
fn syntax_errors_carry_a_position() {
    let cases: &[(&str, usize)] = &[
        ("a: 1\nb: [1, 2\n", 3),
        ("a: 1\n---\nb: 'unterminated\n", 3),
        ("a:\n  b: 1\n c: 2\n", 3),
        ("a: 1\n---\nx: *missing\n", 3),
    ];
    for (src, line) in cases {
        match parse_documents(src) {
            Err(e @ ParseError::Syntax { .. }) => {
                assert_eq!(e.position().line, *line, "{src:?}: {e}");
                assert!(e.position().column >= 1);
            }
            other => panic!("{src:?}: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn alias_bombs_are_refused_as_yaml_v2_refuses_them() {
    let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        src.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    match parse_documents(&src) {
        Err(ParseError::Invalid { message, .. }) => {
            assert_eq!(message, "document contains excessive aliasing")
        }
        other => panic!("expected the aliasing guard, got {:?}", other.map(|d| d.len())),
    }
    // A few aliases are fine.
    let docs = parse_documents("a: &x {k: v}\nb: *x\nc: *x\n").expect("reads");
    assert_eq!(docs[0].value["c"]["k"], "v");
}
