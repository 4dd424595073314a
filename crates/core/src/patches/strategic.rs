//! Strategic merge patch, as `k8s.io/apimachinery/pkg/util/strategicpatch` applies one
//! (`StrategicMergePatch`): maps merge recursively and `null` deletes; lists whose field has the
//! `merge` strategy merge — lists of objects by their merge key, lists of scalars as a set — and all
//! other lists are replaced. The directives `$patch: replace|delete|merge`, `$retainKeys`,
//! `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are honoured, and the merged
//! list order follows upstream's rules (patch order, then live order, interleaved).

use serde_json::{Map, Value};

use super::ApplyError;
use super::gotext::go_v;
use super::schema::Schema;

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_PRIMITIVE_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ORDER_PREFIX: &str = "$setElementOrder";

type Obj = Map<String, Value>;

/// Applies `patch` to `original`, both JSON objects; errors are upstream's texts.
pub(crate) fn apply(original: &Value, patch: &Value, schema: Schema) -> Result<Value, ApplyError> {
    let (Value::Object(o), Value::Object(p)) = (original, patch) else {
        return Err(ApplyError::Decode("invalid JSON document".to_string()));
    };
    merge_map(o.clone(), p.clone(), schema).map(Value::Object)
}

fn bad_arg_type(expected: &str, actual: &Value) -> ApplyError {
    ApplyError::Decode(format!(
        "expected a {expected}, but received a {}",
        go_type(actual)
    ))
}

/// Go's `reflect.TypeOf` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "%!s(<nil>)",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// JSON kinds as Go's reflect distinguishes them (all numbers are float64).
fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

fn no_merge_key(m: &Obj, key: &str) -> ApplyError {
    ApplyError::Invalid(format!(
        "map: {} does not contain declared merge key: {key}",
        go_v(&Value::Object(m.clone()))
    ))
}

fn merge_map(mut original: Obj, mut patch: Obj, schema: Schema) -> Result<Obj, ApplyError> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => {
                patch.shift_remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Obj::new()),
            _ => Err(ApplyError::Invalid(format!(
                "unknown patch type: {} in map: {}",
                go_s(directive),
                go_v(&Value::Object(patch.clone()))
            ))),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, schema)?;

    for (key, patch_v) in patch {
        let (key, is_delete_list) = match key.strip_prefix(DELETE_PRIMITIVE_PREFIX) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(k) => (k.to_string(), true),
                None => {
                    return Err(ApplyError::Invalid(
                        "invalid patch format of primitive list".to_string(),
                    ));
                }
            },
            None => (key, false),
        };
        if patch_v.is_null() {
            original.shift_remove(&key);
            continue;
        }
        let Some(orig_v) = original.get(&key) else {
            if !is_delete_list {
                original.insert(key, discard_nulls(patch_v));
            }
            continue;
        };
        if !same_type(orig_v, &patch_v) {
            if !is_delete_list {
                original.insert(key, discard_nulls(patch_v));
            }
            continue;
        }
        let (sub, meta) = schema.lookup(&key);
        let merged = match (orig_v, patch_v) {
            (Value::Object(o), Value::Object(p)) => Value::Object(merge_map(o.clone(), p, sub)?),
            (Value::Array(o), Value::Array(p)) => {
                if meta.merge {
                    Value::Array(merge_slice(o.clone(), p, sub, meta.merge_key, is_delete_list)?)
                } else {
                    Value::Array(p)
                }
            }
            (_, p) => p,
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// `%s` of a directive value in upstream's error.
fn go_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => format!("%!s({})", go_v(other)),
    }
}

/// Removes null members from objects anywhere in a value taken from the patch as is.
fn discard_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, discard_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(discard_nulls).collect()),
        other => other,
    }
}

/// `$retainKeys`: clears the members of `original` the list does not name.
fn apply_retain_keys(original: &mut Obj, patch: &mut Obj) -> Result<(), ApplyError> {
    let Some(retain) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let bad = || ApplyError::Invalid("invalid patch format of retainKeys".to_string());
    let Value::Array(list) = retain else {
        return Err(bad());
    };
    let named = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null() || k.starts_with(DELETE_PRIMITIVE_PREFIX) || k.starts_with(SET_ORDER_PREFIX) {
            continue;
        }
        if !named(k) {
            return Err(bad());
        }
    }
    original.retain(|k, _| named(k));
    Ok(())
}

