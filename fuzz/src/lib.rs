//! What the fuzz targets share: one input split into the parts a target needs, and the document a
//! part reads as.

use serde_json::Value;

/// The parts of `data` separated by NUL bytes; always `n` of them (missing ones are empty, the
/// last one keeps any further NULs). Seeds are written the same way (see scripts/fuzz.sh).
pub fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.splitn(n, |b| *b == 0).collect();
    out.resize(n, &[]);
    out
}

/// A part as text, as kubeadm reads a file it expects to be text (invalid UTF-8 replaced).
pub fn text(part: &[u8]) -> String {
    String::from_utf8_lossy(part).into_owned()
}

/// The first document of a part read as kubeadm reads YAML or JSON, or `None`.
pub fn document(part: &[u8]) -> Option<Value> {
    kubeadm_yaml::parse_documents(&text(part))
        .ok()?
        .into_iter()
        .next()
        .map(|d| d.value)
}

/// Whether two JSON values are the same (keys in any order), numbers compared by their value:
/// `-0.0` reads back as `0` and `1.0` as `1` (Go's `JSONToYAML` writes them so too; the golden rows
/// of the YAML crate check the spelling).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}
