//! Versions as upstream's `k8s.io/apimachinery/pkg/util/version` parses and orders them with
//! `ParseSemantic`: exactly three numeric components, an optional pre-release and build metadata,
//! semantic-version precedence. The error texts are Go's, since upgrade plan prints them.

use std::cmp::Ordering;
use std::fmt;

/// Why `version.ParseSemantic` refused a text, in its words (`text` is the whole text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SemanticVersionError {
    /// No numeric components where they must start.
    #[error("could not parse {} as version", crate::gofmt::quote(.0))]
    Unparsable(String),
    /// Not exactly three numeric components.
    #[error("illegal version string {}", crate::gofmt::quote(.0))]
    ComponentCount(String),
    /// A component (or a numeric pre-release identifier) with a leading zero.
    #[error(
        "illegal zero-prefixed version component {} in {}",
        crate::gofmt::quote(.component),
        crate::gofmt::quote(.text)
    )]
    ZeroPrefixed {
        /// The component.
        component: String,
        /// The text parsed.
        text: String,
    },
    /// A component too large for 64 bits.
    #[error(
        "illegal non-numeric version component {} in {}: strconv.ParseUint: parsing {}: value out of range",
        crate::gofmt::quote(.component),
        crate::gofmt::quote(.text),
        crate::gofmt::quote(.component)
    )]
    OutOfRange {
        /// The component.
        component: String,
        /// The text parsed.
        text: String,
    },
    /// A pre-release or build metadata that is not made of valid identifiers.
    #[error("could not parse pre-release/metadata ({extra}) in version {}", crate::gofmt::quote(.text))]
    Extra {
        /// What follows the numeric components.
        extra: String,
        /// The text parsed.
        text: String,
    },
}

/// A semantic version: `v?MAJOR.MINOR.PATCH[-PRE][+BUILD]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticVersion {
    components: [u64; 3],
    pre_release: String,
}

impl SemanticVersion {
    /// Upstream's `version.ParseSemantic`, with its error messages.
    pub fn parse(text: &str) -> Result<Self, SemanticVersionError> {
        // `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`: Go's `\s` is ASCII white space, `.` does not match a
        // newline and `$` is the end of the text.
        let trimmed = text.trim_start_matches(GO_SPACE);
        let rest = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let numbers_len = numbers_prefix(rest);
        if numbers_len == 0 || rest[numbers_len..].contains('\n') {
            return Err(SemanticVersionError::Unparsable(text.to_string()));
        }
        let (numbers, extra) = rest.split_at(numbers_len);
        let parts: Vec<&str> = numbers.split('.').collect();
        if parts.len() != 3 {
            return Err(SemanticVersionError::ComponentCount(text.to_string()));
        }
        let mut components = [0u64; 3];
        for (slot, part) in components.iter_mut().zip(&parts) {
            if part.starts_with('0') && *part != "0" {
                return Err(SemanticVersionError::ZeroPrefixed {
                    component: part.to_string(),
                    text: text.to_string(),
                });
            }
            // Only digits reach here, so the one way to fail is overflow.
            *slot = part.parse().map_err(|_| SemanticVersionError::OutOfRange {
                component: part.to_string(),
                text: text.to_string(),
            })?;
        }
        let pre_release = if extra.is_empty() {
            String::new()
        } else {
            parse_extra(extra).ok_or_else(|| SemanticVersionError::Extra {
                extra: extra.to_string(),
                text: text.to_string(),
            })?
        };
        for comp in pre_release.split('.') {
            if comp.parse::<u64>().is_ok() && comp.starts_with('0') && comp != "0" {
                return Err(SemanticVersionError::ZeroPrefixed {
                    component: comp.to_string(),
                    text: text.to_string(),
                });
            }
        }
        Ok(Self {
            components,
            pre_release,
        })
    }

    /// The major version.
    pub fn major(&self) -> u64 {
        self.components[0]
    }

    /// The minor version.
    pub fn minor(&self) -> u64 {
        self.components[1]
    }

    /// The patch version.
    pub fn patch(&self) -> u64 {
        self.components[2]
    }

    /// The pre-release, without its `-`; empty for a release.
    pub fn pre_release(&self) -> &str {
        &self.pre_release
    }

