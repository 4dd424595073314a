//! The builtin functions' bodies: `slice`, `print`/`printf`, the comparisons, `html`, `js`,
//! `urlquery`, `base64decode`, and Go's `fmt` verbs as templates use them.

#[allow(unused_imports)]
use super::*;

/// Go's `slice` builtin on a decoded JSON value: `slice x`, `slice x i`, `slice x i j` and, on a
/// list, `slice x i j k`; indexes may reach the capacity (a list's positions past its length are
/// nil).
pub(super) fn slice(
    item: &V,
    indexes: &[V],
    item_type: &dyn Fn(&Value) -> &'static str,
) -> Result<V, ValueError> {
    let (len, cap) = match item {
        None | Some(Value::Null) => return Err(ValueError::Type("slice of untyped nil".into())),
        _ if indexes.len() > 3 => {
            return Err(ValueError::Index(format!(
                "too many slice indexes: {}",
                indexes.len()
            )));
        }
        Some(Value::String(x)) => {
            if indexes.len() == 3 {
                return Err(ValueError::Type("cannot 3-index slice a string".into()));
            }
            (x.len(), x.len())
        }
        Some(Value::Array(a)) => (a.len(), decoded_cap(a.len())),
        Some(other) => {
            return Err(ValueError::Type(format!(
                "can't slice item of type {}",
                item_type(other)
            )));
        }
    };
    let mut idx = [0, len, 0];
    for (i, index) in indexes.iter().enumerate() {
        let x = match index {
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().unwrap_or(0),
            None | Some(Value::Null) => {
                return Err(ValueError::Type("cannot index slice/array with nil".into()));
            }
            Some(other) => {
                return Err(ValueError::Type(format!(
                    "cannot index slice/array with type {}",
                    gofmt::type_name(other, true)
                )));
            }
        };
        match usize::try_from(x) {
            Ok(x) if x <= cap => idx[i] = x,
            _ => return Err(ValueError::Index(format!("index out of range: {x}"))),
        }
    }
    if idx[0] > idx[1] {
        return Err(ValueError::Index(format!(
            "invalid slice index: {} > {}",
            idx[0], idx[1]
        )));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(ValueError::Index(format!(
            "invalid slice index: {} > {}",
            idx[1], idx[2]
        )));
    }
    Ok(Some(if let Some(Value::Array(a)) = item {
        Value::Array(
            (idx[0]..idx[1])
                .map(|i| a.get(i).cloned().unwrap_or(Value::Null))
                .collect(),
        )
    } else {
        // A string (the only other kind that gets here): its bytes, as Go slices them.
        let x = item.as_ref().and_then(Value::as_str).unwrap_or_default();
        Value::String(String::from_utf8_lossy(&x.as_bytes()[idx[0]..idx[1]]).into_owned())
    }))
}

/// fmt.Sprint: a space between operands when neither is a string.
pub(super) fn sprint(args: &[V]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let is_str = matches!(a, Some(Value::String(_)));
        if i > 0 && !is_str && !matches!(args[i - 1], Some(Value::String(_))) {
            out.push(' ');
        }
        out.push_str(&arg_v(a));
    }
    out
}

/// text/template's evalArgs: the one string argument, else fmt.Sprint of all.
pub(super) fn eval_args(args: &[V]) -> String {
    if let [Some(Value::String(x))] = args {
        return x.clone();
    }
    sprint(args)
}

pub(super) enum Kind {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Nil,
    Other,
}

pub(super) fn kind(v: &V) -> Kind {
    match v {
        None | Some(Value::Null) => Kind::Nil,
        Some(Value::Bool(b)) => Kind::Bool(*b),
        Some(Value::String(s)) => Kind::Str(s.clone()),
        Some(Value::Number(n)) => match gofmt::num(n, true) {
            Num::Int(i) => Kind::Int(i),
            Num::Float(f) => Kind::Float(f),
        },
        _ => Kind::Other,
    }
}

