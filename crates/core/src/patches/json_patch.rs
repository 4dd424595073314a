//! JSON patch (RFC 6902) with the behaviour of the library upstream uses (`evanphx/json-patch`
//! v4): `replace` of a missing object member adds it, negative array indices count from the end,
//! members set to `null` count as missing while walking a path, and its error texts.

use serde_json::{Map, Value};

use super::ApplyError;

const ERR_MISSING: &str = "missing value";
const ERR_INVALID_INDEX: &str = "invalid index referenced";

/// Applies `patch` (a JSON array of operations) to `doc`; the error is upstream's text.
pub(crate) fn apply(doc: &Value, patch: &Value) -> Result<Value, ApplyError> {
    let ops = match patch {
        Value::Array(ops) => ops,
        other => {
            return Err(ApplyError::Decode(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
                go_kind(other)
            )));
        }
    };
    let mut ops_checked = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            Value::Object(m) => ops_checked.push(m),
            Value::Null => ops_checked.push(EMPTY.get_or_init(Map::new)),
            other => {
                return Err(ApplyError::Decode(format!(
                    "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                    go_kind(other)
                )));
            }
        }
    }
    let mut doc = doc.clone();
    for op in ops_checked {
        let kind = match op.get("op") {
            Some(Value::String(s)) => s.as_str(),
            _ => "unknown",
        };
        match kind {
            "add" => add(&mut doc, op)?,
            "remove" => remove(&mut doc, op)?,
            "replace" => replace(&mut doc, op)?,
            "move" => move_op(&mut doc, op)?,
            "test" => test(&mut doc, op)?,
            "copy" => copy(&mut doc, op)?,
            other => return Err(ApplyError::Invalid(format!("Unexpected kind: {other}"))),
        }
    }
    Ok(doc)
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

/// The JSON kind named in Go's unmarshal type errors.
fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A string member of the operation (`path`, `from`): missing or null is `Ok(None)`.
fn field(op: &Map<String, Value>, name: &str) -> Result<Option<String>, ApplyError> {
    match op.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ApplyError::Decode(format!(
            "json: cannot unmarshal {} into Go value of type string",
            go_kind(other)
        ))),
    }
}

fn path_of(op: &Map<String, Value>) -> Result<String, ApplyError> {
    field(op, "path")?
        .ok_or_else(|| ApplyError::Missing(format!("operation missing path field: {ERR_MISSING}")))
}

fn from_of(op: &Map<String, Value>) -> Result<String, ApplyError> {
    field(op, "from")?
        .ok_or_else(|| ApplyError::Missing(format!("operation, missing from field: {ERR_MISSING}")))
}