    /// Semantic-version precedence (build metadata ignored), as Go's `Version.Compare`.
    pub fn compare(&self, other: &Self) -> Ordering {
        self.components
            .cmp(&other.components)
            .then_with(|| compare_pre_releases(&self.pre_release, &other.pre_release))
    }

    /// `self < other`.
    pub fn less_than(&self, other: &Self) -> bool {
        self.compare(other) == Ordering::Less
    }

    /// `self >= other`.
    pub fn at_least(&self, other: &Self) -> bool {
        self.compare(other) != Ordering::Less
    }
}

impl fmt::Display for SemanticVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [major, minor, patch] = self.components;
        write!(f, "{major}.{minor}.{patch}")?;
        if !self.pre_release.is_empty() {
            write!(f, "-{}", self.pre_release)?;
        }
        Ok(())
    }
}

/// What Go's regexp `\s` matches.
const GO_SPACE: [char; 5] = [' ', '\t', '\n', '\r', '\x0c'];

/// The length of the leading `[0-9]+(\.[0-9]+)*` of `s`.
fn numbers_prefix(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut end = 0;
    let mut i = 0;
    loop {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return end;
        }
        end = i;
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
        } else {
            return end;
        }
    }
}

/// `^(?:-(ident(?:\.ident)*))?(?:\+(ident(?:\.ident)*))?\s*$` with `ident = [0-9A-Za-z-]+`:
/// the pre-release, or `None` when `extra` does not match.
fn parse_extra(extra: &str) -> Option<String> {
    let extra = extra.trim_end_matches(GO_SPACE);
    let (pre, build) = match extra.split_once('+') {
        Some((pre, build)) => (pre, Some(build)),
        None => (extra, None),
    };
    let idents = |s: &str| {
        s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let pre = if pre.is_empty() {
        ""
    } else {
        let p = pre.strip_prefix('-')?;
        if !idents(p) {
            return None;
        }
        p
    };
    if let Some(b) = build
        && !idents(b)
    {
        return None;
    }
    Some(pre.to_string())
}

fn compare_pre_releases(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let (ap, bp): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for (x, y) in ap.iter().zip(&bp) {
        let order = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(m), Ok(n)) => m.cmp(&n),
            _ => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    ap.len().cmp(&bp.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> SemanticVersion {
        SemanticVersion::parse(s).expect(s)
    }

    #[test]
    fn parse_errors_are_gos() {
        // Messages as upstream kubeadm printed them for `upgrade plan foo` and `upgrade plan v1.25`.
        assert_eq!(
            SemanticVersion::parse("foo").expect_err("must fail").to_string(),
            r#"could not parse "foo" as version"#
        );
        assert_eq!(
            SemanticVersion::parse("v1.25")
                .expect_err("must fail")
                .to_string(),
            r#"illegal version string "v1.25""#
        );
        assert_eq!(
            SemanticVersion::parse("v1.025.0")
                .expect_err("must fail")
                .to_string(),
            r#"illegal zero-prefixed version component "025" in "v1.025.0""#
        );
        assert_eq!(
            SemanticVersion::parse("v1.25.0_x")
                .expect_err("must fail")
                .to_string(),
            r#"could not parse pre-release/metadata (_x) in version "v1.25.0_x""#
        );
    }

    #[test]
    fn precedence_follows_semver() {
        // Ordered list from the semver spec, plus Kubernetes-style pre-releases.
        let ordered = [
            "v1.15.0-alpha.0",
            "v1.15.0-alpha.1",
            "v1.15.0-alpha.2",
            "v1.15.0-alpha.10",
            "v1.15.0-beta.1",
            "v1.15.0-rc.1",
            "v1.15.0",
            "v1.15.1",
            "v1.16.0-alpha.1",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]).less_than(&v(pair[1])), "{} < {}", pair[0], pair[1]);
            assert!(!v(pair[1]).less_than(&v(pair[0])));
        }
        assert_eq!(v("v1.15.0+abc").compare(&v("1.15.0")), Ordering::Equal);
        assert_eq!(v("v1.26.0-rc.1").pre_release(), "rc.1");
    }
}
