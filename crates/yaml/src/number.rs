//! Numbers as Go prints them: yaml.v2 writes floats with `strconv.FormatFloat(f, 'g', -1, 64)`,
//! and `encoding/json` decides whether a float reads back as an integer.

/// `strconv.FormatFloat(f, 'g', -1, 64)` with yaml.v2's spellings of the special values.
pub(crate) fn format_go_float(f: f64) -> String {
    format_go(f, format!("{:e}", f.abs()))
}

/// `strconv.FormatFloat(f, 'g', -1, 32)`, which sigs.k8s.io/yaml uses for float mapping keys.
pub(crate) fn format_go_float32(f: f64) -> String {
    format_go(f, format!("{:e}", (f as f32).abs()))
}

/// Go's shortest `'g'` layout, from Rust's shortest scientific form of `|f|`.
fn format_go(f: f64, sci: String) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits, like Go's shortest mode.
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push('0');
        return out;
    }
    // Go's 'g' with shortest precision switches to exponent form below 1e-4 and from 1e6 up.
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// The JSON number `encoding/json` writes for a float64, as serde_json reads that text back.
/// Go writes integral values below 1e21 as plain digits (the shortest round-trip digits padded
/// with zeros), which then read back as integers when they fit.
pub(crate) fn json_number_from_go_float(f: f64) -> Option<serde_json::Number> {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 && f != 0.0 {
        let sci = format!("{:e}", f.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: usize = exp.parse().unwrap_or(0);
        let mut text: String = if f < 0.0 { "-".to_owned() } else { String::new() };
        let digits = mantissa.chars().filter(|c| *c != '.');
        text.extend(digits.chain(std::iter::repeat('0')).take(exp + 1));
        if let Ok(n) = text.parse::<serde_json::Number>() {
            return Some(n);
        }
    }
    if f == 0.0 && f.is_sign_positive() {
        return Some(0.into());
    }
    serde_json::Number::from_f64(f)
}
