//! `metav1.Duration`: a span of nanoseconds written as Go's `time.Duration.String()` (`24h0m0s`, `4m0s`,
//! `1.5s`, `300ms`) and read with Go's `time.ParseDuration` rules.
//!
//! Kubernetes config files carry durations as these strings, and `kubeadm config print` shows them the
//! same way, so both directions must agree with Go to the byte.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const NANOS_PER_MICRO: u64 = 1_000;
const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_SECOND: u64 = 1_000_000_000;
const NANOS_PER_MINUTE: u64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: u64 = 60 * NANOS_PER_MINUTE;

/// A signed span of time with nanosecond resolution, like Go's `time.Duration` (an `int64`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    nanos: i64,
}

/// Why a duration string could not be read; the message is Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not of the form `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`.
    #[error("time: invalid duration \"{0}\"")]
    Invalid(String),
    /// A number without a unit (other than a lone `0`).
    #[error("time: missing unit in duration \"{0}\"")]
    MissingUnit(String),
    /// A unit that Go does not know.
    #[error("time: unknown unit \"{unit}\" in duration \"{input}\"")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The whole input.
        input: String,
    },
}

impl Duration {
    /// Zero.
    pub const ZERO: Duration = Duration { nanos: 0 };

    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    /// A duration of whole seconds.
    pub const fn from_secs(secs: i64) -> Self {
        Duration {
            nanos: secs * NANOS_PER_SECOND as i64,
        }
    }

    /// A duration of whole minutes.
    pub const fn from_mins(mins: i64) -> Self {
        Self::from_secs(mins * 60)
    }

    /// A duration of whole hours.
    pub const fn from_hours(hours: i64) -> Self {
        Self::from_secs(hours * 3600)
    }

    /// The length in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// Reads a duration as Go's `time.ParseDuration` does.
    pub fn parse(input: &str) -> Result<Self, DurationError> {
        let invalid = || DurationError::Invalid(input.to_string());
        let mut s = input;
        let mut negative = false;
        if let Some(rest) = s.strip_prefix('-') {
            negative = true;
            s = rest;
        } else if let Some(rest) = s.strip_prefix('+') {
            s = rest;
        }
        if s == "0" {
            return Ok(Duration::ZERO);
        }
        if s.is_empty() {
            return Err(invalid());
        }
        // Go accumulates in a uint64 and rejects anything beyond 1<<63 (or 1<<63-1 when positive).
        let mut total: u64 = 0;
        while !s.is_empty() {
            let bytes = s.as_bytes();
            if !(bytes[0] == b'.' || bytes[0].is_ascii_digit()) {
                return Err(invalid());
            }
            let int_len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let int_part = &s[..int_len];
            s = &s[int_len..];
            let mut frac_part = "";
            if let Some(rest) = s.strip_prefix('.') {
                let frac_len = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
                frac_part = &rest[..frac_len];
                s = &rest[frac_len..];
            }
            if int_part.is_empty() && frac_part.is_empty() {
                return Err(invalid());
            }
            let unit_len = s
                .char_indices()
                .find(|(_, c)| *c == '.' || c.is_ascii_digit())
                .map_or(s.len(), |(i, _)| i);
            let unit = &s[..unit_len];
            s = &s[unit_len..];
            if unit.is_empty() {
                return Err(DurationError::MissingUnit(input.to_string()));
            }
            let scale = match unit {
                "ns" => 1,
                "us" | "\u{b5}s" | "\u{3bc}s" => NANOS_PER_MICRO,
                "ms" => NANOS_PER_MILLI,
                "s" => NANOS_PER_SECOND,
                "m" => NANOS_PER_MINUTE,
                "h" => NANOS_PER_HOUR,
                _ => {
                    return Err(DurationError::UnknownUnit {
                        unit: unit.to_string(),
                        input: input.to_string(),
                    });
                }
            };
            let mut v: u64 = 0;
            for d in int_part.bytes() {
                v = v
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')))
                    .filter(|v| *v <= 1 << 63)
                    .ok_or_else(invalid)?;
            }
            v = v
                .checked_mul(scale)
                .filter(|v| *v <= 1 << 63)
                .ok_or_else(invalid)?;
            // The fraction is scaled digit by digit, dropping digits that no longer fit, as Go does.
            let mut frac: u64 = 0;
            let mut frac_scale: f64 = 1.0;
            let mut overflow = false;
            for d in frac_part.bytes() {
                if overflow {
                    continue;
                }
                match frac
                    .checked_mul(10)
                    .and_then(|f| f.checked_add(u64::from(d - b'0')))
                {
                    Some(f) if f <= (1 << 63) => {
                        frac = f;
                        frac_scale *= 10.0;
                    }
                    _ => overflow = true,
                }
            }
            if frac > 0 {
                v = v
                    .checked_add((frac as f64 * (scale as f64 / frac_scale)) as u64)
                    .filter(|v| *v <= 1 << 63)
                    .ok_or_else(invalid)?;
            }
            total = total
                .checked_add(v)
                .filter(|t| *t <= 1 << 63)
                .ok_or_else(invalid)?;
        }
        if negative {
            Ok(Duration {
                nanos: (total as i64).wrapping_neg(),
            })
        } else if total > i64::MAX as u64 {
            Err(invalid())
        } else {
            Ok(Duration { nanos: total as i64 })
        }
    }
}

