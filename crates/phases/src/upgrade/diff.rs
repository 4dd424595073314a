//! `kubeadm upgrade diff` (upstream's `cmd/upgrade/diff.go`): the control-plane manifests this
//! kubeadm would write for a version, diffed against the files on disk, after upstream's checks of
//! the manifest paths and the version.

use std::path::Path;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::manifests::{self, Component, ManifestHostFacts};
use kubeadm_core::unified_diff::{split_lines, unified_diff};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::{HostProbe, PathKind};
use kubeadm_effects::report::Reporter;

use crate::config_from_cluster::FetchConfigError;

/// What go-difflib's `+++` header names the rendered manifest.
const NEW_MANIFEST_LABEL: &str = "new manifest";
/// The image repository kubeadm 1.25 moved away from; a configuration read from the cluster
/// that still names it is shown with the new one (upstream's `MutateImageRepository` without a
/// client: the cluster's copy is left alone).
pub const LEGACY_IMAGE_REPOSITORY: &str = "k8s.gcr.io";
pub const IMAGE_REPOSITORY: &str = "registry.k8s.io";

/// Why `upgrade diff` failed; the messages are upstream's.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A manifest flag was given as the empty string.
    #[error("empty manifest path")]
    EmptyPath,
    /// A manifest file does not exist.
    #[error("the manifest file {path:?} does not exist: stat {path}: {reason}")]
    Missing {
        /// The flag's path.
        path: String,
        /// Why.
        reason: String,
    },
    /// A manifest file could not be examined.
    #[error("error obtaining stats for manifest file {path:?}: stat {path}: {reason}")]
    Stat {
        /// The flag's path.
        path: String,
        /// Why.
        reason: String,
    },
    /// A manifest path names a directory.
    #[error("{0:?} is a directory")]
    Directory(String),
    /// A manifest file could not be read.
    #[error("open {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// No API client could be made from the kubeconfig.
    #[error("couldn't create a Kubernetes client from file {path:?}: {reason}")]
    Client {
        /// The kubeconfig.
        path: String,
        /// Why.
        reason: String,
    },
    /// The configuration could not be fetched from the cluster.
    #[error(transparent)]
    Fetch(#[from] FetchConfigError),
    /// No version in the configuration and none given (cannot happen after defaulting, which
    /// always sets one; kept as upstream has it).
    #[error("missing one or more required arguments. Required arguments: [version]")]
    MissingVersion,
    /// No version in the configuration and more than one argument.
    #[error("too many arguments. Required arguments: [version]")]
    TooManyArguments,
    /// The target version is not a semantic version.
    #[error("{0}")]
    Version(String),
}

/// Upstream's `validateManifestsPath` for one path.
pub fn check_manifest_path(host: &dyn HostProbe, path: &str) -> Result<(), DiffError> {
    if path.is_empty() {
        return Err(DiffError::EmptyPath);
    }
    match host.path_kind(path) {
        PathKind::Dir => Err(DiffError::Directory(path.to_string())),
        PathKind::File => Ok(()),
        PathKind::Missing => Err(DiffError::Missing {
            path: path.to_string(),
            reason: "no such file or directory".to_string(),
        }),
        PathKind::Unknown(text) => Err(DiffError::Stat {
            path: path.to_string(),
            reason: text
                .strip_prefix(&format!("stat {path}: "))
                .unwrap_or(&text)
                .to_string(),
        }),
    }
}

/// The version to diff against: the configuration's, replaced by the positional argument when
/// exactly one is given (upstream ignores two or more), and checked to be a semantic version.
pub fn target_version(configured: &str, args: &[String]) -> Result<String, DiffError> {
    if configured.is_empty() && args.iter().filter(|a| !a.is_empty()).count() != 1 {
        return Err(if args.iter().filter(|a| !a.is_empty()).count() > 1 {
            DiffError::TooManyArguments
        } else {
            DiffError::MissingVersion
        });
    }
    let version = match args {
        [one] => one.clone(),
        _ => configured.to_string(),
    };
    semantic_version_error(&version).map_or(Ok(version), |e| Err(DiffError::Version(e)))
}