/// The operation's value; an absent value is written as `null`, as upstream does.
fn value_of(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

/// RFC 6901 unescaping in one left-to-right pass (`~01` is `~1`, not `/`).
fn decode_key(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut chars = k.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.peek() {
                Some('1') => {
                    chars.next();
                    out.push('/');
                    continue;
                }
                Some('0') => {
                    chars.next();
                    out.push('~');
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// Go's `strconv.Atoi`, with its error text.
fn atoi(key: &str) -> Result<i64, ApplyError> {
    let digits = key.strip_prefix(['+', '-']).unwrap_or(key);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApplyError::Invalid(format!(
            "strconv.Atoi: parsing {key:?}: invalid syntax"
        )));
    }
    key.parse::<i64>()
        .map_err(|_| ApplyError::Invalid(format!("strconv.Atoi: parsing {key:?}: value out of range")))
}

fn invalid_index(idx: i64) -> ApplyError {
    ApplyError::Missing(format!(
        "Unable to access invalid index: {idx}: {ERR_INVALID_INDEX}"
    ))
}

/// Resolves an index for reading an existing element.
fn existing_index(len: usize, key: &str) -> Result<usize, ApplyError> {
    let mut idx = atoi(key)?;
    let n = len as i64;
    if idx < 0 {
        if idx < -n {
            return Err(invalid_index(idx));
        }
        idx += n;
    }
    if idx >= n {
        return Err(invalid_index(idx));
    }
    Ok(idx as usize)
}

/// Walks to the container holding the last path segment (`findObject`); `None` when it is missing.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let key = decode_key(part);
        let next = match cur {
            Value::Object(m) => m.get_mut(&key)?,
            Value::Array(a) => {
                let i = existing_index(a.len(), &key).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        cur = next;
    }
    Some((cur, decode_key(split[split.len() - 1])))
}

/// `get` on a container: `Ok(None)` for a missing (or null) object member.
fn get(con: &Value, key: &str) -> Result<Option<Value>, ApplyError> {
    match con {
        Value::Object(m) => Ok(m.get(key).filter(|v| !v.is_null()).cloned()),
        Value::Array(a) => {
            let i = existing_index(a.len(), key)?;
            Ok(Some(a[i].clone()).filter(|v| !v.is_null()))
        }
        _ => Ok(None),
    }
}

fn add_to(con: &mut Value, key: &str, val: Value) -> Result<(), ApplyError> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), val);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(val);
                return Ok(());
            }
            let mut idx =
                atoi(key).map_err(|e| e.context(format!("value was not a proper array index: '{key}'")))?;
            let size = a.len() as i64 + 1;
            if idx >= size {
                return Err(invalid_index(idx));
            }
            if idx < 0 {
                if idx < -size {
                    return Err(invalid_index(idx));
                }
                idx += size;
            }
            a.insert(idx as usize, val);
            Ok(())
        }
        _ => Err(ApplyError::Missing(ERR_MISSING.to_string())),
    }
}

fn remove_from(con: &mut Value, key: &str) -> Result<Value, ApplyError> {
    match con {
        Value::Object(m) => m.shift_remove(key).ok_or_else(|| {
            ApplyError::Missing(format!("Unable to remove nonexistent key: {key}: {ERR_MISSING}"))
        }),
        Value::Array(a) => {
            let mut idx = atoi(key)?;
            let n = a.len() as i64;
            if idx >= n {
                return Err(invalid_index(idx));
            }
            if idx < 0 {
                if idx < -n {
                    return Err(invalid_index(idx));
                }
                idx += n;
            }
            Ok(a.remove(idx as usize))
        }
        _ => Err(ApplyError::Missing(ERR_MISSING.to_string())),
    }
}

fn add(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let path = path_of(op)
        .map_err(|_| ApplyError::Missing(format!("add operation failed to decode path: {ERR_MISSING}")))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "add operation does not apply: doc is missing path: \"{path}\": {ERR_MISSING}"
        ))
    })?;
    add_to(con, &key, value_of(op)).map_err(|e| e.context(format!("error in add for path: '{path}'")))
}

fn remove(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let path = path_of(op)
        .map_err(|_| ApplyError::Missing(format!("remove operation failed to decode path: {ERR_MISSING}")))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": {ERR_MISSING}"
        ))
    })?;
    remove_from(con, &key)
        .map(|_| ())
        .map_err(|e| e.context(format!("error in remove for path: '{path}'")))
}

fn replace(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let path = path_of(op).map_err(|e| e.context("replace operation failed to decode path"))?;
    if path.is_empty() {
        let val = value_of(op);
        if !(val.is_object() || val.is_array()) {
            // Upstream wraps a nil error here, which yields no error at all and leaves the document.
            return Ok(());
        }
        *doc = val;
        return Ok(());
    }
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "replace operation does not apply: doc is missing path: {path}: {ERR_MISSING}"
        ))
    })?;
    if get(con, &key).is_err() {
        return Err(ApplyError::Missing(format!(
            "replace operation does not apply: doc is missing key: {path}: {ERR_MISSING}"
        )));
    }
    match con {
        Value::Object(m) => {
            m.insert(key, value_of(op));
        }
        Value::Array(a) => {
            let i = existing_index(a.len(), &key)?;
            a[i] = value_of(op);
        }
        _ => {}
    }
    Ok(())
}

