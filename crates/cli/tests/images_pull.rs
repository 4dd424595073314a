//! `kubeadm config images pull` against upstream kubeadm v1.25.16 on inputs that fail before or at
//! the first pull: bad flags and arguments, missing or invalid configuration files, and CRI sockets
//! nothing listens on. Exit codes and standard output must be equal; standard error must be equal
//! too, except past `failed to pull image "IMAGE": `, where upstream quotes `crictl`'s output and we
//! (who speak CRI ourselves) our client's error.
//!
//! No case can reach a container runtime: every one that gets as far as pulling names a socket in a
//! fresh temporary directory. The real pull is the testbed's `images-pull` scenario.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::oracle::{Run, diff, expected_code, run, upstream_kubeadm};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// Upstream v1.25 runs `crictl` for each pull and refuses to start without it: the testbed builds it
/// next to the upstream kubeadm, whose directory goes first on upstream's PATH.
fn upstream_env() -> String {
    let up = upstream_kubeadm();
    let dir = up.parent().expect("upstream kubeadm has a directory");
    assert!(
        dir.join("crictl").is_file(),
        "no crictl next to {}: run testbed/upstream/build.sh crictl",
        up.display()
    );
    format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", dir.display())
}

fn both(args: &[String], dir: &Path) -> (Run, Run) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let path = upstream_env();
    (
        run(&upstream_kubeadm(), &args, dir, &[("PATH", &path)]),
        run(&ours(), &args, dir, &[]),
    )
}

const PULL_FAILED: &str = "failed to pull image ";

/// Standard error up to and including `failed to pull image "IMAGE": ` when it has that shape (the
/// rest is the runtime client's own words), else all of it.
fn comparable_stderr(stderr: &str) -> String {
    match stderr.find(PULL_FAILED) {
        Some(i) => {
            let rest = &stderr[i + PULL_FAILED.len()..];
            // The quoted image, then ": ".
            let end = rest.find("\": ").map_or(rest.len(), |j| j + 3);
            format!("{}{PULL_FAILED}{}", &stderr[..i], &rest[..end])
        }
        None => stderr.to_string(),
    }
}

/// How much of standard error a case compares.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// All of it (up to the image of a failed pull).
    Stderr,
    /// All of it but the lines we add after a validation error to say where each invalid field is in
    /// the file (`\tFILE:LINE:COLUMN: field`), a deliberate addition of this project.
    StderrWithoutLocations,
    /// Exit code and stdout only: the configuration loader (crate kubeadm-api, shared with every
    /// command taking `--config`) words these errors its own way, and that is not this command's
    /// business. Known differences: a YAML syntax error is reported by our parser with file, line
    /// and column instead of upstream's `could not interpret GroupVersionKind; unmarshal error: ...`;
    /// for an unknown kind, the two warnings and the error name the file.
    ExitCodeOnly,
}

/// A case runs in a directory holding `kubeadm.yaml` (when given) and, at `none.sock`, a socket
/// path nothing serves.
struct Case {
    name: &'static str,
    args: Vec<String>,
    config: Option<String>,
    /// Whether the run must get as far as pulling (and fail there).
    pulls: bool,
    compare: Compare,
}

fn config_with(socket: &str, extra_cluster: &str) -> String {
    format!(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n  criSocket: {socket}\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\n{extra_cluster}"
    )
}