/// `$setElementOrder/<field>`: merges that field's list now and orders it by the directive.
fn merge_set_element_order(original: &mut Obj, patch: &mut Obj, schema: Schema) -> Result<(), ApplyError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order_v) = patch.shift_remove(&key) else {
            continue;
        };
        let Value::Array(order) = order_v else {
            return Err(bad_arg_type("[]interface {}", &order_v));
        };
        let field = key
            .strip_prefix(SET_ORDER_PREFIX)
            .and_then(|r| r.strip_prefix('/'))
            .ok_or_else(|| ApplyError::Invalid("invalid patch format of setElementOrder list".to_string()))?
            .to_string();
        let orig_list = match original.get(&field) {
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
            None => None,
        };
        let patch_list = match patch.get(&field) {
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
            None => None,
        };
        let (sub, meta) = schema.lookup(&field);
        validate_set_order(patch_list.as_deref().unwrap_or_default(), &order, meta.merge_key)?;
        let merged = match (&orig_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => p.clone(),
            (Some(o), Some(p)) => {
                if meta.merge {
                    merge_slice(o.clone(), p.clone(), sub, meta.merge_key, false)?
                } else {
                    p.clone()
                }
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) = partition(&merged, &order, meta.merge_key)?;
        let all: Vec<Value> = orig_list
            .iter()
            .flatten()
            .chain(patch_list.iter().flatten())
            .cloned()
            .collect();
        let kind_is_map = element_kind_is_map(&all)?;
        let server_order = orig_list.unwrap_or_default();
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            meta.merge_key,
            kind_is_map,
        )?;
        original.insert(field.clone(), Value::Array(both));
        patch.shift_remove(&field);
    }
    Ok(())
}

fn validate_set_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> Result<(), ApplyError> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = if merge_key.is_empty() {
        patch_list.iter().collect()
    } else {
        let mut v = Vec::new();
        for item in patch_list {
            let Value::Object(m) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if m.get(DIRECTIVE).and_then(Value::as_str) != Some("delete") {
                v.push(item);
            }
        }
        v
    };
    let (mut pi, mut si) = (0, 0);
    while pi < non_delete.len() && si < order.len() {
        if non_delete[pi]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE))
        {
            pi += 1;
            continue;
        }
        if merge_key_equal(non_delete[pi], &order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= order.len() {
        return Err(ApplyError::Invalid(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ORDER_PREFIX} list:\n{}\n",
            go_v(&Value::Array(patch_list.to_vec())),
            go_v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, ApplyError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let l = left
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", left))?;
    let r = right
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", right))?;
    let lv = l.get(merge_key).ok_or_else(|| no_merge_key(l, merge_key))?;
    let rv = r.get(merge_key).ok_or_else(|| no_merge_key(r, merge_key))?;
    Ok(lv == rv)
}

/// The element kind of the lists (`sliceElementType`): all elements must share one JSON kind.
fn element_kind_is_map(items: &[Value]) -> Result<bool, ApplyError> {
    let mut first: Option<&Value> = None;
    for v in items {
        match first {
            None => {
                if v.is_array() {
                    return Err(ApplyError::Invalid(
                        "lists of lists are not supported".to_string(),
                    ));
                }
                first = Some(v);
            }
            Some(f) if !same_type(f, v) => {
                return Err(ApplyError::Invalid(format!(
                    "list element types are not identical: {}",
                    go_v(&Value::Array(items.to_vec()))
                )));
            }
            Some(_) => {}
        }
    }
    match first {
        Some(f) => Ok(f.is_object()),
        None => Err(ApplyError::Invalid(
            "no elements in any of the given slices".to_string(),
        )),
    }
}

fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Schema,
    merge_key: &str,
    is_delete_list: bool,
) -> Result<Vec<Value>, ApplyError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let all: Vec<Value> = original.iter().chain(patch.iter()).cloned().collect();
    let is_map = element_kind_is_map(&all)?;
    let (server_order, patch_order, merged) = if !is_map {
        if is_delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        let merged = deduplicate(all);
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(ApplyError::Invalid(format!(
                "cannot merge lists without merge key for {}",
                schema.name()
            )));
        }
        let (original, patch) = merge_special_elements(original, patch, merge_key)?;
        let merged = merge_without_special_elements(original.clone(), &patch, merge_key, schema)?;
        (original, patch, merged)
    };
    let (patch_items, server_only) = partition(&merged, &patch_order, merge_key)?;
    normalize_element_order(
        patch_items,
        server_only,
        &patch_order,
        &server_order,
        merge_key,
        is_map,
    )
}