/// Writes `v / 10^prec` with the trailing zeros of the fraction (and a bare `.`) removed.
fn push_fraction(out: &mut String, v: u64, prec: u32) -> u64 {
    let div = 10u64.pow(prec);
    let frac = v % div;
    if frac != 0 {
        let digits = format!("{frac:0width$}", width = prec as usize);
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    v / div
}

impl fmt::Display for Duration {
    /// Formats as Go's `time.Duration.String()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.nanos < 0;
        let u = self.nanos.unsigned_abs();
        if u == 0 {
            return f.write_str("0s");
        }
        // Build the text back to front as Go does, but with whole-string pieces for clarity.
        let body = if u < NANOS_PER_SECOND {
            let mut frac = String::new();
            let (whole, unit) = if u < NANOS_PER_MICRO {
                (u, "ns")
            } else if u < NANOS_PER_MILLI {
                (push_fraction(&mut frac, u, 3), "\u{b5}s")
            } else {
                (push_fraction(&mut frac, u, 6), "ms")
            };
            format!("{whole}{frac}{unit}")
        } else {
            let mut frac = String::new();
            let secs_total = push_fraction(&mut frac, u, 9);
            let secs = secs_total % 60;
            let mins_total = secs_total / 60;
            let mut s = format!("{secs}{frac}s");
            if mins_total > 0 {
                let mins = mins_total % 60;
                let hours = mins_total / 60;
                s = format!("{mins}m{s}");
                if hours > 0 {
                    s = format!("{hours}h{s}");
                }
            }
            s
        };
        if neg {
            f.write_str("-")?;
        }
        f.write_str(&body)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Duration::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings are what Go's `time.Duration.String()` prints for these values.
    #[test]
    fn formats_like_go() {
        let cases: &[(i64, &str)] = &[
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1\u{b5}s"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            (4 * 60 * NANOS_PER_SECOND as i64 + 5_000_000_000, "4m5s"),
            (4 * 60 * NANOS_PER_SECOND as i64 + 5_001_000_000, "4m5.001s"),
            (
                5 * 3600 * NANOS_PER_SECOND as i64 + 6 * 60 * NANOS_PER_SECOND as i64 + 7_001_000_000,
                "5h6m7.001s",
            ),
            (8 * 60 * NANOS_PER_SECOND as i64 + 1, "8m0.000000001s"),
            (24 * 3600 * NANOS_PER_SECOND as i64, "24h0m0s"),
            (4 * 60 * NANOS_PER_SECOND as i64, "4m0s"),
            (i64::MAX, "2562047h47m16.854775807s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
            (-1, "-1ns"),
        ];
        for (nanos, want) in cases {
            assert_eq!(Duration::from_nanos(*nanos).to_string(), *want, "{nanos}");
        }
    }

    /// Cases from Go's `time` package tests for `ParseDuration`.
    #[test]
    fn parses_like_go() {
        let s = NANOS_PER_SECOND as i64;
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("5s", 5 * s),
            ("30s", 30 * s),
            ("1478s", 1478 * s),
            ("-5s", -5 * s),
            ("+5s", 5 * s),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5 * s),
            ("5.6s", 5 * s + 600 * 1_000_000),
            ("5.s", 5 * s),
            (".5s", s / 2),
            ("1.0s", s),
            ("1.00s", s),
            ("1.004s", s + 4 * 1_000_000),
            ("100.00100s", 100 * s + 1_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12\u{b5}s", 12_000),
            ("12\u{3bc}s", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14 * s),
            ("15m", 15 * 60 * s),
            ("16h", 16 * 3600 * s),
            ("3h30m", (3 * 3600 + 30 * 60) * s),
            ("10.5s4m", 4 * 60 * s + 10 * s + s / 2),
            ("-2m3.4s", -(2 * 60 * s + 3 * s + 400_000_000)),
            ("1h2m3s4ms5us6ns", 3600 * s + 2 * 60 * s + 3 * s + 4_005_006),
            ("39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * s + 425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 20 * 60 * s),
            ("9007199254740993ns", 9_007_199_254_740_993),
            ("9223372036854775807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("0.100000000000000000000h", 6 * 60 * s),
        ];
        for (input, want) in cases {
            assert_eq!(Duration::parse(input), Ok(Duration::from_nanos(*want)), "{input}");
        }
    }

    #[test]
    fn rejects_like_go() {
        let cases: &[(&str, &str)] = &[
            ("", "time: invalid duration \"\""),
            ("3", "time: missing unit in duration \"3\""),
            ("-", "time: invalid duration \"-\""),
            ("s", "time: invalid duration \"s\""),
            (".", "time: invalid duration \".\""),
            ("-.", "time: invalid duration \"-.\""),
            (".s", "time: invalid duration \".s\""),
            ("+.s", "time: invalid duration \"+.s\""),
            ("1d", "time: unknown unit \"d\" in duration \"1d\""),
            (
                "9223372036854775808ns",
                "time: invalid duration \"9223372036854775808ns\"",
            ),
            (
                "9223372036854775.808us",
                "time: invalid duration \"9223372036854775.808us\"",
            ),
        ];
        for (input, want) in cases {
            let err = Duration::parse(input).expect_err(input);
            assert_eq!(err.to_string(), *want);
        }
    }
}
