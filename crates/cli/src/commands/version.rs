//! `kubeadm version`: the build information, printed as upstream v1.25.16 prints it.
//!
//! We report upstream's release identity (version, commit, build date) because scripts compare
//! `-o short` and `-o json`'s `gitVersion` against the Kubernetes release they expect. GoVersion and
//! Compiler are those of the official v1.25.16 release build ("go1.20.10", "gc"; see the `.go-version` of the v1.25.16 source tree): the fields are
//! part of the output format, and a value that Go tooling parses is the least surprising choice.

use std::fmt::Write as _;

/// The version fields, in upstream's `version.Info` order.
const FIELDS: &[(&str, &str, &str)] = &[
    ("Major", "major", "1"),
    ("Minor", "minor", "25"),
    ("GitVersion", "gitVersion", "v1.25.16"),
    ("GitCommit", "gitCommit", kubeadm_api::version::KUBEADM_GIT_COMMIT),
    ("GitTreeState", "gitTreeState", "clean"),
    ("BuildDate", "buildDate", "2023-11-15T22:15:33Z"),
    ("GoVersion", "goVersion", GO_VERSION),
    ("Compiler", "compiler", "gc"),
];

/// The Go version of the official release build.
pub(crate) const GO_VERSION: &str = "go1.20.10";

/// Beyond upstream: the line `kubeadm version` logs at `-v=1` and above (standard error, klog's
/// format) that tells this kubeadm from upstream's, whose output it otherwise keeps byte for byte
/// (tools parse it). The version is the package's: `<Kubernetes release>+rs.<kubeadm-rs version>`.
pub(crate) fn identity() -> String {
    format!(
        "[version] kubeadm-rs {}: a re-implementation of kubeadm {} (see kubeadm-rs(7))",
        env!("CARGO_PKG_VERSION"),
        kubeadm_api::version::KUBEADM_VERSION
    )
}

/// The error for an unknown `-o` value.
#[derive(Debug, thiserror::Error)]
#[error("invalid output format: {0}")]
pub(crate) struct InvalidOutput(String);

/// The text `kubeadm version -o <output>` prints.
pub(crate) fn render(output: &str) -> Result<String, InvalidOutput> {
    let platform = kubeadm_api::version::go_platform();
    let fields: Vec<(&str, &str, &str)> = FIELDS
        .iter()
        .copied()
        .chain(std::iter::once(("Platform", "platform", platform.as_str())))
        .collect();
    let mut out = String::new();
    match output {
        "" => {
            let body: Vec<String> = fields.iter().map(|(go, _, v)| format!("{go}:{v:?}")).collect();
            let _ = writeln!(out, "kubeadm version: &version.Info{{{}}}", body.join(", "));
        }
        "short" => {
            let _ = writeln!(out, "v1.25.16");
        }
        "json" => {
            out.push_str("{\n  \"clientVersion\": {\n");
            let body: Vec<String> = fields
                .iter()
                .map(|(_, key, v)| {
                    format!(
                        "    {}: {}",
                        serde_json::Value::from(*key),
                        serde_json::Value::from(*v)
                    )
                })
                .collect();
            out.push_str(&body.join(",\n"));
            out.push_str("\n  }\n}\n");
        }
        "yaml" => {
            let mut sorted = fields.clone();
            sorted.sort_by(|a, b| a.1.cmp(b.1));
            out.push_str("clientVersion:\n");
            for (_, key, v) in sorted {
                // YAML quotes what would otherwise read as a number or a timestamp.
                let needs_quotes = v.parse::<f64>().is_ok() || v.contains(':') && v.contains('T');
                if needs_quotes {
                    let _ = writeln!(out, "  {key}: {v:?}");
                } else {
                    let _ = writeln!(out, "  {key}: {v}");
                }
            }
            out.push('\n');
        }
        other => return Err(InvalidOutput(other.to_string())),
    }
    Ok(out)
}
