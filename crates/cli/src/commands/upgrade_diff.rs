//! `kubeadm upgrade diff [version]`: the unified diff between each control-plane static Pod
//! manifest on disk and the one kubeadm would write for the target version, as upstream's
//! `runDiff` prints it (go-difflib's format, see [`kubeadm_core::unified_diff`]).
//!
//! The configuration comes from `--config`, else from the cluster (`--kubeconfig`); the target
//! version is the configuration's, or the positional argument when one is given. Nothing is
//! written anywhere: neither the manifests nor the cluster's configuration.

use std::path::Path;

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_core::layout::Layout;
use kubeadm_core::manifests::{self, Component, ManifestHostFacts};
use kubeadm_core::unified_diff::{split_lines, unified_diff};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::{HostProbe, PathKind};
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::ClientError;
use kubeadm_host::fs::RealFs;
use kubeadm_host::host_probe::RealHostProbe;
use kubeadm_phases::reset::cluster::{FetchConfigError, fetch_init_config};

use crate::cobra::execute::Invocation;
use crate::commands::config_load::{config_error, log_warnings, read_config};
use crate::error::{CommandError, Output};
use crate::setup::reporter;

/// What go-difflib's `+++` header names the rendered manifest.
const NEW_MANIFEST_LABEL: &str = "new manifest";
/// The image repository kubeadm 1.25 moved away from; a configuration read from the cluster
/// that still names it is shown with the new one (upstream's `MutateImageRepository` without a
/// client: the cluster's copy is left alone).
const LEGACY_IMAGE_REPOSITORY: &str = "k8s.gcr.io";
const IMAGE_REPOSITORY: &str = "registry.k8s.io";