pub(super) fn compare(f: &str, a: &V, rest: &[V]) -> Result<bool, ValueError> {
    const INCOMPATIBLE: &str = "incompatible types for comparison";
    const BAD: &str = "invalid type for comparison";
    if rest.is_empty() {
        return Err(ValueError::Type("missing argument for comparison".into()));
    }
    // Go names the two types; an integer is named `int`, as template literals are.
    let tname = |v: &V| match kind(v) {
        Kind::Bool(_) => "bool",
        Kind::Int(_) => "int",
        Kind::Float(_) => "float64",
        Kind::Str(_) => "string",
        Kind::Nil => "<nil>",
        Kind::Other => v.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
    };
    let incompatible =
        |a: &V, b: &V| ValueError::Type(format!("{INCOMPATIBLE}: {} and {}", tname(a), tname(b)));
    let eq = |a: &V, b: &V| -> Result<bool, ValueError> {
        match (kind(a), kind(b)) {
            (Kind::Bool(x), Kind::Bool(y)) => Ok(x == y),
            (Kind::Int(x), Kind::Int(y)) => Ok(x == y),
            (Kind::Float(x), Kind::Float(y)) => Ok(x == y),
            (Kind::Str(x), Kind::Str(y)) => Ok(x == y),
            (Kind::Nil, Kind::Nil) => Ok(true),
            (Kind::Nil, _) | (_, Kind::Nil) => Ok(false),
            (Kind::Other, Kind::Other) => Err(ValueError::Type(format!(
                "non-comparable types {}: {}, {}: {}",
                arg_v(a),
                a.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                b.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                arg_v(b)
            ))),
            _ => Err(incompatible(a, b)),
        }
    };
    let lt = |a: &V, b: &V| -> Result<bool, ValueError> {
        match (kind(a), kind(b)) {
            (Kind::Int(x), Kind::Int(y)) => Ok(x < y),
            (Kind::Float(x), Kind::Float(y)) => Ok(x < y),
            (Kind::Str(x), Kind::Str(y)) => Ok(x < y),
            (Kind::Nil | Kind::Other | Kind::Bool(_), _) | (_, Kind::Nil | Kind::Other | Kind::Bool(_)) => {
                Err(ValueError::Type(BAD.into()))
            }
            _ => Err(incompatible(a, b)),
        }
    };
    let b = &rest[0];
    match f {
        "eq" => {
            for r in rest {
                if eq(a, r)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        "ne" => eq(a, b).map(|t| !t),
        "lt" => lt(a, b),
        "le" => Ok(lt(a, b)? || eq(a, b)?),
        "gt" => Ok(!(lt(a, b)? || eq(a, b)?)),
        _ => lt(a, b).map(|t| !t),
    }
}

pub(super) fn html(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn js(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

pub(super) fn urlquery(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// Go's `base64.StdEncoding.DecodeString` (padded, strict), with its error text.
pub(super) fn base64_decode(s: &str) -> Result<String, ValueError> {
    use base64::Engine as _;
    let stripped: String = s.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    match base64::engine::general_purpose::STANDARD.decode(&stripped) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(base64::DecodeError::InvalidByte(i, _)) => Err(ValueError::Base64(i)),
        Err(_) => {
            // A length that is not a multiple of four: Go reports the end of the last full quantum.
            let i = stripped.len() / 4 * 4;
            Err(ValueError::Base64(i))
        }
    }
}

/// fmt.Sprintf for the verbs templates use: `%v %s %d %q %f %t %x %X %%`, flags `-+ 0#`, width
/// and precision.
pub(super) fn sprintf(format: &str, args: &[V]) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    let mut argi = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut minus = false;
        let mut zero = false;
        let mut plus = false;
        let mut space = false;
        while let Some(&f) = chars.peek() {
            match f {
                '-' => minus = true,
                '0' => zero = true,
                '+' => plus = true,
                ' ' => space = true,
                '#' => {}
                _ => break,
            }
            chars.next();
        }
        let mut width: Option<usize> = None;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            width = Some(width.unwrap_or(0) * 10 + d as usize);
            chars.next();
        }
        let mut prec: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            prec = Some(0);
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                prec = Some(prec.unwrap_or(0) * 10 + d as usize);
                chars.next();
            }
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(argi) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        argi += 1;
        let bad = || {
            format!(
                "%!{verb}({}={})",
                arg.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                arg_v(arg)
            )
        };
        let text = match (verb, kind(arg)) {
            ('v', Kind::Float(f)) | ('f' | 'g' | 'e', Kind::Float(f)) if verb == 'v' || verb == 'g' => {
                if let Some(p) = prec {
                    format!("{f:.p$}")
                } else {
                    gofmt::float_v(f)
                }
            }
            ('v', _) => {
                if arg.is_none() || matches!(arg, Some(Value::Null)) {
                    "<nil>".into()
                } else {
                    arg_v(arg)
                }
            }
            ('s', Kind::Str(s)) => match prec {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            },
            ('s', Kind::Other) => arg_v(arg),
            ('q', Kind::Str(s)) => kubeadm_api::gofmt::quote(&s),
            ('d', Kind::Int(i)) => {
                if plus && i >= 0 {
                    format!("+{i}")
                } else if space && i >= 0 {
                    format!(" {i}")
                } else {
                    i.to_string()
                }
            }
            ('x', Kind::Int(i)) => format!("{i:x}"),
            ('X', Kind::Int(i)) => format!("{i:X}"),
            ('x', Kind::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
            ('f' | 'F', Kind::Float(f)) => format!("{f:.*}", prec.unwrap_or(6)),
            ('e', Kind::Float(f)) => {
                let s = format!("{f:.*e}", prec.unwrap_or(6));
                match s.split_once('e') {
                    Some((m, e)) => {
                        let n: i32 = e.parse().unwrap_or(0);
                        format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
                    }
                    None => s,
                }
            }
            ('t', Kind::Bool(b)) => b.to_string(),
            ('s' | 'q' | 'd' | 'x' | 'X' | 'f' | 'F' | 'e' | 't', Kind::Nil) => format!("%!{verb}(<nil>)"),
            _ => bad(),
        };
        let numeric = matches!(verb, 'd' | 'f' | 'F' | 'e' | 'x' | 'X');
        let len = text.chars().count();
        match width {
            Some(w) if w > len => {
                let pad = w - len;
                if minus {
                    out.push_str(&text);
                    out.push_str(&" ".repeat(pad));
                } else if zero && numeric {
                    let (sign, digits) = match text.strip_prefix(['-', '+']) {
                        Some(d) => (&text[..1], d),
                        None => ("", text.as_str()),
                    };
                    out.push_str(sign);
                    out.push_str(&"0".repeat(pad));
                    out.push_str(digits);
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(&text);
                }
            }
            _ => out.push_str(&text),
        }
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|a| {
                format!(
                    "{}={}",
                    a.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                    arg_v(a)
                )
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}