fn move_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let from = from_of(op).map_err(|e| e.context("move operation failed to decode from"))?;
    let (con, key) = find_object(doc, &from).ok_or_else(|| {
        ApplyError::Missing(format!(
            "move operation does not apply: doc is missing from path: {from}: {ERR_MISSING}"
        ))
    })?;
    let val = get(con, &key).map_err(|e| e.context(format!("error in move for path: '{key}'")))?;
    remove_from(con, &key).map_err(|e| e.context(format!("error in move for path: '{key}'")))?;
    let path = path_of(op).map_err(|e| e.context("move operation failed to decode path"))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "move operation does not apply: doc is missing destination path: {path}: {ERR_MISSING}"
        ))
    })?;
    add_to(con, &key, val.unwrap_or(Value::Null))
        .map_err(|e| e.context(format!("error in move for path: '{path}'")))
}

fn test(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let path = path_of(op).map_err(|e| e.context("test operation failed to decode path"))?;
    let failed = || ApplyError::TestFailed(path.clone());
    if path.is_empty() {
        return if *doc == value_of(op) {
            Ok(())
        } else {
            Err(failed())
        };
    }
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "test operation does not apply: is missing path: {path}: {ERR_MISSING}"
        ))
    })?;
    let val = get(con, &key).map_err(|e| e.context(format!("error in test for path: '{path}'")))?;
    match (val, op.get("value")) {
        (None, Some(Value::Null)) => Ok(()),
        (Some(v), Some(want)) if v == *want => Ok(()),
        _ => Err(failed()),
    }
}

fn copy(doc: &mut Value, op: &Map<String, Value>) -> Result<(), ApplyError> {
    let from = from_of(op).map_err(|e| e.context("copy operation failed to decode from"))?;
    let (con, key) = find_object(doc, &from).ok_or_else(|| {
        ApplyError::Missing(format!(
            "copy operation does not apply: doc is missing from path: {from}: {ERR_MISSING}"
        ))
    })?;
    let val = get(con, &key).map_err(|e| e.context(format!("error in copy for from: '{from}'")))?;
    let path = path_of(op)
        .map_err(|_| ApplyError::Missing(format!("copy operation failed to decode path: {ERR_MISSING}")))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        ApplyError::Missing(format!(
            "copy operation does not apply: doc is missing destination path: {path}: {ERR_MISSING}"
        ))
    })?;
    add_to(con, &key, val.unwrap_or(Value::Null))
        .map_err(|e| e.context("error while adding value during copy"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations() {
        let doc = json!({"a": {"b": [1, 2, 3]}, "n": null});
        let patch = json!([
            {"op": "add", "path": "/a/b/-", "value": 4},
            {"op": "add", "path": "/a/b/-1", "value": 9},
            {"op": "remove", "path": "/a/b/0"},
            {"op": "replace", "path": "/a/c", "value": "new"},
            {"op": "copy", "from": "/a/c", "path": "/d"},
            {"op": "move", "from": "/d", "path": "/e~1f"},
            {"op": "test", "path": "/e~1f", "value": "new"}
        ]);
        let out = apply(&doc, &patch).expect("applies");
        // `-1` on add counts from the end of the grown array, so it appends.
        assert_eq!(
            out,
            json!({"a": {"b": [2, 3, 4, 9], "c": "new"}, "n": null, "e/f": "new"})
        );
    }

    #[test]
    fn errors() {
        let doc = json!({"a": [1]});
        let cases = [
            (
                json!([{"op": "add", "path": "/x/y", "value": 1}]),
                "add operation does not apply: doc is missing path: \"/x/y\": missing value",
            ),
            (
                json!([{"op": "remove", "path": "/b"}]),
                "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
            ),
            (
                json!([{"op": "add", "path": "/a/5", "value": 1}]),
                "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced",
            ),
            (
                json!([{"op": "test", "path": "/a/0", "value": 2}]),
                "testing value /a/0 failed: test failed",
            ),
            (json!([{"op": "frob", "path": "/a"}]), "Unexpected kind: frob"),
            (
                json!({"op": "add"}),
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(apply(&doc, &patch).expect_err("fails").to_string(), want);
        }
    }
}
