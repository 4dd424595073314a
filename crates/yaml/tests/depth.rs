//! Nesting is limited ([`MAX_DEPTH`]): a document nested deeper is refused with an error naming
//! where, never a stack overflow, whether the depth comes from block or flow collections or from
//! aliases and `<<` merges; one nested to the limit reads, writes and drops on a spawned thread's
//! default stack (the test harness runs each test on one).

use kubeadm_yaml::{MAX_DEPTH, ParseError, Position, parse_documents, to_string};

fn too_deep(line: usize, column: usize) -> ParseError {
    ParseError::Syntax {
        position: Position { line, column },
        message: format!("exceeded max depth of {MAX_DEPTH}"),
    }
}

#[test]
fn ten_thousand_nested_block_sequences_are_refused() {
    // About 20 KB: this overflowed the stack before the limit.
    let text = "- ".repeat(10_000);
    assert_eq!(
        parse_documents(&text).expect_err("refused"),
        too_deep(1, 2 * MAX_DEPTH + 1)
    );
}

#[test]
fn nested_block_mappings_are_refused_at_the_line() {
    let text: String = (0..1_000).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
    assert_eq!(
        parse_documents(&text).expect_err("refused"),
        too_deep(MAX_DEPTH + 1, MAX_DEPTH + 1)
    );
}

#[test]
fn nested_flow_collections_are_refused() {
    let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let e = parse_documents(&text).expect_err("refused");
    assert!(
        e.to_string()
            .ends_with(&format!("exceeded max depth of {MAX_DEPTH}")),
        "{e}"
    );
    let text = format!("{}{}", "{a: ".repeat(10_000), "}".repeat(10_000));
    let e = parse_documents(&text).expect_err("refused");
    assert!(
        e.to_string()
            .ends_with(&format!("exceeded max depth of {MAX_DEPTH}")),
        "{e}"
    );
}

#[test]
fn aliases_cannot_nest_past_the_limit() {
    // An anchored node 150 deep, used 150 deep: each reads, the expansion nests 300.
    let half = 150;
    let text = format!(
        "a: &x {}1{}\nb: {}*x{}\n",
        "[".repeat(half),
        "]".repeat(half),
        "[".repeat(half),
        "]".repeat(half)
    );
    let e = parse_documents(&text).expect_err("refused");
    assert_eq!(e.position().line, 1, "{e}");
    assert!(e.to_string().ends_with("exceeded max depth of 200"), "{e}");
}

#[test]
fn a_chain_of_merges_is_limited() {
    let mut text = String::from("m0: &m0 {k: 1}\n");
    for i in 1..5_000 {
        text.push_str(&format!("m{i}: &m{i} {{<<: *m{}}}\n", i - 1));
    }
    // Refused where the chain reaches the limit (of the merges nested in each other, the innermost).
    let e = parse_documents(&text).expect_err("refused");
    assert_eq!(e.position(), Position { line: 2, column: 14 }, "{e}");
    assert!(e.to_string().ends_with("exceeded max depth of 200"), "{e}");
}

#[test]
fn a_document_nested_to_the_limit_reads_writes_and_drops() {
    // Three quarters of a spawned thread's default stack (2 MiB) is enough, unoptimised
    // (optimised, under 200 KiB is).
    std::thread::Builder::new()
        .stack_size(1536 * 1024)
        .spawn(nested_to_the_limit)
        .expect("reads")
        .join()
        .expect("reads");
}

fn nested_to_the_limit() {
    let text = format!("{}x\n", "- ".repeat(MAX_DEPTH));
    let docs = parse_documents(&text).expect("reads");
    let written = to_string(&docs[0].value);
    let json = serde_json::to_string(&docs[0].value).expect("reads");
    assert_eq!(parse_documents(&written).expect("reads")[0].value, docs[0].value);
    let copy: serde_json::Value = serde_json::from_value(docs[0].value.clone()).expect("reads");
    assert_eq!(copy, docs[0].value);
    assert!(json.starts_with("[[[["));
    // Mappings, with aliases and merges, to the limit.
    let mut nested = String::from("v");
    for _ in 0..MAX_DEPTH {
        nested = format!("{{k: {nested}}}");
    }
    let text = format!("a: &a {nested}\n");
    let docs = parse_documents(&text);
    assert!(docs.is_err(), "the root mapping makes it one level too deep");
    let text = format!("&a {nested}\n");
    assert!(parse_documents(&text).is_ok());
}
