//! How Go prints the values the printers walk: `encoding/json` (sorted keys, HTML escapes, Go's
//! float form), fmt's `%v` and `%#v` of the `interface{}` trees JSON decodes into, and
//! `strconv.FormatFloat(f, 'g', -1, 64)` as `%v` of a float64 uses it.

use serde_json::Value;

/// A JSON number as Go holds it after decoding: `float64` (encoding/json into `interface{}`) or,
/// with apimachinery's decoder (the go-template printer), `int64` when the text is an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
}

/// How the number `n` decodes: `ints` says whether integers stay `int64`.
pub(crate) fn num(n: &serde_json::Number, ints: bool) -> Num {
    match n.as_i64() {
        Some(i) if ints => Num::Int(i),
        _ => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

/// The shortest digits of `|f|` that read back as it, and the decimal exponent of the first one.
fn shortest(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

fn exp_form(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.abs()));
    out
}

/// `%v` of a float64: `strconv.FormatFloat(f, 'g', -1, 64)`.
pub(crate) fn float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, exp) = shortest(f);
    // %g with the shortest precision: the exponent form below 1e-4 and from 1e6 on.
    if !(-4..6).contains(&exp) {
        return exp_form(f < 0.0, &digits, exp);
    }
    format!("{f}")
}

/// encoding/json's form of a float64.
pub(crate) fn float_json(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        let (digits, exp) = shortest(f);
        let s = exp_form(f < 0.0, &digits, exp);
        // Go cleans `e-07` to `e-7`.
        return s.replace("e-0", "e-").replace("e+0", "e+");
    }
    format!("{f}")
}

pub(crate) fn num_v(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => float_v(f),
    }
}

/// encoding/json's string form.
pub(crate) fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.Marshal` (indent `None`) or `json.MarshalIndent(v, "", indent)` of the decoded value:
/// keys sorted, numbers as decoded (`ints`).
pub(crate) fn json(v: &Value, indent: Option<&str>, ints: bool) -> String {
    let mut out = String::new();
    json_into(v, indent, 0, ints, &mut out);
    out
}

fn newline(indent: Option<&str>, depth: usize, out: &mut String) {
    if let Some(ind) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(ind);
        }
    }
}

fn json_into(v: &Value, indent: Option<&str>, depth: usize, ints: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match num(n, ints) {
            Num::Int(i) => out.push_str(&i.to_string()),
            Num::Float(f) => out.push_str(&float_json(f)),
        },
        Value::String(s) => json_string(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                json_into(item, indent, depth + 1, ints, out);
            }
            newline(indent, depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                json_string(k, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                json_into(&map[k.as_str()], indent, depth + 1, ints, out);
            }
            newline(indent, depth, out);
            out.push('}');
        }
    }
}

/// fmt's `%v` of the decoded value: `map[a:1 b:[x y]]`, keys sorted, `<nil>` for null.
pub(crate) fn v(value: &Value, ints: bool) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => num_v(num(n, ints)),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(|i| v(i, ints)).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}:{}", v(&map[k.as_str()], ints)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// fmt's `%#v` of the decoded value (as `interface{}` elements).
pub(crate) fn sharp_v(value: &Value, ints: bool) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::String(s) => kubeadm_api::gofmt::quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(|i| sharp_v(i, ints)).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        kubeadm_api::gofmt::quote(k),
                        sharp_v(&map[k.as_str()], ints)
                    )
                })
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
        other => v(other, ints),
    }
}

/// Go's type name of the decoded value, as errors print it.
pub(crate) fn type_name(value: &Value, ints: bool) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) => match num(n, ints) {
            Num::Int(_) => "int64",
            Num::Float(_) => "float64",
        },
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_does() {
        // Expected values: Go's fmt.Sprint and json.Marshal of the same float64s.
        assert_eq!(float_v(31535999000000000.0), "3.1535999e+16");
        assert_eq!(float_v(1.5), "1.5");
        assert_eq!(float_v(1.0), "1");
        assert_eq!(float_v(100000.0), "100000");
        assert_eq!(float_v(1000000.0), "1e+06");
        assert_eq!(float_v(123456789.0), "1.23456789e+08");
        assert_eq!(float_v(0.0001), "0.0001");
        assert_eq!(float_v(0.00001), "1e-05");
        assert_eq!(float_json(31535999000000000.0), "31535999000000000");
        assert_eq!(float_json(1e21), "1e+21");
        assert_eq!(float_json(0.0000001), "1e-7");
        assert_eq!(float_json(2.5), "2.5");
    }
}