fn cases(dir: &Path) -> Vec<Case> {
    let sock = format!("unix://{}", dir.join("none.sock").display());
    let cfg = dir.join("kubeadm.yaml").display().to_string();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let flags = |extra: &[&str]| {
        let mut v = s(&["config", "images", "pull", "--cri-socket", &sock]);
        v.extend(s(extra));
        v
    };
    vec![
        Case {
            name: "unknown flag",
            args: flags(&["--kubernetes-version", "v1.25.16", "--no-such-flag"]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "positional argument",
            args: flags(&["--kubernetes-version", "v1.25.16", "extra"]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "flag without its value",
            args: flags(&["--kubernetes-version"]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "unknown feature gate",
            args: flags(&[
                "--kubernetes-version",
                "v1.25.16",
                "--feature-gates",
                "NoSuchGate=true",
            ]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "feature gate not a bool",
            args: flags(&[
                "--kubernetes-version",
                "v1.25.16",
                "--feature-gates",
                "PublicKeysECDSA=maybe",
            ]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "invalid kubernetes version",
            args: flags(&["--kubernetes-version", "not-a-version"]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "kubernetes version too old",
            args: flags(&["--kubernetes-version", "v1.20.0"]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "missing config file",
            args: s(&["config", "images", "pull", "--config", &format!("{cfg}.absent")]),
            config: None,
            pulls: false,
            compare: Compare::Stderr,
        },
        Case {
            name: "config not YAML",
            args: s(&["config", "images", "pull", "--config", &cfg]),
            config: Some("apiVersion: [unclosed\n".into()),
            pulls: false,
            compare: Compare::ExitCodeOnly,
        },
        Case {
            name: "config with an unknown kind",
            args: s(&["config", "images", "pull", "--config", &cfg]),
            config: Some("apiVersion: kubeadm.k8s.io/v1beta3\nkind: NoSuchConfiguration\n".into()),
            pulls: false,
            compare: Compare::ExitCodeOnly,
        },
        Case {
            name: "config failing validation (exit 3)",
            args: s(&["config", "images", "pull", "--config", &cfg]),
            config: Some(config_with(&sock, "networking:\n  serviceSubnet: not-a-cidr\n")),
            pulls: false,
            compare: Compare::StderrWithoutLocations,
        },
        Case {
            name: "nothing listens on the flag's socket",
            args: flags(&["--kubernetes-version", "v1.25.16"]),
            config: None,
            pulls: true,
            compare: Compare::Stderr,
        },
        Case {
            name: "nothing listens on the flag's socket, custom repository",
            args: flags(&[
                "--kubernetes-version",
                "v1.25.16",
                "--image-repository",
                "example.test/mirror",
            ]),
            config: None,
            pulls: true,
            compare: Compare::Stderr,
        },
        Case {
            name: "nothing listens on the config's socket",
            args: s(&["config", "images", "pull", "--config", &cfg]),
            config: Some(config_with(&sock, "imageRepository: example.test/k8s\n")),
            pulls: true,
            compare: Compare::Stderr,
        },
        Case {
            // With --config, upstream ignores --cri-socket (and the other flags): the config's socket
            // is the one that fails.
            name: "config's socket wins over the flag's",
            args: {
                let mut v = s(&["config", "images", "pull", "--config", &cfg]);
                v.extend(s(&["--cri-socket", "unix:///run/testbed-never.sock"]));
                v
            },
            config: Some(config_with(&sock, "")),
            pulls: true,
            compare: Compare::Stderr,
        },
    ]
}

/// `text` without the lines that locate an invalid field in `file`.
fn without_locations(text: &str, file: &Path) -> String {
    let prefix = format!("\t{}:", file.display());
    text.split_inclusive('\n')
        .filter(|l| !l.starts_with(&prefix))
        .collect()
}

#[test]
fn failures_match_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in cases(dir.path()) {
        let cfg = dir.path().join("kubeadm.yaml");
        match &case.config {
            Some(text) => std::fs::write(&cfg, text).expect("write config"),
            None => {
                let _ = std::fs::remove_file(&cfg);
            }
        }
        let (up, us) = both(&case.args, dir.path());
        compared += 1;
        let (up_err, us_err) = match case.compare {
            Compare::Stderr => (comparable_stderr(&up.stderr), comparable_stderr(&us.stderr)),
            Compare::StderrWithoutLocations => (up.stderr.clone(), without_locations(&us.stderr, &cfg)),
            Compare::ExitCodeOnly => (String::new(), String::new()),
        };
        let mut problems = Vec::new();
        if expected_code(&up) != us.code {
            problems.push(format!(
                "exit: upstream {} ours {} (want {})",
                up.code,
                us.code,
                expected_code(&up)
            ));
        }
        if up.stdout != us.stdout {
            problems.push(format!("stdout:\n{}", diff(&up.stdout, &us.stdout)));
        }
        if up_err != us_err {
            problems.push(format!("stderr:\n{}", diff(&up_err, &us_err)));
        }
        // The case must test what it says: upstream itself failed, at the pull exactly when expected.
        if up.code == 0 {
            problems.push("upstream succeeded: the case tests nothing".into());
        }
        if up.stderr.starts_with(PULL_FAILED) != case.pulls {
            problems.push(format!(
                "expected the run {} get to a pull; upstream said: {}",
                if case.pulls { "to" } else { "not to" },
                up.stderr
            ));
        }
        // Both name the socket that failed (the client's own words differ, the path does not).
        if case.pulls && !(up.stderr.contains("none.sock") && us.stderr.contains("none.sock")) {
            problems.push(format!(
                "the error does not name the socket:\nupstream: {}\nours: {}",
                up.stderr, us.stderr
            ));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{} (kubeadm {}):\n{}",
                case.name,
                case.args.join(" "),
                problems.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ from upstream:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn stderr_is_compared_up_to_the_image() {
    let up = "failed to pull image \"a/b:1\": output: time=... crictl said\n, error: exit status 1\nTo see the stack trace of this error execute with --v=5 or higher\n";
    let us = "failed to pull image \"a/b:1\": PullImage \"a/b:1\" on unix:///x: cannot connect\nTo see the stack trace of this error execute with --v=5 or higher\n";
    assert_eq!(comparable_stderr(up), comparable_stderr(us));
    assert_eq!(comparable_stderr(up), "failed to pull image \"a/b:1\": ");
    // Another image is another message.
    assert_ne!(
        comparable_stderr(up),
        comparable_stderr(&us.replace("a/b:1", "a/c:1"))
    );
    assert_eq!(comparable_stderr("no such flag\n"), "no such flag\n");
}
