//! Go's value syntaxes as pflag accepts them: `strconv.ParseBool`, `ParseInt`/`ParseUint` with base
//! prefixes, `time.ParseDuration` and the CSV reading of string slices, with Go's error texts
//! (users see them verbatim in "invalid argument" errors).

/// `strconv.ParseBool`.
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            go_quote(s)
        )),
    }
}

pub(crate) use kubeadm_api::gofmt::quote as go_quote;

/// Digits of `s` in the base Go's `ParseInt(s, 0, _)` picks from its prefix.
fn split_base(s: &str, base0: bool) -> (u32, String) {
    if !base0 {
        return (10, s.to_string());
    }
    let lower = s.to_ascii_lowercase();
    let (base, rest) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r)
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r)
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    // Go allows underscores between digits only with a base prefix.
    let digits = if base0 && base != 10 {
        rest.replace('_', "")
    } else {
        rest.to_string()
    };
    (base, digits)
}

/// `strconv.ParseInt(s, base, bits)`, base 0 (prefix-driven) or 10.
pub(crate) fn parse_int(s: &str, base0: bool, bits: u32) -> Result<i64, String> {
    let fail = |what: &str| format!("strconv.ParseInt: parsing {}: {what}", go_quote(s));
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (base, digits) = split_base(body, base0);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return Err(fail("invalid syntax"));
    }
    let magnitude = u128::from_str_radix(&digits, base).map_err(|_| fail("value out of range"))?;
    let limit = 1u128 << (bits - 1);
    if (!neg && magnitude >= limit) || (neg && magnitude > limit) {
        return Err(fail("value out of range"));
    }
    let v = magnitude as i128;
    Ok((if neg { -v } else { v }) as i64)
}

/// `strconv.ParseUint(s, 0, 64)`.
pub(crate) fn parse_uint(s: &str) -> Result<u64, String> {
    let fail = |what: &str| format!("strconv.ParseUint: parsing {}: {what}", go_quote(s));
    let (base, digits) = split_base(s, true);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return Err(fail("invalid syntax"));
    }
    u64::from_str_radix(&digits, base).map_err(|_| fail("value out of range"))
}

/// `time.ParseDuration`, in nanoseconds.
pub(crate) fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(c) = s.chars().next()
        && (c == '-' || c == '+')
    {
        neg = c == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        let int_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let int_part = &s[..int_end];
        s = &s[int_end..];
        let mut frac_part = "";
        if let Some(rest) = s.strip_prefix('.') {
            let fe = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            frac_part = &rest[..fe];
            s = &rest[fe..];
            if int_part.is_empty() && frac_part.is_empty() {
                return Err(invalid());
            }
        } else if int_part.is_empty() {
            return Err(invalid());
        }
        let unit_end = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        s = &s[unit_end..];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {}", go_quote(orig)));
        }
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit),
                    go_quote(orig)
                ));
            }
        };
        let number: f64 = format!(
            "{}.{}0",
            if int_part.is_empty() { "0" } else { int_part },
            frac_part
        )
        .parse()
        .map_err(|_| invalid())?;
        total += number * scale;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
    }
    Ok(if neg { -(total as i64) } else { total as i64 })
}

/// pflag's reading of a string-slice value: the first record of Go's `encoding/csv` reader (comma
/// separated, quotes allowed, strict quoting), "" being no items. As Go's reader: positions count
/// bytes from 1, `\r\n` reads as `\n`, blank lines before the record are skipped (nothing but blank
/// lines is `EOF`), a quoted field may span lines and the record ends with its first line break
/// outside quotes (what follows is not read).
pub(crate) fn parse_csv(s: &str) -> Result<Vec<String>, String> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = CsvLines {
        rest: s.as_bytes(),
        number: 0,
    };
    let mut line = loop {
        match reader.next_line() {
            None => return Err("EOF".to_string()),
            Some(l) if l == b"\n" => continue,
            Some(l) => break l,
        }
    };
    let record_line = reader.number;
    let error = |line: usize, column: usize, what: &str| {
        if line == record_line {
            format!("parse error on line {line}, column {column}: {what}")
        } else {
            format!("record on line {record_line}; parse error on line {line}, column {column}: {what}")
        }
    };
    const BARE: &str = "bare \" in non-quoted-field";
    const QUOTE: &str = "extraneous or missing \" in quoted-field";
    let mut fields: Vec<Vec<u8>> = Vec::new();
    let (mut at_line, mut column) = (record_line, 1usize);
    loop {
        if line.first() != Some(&b'"') {
            let comma = line.iter().position(|&b| b == b',');
            let field = match comma {
                Some(i) => &line[..i],
                None => line.strip_suffix(b"\n").unwrap_or(&line),
            };
            if let Some(j) = field.iter().position(|&b| b == b'"') {
                return Err(error(reader.number, column + j, BARE));
            }
            fields.push(field.to_vec());
            match comma {
                Some(i) => {
                    line = line[i + 1..].to_vec();
                    column += i + 1;
                }
                None => break,
            }
            continue;
        }
        // A quoted field, maybe over several lines.
        let mut field = Vec::new();
        line.remove(0);
        column += 1;
        loop {
            if let Some(i) = line.iter().position(|&b| b == b'"') {
                field.extend_from_slice(&line[..i]);
                line.drain(..=i);
                column += i + 1;
                match line.first() {
                    Some(b'"') => {
                        field.push(b'"');
                        line.remove(0);
                        column += 1;
                    }
                    Some(b',') => {
                        line.remove(0);
                        column += 1;
                        fields.push(field);
                        break;
                    }
                    None | Some(b'\n') if line.len() <= 1 => {
                        fields.push(field);
                        return Ok(strings(fields));
                    }
                    _ => return Err(error(reader.number, column - 1, QUOTE)),
                }
            } else if !line.is_empty() {
                field.extend_from_slice(&line);
                column += line.len();
                line = reader.next_line().unwrap_or_default();
                if !line.is_empty() {
                    at_line += 1;
                    column = 1;
                }
            } else {
                return Err(error(at_line, column, QUOTE));
            }
        }
    }
    Ok(strings(fields))
}

