//! What the `-o yaml` printers of several commands share (`token list`, `certs check-expiration`).

/// JSON with object keys sorted (inside arrays too), as the YAML printer's round trip through a Go
/// map sorts them.
pub(crate) fn sorted_keys(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted_keys(v)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}
