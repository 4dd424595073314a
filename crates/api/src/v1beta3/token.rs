//! Bootstrap tokens (`bootstraptoken/v1`), embedded in `InitConfiguration.bootstrapTokens`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::duration::Duration;
use crate::timestamp::Time;

/// A bootstrap token as configured: the token itself and how it may be used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BootstrapToken {
    /// `abcdef.0123456789abcdef`; `null` on the wire when unset (no `omitempty` upstream).
    pub token: Option<BootstrapTokenString>,
    /// Human-readable description.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Lifetime from creation; ignored when `expires` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Duration>,
    /// Absolute expiry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<Time>,
    /// What the token may be used for (`signing`, `authentication`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub usages: Vec<String>,
    /// Extra groups the token authenticates as.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// The `id.secret` pair of a bootstrap token.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BootstrapTokenString {
    /// Six characters of `[a-z0-9]`, public.
    pub id: String,
    /// Sixteen characters of `[a-z0-9]`, secret.
    pub secret: String,
}

/// Upstream's `bootstrapapi.BootstrapTokenPattern`, quoted in its error message.
pub(crate) const BOOTSTRAP_TOKEN_PATTERN: &str = r"\A([a-z0-9]{6})\.([a-z0-9]{16})\z";

/// A token string that is not `id.secret` of the right alphabet and lengths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the bootstrap token {} was not of the form {}",
    crate::gofmt::quote(token),
    crate::gofmt::quote(BOOTSTRAP_TOKEN_PATTERN)
)]
pub struct BootstrapTokenError {
    /// The rejected text.
    pub token: String,
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

impl BootstrapTokenString {
    /// Splits and checks `id.secret`.
    pub fn parse(token: &str) -> Result<Self, BootstrapTokenError> {
        let err = || BootstrapTokenError {
            token: token.to_string(),
        };
        let (id, secret) = token.split_once('.').ok_or_else(err)?;
        if id.len() != 6
            || secret.len() != 16
            || !id.chars().all(is_token_char)
            || !secret.chars().all(is_token_char)
        {
            return Err(err());
        }
        Ok(BootstrapTokenString {
            id: id.to_string(),
            secret: secret.to_string(),
        })
    }
}

impl BootstrapTokenString {
    /// A fresh token from a source of random bytes, as upstream's `GenerateBootstrapToken`: each
    /// of the 22 characters uniform over `[a-z0-9]` (bytes >= 252 are drawn again to avoid bias).
    pub fn generate(mut random_byte: impl FnMut() -> u8) -> Self {
        const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut pick = |n: usize| -> String {
            (0..n)
                .map(|_| {
                    loop {
                        let b = random_byte();
                        if b < 252 {
                            break char::from(ALPHABET[usize::from(b % 36)]);
                        }
                    }
                })
                .collect()
        };
        let id = pick(6);
        let secret = pick(16);
        BootstrapTokenString { id, secret }
    }
}

impl fmt::Display for BootstrapTokenString {
    /// `id.secret`, or nothing when either half is empty (as upstream's `String()`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.id.is_empty() || self.secret.is_empty() {
            return Ok(());
        }
        write!(f, "{}.{}", self.id, self.secret)
    }
}

impl fmt::Debug for BootstrapTokenString {
    /// Never prints the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BootstrapTokenString({}.<redacted>)", self.id)
    }
}

impl Serialize for BootstrapTokenString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BootstrapTokenString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Upstream takes the value's JSON text whatever its type (a number, `true`, an object) and
        // strips every double quote before matching, so a string's escapes stay in.
        let value = serde_json::Value::deserialize(deserializer)?;
        let json = match &value {
            serde_json::Value::Number(n) if n.is_f64() => go_json_float(n.as_f64().unwrap_or_default()),
            v => serde_json::to_string(v).map_err(serde::de::Error::custom)?,
        };
        let json = json
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029");
        BootstrapTokenString::parse(&json.replace('"', "")).map_err(serde::de::Error::custom)
    }
}

/// A float as Go's encoding/json writes it: plain decimals from 1e-6 to 1e21, else an exponent
/// (`1e+21`, `1e-7`).
fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    let e = format!("{f:e}");
    match e.split_once('e') {
        Some((m, exp)) if !exp.starts_with('-') => format!("{m}e+{exp}"),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_valid() {
        let mut n = 0u8;
        let t = BootstrapTokenString::generate(|| {
            n = n.wrapping_add(37);
            n
        });
        assert!(BootstrapTokenString::parse(&t.to_string()).is_ok(), "{t}");
    }

    #[test]
    fn parses_tokens() {
        let ok = BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("valid");
        assert_eq!(ok.to_string(), "abcdef.0123456789abcdef");
        for bad in [
            "",
            "abcdef",
            "abcdef.0123456789abcde",
            "ABCDEF.0123456789abcdef",
            "abcdef:0123456789abcdef",
            "abcdefg.0123456789abcdef",
        ] {
            let err = BootstrapTokenString::parse(bad).expect_err(bad);
            // Upstream's message, as kubeadm prints it for `token: abcdef`.
            assert_eq!(
                err.to_string(),
                format!(
                    "the bootstrap token \"{bad}\" was not of the form \"\\\\A([a-z0-9]{{6}})\\\\.([a-z0-9]{{16}})\\\\z\""
                )
            );
        }
    }
}