fn strings(fields: Vec<Vec<u8>>) -> Vec<String> {
    fields
        .into_iter()
        .map(|f| String::from_utf8_lossy(&f).into_owned())
        .collect()
}

/// Go's `encoding/csv` line reading: each line with its `\n`, `\r\n` read as `\n`, a `\r` ending
/// the input dropped; the line number counts every read.
struct CsvLines<'a> {
    rest: &'a [u8],
    number: usize,
}

impl CsvLines<'_> {
    fn next_line(&mut self) -> Option<Vec<u8>> {
        self.number += 1;
        if self.rest.is_empty() {
            return None;
        }
        let end = self
            .rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.rest.len(), |i| i + 1);
        let mut line = self.rest[..end].to_vec();
        self.rest = &self.rest[end..];
        if self.rest.is_empty() && line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.ends_with(b"\r\n") {
            line.remove(line.len() - 2);
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_go() {
        assert_eq!(parse_duration("24h0m0s"), Ok(86_400_000_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("-2m"), Ok(-120_000_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(
            parse_duration("5x"),
            Err(r#"time: unknown unit "x" in duration "5x""#.to_string())
        );
        assert_eq!(
            parse_duration("5"),
            Err(r#"time: missing unit in duration "5""#.to_string())
        );
        assert_eq!(
            parse_duration("abc"),
            Err(r#"time: invalid duration "abc""#.to_string())
        );
    }

    #[test]
    fn ints_follow_go() {
        assert_eq!(parse_int("0x10", true, 32), Ok(16));
        assert_eq!(parse_int("010", true, 32), Ok(8));
        assert_eq!(parse_int("-5", false, 32), Ok(-5));
        assert!(
            parse_int("2147483648", true, 32)
                .expect_err("out of range")
                .ends_with("value out of range")
        );
        assert_eq!(
            parse_int("abc", false, 32),
            Err(r#"strconv.ParseInt: parsing "abc": invalid syntax"#.to_string())
        );
    }

    #[test]
    fn csv_follows_encoding_csv() {
        assert_eq!(parse_csv("a,b"), Ok(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(
            parse_csv(r#""a,b",c"#),
            Ok(vec!["a,b".to_string(), "c".to_string()])
        );
        assert_eq!(parse_csv("a,"), Ok(vec!["a".to_string(), String::new()]));
        assert_eq!(parse_csv(""), Ok(vec![]));
        // What Go's reader says (go1.20 and later), checked against upstream's flag errors.
        assert_eq!(parse_csv("a\nb"), Ok(vec!["a".to_string()]));
        assert_eq!(parse_csv("\n\na,b"), Ok(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(parse_csv("\n"), Err("EOF".to_string()));
        assert_eq!(
            parse_csv("\"a\nb\",c"),
            Ok(vec!["a\nb".to_string(), "c".to_string()])
        );
        assert_eq!(
            parse_csv("\"abc"),
            Err("parse error on line 1, column 5: extraneous or missing \" in quoted-field".to_string())
        );
        assert_eq!(
            parse_csv("é,\"a\"b"),
            Err("parse error on line 1, column 6: extraneous or missing \" in quoted-field".to_string())
        );
        assert_eq!(
            parse_csv("\"x\ny\"z"),
            Err(
                "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
                    .to_string()
            )
        );
        assert_eq!(
            parse_csv("ab,c\"d"),
            Err("parse error on line 1, column 5: bare \" in non-quoted-field".to_string())
        );
    }
}