/// The unified diff of each manifest file against the manifest this kubeadm would write for
/// `cfg` (go-difflib's, `context` lines around each change), in the order given. The pods'
/// warnings go to `rep`.
pub fn manifest_diffs(
    cfg: &InitConfig,
    paths: &[(Component, String)],
    facts: &ManifestHostFacts,
    fs: &dyn Fs,
    context: i64,
    rep: &dyn Reporter,
) -> Result<String, DiffError> {
    // Upstream builds all three specs first (its map), then diffs them. It ranges over a Go map,
    // so its order varies from run to run; ours is the order the manifests are written in.
    let pods: Vec<_> = paths
        .iter()
        .map(|(component, _)| {
            manifests::control_plane_pod(
                *component,
                &cfg.cluster,
                &cfg.init.local_api_endpoint,
                &cfg.resolved,
                facts,
            )
        })
        .collect();
    for w in pods.iter().flat_map(|p| &p.warnings) {
        rep.warn("manifests.rs", w);
    }
    let mut out = String::new();
    for ((_, path), pod) in paths.iter().zip(&pods) {
        let existing = fs.read(Path::new(path)).map_err(|e| DiffError::Read {
            path: path.clone(),
            reason: kubeadm_api::gofmt::io_error(&e),
        })?;
        out.push_str(&unified_diff(
            &split_lines(&String::from_utf8_lossy(&existing)),
            &split_lines(&pod.to_yaml()),
            path,
            NEW_MANIFEST_LABEL,
            context,
        ));
    }
    Ok(out)
}

/// Upstream's `UsingExternalCA` as the controller-manager flags use it: a CA certificate that
/// loads, is a CA and is within its validity, and no CA key (the user manages the CA).
pub fn using_external_ca(fs: &dyn Fs, host: &dyn HostProbe, cert_dir: &Path, now: i64) -> bool {
    let Ok(pem) = fs.read(&cert_dir.join("ca.crt")) else {
        return false;
    };
    let pem = String::from_utf8_lossy(&pem);
    let Ok(cert) = kubeadm_core::pki::CertInfo::from_pem(&pem) else {
        return false;
    };
    let now = now.max(0);
    if !cert.is_ca || now < cert.not_before || now > cert.not_after {
        return false;
    }
    host.path_kind(&cert_dir.join("ca.key").display().to_string()) == PathKind::Missing
}

/// apimachinery's `version.ParseSemantic` error for `s`, or `None` when it parses.
fn semantic_version_error(s: &str) -> Option<String> {
    kubeadm_core::upgrade::version::SemanticVersion::parse(s)
        .err()
        .map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages from apimachinery v0.25.16's `ParseSemantic` (its `version_test.go` cases and
    /// upstream kubeadm's output for `upgrade diff <version>`).
    #[test]
    fn semantic_versions_are_checked_as_apimachinery_does() {
        for ok in [
            "v1.25.3",
            "1.25.3",
            " v1.25.3",
            "v1.26.0-alpha.1.23+abc",
            "v1.25.3+build.1",
            "1.2.3-0",
            "v1.25.3 ",
        ] {
            assert_eq!(semantic_version_error(ok), None, "{ok}");
        }
        for (bad, want) in [
            ("", r#"could not parse "" as version"#),
            ("foo", r#"could not parse "foo" as version"#),
            ("v1.25", r#"illegal version string "v1.25""#),
            ("1.2.3.4", r#"illegal version string "1.2.3.4""#),
            (
                "v1.025.3",
                r#"illegal zero-prefixed version component "025" in "v1.025.3""#,
            ),
            (
                "1.2.3-01",
                r#"illegal zero-prefixed version component "01" in "1.2.3-01""#,
            ),
            (
                "1.2.3_4",
                r#"could not parse pre-release/metadata (_4) in version "1.2.3_4""#,
            ),
            (
                "1.2.3.",
                r#"could not parse pre-release/metadata (.) in version "1.2.3.""#,
            ),
            (
                "1.2.99999999999999999999",
                r#"illegal non-numeric version component "99999999999999999999" in "1.2.99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range"#,
            ),
        ] {
            assert_eq!(semantic_version_error(bad).as_deref(), Some(want), "{bad:?}");
        }
    }

    #[test]
    fn the_argument_replaces_the_configured_version() {
        assert_eq!(target_version("v1.25.0", &[]).ok(), Some("v1.25.0".into()));
        assert_eq!(
            target_version("v1.25.0", &["v1.25.4".into()]).ok(),
            Some("v1.25.4".into())
        );
        // Two arguments: upstream keeps the configured version.
        assert_eq!(
            target_version("v1.25.0", &["a".into(), "b".into()]).ok(),
            Some("v1.25.0".into())
        );
    }
}
