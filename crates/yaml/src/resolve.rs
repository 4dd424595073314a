//! YAML 1.1 resolution of plain scalars, as `gopkg.in/yaml.v2` does it.
//!
//! Both directions need it: the reader turns plain scalars into JSON values with it, and the writer
//! quotes every string that would read back as something other than a string. The rules follow
//! yaml.v2's `resolve()`: a fixed table of words (`yes`, `on`, `~`, `.inf`, …), then Go's
//! `strconv` number syntax (after dropping `_`), then the timestamp layouts yaml.v2 recognises.

/// What a plain scalar means under yaml.v2's YAML 1.1 rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Resolved {
    /// `~`, `null`, empty.
    Null,
    /// `true`, `yes`, `on`, `y`, … and their negatives.
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// An integer that only fits in `u64`.
    Uint(u64),
    /// A float (including `.inf` and `.nan`).
    Float(f64),
    /// A date or date-time; yaml.v2 still reads it into a string when the target is untyped.
    Timestamp,
    /// Anything else: the scalar is a string.
    Str,
}

/// Resolves a plain scalar.
pub(crate) fn resolve_plain(s: &str) -> Resolved {
    let Some(&first) = s.as_bytes().first() else {
        return Resolved::Null;
    };
    // yaml.v2 only looks further when the first byte hints at a non-string: a sign, a digit, one
    // of the letters starting a bool/null word, `~` or `.`.
    let hint = match first {
        b'+' | b'-' => b'S',
        b'0'..=b'9' => b'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => b'M',
        b'.' => b'.',
        _ => return Resolved::Str,
    };
    if let Some(r) = word(s) {
        return r;
    }
    match hint {
        b'.' => match go_parse_float(s) {
            Some(f) => Resolved::Float(f),
            None => Resolved::Str,
        },
        b'D' | b'S' => number(s),
        _ => Resolved::Str,
    }
}

/// The fixed words of yaml.v2's resolve table.
fn word(s: &str) -> Option<Resolved> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// Scalars starting with a digit or a sign: timestamp, then int, uint, float, binary.
fn number(s: &str) -> Resolved {
    if is_timestamp(s) {
        return Resolved::Timestamp;
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(r) = go_parse_int(&plain) {
        return r;
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Resolved::Uint(u);
    }
    if is_yaml_style_float(&plain)
        && let Some(f) = finite(plain.parse::<f64>().ok())
    {
        return Resolved::Float(f);
    }
    // yaml.v2 retries `0b…` and `-0b…` by hand; Go's base-0 parsing above already covers every
    // case it would accept, except none, so nothing is left to do here.
    Resolved::Str
}

fn finite(f: Option<f64>) -> Option<f64> {
    f.filter(|f| f.is_finite())
}

/// `strconv.ParseInt(s, 0, 64)`, reporting whether the value needed `u64` is left to the caller.
fn go_parse_int(s: &str) -> Option<Resolved> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mag = go_parse_uint(digits)?;
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            Some(Resolved::Int((mag as i64).wrapping_neg()))
        } else {
            None
        }
    } else if mag <= i64::MAX as u64 {
        Some(Resolved::Int(mag as i64))
    } else {
        None
    }
}

/// `strconv.ParseUint(s, 0, 64)` (underscores already removed): `0x`, `0o`, `0b` prefixes and a
/// leading `0` for octal.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let (radix, digits) = if b[0] == b'0' {
        if b.len() >= 3 {
            match b[1] {
                b'x' | b'X' => (16, &s[2..]),
                b'o' | b'O' => (8, &s[2..]),
                b'b' | b'B' => (2, &s[2..]),
                _ => (8, &s[1..]),
            }
        } else {
            (8, &s[1..])
        }
    } else {
        (10, s)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// yaml.v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` for a decimal literal that may contain `_` between digits
/// (Go syntax); `None` when malformed or out of range.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    // Underscores are only allowed between two digits.
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i > 0 && b[i - 1].is_ascii_digit();
            let after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !before || !after {
                return None;
            }
        }
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if !is_yaml_style_float(&plain) {
        return None;
    }
    finite(plain.parse::<f64>().ok())
}

/// yaml.v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`. Such strings
/// are quoted on output because YAML 1.1 readers take them as sexagesimal numbers.
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // `[0-5]?[0-9]`: one digit, or two digits the first of which is 0-5.
        match (b.get(i), b.get(i + 1)) {
            (Some(d1 @ b'0'..=b'5'), Some(d2)) if d2.is_ascii_digit() => {
                let _ = d1;
                i += 2;
            }
            (Some(d), _) if d.is_ascii_digit() => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// Whether `s` parses with one of yaml.v2's timestamp layouts (Go `time.Parse`):
/// `2006-1-2T15:4:5.999999999Z07:00`, the same with `t`, `2006-1-2 15:4:5.999999999`, `2006-1-2`.
pub(crate) fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let year: u32 = b[..4].iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    let mut i = 5;
    let Some(month) = go_getnum(b, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = go_getnum(b, &mut i) else {
        return false;
    };
    if day < 1 || day > days_in(month, year) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zone_required = match b[i] {
        b'T' | b't' => {
            i += 1;
            true
        }
        b' ' => {
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
            false
        }
        _ => return false,
    };
    let field = |i: &mut usize, max: u32, sep: Option<u8>| -> bool {
        match go_getnum(b, i) {
            Some(n) if n <= max => match sep {
                Some(c) if b.get(*i) == Some(&c) => {
                    *i += 1;
                    true
                }
                Some(_) => false,
                None => true,
            },
            _ => false,
        }
    };
    if !field(&mut i, 23, Some(b':')) || !field(&mut i, 59, Some(b':')) || !field(&mut i, 59, None) {
        return false;
    }
    // Optional fraction: a period or comma followed by at least one digit.
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if !zone_required {
        return i == b.len();
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let z = &b[i + 1..];
            z.len() == 5
                && z[2] == b':'
                && z[..2].iter().all(u8::is_ascii_digit)
                && z[3..].iter().all(u8::is_ascii_digit)
                && u32::from(z[0] - b'0') * 10 + u32::from(z[1] - b'0') <= 24
                && u32::from(z[3] - b'0') * 10 + u32::from(z[4] - b'0') <= 60
        }
        _ => false,
    }
}

/// Go `time` package's `getnum(s, false)`: one or two digits.
fn go_getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    let d1 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    match b.get(*i) {
        Some(d2) if d2.is_ascii_digit() => {
            *i += 1;
            Some(u32::from(d1 - b'0') * 10 + u32::from(d2 - b'0'))
        }
        _ => Some(u32::from(d1 - b'0')),
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}
