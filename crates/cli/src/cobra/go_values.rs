//! Go's value syntaxes as pflag accepts them: `strconv.ParseBool`, `ParseInt`/`ParseUint` with base
//! prefixes, `time.ParseDuration` and the CSV reading of string slices, with Go's error texts
//! (users see them verbatim in "invalid argument" errors).

/// Why a text is not a value of a Go type, in the words of the Go function pflag reads it with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ValueError {
    /// strconv's `*NumError`: `strconv.ParseInt: parsing "x": invalid syntax`.
    #[error("strconv.{func}: parsing {}: {reason}", go_quote(.text))]
    Strconv {
        /// The function (`ParseBool`, `ParseInt`, `ParseUint`).
        func: &'static str,
        /// The text.
        text: String,
        /// `invalid syntax` or `value out of range`.
        reason: &'static str,
    },
    /// `time.ParseDuration` cannot read the text.
    #[error("time: invalid duration {}", go_quote(.0))]
    InvalidDuration(String),
    /// A duration's number without a unit.
    #[error("time: missing unit in duration {}", go_quote(.0))]
    MissingUnit(String),
    /// A duration's unit Go does not know.
    #[error("time: unknown unit {} in duration {}", go_quote(.unit), go_quote(.duration))]
    UnknownUnit {
        /// The unit.
        unit: String,
        /// The whole text.
        duration: String,
    },
    /// `encoding/csv` found no record (nothing but line breaks).
    #[error("EOF")]
    CsvEof,
    /// `encoding/csv`'s `*ParseError` (positions count bytes from 1).
    #[error("{}parse error on line {line}, column {column}: {what}", csv_record_prefix(*.record_line, *.line))]
    Csv {
        /// The line the record starts on.
        record_line: usize,
        /// The line of the error.
        line: usize,
        /// The column of the error.
        column: usize,
        /// What is wrong (`bare " in non-quoted-field`).
        what: &'static str,
    },
}

/// `record on line N; ` when an error is not on the line its record starts on, as Go's
/// `csv.ParseError` words it.
fn csv_record_prefix(record_line: usize, line: usize) -> String {
    if line == record_line {
        String::new()
    } else {
        format!("record on line {record_line}; ")
    }
}

/// `strconv.ParseBool`.
pub(crate) fn parse_bool(s: &str) -> Result<bool, ValueError> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(ValueError::Strconv {
            func: "ParseBool",
            text: s.to_string(),
            reason: "invalid syntax",
        }),
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
pub(crate) fn parse_int(s: &str, base0: bool, bits: u32) -> Result<i64, ValueError> {
    let fail = |reason: &'static str| ValueError::Strconv {
        func: "ParseInt",
        text: s.to_string(),
        reason,
    };
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
pub(crate) fn parse_uint(s: &str) -> Result<u64, ValueError> {
    let fail = |reason: &'static str| ValueError::Strconv {
        func: "ParseUint",
        text: s.to_string(),
        reason,
    };
    let (base, digits) = split_base(s, true);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return Err(fail("invalid syntax"));
    }
    u64::from_str_radix(&digits, base).map_err(|_| fail("value out of range"))
}

/// `time.ParseDuration`, in nanoseconds.
pub(crate) fn parse_duration(orig: &str) -> Result<i64, ValueError> {
    let invalid = || ValueError::InvalidDuration(orig.to_string());
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
            return Err(ValueError::MissingUnit(orig.to_string()));
        }
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(ValueError::UnknownUnit {
                    unit: unit.to_string(),
                    duration: orig.to_string(),
                });
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
pub(crate) fn parse_csv(s: &str) -> Result<Vec<String>, ValueError> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = CsvLines {
        rest: s.as_bytes(),
        number: 0,
    };
    let mut line = loop {
        match reader.next_line() {
            None => return Err(ValueError::CsvEof),
            Some(l) if l == b"\n" => continue,
            Some(l) => break l,
        }
    };
    let record_line = reader.number;
    let error = |line: usize, column: usize, what: &'static str| ValueError::Csv {
        record_line,
        line,
        column,
        what,
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
        assert_eq!(
            parse_duration("24h0m0s").map_err(|e| e.to_string()),
            Ok(86_400_000_000_000)
        );
        assert_eq!(
            parse_duration("1.5s").map_err(|e| e.to_string()),
            Ok(1_500_000_000)
        );
        assert_eq!(
            parse_duration("-2m").map_err(|e| e.to_string()),
            Ok(-120_000_000_000)
        );
        assert_eq!(parse_duration("0").map_err(|e| e.to_string()), Ok(0));
        assert_eq!(
            parse_duration("5x").map_err(|e| e.to_string()),
            Err(r#"time: unknown unit "x" in duration "5x""#.to_string())
        );
        assert_eq!(
            parse_duration("5").map_err(|e| e.to_string()),
            Err(r#"time: missing unit in duration "5""#.to_string())
        );
        assert_eq!(
            parse_duration("abc").map_err(|e| e.to_string()),
            Err(r#"time: invalid duration "abc""#.to_string())
        );
    }

    #[test]
    fn ints_follow_go() {
        assert_eq!(parse_int("0x10", true, 32).map_err(|e| e.to_string()), Ok(16));
        assert_eq!(parse_int("010", true, 32).map_err(|e| e.to_string()), Ok(8));
        assert_eq!(parse_int("-5", false, 32).map_err(|e| e.to_string()), Ok(-5));
        assert!(
            parse_int("2147483648", true, 32)
                .map_err(|e| e.to_string())
                .expect_err("out of range")
                .ends_with("value out of range")
        );
        assert_eq!(
            parse_int("abc", false, 32).map_err(|e| e.to_string()),
            Err(r#"strconv.ParseInt: parsing "abc": invalid syntax"#.to_string())
        );
    }

    #[test]
    fn csv_follows_encoding_csv() {
        assert_eq!(
            parse_csv("a,b").map_err(|e| e.to_string()),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            parse_csv(r#""a,b",c"#).map_err(|e| e.to_string()),
            Ok(vec!["a,b".to_string(), "c".to_string()])
        );
        assert_eq!(
            parse_csv("a,").map_err(|e| e.to_string()),
            Ok(vec!["a".to_string(), String::new()])
        );
        assert_eq!(parse_csv("").map_err(|e| e.to_string()), Ok(vec![]));
        // What Go's reader says (go1.20 and later), checked against upstream's flag errors.
        assert_eq!(
            parse_csv("a\nb").map_err(|e| e.to_string()),
            Ok(vec!["a".to_string()])
        );
        assert_eq!(
            parse_csv("\n\na,b").map_err(|e| e.to_string()),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(parse_csv("\n").map_err(|e| e.to_string()), Err("EOF".to_string()));
        assert_eq!(
            parse_csv("\"a\nb\",c").map_err(|e| e.to_string()),
            Ok(vec!["a\nb".to_string(), "c".to_string()])
        );
        assert_eq!(
            parse_csv("\"abc").map_err(|e| e.to_string()),
            Err("parse error on line 1, column 5: extraneous or missing \" in quoted-field".to_string())
        );
        assert_eq!(
            parse_csv("é,\"a\"b").map_err(|e| e.to_string()),
            Err("parse error on line 1, column 6: extraneous or missing \" in quoted-field".to_string())
        );
        assert_eq!(
            parse_csv("\"x\ny\"z").map_err(|e| e.to_string()),
            Err(
                "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
                    .to_string()
            )
        );
        assert_eq!(
            parse_csv("ab,c\"d").map_err(|e| e.to_string()),
            Err("parse error on line 1, column 5: bare \" in non-quoted-field".to_string())
        );
    }
}
