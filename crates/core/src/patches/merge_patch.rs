//! JSON merge patch (RFC 7386) as upstream's library (`evanphx/json-patch` v4 `MergePatch`)
//! applies it: objects merge member by member, `null` deletes, anything else replaces; nulls inside
//! newly added objects are pruned, and a patch that is neither object nor array is rejected.

use serde_json::{Map, Value};

use super::ApplyError;

/// Applies `patch` to `doc` (an object); the error is upstream's text.
pub(crate) fn apply(doc: &Value, patch: &Value) -> Result<Value, ApplyError> {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => {
            let mut d = d.clone();
            merge_docs(&mut d, p);
            Ok(Value::Object(d))
        }
        (Value::Object(_), Value::Array(a)) => {
            Ok(Value::Array(a.iter().cloned().map(prune_nested).collect()))
        }
        (Value::Object(_), _) => Err(ApplyError::Invalid("Invalid JSON Patch".to_string())),
        _ => Err(ApplyError::Decode("Invalid JSON Document".to_string())),
    }
}

fn merge_docs(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            doc.shift_remove(k);
            continue;
        }
        match doc.get_mut(k) {
            Some(cur) if !cur.is_null() => {
                let merged = merge(cur, v);
                *cur = merged;
            }
            _ => {
                doc.insert(k.clone(), prune(v.clone()));
            }
        }
    }
}

fn merge(cur: &Value, patch: &Value) -> Value {
    match (cur, patch) {
        (Value::Object(c), Value::Object(p)) => {
            let mut c = c.clone();
            merge_docs(&mut c, p);
            Value::Object(c)
        }
        (Value::Object(_), p) => p.clone(),
        (_, p) => prune(p.clone()),
    }
}

/// `pruneNulls`: drops null members of objects, recursively; array elements stay.
fn prune(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, prune(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(prune_nested).collect()),
        other => other,
    }
}

fn prune_nested(v: Value) -> Value {
    if v.is_null() { v } else { prune(v) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let doc = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1]});
        let patch = json!({"a": "z", "c": {"f": null}, "l": [null, {"x": null}], "n": {"p": null, "q": 1}});
        let out = apply(&doc, &patch).expect("applies");
        assert_eq!(
            out,
            json!({"a": "z", "c": {"d": "e"}, "l": [null, {}], "n": {"q": 1}})
        );
        assert_eq!(
            apply(&doc, &json!(5)).expect_err("scalar").to_string(),
            "Invalid JSON Patch"
        );
    }
}
