//! Kubernetes version strings and labels: `v1.25.3`, `1.25.3`, `stable`, `stable-1.25`, `latest-1`,
//! `ci/latest`, … resolved to a concrete `vX.Y.Z` as upstream's `KubernetesReleaseVersion` does.
//!
//! Upstream fetches labels from the release bucket and, when that fails, falls back to its own
//! version. We do no I/O: the caller passes a fetcher (the offline one always fails, which gives
//! upstream's offline behaviour: every label resolves to v1.25.16, with the same two warnings).

use std::fmt;

/// The kubeadm (and client) version we re-implement.
pub const KUBEADM_VERSION: &str = "v1.25.16";
/// The git commit of the upstream release we re-implement, as `kubeadm version` reports it.
pub const KUBEADM_GIT_COMMIT: &str = "c5f43560a4f98f2af3743a59299fb79f07924373";
/// `CurrentKubernetesVersion`: what `config print` puts in `kubernetesVersion`.
pub const CURRENT_KUBERNETES_VERSION: &str = "1.25.0";
/// `MinimumControlPlaneVersion`.
pub const MINIMUM_CONTROL_PLANE_VERSION: (u64, u64, u64) = (1, 24, 0);

/// Go's `runtime.GOOS/GOARCH` for this build (`linux/amd64`).
pub fn go_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    };
    format!("{}/{arch}", std::env::consts::OS)
}

/// client-go's `DefaultKubernetesUserAgent` for a program started as `argv0`:
/// `kubeadm/v1.25.16 (linux/amd64) kubernetes/c5f4356`. The API server names the field manager of
/// every write after the part before the first `/`, so `managedFields` say `kubeadm` as upstream's do.
pub fn user_agent(argv0: &str) -> String {
    let command = std::path::Path::new(argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    format!(
        "{command}/{KUBEADM_VERSION} ({}) kubernetes/{}",
        go_platform(),
        &KUBEADM_GIT_COMMIT[..7]
    )
}

const RELEASE_BUCKET: &str = "https://dl.k8s.io";
const CI_BUCKET: &str = "https://storage.googleapis.com/k8s-release-dev";

/// Why a version could not be resolved; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Neither a version nor a label.
    #[error(
        "version {} doesn't match patterns for neither semantic version nor labels (stable, latest, ...)",
        crate::gofmt::quote(.0)
    )]
    NoMatch(String),
    /// Not `[(release|ci)/]label`.
    #[error("invalid version {}", crate::gofmt::quote(.0))]
    Invalid(String),
    /// Below the minimum control-plane version.
    #[error(
        "this version of kubeadm only supports deploying clusters with the control plane version >= 1.24.0. Current version: {0}"
    )]
    TooOld(String),
    /// Resolved to something that is not a semantic version (an empty pre-release, a number out
    /// of range…): the version and `ParseSemantic`'s error.
    #[error("couldn't parse Kubernetes version {}: {}", crate::gofmt::quote(.0), .1)]
    Unparsable(String, crate::semantic_version::SemanticVersionError),
}

/// A resolved version and what upstream logs on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedVersion {
    /// `vX.Y.Z[...]`.
    pub version: String,
    /// `ci/<version>` when a CI label was asked for.
    pub ci_version: Option<String>,
    /// Warnings upstream prints through klog.
    pub warnings: Vec<String>,
}

/// A semantic version `major.minor.patch[-pre][+build]`, as far as kubeadm compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Semver {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
    /// Pre-release, without the `-`.
    pub pre: String,
}

impl Semver {
    /// Parses `[v]X.Y.Z[-pre][+build]` as apimachinery's `ParseSemantic` does (leading zeros,
    /// an empty pre-release or build metadata and out-of-range numbers refused); see
    /// [`SemanticVersion::parse`](crate::semantic_version::SemanticVersion::parse) for its errors.
    pub fn parse(s: &str) -> Option<Semver> {
        let v = crate::semantic_version::SemanticVersion::parse(s).ok()?;
        Some(Semver {
            major: v.major(),
            minor: v.minor(),
            patch: v.patch(),
            pre: v.pre_release().to_string(),
        })
    }

    /// Is this below `(major, minor, patch)`? A pre-release sorts below its release.
    pub fn less_than(&self, other: (u64, u64, u64)) -> bool {
        let me = (self.major, self.minor, self.patch);
        me < other || (me == other && !self.pre.is_empty())
    }
}

impl fmt::Display for Semver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        Ok(())
    }
}

/// `^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$`, normalised to a `v` prefix.
fn normalized_build_version(v: &str) -> Option<String> {
    let s = v.strip_prefix('v').unwrap_or(v);
    let mut rest = s;
    for i in 0..3 {
        let mut n = rest.bytes().take_while(u8::is_ascii_digit).count();
        if i == 2 && rest.starts_with('0') {
            // The patch's `0` alternative matches, and the digits after it go to the suffix
            // (`v1.25.016` matches; semantic-version parsing refuses it later).
            n = n.min(1);
        }
        if n == 0 || (n > 1 && rest.starts_with('0')) {
            return None;
        }
        rest = &rest[n..];
        if i < 2 {
            rest = rest.strip_prefix('.')?;
        }
    }
    let suffix_ok = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'));
    if !suffix_ok {
        return None;
    }
    Some(if v.starts_with('v') {
        v.to_string()
    } else {
        format!("v{v}")
    })
}