/// Go's in-place deduplication: a duplicate is overwritten by the last element.
fn deduplicate(mut s: Vec<Value>) -> Vec<Value> {
    let mut length = s.len() as isize - 1;
    let mut i: isize = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if s[i as usize] == s[j as usize] {
                s[j as usize] = s[length as usize].clone();
                s.truncate(length as usize);
                length -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

/// `$patch: delete` and `$patch: replace` elements of a list of objects.
fn merge_special_elements(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), ApplyError> {
    let mut original = original;
    let mut plain = Vec::new();
    let mut replace = false;
    for v in patch {
        let Value::Object(m) = &v else {
            return Err(bad_arg_type("map[string]interface {}", &v));
        };
        match m.get(DIRECTIVE) {
            None => plain.push(v),
            Some(d) => match d.as_str() {
                Some("delete") => {
                    let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
                    for (i, item) in original.iter().enumerate() {
                        if !item.is_object() {
                            return Err(ApplyError::Decode(format!("value for key {i} is not a map")));
                        }
                    }
                    original.retain(|item| item.get(merge_key) != Some(value));
                }
                Some("replace") => replace = true,
                Some("merge") => {
                    return Err(ApplyError::Invalid(
                        "merging lists cannot yet be specified in the patch".to_string(),
                    ));
                }
                _ => {
                    return Err(ApplyError::Invalid(format!(
                        "unknown patch type: {} in map: {}",
                        go_s(d),
                        go_v(&v)
                    )));
                }
            },
        }
    }
    if replace {
        return Ok((plain, Vec::new()));
    }
    Ok((original, plain))
}

fn find_by_key(list: &[Value], key: &str, value: &Value) -> Result<Option<usize>, ApplyError> {
    for (i, item) in list.iter().enumerate() {
        let Value::Object(m) = item else {
            return Err(ApplyError::Decode(format!("value for key {i} is not a map")));
        };
        if m.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

fn merge_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    schema: Schema,
) -> Result<Vec<Value>, ApplyError> {
    for v in patch {
        let Value::Object(m) = v else {
            return Err(bad_arg_type("map[string]interface {}", v));
        };
        let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
        match find_by_key(&original, merge_key, value)? {
            Some(i) => {
                let Value::Object(o) = &original[i] else { continue };
                original[i] = Value::Object(merge_map(o.clone(), m.clone(), schema)?);
            }
            None => original.push(v.clone()),
        }
    }
    Ok(original)
}

/// Splits `merged` into the items present in `by` and the others (`partition*ByPresentInList`).
fn partition(
    merged: &[Value],
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), ApplyError> {
    let mut present = Vec::new();
    let mut others = Vec::new();
    for v in merged {
        let found = if merge_key.is_empty() {
            by.contains(v)
        } else {
            let Value::Object(m) = v else {
                return Err(bad_arg_type("map[string]interface {}", v));
            };
            let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
            find_by_key(by, merge_key, value)?.is_some()
        };
        if found {
            present.push(v.clone())
        } else {
            others.push(v.clone())
        }
    }
    Ok((present, others))
}

/// The merge key value of an item (the item itself for scalars), for order lookups.
fn order_key<'a>(v: &'a Value, merge_key: &str, is_map: bool) -> Option<&'a Value> {
    if is_map {
        v.as_object().and_then(|m| m.get(merge_key))
    } else {
        Some(v)
    }
}

fn index(list: &[Value], v: &Value, merge_key: &str, is_map: bool) -> Option<usize> {
    let want = order_key(v, merge_key, is_map);
    list.iter().position(|x| order_key(x, merge_key, is_map) == want)
}

fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, ApplyError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, is_map)?;
    Ok(merge_sorted(server_only, patch, server_order, merge_key, is_map))
}

fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, ApplyError> {
    let (mut keep, to_delete) = if is_map {
        for v in to_sort.iter().chain(order) {
            let Value::Object(m) = v else {
                return Err(bad_arg_type("map[string]interface {}", v));
            };
            if !m.contains_key(merge_key) {
                return Err(no_merge_key(m, merge_key));
            }
        }
        to_sort
            .into_iter()
            .partition(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
    } else {
        (to_sort, Vec::new())
    };
    // Go's sort.SliceStable is an insertion sort for lists this short; its comparator reports
    // "less" whenever either item is absent from the order, which only an identical algorithm
    // reproduces.
    let less = |a: &Value, b: &Value| match (
        index(order, a, merge_key, is_map),
        index(order, b, merge_key, is_map),
    ) {
        (Some(i), Some(j)) => i < j,
        _ => true,
    };
    insertion_sort_stable(&mut keep, less);
    keep.extend(to_delete);
    Ok(keep)
}

/// Go's `sort.SliceStable` (`insertionSort` on blocks of 20, then `symMerge`), which fixes the
/// result even for comparators that are not strict weak orders.
fn insertion_sort_stable(v: &mut [Value], less: impl Fn(&Value, &Value) -> bool) {
    let n = v.len();
    let block = 20;
    let mut a = 0;
    while a < n {
        let b = (a + block).min(n);
        for i in a + 1..b {
            let mut j = i;
            while j > a && less(&v[j], &v[j - 1]) {
                v.swap(j, j - 1);
                j -= 1;
            }
        }
        a = b;
    }
    let mut size = block;
    while size < n {
        let mut a = 0;
        while a + 2 * size <= n {
            sym_merge(v, a, a + size, a + 2 * size, &less);
            a += 2 * size;
        }
        if a + size < n {
            sym_merge(v, a, a + size, n, &less);
        }
        size *= 2;
    }
}

fn sym_merge(v: &mut [Value], a: usize, m: usize, b: usize, less: &impl Fn(&Value, &Value) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&v[h], &v[a]) { i = h + 1 } else { j = h }
        }
        for k in a..i - 1 {
            v.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&v[m], &v[h]) { i = h + 1 } else { j = h }
        }
        let mut k = m;
        while k > i {
            v.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&v[p - c], &v[c]) {
            start = c + 1
        } else {
            r = c
        }
    }
    let end = n - start;
    if start < m && m < end {
        v[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        sym_merge(v, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(v, mid, end, b, less);
    }
}

/// Interleaves the server-only items (`left`) into the patch items (`right`) by live order.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Vec<Value> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(left.len() + right.len());
    while i < left.len() || j < right.len() {
        if i >= left.len() {
            out.push(right[j].clone());
            j += 1;
        } else if j >= right.len() {
            out.push(left[i].clone());
            i += 1;
        } else {
            let li = index(server_order, &left[i], merge_key, is_map);
            let ri = index(server_order, &right[j], merge_key, is_map);
            if let (Some(li), Some(ri)) = (li, ri)
                && li < ri
            {
                out.push(left[i].clone());
                i += 1;
            } else {
                out.push(right[j].clone());
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"spec": {"containers": [
            {"name": "a", "image": "x", "env": [{"name": "E1", "value": "1"}], "command": ["a", "--x"]},
            {"name": "b", "image": "y"}
        ], "volumes": [{"name": "v1", "hostPath": {"path": "/1"}}]}})
    }

    #[test]
    fn containers_merge_by_name_and_commands_replace() {
        let patch = json!({"spec": {"containers": [
            {"name": "a", "env": [{"name": "E2", "value": "2"}], "command": ["z"]},
            {"name": "c", "image": "new"}
        ]}});
        let out = apply(&pod(), &patch, Schema::Pod).expect("applies");
        // Upstream puts patch items first (in patch order) and interleaves the live-only items
        // only where the live order places them: new items come before live items.
        assert_eq!(
            out["spec"]["containers"],
            json!([
                {"name": "a", "image": "x", "env": [{"name": "E2", "value": "2"}, {"name": "E1", "value": "1"}], "command": ["z"]},
                {"name": "c", "image": "new"},
                {"name": "b", "image": "y"}
            ])
        );
    }

    #[test]
    fn delete_and_replace_directives() {
        let patch = json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}], "volumes": [{"name": "v2", "hostPath": {"path": "/2"}}, {"$patch": "replace"}]}});
        let out = apply(&pod(), &patch, Schema::Pod).expect("applies");
        assert_eq!(out["spec"]["containers"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "v2", "hostPath": {"path": "/2"}}])
        );
    }

    #[test]
    fn missing_merge_key_is_an_error() {
        let patch = json!({"spec": {"containers": [{"image": "z"}]}});
        let err = apply(&pod(), &patch, Schema::Pod).expect_err("no name");
        assert_eq!(
            err.to_string(),
            "map: map[image:z] does not contain declared merge key: name"
        );
    }

    #[test]
    fn go_dedup_order() {
        let out = deduplicate(vec![json!("a"), json!("b"), json!("a"), json!("c")]);
        assert_eq!(out, vec![json!("a"), json!("b"), json!("c")]);
    }
}
