//! Random values compared with the Go oracle (`testbed/goyaml`), both directions. Runs only when
//! `KUBEADM_GOYAML` names the built oracle binary; the golden tests cover the same ground always.

use std::cell::{Cell, RefCell};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use proptest::prelude::*;
use serde_json::{Map, Value};

struct Oracle {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Oracle {
    fn start(path: &str, mode: &str) -> Oracle {
        let mut child = Command::new(path)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the Go oracle");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Oracle {
            _child: child,
            stdin,
            stdout,
        }
    }

    /// Ok(output) or Err(error message).
    fn ask(&mut self, input: &str) -> Result<String, String> {
        let line = serde_json::to_string(input).expect("encode");
        writeln!(self.stdin, "{line}").expect("write to oracle");
        self.stdin.flush().expect("flush");
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).expect("read from oracle");
        let row: Value = serde_json::from_str(&answer).expect("oracle answers JSON");
        match row["out"].as_str() {
            Some(out) => Ok(out.to_owned()),
            None => Err(row["err"].to_string()),
        }
    }
}

/// JSON text that libyaml reads back as the same value: characters it refuses raw, or takes as
/// line breaks, are escaped.
fn json_for_libyaml(v: &Value) -> String {
    let text = serde_json::to_string(v).expect("encode");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        ) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 .:/=_-]{0,12}",
        "[ -~]{0,20}",
        "[a-z ]{60,120}",
        "( ?[a-z'\"#:&*|>-]{1,8}( |  )?){5,25}(\n[ a-z]{0,90}){0,4}\n{0,2}",
        "[ \t]{0,2}[a-z]{1,5}( [a-z]{1,5}){0,3}[ \t]{0,2}",
        "(\\PC|\n| |\t|#|:|-){0,24}",
        prop::sample::select(vec![
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "~",
            "null",
            "true",
            "1.5",
            "0x1F",
            "0777",
            "1_000",
            "1:20",
            "2001-12-14",
            ".inf",
            "-",
            "---",
            "- a",
            "a: b",
            "#x",
            "'q'",
            "\"d\"",
            "",
        ])
        .prop_map(str::to_owned),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}",
        "[a-zA-Z]{1,3}[0-9]{1,2}",
        "[0-9]{1,3}",
        prop::sample::select(vec!["", "on", "a b", "k8s.io/x", "-", "~", "true"]).prop_map(str::to_owned),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e30f64..1e30).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Equality, except that floats may differ in the last bits: serde_json's default float parser
/// (used here to read Go's JSON) is not exact, unlike the reader under test.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || ((x - y) / x).abs() < 1e-14
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
#[ignore = "needs the Go oracle in KUBEADM_GOYAML: run with --ignored, as scripts/test.sh does"]
fn random_values_match_go() {
    let path = std::env::var("KUBEADM_GOYAML")
        .expect("KUBEADM_GOYAML names the Go oracle (cd testbed/goyaml && go build -o goyaml .)");
    // The runner wants a `Fn` closure; the oracles are used one call at a time.
    let j2y = RefCell::new(Oracle::start(&path, "j2y"));
    let y2j = RefCell::new(Oracle::start(&path, "y2j-strict"));
    let cases = 2000;
    // Values the Go side refuses to encode are skipped, not compared: counted, so that an oracle
    // that refuses most of them cannot pass the test by comparing nothing.
    let (compared, skipped) = (Cell::new(0u32), Cell::new(0u32));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
    runner
        .run(&value(), |v| {
            let Ok(expected) = j2y.borrow_mut().ask(&json_for_libyaml(&v)) else {
                skipped.set(skipped.get() + 1);
                return Ok(());
            };
            compared.set(compared.get() + 1);
            let ours = kubeadm_yaml::to_string(&v);
            prop_assert_eq!(&ours, &expected, "JSONToYAML of {}", v);
            // Read Go's YAML back with both readers.
            let go: Value = match y2j.borrow_mut().ask(&expected) {
                Ok(json) => serde_json::from_str(&json).expect("JSON"),
                Err(e) => return Err(TestCaseError::fail(format!("Go cannot read its own output: {e}"))),
            };
            let docs = kubeadm_yaml::parse_documents(&expected)
                .map_err(|e| TestCaseError::fail(format!("we cannot read {expected:?}: {e}")))?;
            let ours = docs.into_iter().next().map_or(Value::Null, |d| d.value);
            prop_assert!(
                same(&ours, &go),
                "YAMLToJSON of {:?}: ours {}, Go {}",
                expected,
                ours,
                go
            );
            Ok(())
        })
        .expect("matches the Go oracle");
    let (compared, skipped) = (compared.get(), skipped.get());
    eprintln!("{compared} values compared with Go's, {skipped} skipped (Go refused them)");
    assert!(
        compared >= cases * 9 / 10,
        "only {compared} of {} values were compared with Go's ({skipped} skipped)",
        compared + skipped
    );
}