/// `^((latest|stable)+(-[1-9](\.[1-9]([0-9])?)?)?)\z`.
fn is_release_label(label: &str) -> bool {
    let mut rest = label;
    let mut words = 0;
    while let Some(r) = rest
        .strip_prefix("latest")
        .or_else(|| rest.strip_prefix("stable"))
    {
        rest = r;
        words += 1;
    }
    if words == 0 {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    let Some(r) = rest.strip_prefix('-') else {
        return false;
    };
    let b = r.as_bytes();
    match b {
        [m] => (b'1'..=b'9').contains(m),
        [m, b'.', n] => (b'1'..=b'9').contains(m) && (b'1'..=b'9').contains(n),
        [m, b'.', n, d] => (b'1'..=b'9').contains(m) && (b'1'..=b'9').contains(n) && d.is_ascii_digit(),
        _ => false,
    }
}

/// `^((release|ci)/)?([-\w_\.+]+)$` → (bucket URL, label).
fn split_version(version: &str) -> Result<(String, String, bool), VersionError> {
    let (prefix, label) = match version.split_once('/') {
        Some((p, l)) if p == "release" || p == "ci" => (p, l),
        _ => ("", version),
    };
    let word_ok = !label.is_empty()
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'));
    if !word_ok {
        return Err(VersionError::Invalid(version.to_string()));
    }
    let ci = prefix == "ci";
    let bucket = if ci {
        format!("{CI_BUCKET}/ci")
    } else {
        format!("{RELEASE_BUCKET}/release")
    };
    Ok((bucket, label.to_string(), ci))
}

/// Is `version` a `ci/...` version?
pub fn is_ci_version(version: &str) -> bool {
    version.starts_with("ci/") && split_version(version).is_ok()
}

/// Resolves `version` (a version or label) to `vX.Y.Z`. `fetch(url)` returns the body of a
/// release marker file, or why not; pass [`offline`] to never touch the network.
pub fn resolve(
    version: &str,
    fetch: &dyn Fn(&str) -> Result<String, FetchError>,
) -> Result<ResolvedVersion, VersionError> {
    let mut warnings = Vec::new();
    let resolved = resolve_inner(version, fetch, &mut warnings, 0)?;
    let ci_version = is_ci_version(version).then(|| format!("ci/{resolved}"));
    let semver = crate::semantic_version::SemanticVersion::parse(&resolved)
        .map_err(|e| VersionError::Unparsable(resolved.clone(), e))?;
    // Upstream tolerates an older pre-release only for its own pre-release builds; ours is a release.
    let semver = Semver {
        major: semver.major(),
        minor: semver.minor(),
        patch: semver.patch(),
        pre: semver.pre_release().to_string(),
    };
    if semver.less_than(MINIMUM_CONTROL_PLANE_VERSION) {
        return Err(VersionError::TooOld(resolved));
    }
    Ok(ResolvedVersion {
        version: resolved,
        ci_version,
        warnings,
    })
}

/// Why a release marker file could not be fetched, as upstream words it: `unable to get URL
/// "https://dl.k8s.io/release/stable-1.txt": offline`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to get URL {url:?}: {reason}")]
pub struct FetchError {
    /// The marker file's URL.
    pub url: String,
    /// Why it could not be fetched.
    pub reason: String,
}

/// A fetcher for machines without network: always fails, as upstream does offline.
pub fn offline(url: &str) -> Result<String, FetchError> {
    Err(FetchError {
        url: url.to_string(),
        reason: "offline".to_string(),
    })
}

fn resolve_inner(
    version: &str,
    fetch: &dyn Fn(&str) -> Result<String, FetchError>,
    warnings: &mut Vec<String>,
    depth: u8,
) -> Result<String, VersionError> {
    if let Some(v) = normalized_build_version(version) {
        return Ok(v);
    }
    let (bucket, label, _) = split_version(version)?;
    if let Some(v) = normalized_build_version(&label) {
        return Ok(v);
    }
    if !is_release_label(&label) || depth > 4 {
        return Err(VersionError::NoMatch(version.to_string()));
    }
    let url = format!("{bucket}/{label}.txt");
    match fetch(&url) {
        Err(e) => {
            warnings.push(format!(
                "could not fetch a Kubernetes version from the internet: {e}"
            ));
            warnings.push(format!(
                "falling back to the local client version: {KUBEADM_VERSION}"
            ));
            resolve_inner(KUBEADM_VERSION, fetch, warnings, depth + 1)
        }
        Ok(body) => {
            let body = body.trim().to_string();
            // A remote version newer than this kubeadm's minor falls back to our own stable line.
            let next = match (Semver::parse(&body), Semver::parse(KUBEADM_VERSION)) {
                (Some(remote), Some(client))
                    if (client.major, client.minor) < (remote.major, remote.minor) =>
                {
                    format!("stable-{}.{}", client.major, client.minor)
                }
                _ => body,
            };
            resolve_inner(&next, fetch, warnings, depth + 1)
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn user_agent_is_client_gos() {
        // client-go's DefaultKubernetesUserAgent, as the upstream binary sends it on linux/amd64.
        let platform = go_platform();
        assert_eq!(
            user_agent("/usr/bin/kubeadm"),
            format!("kubeadm/v1.25.16 ({platform}) kubernetes/c5f4356")
        );
        assert_eq!(
            user_agent("./kubeadm-rs"),
            format!("kubeadm-rs/v1.25.16 ({platform}) kubernetes/c5f4356")
        );
        assert!(user_agent("").starts_with("unknown/v1.25.16 "));
    }
    use super::*;

    /// Expected values are what upstream v1.25.16 resolves offline (`config images list
    /// --kubernetes-version X` on a machine without network).
    #[test]
    fn resolves_offline_like_upstream() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("stable", Ok("v1.25.16")),
            ("stable-1", Ok("v1.25.16")),
            ("stable-1.24", Ok("v1.25.16")),
            ("stable-1.25", Ok("v1.25.16")),
            ("latest-1.25", Ok("v1.25.16")),
            ("latest", Ok("v1.25.16")),
            ("ci/latest", Ok("v1.25.16")),
            ("v1.25.3", Ok("v1.25.3")),
            ("1.25.3", Ok("v1.25.3")),
            ("v1.27.0", Ok("v1.27.0")),
            ("release/v1.25.2", Ok("v1.25.2")),
            (
                "v1.23.0",
                Err(
                    "this version of kubeadm only supports deploying clusters with the control plane version >= 1.24.0. Current version: v1.23.0",
                ),
            ),
            (
                "foo",
                Err(
                    "version \"foo\" doesn't match patterns for neither semantic version nor labels (stable, latest, ...)",
                ),
            ),
            ("a b", Err("invalid version \"a b\"")),
            (
                "v1.25",
                Err(
                    "version \"v1.25\" doesn't match patterns for neither semantic version nor labels (stable, latest, ...)",
                ),
            ),
        ];
        for (input, want) in cases {
            let got = resolve(input, &offline)
                .map(|r| r.version)
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map(str::to_string).map_err(str::to_string), "{input}");
        }
        let ci = resolve("ci/latest", &offline).expect("resolves");
        assert_eq!(ci.ci_version.as_deref(), Some("ci/v1.25.16"));
        assert_eq!(ci.warnings.len(), 2);
    }

    /// Versions that match kubeadm's release pattern but not `ParseSemantic`: upstream v1.25.16's
    /// messages (`config images list --config` with `kubernetesVersion` set to each).
    #[test]
    fn refuses_what_parse_semantic_refuses() {
        let cases: &[(&str, &str)] = &[
            (
                "v1.25.16-",
                "could not parse pre-release/metadata (-) in version \"v1.25.16-\"",
            ),
            (
                "v1.25.16+",
                "could not parse pre-release/metadata (+) in version \"v1.25.16+\"",
            ),
            (
                "v1.25.16-a.",
                "could not parse pre-release/metadata (-a.) in version \"v1.25.16-a.\"",
            ),
            (
                "v1.25.16-rc.1+",
                "could not parse pre-release/metadata (-rc.1+) in version \"v1.25.16-rc.1+\"",
            ),
            (
                "v1.25.16_",
                "could not parse pre-release/metadata (_) in version \"v1.25.16_\"",
            ),
            (
                "v1.25.16-01",
                "illegal zero-prefixed version component \"01\" in \"v1.25.16-01\"",
            ),
            (
                "v99999999999999999999.0.0",
                "illegal non-numeric version component \"99999999999999999999\" in \"v99999999999999999999.0.0\": strconv.ParseUint: parsing \"99999999999999999999\": value out of range",
            ),
        ];
        for (input, why) in cases {
            let got = resolve(input, &offline)
                .map(|r| r.version)
                .map_err(|e| e.to_string());
            assert_eq!(
                got,
                Err(format!("couldn't parse Kubernetes version \"{input}\": {why}")),
                "{input}"
            );
        }
        for ok in ["1.25.16+a.b", "v1.25.16-0a", "v1.25.16-rc.0+build.7"] {
            assert!(resolve(ok, &offline).is_ok(), "{ok}");
        }
    }

    #[test]
    fn remote_newer_than_client_falls_back_to_client_stable() {
        let fetch = |url: &str| -> Result<String, FetchError> {
            match url {
                "https://dl.k8s.io/release/stable.txt" => Ok("v1.28.1\n".into()),
                "https://dl.k8s.io/release/stable-1.25.txt" => Ok("v1.25.15".into()),
                _ => Err(FetchError {
                    url: url.into(),
                    reason: "not found".into(),
                }),
            }
        };
        assert_eq!(
            resolve("stable", &fetch).map(|r| r.version),
            Ok("v1.25.15".to_string())
        );
    }
}
