//! Differential tests over the config corpus in `tests/corpus/`: upstream kubeadm v1.25.16 and ours run
//! the same command on the same file, and must agree on stdout and the substance of stderr; every bad
//! config and bad flag value exits 3 (upstream: 1 for many of them, see `oracle::expected_code`).
//!
//! `config migrate --old-config F` is the vehicle: it decodes, defaults (statically and from this host),
//! validates and prints the result, so it shows the whole config pipeline.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::oracle::{Run, diff, expected_code, mask_tokens, run, stderr_lines, upstream_kubeadm};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus().join(dir))
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    v
}

fn both(args: &[&str], cwd: &Path) -> (Run, Run) {
    (
        run(&upstream_kubeadm(), args, cwd, &[]),
        run(&ours(), args, cwd, &[]),
    )
}

#[test]
fn valid_configs_migrate_like_upstream() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut failures = Vec::new();
    for f in files("valid").into_iter().chain(files("v1beta2")) {
        let (up, us) = both(
            &["config", "migrate", "--old-config", f.to_str().expect("utf8")],
            tmp.path(),
        );
        let name = f.file_name().expect("name").to_string_lossy().into_owned();
        if up.code != us.code || mask_tokens(&up.stdout) != mask_tokens(&us.stdout) {
            failures.push(format!(
                "{name}: exit {} vs {}\n{}{}",
                up.code,
                us.code,
                diff(&mask_tokens(&up.stdout), &mask_tokens(&us.stdout)),
                us.stderr
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Where our message deliberately differs from upstream's: decoding errors name the file, line,
/// column and field instead of Go's type names. For these we check the key part of ours instead.
const IMPROVED: &[(&str, &str)] = &[
    ("27-syntax.yaml", "27-syntax.yaml"),
    ("28-wrong-type.yaml", "localAPIEndpoint.bindPort"),
    ("38-bad-kubelet-config.yaml", "maxPods"),
    ("40-not-yaml.yaml", "40-not-yaml.yaml"),
    // yaml.v2's reader errors: upstream's message, with where the character is instead of
    // "error converting YAML to JSON".
    (
        "44-control-character.yaml",
        "44-control-character.yaml: line 4, column 18: control characters are not allowed",
    ),
    (
        "45-c1-control-character.yaml",
        "45-c1-control-character.yaml: line 4, column 3: control characters are not allowed",
    ),
    (
        "46-invalid-utf8.yaml",
        "46-invalid-utf8.yaml: line 4, column 18: invalid leading UTF-8 octet",
    ),
    ("47-nel-line-break.yaml", "47-nel-line-break.yaml: line 6"),
    (
        "61-end-marker-first.yaml",
        "61-end-marker-first.yaml: line 2, column 1: did not find expected node content",
    ),
    (
        "63-list-for-an-object.yaml",
        "63-list-for-an-object.yaml:4:1: ClusterConfiguration field apiServer: cannot unmarshal array into a struct",
    ),
    (
        "65-block-indicator-in-flow.yaml",
        "65-block-indicator-in-flow.yaml: line 1, column 50: found character that cannot start any token",
    ),
    (
        "66-quoted-key-over-two-lines-in-flow.yaml",
        "66-quoted-key-over-two-lines-in-flow.yaml: line 2, column 2: did not find expected ',' or '}'",
    ),
    // A syntax error, worded by the parser underneath (a known difference of the YAML crate).
    (
        "68-flow-value-indicator-first.yaml",
        "68-flow-value-indicator-first.yaml: line 3, column 1: ",
    ),
    // A document that starts with `{` is decoded as JSON: serde_json's words for why it is not.
    (
        "58-json-then-end-marker.yaml",
        "58-json-then-end-marker.yaml:1:1: couldn't get version/kind; json parse error: trailing characters",
    ),
    (
        "59-json-with-bare-keys.yaml",
        "59-json-with-bare-keys.yaml:1:1: couldn't get version/kind; json parse error: key must be a string",
    ),
    // yaml.v2's scanner errors for tabs: its words, with the line and column.
    (
        "71-tab-after-json-document.yaml",
        "71-tab-after-json-document.yaml: line 3, column 1: found character that cannot start any token",
    ),
    (
        "73-tab-after-second-json-document.yaml",
        "73-tab-after-second-json-document.yaml: line 5, column 1: found character that cannot start any token",
    ),
    (
        "53-tab-indentation.yaml",
        "53-tab-indentation.yaml: line 5, column 1: found a tab character that violates indentation",
    ),
    (
        "54-tab-after-entry.yaml",
        "54-tab-after-entry.yaml: line 6, column 4: found character that cannot start any token",
    ),
];

#[test]
fn invalid_configs_fail_like_upstream_and_write_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut failures = Vec::new();
    let files = files("invalid");
    assert!(files.len() >= 30, "the corpus has {} bad configs", files.len());
    for f in files {
        let name = f.file_name().expect("name").to_string_lossy().into_owned();
        let new = tmp.path().join(format!("{name}.out"));
        let args = [
            "config",
            "migrate",
            "--old-config",
            f.to_str().expect("utf8"),
            "--new-config",
            new.to_str().expect("utf8"),
        ];
        let up = run(&upstream_kubeadm(), &args, tmp.path(), &[]);
        let _ = std::fs::remove_file(&new);
        let us = run(&ours(), &args, tmp.path(), &[]);
        if up.code == 0 {
            failures.push(format!("{name}: upstream accepts it; move it to valid/"));
            continue;
        }
        // Every bad config is bad input: exit 3, whatever upstream's code (1 or 3).
        if us.code != 3 {
            failures.push(format!(
                "{name}: exit {} (want 3; upstream {})\n{}",
                us.code, up.code, us.stderr
            ));
        }
        if new.exists() {
            failures.push(format!("{name}: wrote {}", new.display()));
        }
        let ours_err = stderr_lines(&us.stderr).join("\n");
        match IMPROVED.iter().find(|(n, _)| *n == name) {
            Some((_, key)) => {
                if !ours_err.contains(key) {
                    failures.push(format!("{name}: our message lacks {key:?}:\n{ours_err}"));
                }
            }
            None => {
                for line in stderr_lines(&up.stderr) {
                    // Upstream's warning lines carry Go type dumps we do not reproduce.
                    if line.contains("schema.GroupVersionKind{") {
                        continue;
                    }
                    if !ours_err.contains(&line) {
                        failures.push(format!("{name}: missing upstream line {line:?} in:\n{ours_err}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What upstream's `init --dry-run` leaves on the host, removed: the `kubeadm-init-dryrun*`
/// directories that were not there before, and `/etc/kubernetes/tmp` and `/etc/kubernetes` themselves
/// when they did not exist.
struct DryRunDirs {
    existed: [bool; 2],
    before: Vec<std::path::PathBuf>,
}

impl DryRunDirs {
    const DIRS: [&str; 2] = ["/etc/kubernetes", "/etc/kubernetes/tmp"];

    fn list() -> Vec<std::path::PathBuf> {
        std::fs::read_dir(Self::DIRS[1])
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("kubeadm-init-dryrun"))
            })
            .collect()
    }

    fn before() -> Self {
        DryRunDirs {
            existed: Self::DIRS.map(|d| std::path::Path::new(d).exists()),
            before: Self::list(),
        }
    }

    fn clean(&self) {
        for p in Self::list().into_iter().filter(|p| !self.before.contains(p)) {
            let _ = std::fs::remove_dir_all(p);
        }
        for (dir, existed) in Self::DIRS.iter().zip(self.existed).rev() {
            if !existed {
                // Only when empty: anything else there is not ours to remove.
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

#[test]
fn bad_flag_combinations_fail_like_upstream() {
    let tmp = tempfile::tempdir().expect("tmp");
    // Upstream's `init --dry-run` makes `/etc/kubernetes/tmp/kubeadm-init-dryrun*` before some of
    // these errors (as root); what it leaves there is removed after each case (ours writes nothing).
    let upstream_dirs = DryRunDirs::before();
    let list = std::fs::read_to_string(corpus().join("flag-errors.txt")).expect("flag-errors.txt");
    let mut failures = Vec::new();
    let mut n = 0;
    for line in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        n += 1;
        let args: Vec<String> = line
            .split(' ')
            .map(|a| match a.strip_prefix('@') {
                Some(rel) => corpus().join(rel).to_string_lossy().into_owned(),
                None => a.to_string(),
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (up, us) = both(&args, tmp.path());
        upstream_dirs.clean();
        if up.code == 0 {
            failures.push(format!("{line}: upstream accepts it"));
            continue;
        }
        // Nothing may be left behind by a refused command (the run's HOME and working directory).
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .expect("tmp")
            .flatten()
            .map(|e| e.path())
            .collect();
        if !left.is_empty() {
            failures.push(format!("{line}: left {left:?}"));
            for p in left {
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
        }
        if us.stderr.contains("is not implemented yet in kubeadm-rs") {
            // Every refusal in the corpus must be compared: "not implemented" is no answer.
            failures.push(format!(
                "{line}: not implemented by kubeadm-rs: {}",
                us.stderr.trim()
            ));
            continue;
        }
        if us.code != expected_code(&up) || stderr_lines(&us.stderr) != stderr_lines(&up.stderr) {
            failures.push(format!(
                "{line}: exit {} vs upstream {} (want {})\n{}",
                us.code,
                up.code,
                expected_code(&up),
                diff(
                    &stderr_lines(&up.stderr).join("\n"),
                    &stderr_lines(&us.stderr).join("\n")
                )
            ));
        }
    }
    assert!(n >= 20, "only {n} cases");
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn images_list_matches_upstream_across_flags_and_configs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let valid = |n: &str| corpus().join("valid").join(n).to_string_lossy().into_owned();
    let cases: Vec<Vec<String>> = vec![
        vec![],
        vec!["-o".into(), "json".into()],
        vec!["-o".into(), "yaml".into()],
        vec!["--kubernetes-version".into(), "v1.24.3".into()],
        vec!["--kubernetes-version".into(), "1.25.2".into(), "-o=json".into()],
        vec!["--kubernetes-version".into(), "v1.27.0".into()],
        vec!["--kubernetes-version".into(), "stable-1.25".into()],
        vec!["--kubernetes-version".into(), "ci/v1.26.0-alpha.1.5+abc".into()],
        vec!["--image-repository".into(), "my.reg:5000/k8s".into()],
        vec![
            "--image-repository".into(),
            "k8s.gcr.io".into(),
            "--kubernetes-version".into(),
            "v1.24.0".into(),
        ],
        vec!["--feature-gates".into(), "PublicKeysECDSA=true".into()],
        vec!["--config".into(), valid("10-image-repo.yaml")],
        vec![
            "--config".into(),
            valid("05-external-etcd.yaml"),
            "-o".into(),
            "yaml".into(),
        ],
        vec!["--config".into(), valid("17-ci-version.yaml")],
        vec!["--config".into(), valid("18-ci-version-custom-repo.yaml")],
        vec!["--config".into(), valid("19-k8s-gcr.yaml")],
        vec![
            "--config".into(),
            valid("10-image-repo.yaml"),
            "--kubernetes-version".into(),
            "v1.24.1".into(),
        ],
    ];
    let mut failures = Vec::new();
    for extra in &cases {
        let mut args = vec!["config", "images", "list"];
        args.extend(extra.iter().map(String::as_str));
        let (up, us) = both(&args, tmp.path());
        if (up.code, &up.stdout) != (us.code, &us.stdout)
            || stderr_lines(&up.stderr) != stderr_lines(&us.stderr)
        {
            failures.push(format!(
                "{args:?}: exit {} vs {}\nstdout:\n{}stderr:\n{}",
                up.code,
                us.code,
                diff(&up.stdout, &us.stdout),
                diff(
                    &stderr_lines(&up.stderr).join("\n"),
                    &stderr_lines(&us.stderr).join("\n")
                )
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Configs upstream accepts but that give a control plane the kubelet refuses to run: we refuse them
/// (exit 3, naming the field), on purpose.
#[test]
fn stricter_than_upstream_configs_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let files = files("stricter");
    assert!(!files.is_empty());
    for f in files {
        let args = ["config", "migrate", "--old-config", f.to_str().expect("utf8")];
        let (up, us) = both(&args, tmp.path());
        assert_eq!(
            up.code,
            0,
            "{}: upstream refuses it too; move it to invalid/",
            f.display()
        );
        assert_eq!(us.code, 3, "{}: {}", f.display(), us.stderr);
        assert!(us.stderr.contains("extraVolumes"), "{}", us.stderr);
    }
}

/// Warnings come before the error, as upstream logs them as it goes: for each file in `warnings/`,
/// upstream's stderr lines appear in ours in the same order (a strict-decoding line there, with its Go
/// type dump, as our line naming the same unknown field), and the exit code is as expected.
#[test]
fn warnings_come_first_and_in_upstream_order() {
    let tmp = tempfile::tempdir().expect("tmp");
    let files = files("warnings");
    assert!(files.len() >= 5);
    let mut failures = Vec::new();
    for f in files {
        let name = f.file_name().expect("name").to_string_lossy().into_owned();
        let (up, us) = both(
            &["config", "migrate", "--old-config", f.to_str().expect("utf8")],
            tmp.path(),
        );
        let (up_out, us_out) = (mask_tokens(&up.stdout), mask_tokens(&us.stdout));
        if us.code != expected_code(&up) || up_out != us_out {
            failures.push(format!(
                "{name}: exit {} (upstream {})\n{}",
                us.code,
                up.code,
                diff(&up_out, &us_out)
            ));
        }
        let ours = stderr_lines(&us.stderr);
        let mut at = 0;
        for line in stderr_lines(&up.stderr) {
            let want = if line.contains("schema.GroupVersionKind{") || line.starts_with("  line ") {
                // The first unknown field or repeated key the line names (ours has one a line).
                match line.find("unknown field ").or_else(|| line.find("key \"")) {
                    Some(i) => line[i..].split_inclusive('"').take(2).collect::<String>(),
                    None => continue,
                }
            } else {
                line.clone()
            };
            match ours[at..].iter().position(|l| l.contains(&want)) {
                Some(i) => at += i + 1,
                None => {
                    failures.push(format!(
                        "{name}: {want:?} missing or out of order in:\n{}",
                        ours.join("\n")
                    ));
                    break;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
