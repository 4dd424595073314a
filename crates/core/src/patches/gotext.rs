//! How Go prints the JSON values that show up in patch error messages: `encoding/json`'s compact
//! output (object keys sorted, `<`, `>` and `&` escaped) and `fmt`'s `%v` of decoded JSON
//! (`map[k:v]`, `[a b]`).

use serde_json::Value;

/// `json.Marshal` of a decoded JSON value.
pub(crate) fn json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => write_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(e, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_json(&m[k], out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as Go writes a float64 (integers without a fraction, others shortest round-trip).
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{f:.0}");
    }
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        // Go: exponent form with at least two exponent digits (1e-07, 1e+21).
        let s = format!("{f:e}");
        if let Some((m, e)) = s.split_once('e') {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            return format!("{m}e{sign}{digits:0>2}");
        }
        return s;
    }
    f.to_string()
}

/// `fmt.Sprintf("%v", v)` of a value decoded by `encoding/json` into `interface{}`.
pub(crate) fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            // Decoded numbers are float64: %v prints them with %g.
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 1e21 {
                let s = format!("{f:.0}");
                if s.len() > 21 { format!("{f:e}") } else { s }
            } else {
                f.to_string()
            }
        }
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys.into_iter().map(|k| format!("{k}:{}", go_v(&m[k]))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_sorted_html_escaped() {
        let v = json!({"b": [1, 2.5, "a<b"], "a": {"z": null, "y": true}});
        assert_eq!(json(&v), r#"{"a":{"y":true,"z":null},"b":[1,2.5,"a\u003cb"]}"#);
    }

    #[test]
    fn percent_v() {
        let v = json!({"b": [1, "x"], "a": {"c": null}});
        assert_eq!(go_v(&v), "map[a:map[c:<nil>] b:[1 x]]");
    }
}
