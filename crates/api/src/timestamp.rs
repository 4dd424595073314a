//! `metav1.Time`: an instant written as RFC 3339 in UTC with whole seconds (`2026-11-30T06:00:00Z`),
//! as Go's `time.Time.UTC().Format(time.RFC3339)` writes it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant, at second precision on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(jiff::Timestamp);

impl Time {
    /// The instant `secs` seconds after the Unix epoch.
    pub fn from_unix_seconds(secs: i64) -> Option<Self> {
        jiff::Timestamp::from_second(secs).ok().map(Time)
    }

    /// Seconds since the Unix epoch (fractions dropped).
    pub fn unix_seconds(&self) -> i64 {
        self.0.as_second()
    }

    /// The instant in the host's time zone as `2006-01-02-15-04-05` (the names of upgrade's
    /// backup folders, from Go's `time.Now().Format`).
    pub fn local_dashed(&self) -> String {
        self.0
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d-%H-%M-%S")
            .to_string()
    }

    /// Reads RFC 3339 text (`2006-01-02T15:04:05Z07:00`, optional fraction).
    pub fn parse(s: &str) -> Result<Self, TimeParseError> {
        s.parse::<jiff::Timestamp>()
            .map(Time)
            .map_err(|e| TimeParseError {
                text: s.to_string(),
                reason: e.to_string(),
            })
    }
}

/// Why a text is not an RFC 3339 time: `parsing time "x" as RFC 3339: …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parsing time {text:?} as RFC 3339: {reason}")]
pub struct TimeParseError {
    /// The text.
    pub text: String,
    /// What the parser found wrong.
    pub reason: String,
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%SZ"))
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Time::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_utc_seconds() {
        let cases = [
            ("2026-11-30T06:00:00Z", "2026-11-30T06:00:00Z"),
            ("2026-11-30T08:00:00+02:00", "2026-11-30T06:00:00Z"),
            ("2026-11-30T06:00:00.999Z", "2026-11-30T06:00:00Z"),
        ];
        for (input, want) in cases {
            assert_eq!(Time::parse(input).map(|t| t.to_string()), Ok(want.to_string()));
        }
        assert!(Time::parse("yesterday").is_err());
    }
}