/// Why `upgrade diff` failed; the messages are upstream's.
#[derive(Debug, thiserror::Error)]
enum DiffError {
    /// A manifest flag was given as the empty string.
    #[error("empty manifest path")]
    EmptyPath,
    /// A manifest file does not exist.
    #[error("the manifest file {path:?} does not exist: stat {path}: {reason}")]
    Missing { path: String, reason: String },
    /// A manifest file could not be examined.
    #[error("error obtaining stats for manifest file {path:?}: stat {path}: {reason}")]
    Stat { path: String, reason: String },
    /// A manifest path names a directory.
    #[error("{0:?} is a directory")]
    Directory(String),
    /// A manifest file could not be read.
    #[error("open {path}: {reason}")]
    Read { path: String, reason: String },
    /// No API client could be made from the kubeconfig.
    #[error("couldn't create a Kubernetes client from file {path:?}: {reason}")]
    Client { path: String, reason: String },
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

impl From<DiffError> for CommandError {
    /// Bad input (an empty manifest path, a version that is not one, a wrong number of arguments)
    /// exits 3, as this project's rule says; upstream returns every one of these as a plain
    /// error and exits 1. A file that cannot be used, or a cluster that cannot be asked, exits 1.
    fn from(e: DiffError) -> Self {
        match e {
            DiffError::EmptyPath
            | DiffError::MissingVersion
            | DiffError::TooManyArguments
            | DiffError::Version(_) => CommandError::Validation(e.to_string()),
            _ => CommandError::Failed(e.to_string()),
        }
    }
}

/// `kubeadm upgrade diff [version]`.
pub(crate) fn run(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let paths = [
        (Component::ApiServer, f.string("api-server-manifest")),
        (
            Component::ControllerManager,
            f.string("controller-manager-manifest"),
        ),
        (Component::Scheduler, f.string("scheduler-manifest")),
    ];
    // Upstream's "preflight" for diff: every manifest must exist before anything else happens.
    for (_, path) in &paths {
        check_manifest_path(path)?;
    }
    let rep = reporter(inv);
    let mut cfg = load_config(inv, &rep, out)?;

    let version = target_version(&cfg.cluster.kubernetes_version, &inv.args)?;
    cfg.cluster.kubernetes_version = version;

    let host = manifest_host_facts(&cfg);
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
                &host,
            )
        })
        .collect();
    for w in pods.iter().flat_map(|p| &p.warnings) {
        rep.warn("manifests.rs", w);
    }
    let context = f.int("context-lines");
    for ((_, path), pod) in paths.iter().zip(&pods) {
        let existing = RealFs.read(Path::new(path)).map_err(|e| DiffError::Read {
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
    Ok(())
}

/// Upstream's `validateManifestsPath` for one path.
fn check_manifest_path(path: &str) -> Result<(), DiffError> {
    if path.is_empty() {
        return Err(DiffError::EmptyPath);
    }
    match RealHostProbe.path_kind(path) {
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

/// The configuration: from `--config`, else fetched from the cluster through `--kubeconfig`.
fn load_config(
    inv: &Invocation<'_>,
    rep: &dyn Reporter,
    out: &mut Output,
) -> Result<InitConfig, CommandError> {
    let host = crate::setup::host_facts::gather();
    let mut token = || BootstrapTokenString::generate(rand::random::<u8>);
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let config_path = inv.flags.string("config");
    if !config_path.is_empty() {
        let text = read_config(&config_path)?;
        let cfg = load_init_config(&config_path, &text, &mut inputs).map_err(|e| config_error(e, ""))?;
        log_warnings(rep, &cfg.warnings);
        return Ok(cfg);
    }

    let kubeconfig = inv.flags.string("kubeconfig");
    let client_error = |reason: String| DiffError::Client {
        path: kubeconfig.clone(),
        reason,
    };
    RealFs.read(Path::new(&kubeconfig)).map_err(|e| {
        client_error(format!(
            "failed to load admin kubeconfig: open {kubeconfig}: {}",
            kubeadm_api::gofmt::io_error(&e)
        ))
    })?;
    let cluster =
        kubeadm_host::cluster::KubeCluster::from_kubeconfig(Path::new(&kubeconfig)).map_err(|e| {
            client_error(match e {
                // Upstream's wording; the reason itself is the YAML parser's, not client-go's.
                ClientError::Kubeconfig { message, .. } => {
                    format!("failed to load admin kubeconfig: {message}")
                }
                other => other.to_string(),
            })
        })?;
    out.push_str("[upgrade/diff] Reading configuration from the cluster...\n");
    out.push_str(
        "[upgrade/diff] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n",
    );
    let mut warnings = Vec::new();
    let fetched = fetch_init_config(
        &cluster,
        &RealFs,
        &Layout::default().kubelet_conf(),
        &mut inputs,
        &mut warnings,
    );
    for w in &warnings {
        rep.warn("configset.go", w);
    }
    let mut cfg = fetched.map_err(DiffError::from)?;
    log_warnings(rep, &cfg.warnings);
    if cfg.cluster.image_repository == LEGACY_IMAGE_REPOSITORY {
        cfg.cluster.image_repository = IMAGE_REPOSITORY.to_string();
    }
    Ok(cfg)
}

/// The version to diff against: the configuration's, replaced by the positional argument when
/// exactly one is given (upstream ignores two or more), and checked to be a semantic version.
fn target_version(configured: &str, args: &[String]) -> Result<String, DiffError> {
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

/// What the API server, controller-manager and scheduler manifests depend on from this host.
fn manifest_host_facts(cfg: &InitConfig) -> ManifestHostFacts {
    crate::setup::manifest_host_facts(using_external_ca(Path::new(&cfg.cluster.certificates_dir)))
}

/// Upstream's `UsingExternalCA` as the controller-manager flags use it: a CA certificate that
/// loads, is a CA and is within its validity, and no CA key (the user manages the CA).
fn using_external_ca(cert_dir: &Path) -> bool {
    let Ok(pem) = RealFs.read(&cert_dir.join("ca.crt")) else {
        return false;
    };
    let pem = String::from_utf8_lossy(&pem);
    let Ok(cert) = kubeadm_core::pki::CertInfo::from_pem(&pem) else {
        return false;
    };
    let now = crate::setup::unix_now().max(0);
    if !cert.is_ca || now < cert.not_before || now > cert.not_after {
        return false;
    }
    RealHostProbe.path_kind(&cert_dir.join("ca.key").display().to_string()) == PathKind::Missing
}

/// apimachinery's `version.ParseSemantic` error for `s`, or `None` when it parses.
fn semantic_version_error(s: &str) -> Option<String> {
    kubeadm_core::upgrade::version::SemanticVersion::parse(s).err()
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
