//! Versions as upstream's `k8s.io/apimachinery/pkg/util/version` parses and orders them with
//! `ParseSemantic`: exactly three numeric components, an optional pre-release and build metadata,
//! semantic-version precedence. The error texts are Go's, since upgrade plan prints them.

use std::cmp::Ordering;
use std::fmt;

/// A semantic version: `v?MAJOR.MINOR.PATCH[-PRE][+BUILD]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticVersion {
    components: [u64; 3],
    pre_release: String,
}

impl SemanticVersion {
    /// Upstream's `version.ParseSemantic`, with its error messages.
    pub fn parse(text: &str) -> Result<Self, String> {
        // `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`: Go's `\s` is ASCII white space, `.` does not match a
        // newline and `$` is the end of the text.
        let quoted = crate::gofmt::quote(text);
        let trimmed = text.trim_start_matches(GO_SPACE);
        let rest = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let numbers_len = numbers_prefix(rest);
        if numbers_len == 0 || rest[numbers_len..].contains('\n') {
            return Err(format!("could not parse {quoted} as version"));
        }
        let (numbers, extra) = rest.split_at(numbers_len);
        let parts: Vec<&str> = numbers.split('.').collect();
        if parts.len() != 3 {
            return Err(format!("illegal version string {quoted}"));
        }
        let mut components = [0u64; 3];
        for (slot, part) in components.iter_mut().zip(&parts) {
            if part.starts_with('0') && *part != "0" {
                return Err(format!(
                    "illegal zero-prefixed version component {} in {quoted}",
                    crate::gofmt::quote(part)
                ));
            }
            // Only digits reach here, so the one way to fail is overflow.
            *slot = part.parse().map_err(|_| {
                let part = crate::gofmt::quote(part);
                format!(
                    "illegal non-numeric version component {part} in {quoted}: strconv.ParseUint: parsing {part}: value out of range"
                )
            })?;
        }
        let pre_release = if extra.is_empty() {
            String::new()
        } else {
            parse_extra(extra).ok_or_else(|| {
                format!("could not parse pre-release/metadata ({extra}) in version {quoted}")
            })?
        };
        for comp in pre_release.split('.') {
            if comp.parse::<u64>().is_ok() && comp.starts_with('0') && comp != "0" {
                return Err(format!(
                    "illegal zero-prefixed version component {} in {quoted}",
                    crate::gofmt::quote(comp)
                ));
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
            SemanticVersion::parse("foo").expect_err("must fail"),
            r#"could not parse "foo" as version"#
        );
        assert_eq!(
            SemanticVersion::parse("v1.25").expect_err("must fail"),
            r#"illegal version string "v1.25""#
        );
        assert_eq!(
            SemanticVersion::parse("v1.025.0").expect_err("must fail"),
            r#"illegal zero-prefixed version component "025" in "v1.025.0""#
        );
        assert_eq!(
            SemanticVersion::parse("v1.25.0_x").expect_err("must fail"),
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
