//! The binary against upstream kubeadm v1.25.16: help for every command of the tree, usage
//! errors and their exit codes, completion scripts and version output.
//!
//! Upstream's tree is enumerated from upstream's own help output (`Available Commands:` and
//! `Additional help topics:`), so a command we lack or add shows up as a difference.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::oracle::{AddedFlag, Run, added_flags, diff, expected_code, run, upstream_kubeadm};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn both(args: &[&str], dir: &Path) -> (Run, Run) {
    (
        run(&upstream_kubeadm(), args, dir, &[]),
        run(&ours(), args, dir, &[]),
    )
}

fn describe(args: &[&str], up: &Run, us: &Run) -> String {
    format!(
        "kubeadm {}\nexit: upstream {} ours {}\nstdout diff:\n{}stderr diff:\n{}",
        args.join(" "),
        up.code,
        us.code,
        diff(&up.stdout, &us.stdout),
        diff(&up.stderr, &us.stderr)
    )
}

/// Subcommand names listed by a help text, and paths of its additional help topics.
fn listed_subcommands(help: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut section = "";
    for line in help.lines() {
        if line.ends_with(':') && !line.starts_with(' ') {
            section = line;
            continue;
        }
        if line.is_empty() {
            section = "";
            continue;
        }
        match section {
            "Available Commands:" => {
                if let Some(name) = line.split_whitespace().next() {
                    out.push(vec![name.to_string()]);
                }
            }
            "Additional help topics:" => {
                // "  kubeadm alpha      Kubeadm experimental sub-commands": the path minus the root.
                let words: Vec<&str> = line.split_whitespace().collect();
                if words.len() >= 2 {
                    out.push(vec![format!("@{}", words[1])]);
                }
            }
            _ => {}
        }
    }
    out
}

/// Our help of a command to which we add flags (the `flag:` rules of
/// tests/corpus/deliberate-differences.txt), and upstream's, without those flags' lines and with
/// runs of white space as one space (the flag column widens); unchanged for other commands.
fn without_added_flags(words: &[&str], up: &Run, us: &Run) -> (Run, Run) {
    let command: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-') && *w != "help")
        .collect();
    let added: Vec<AddedFlag> = added_flags().into_iter().filter(|f| f.path == command).collect();
    if added.is_empty() {
        return (up.clone(), us.clone());
    }
    let squeeze = |text: &str, drop: bool| -> String {
        text.lines()
            .filter(|l| !drop || !added.iter().any(|f| f.in_help_line(l)))
            .map(|l| format!("{}\n", l.split_whitespace().collect::<Vec<_>>().join(" ")))
            .collect()
    };
    let up = Run {
        stdout: squeeze(&up.stdout, false),
        ..up.clone()
    };
    let us = Run {
        stdout: squeeze(&us.stdout, true),
        ..us.clone()
    };
    (up, us)
}

#[test]
fn help_of_every_command_matches_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut queue: Vec<Vec<String>> = vec![vec![]];
    let mut failures = Vec::new();
    let mut compared = 0;
    while let Some(path) = queue.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let forms: Vec<Vec<&str>> = vec![
            words.iter().copied().chain(["--help"]).collect(),
            words.iter().copied().chain(["-h"]).collect(),
            ["help"].into_iter().chain(words.iter().copied()).collect(),
        ];
        for args in &forms {
            let (up, us) = both(args, dir.path());
            let (up, us) = without_added_flags(args, &up, &us);
            compared += 1;
            if up != us {
                failures.push(describe(args, &up, &us));
            }
        }
        let (up, _) = both(&forms[0], dir.path());
        for sub in listed_subcommands(&up.stdout) {
            let name = &sub[0];
            if path.is_empty() && name == "help" {
                continue;
            }
            let mut next = path.clone();
            next.push(name.trim_start_matches('@').to_string());
            queue.push(next);
        }
    }
    assert!(
        compared > 300,
        "only {compared} help outputs compared: the walk is broken"
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} help outputs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Usage errors, help paths and commands that need nothing from the host.
const CASES: &[&str] = &[
    "--foo",
    "init --foo",
    "foo",
    "inti",
    "co",
    "t",
    "init extra",
    "token generate --bar=1",
    "join a b c",
    "version -o bad",
    "version --output",
    "-v abc version",
    "token create --ttl 5x",
    "help foo",
    "help token bogus",
    "help",
    "help help",
    "config images",
    "config print",
    "upgrade node phase",
    "certs renew",
    "init -x",
    "version -o short",
    "version --output=short -v 0",
    "alpha",
    "init phase",
    "init phase certs",
    "init phase certs all --help",
    "join phase control-plane-prepare",
    "token foo",
    "token",
    "upgrade",
    "upgrade bogus",
    "kubeconfig user",
    "kubeconfig user --client-name x",
    "completion",
    "completion fish",
    "completion bash zsh",
    "version extra",
    "-h",
    "version -h --output",
    "init --config /nonexistent --pod-network-cidr 10.0.0.0/8 --skip-phases x --dry-run -v 1",
    "join --config /nonexistent --token abc --node-name x",
    "token create --config /nonexistent --ttl 1h --print-join-command",
    "--v=x",
    "version --v",
    "version -vv",
    "version ---x",
    "version -- a",
    "--rootfs",
    "token generate extra",
    "certs",
    "init phase bogus",
    "init phase preflight a",
    "join phase preflight a b",
    "upgrade node phase preflight a",
    "init --help=false extra",
    "token create --ttl 1h --ttl=2h --usages a,b --usages c --config /nonexistent",
    "init --apiserver-cert-extra-sans a,b --config /nonexistent --skip-token-print",
    "-v 5 version --foo",
    "-v 5 foo",
    "version --log_file x",
    "-v 5 version extra",
    "kubeconfig user -v 6",
    "init phase certs all extra",
    "join phase control-plane-join all a",
    "join phase control-plane-join etcd a",
    "upgrade node extra",
    "reset phase cleanup-node --help",
    "reset phase pre-flight --help",
    "init phase uploadconfig --help",
    "help init phase bootstraptoken",
    "token create --help extra",
    "version -o",
    "version -o=",
    "version --output= -h",
    "init --token-ttl 5",
    "init --apiserver-bind-port x",
    "init --apiserver-bind-port 99999999999",
    "init --dry-run=maybe",
    "kubeconfig user --config",
    "--",
    "-- version",
    "version -",
];

#[test]
fn usage_errors_and_exit_codes_match_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    for case in CASES {
        let args: Vec<&str> = case.split_whitespace().collect();
        let (up, us) = both(&args, dir.path());
        // Same output; the exit code is upstream's except for bad input, which exits 3 here.
        if (&up.stdout, &up.stderr, expected_code(&up)) != (&us.stdout, &us.stderr, us.code) {
            failures.push(describe(&args, &up, &us));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Our completion script without the lines that declare the flags we add (the `flag:` rules of
/// tests/corpus/deliberate-differences.txt), each in its own command's function only.
fn completion_without_added_flags(script: &str) -> String {
    let added = added_flags();
    assert!(!added.is_empty(), "no flag rules read");
    let mut current: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in script.split_inclusive('\n') {
        // `_kubeadm_certs_check-expiration()` opens the function of `kubeadm certs check-expiration`.
        if let Some(name) = line
            .strip_prefix("_kubeadm_")
            .and_then(|l| l.strip_suffix("()\n"))
        {
            current = name.split('_').map(str::to_string).collect();
        } else if line == "}\n" {
            current.clear();
        }
        if added
            .iter()
            .any(|f| f.path == current && f.in_completion_line(line))
        {
            continue;
        }
        out.push_str(line);
    }
    out
}

#[test]
fn completion_scripts_match_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    for shell in ["bash", "zsh"] {
        let (up, mut us) = both(&["completion", shell], dir.path());
        let full = us.stdout.len();
        us.stdout = completion_without_added_flags(&us.stdout);
        assert!(
            us.stdout.len() < full,
            "completion {shell}: no added flag's line found"
        );
        assert!(up.stdout.len() > 100_000, "upstream {shell} script is too short");
        assert_eq!(
            up,
            us,
            "completion {shell}:\n{}",
            describe(&["completion", shell], &up, &us)
        );
    }
}

#[test]
fn version_matches_upstream_but_for_the_go_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Upstream's oracle is built locally with whatever Go is installed; ours reports the
    // official release's Go version. Everything else must be identical.
    let go = |s: &str| {
        let mut out = s.to_string();
        for (marker, end) in [
            ("GoVersion:\"", '"'),
            ("\"goVersion\": \"", '"'),
            ("goVersion: ", '\n'),
        ] {
            if let Some(i) = out.find(marker) {
                let start = i + marker.len();
                let stop = out[start..].find(end).map(|j| start + j).unwrap_or(out.len());
                out.replace_range(start..stop, "GO");
            }
        }
        out
    };
    for args in [
        &["version"][..],
        &["version", "-o", "json"],
        &["version", "-o", "yaml"],
        &["version", "-o", "short"],
    ] {
        let (up, us) = both(args, dir.path());
        assert_eq!(
            (up.code, go(&up.stdout), up.stderr.clone()),
            (us.code, go(&us.stdout), us.stderr.clone()),
            "{}",
            describe(args, &up, &us)
        );
    }
}

/// Telling ours apart (kubeadm-rs(7)): from `-v=1`, `kubeadm version` logs upstream's
/// `[version] retrieving version info` and then, ours alone, one line naming kubeadm-rs and its
/// version; standard output stays upstream's (the Go version aside, as above) and `-v=0` logs
/// nothing.
#[test]
fn version_tells_kubeadm_rs_apart_only_in_its_verbose_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    // klog's header (`I1203 20:55:47.905074   23105 version.go:55] `) differs in time, pid and line.
    let messages = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .map(|l| l.split_once("] ").map_or(l, |(_, m)| m).to_string())
            .collect()
    };
    let identity = format!(
        "[version] kubeadm-rs {}: a re-implementation of kubeadm v1.25.16 (see kubeadm-rs(7))",
        env!("CARGO_PKG_VERSION")
    );
    for args in [
        &["version", "-v=1", "-o", "short"][..],
        &["version", "-v=5", "-o", "json"],
    ] {
        let (up, us) = both(args, dir.path());
        assert_eq!((up.code, us.code), (0, 0), "{}", describe(args, &up, &us));
        if args.contains(&"short") {
            assert_eq!(up.stdout, us.stdout, "{}", describe(args, &up, &us));
        } else {
            assert_eq!(up.stdout.lines().count(), us.stdout.lines().count());
        }
        let mut expected = messages(&up.stderr);
        assert_eq!(
            expected,
            ["[version] retrieving version info"],
            "upstream's log changed"
        );
        expected.push(identity.clone());
        assert_eq!(messages(&us.stderr), expected, "{}", describe(args, &up, &us));
        assert!(
            us.stderr.lines().all(|l| l.starts_with('I')),
            "klog info lines: {}",
            us.stderr
        );
    }
    let (up, us) = both(&["version", "-v=0"], dir.path());
    assert_eq!((up.stderr.as_str(), us.stderr.as_str()), ("", ""));
    assert!(identity.contains("1.25.16+rs."), "{identity}");
}

#[test]
fn random_outputs_have_upstream_shape() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (args, shape) in [
        (&["token", "generate"][..], [6usize, 16].as_slice()),
        (&["certs", "certificate-key"], &[64]),
    ] {
        let (up, us) = both(args, dir.path());
        let lens = |s: &str| s.trim_end().split('.').map(str::len).collect::<Vec<_>>();
        assert_eq!(lens(&up.stdout), shape, "upstream changed shape");
        assert_eq!(lens(&us.stdout), shape);
        assert_eq!((up.code, us.code), (0, 0));
        assert!(us.stdout.ends_with('\n') && us.stdout.chars().filter(|c| *c == '\n').count() == 1);
    }
}

#[test]
fn closed_stdout_does_not_panic() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(ours())
        .args(["completion", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read");
    let status = child.wait().expect("wait");
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.code().is_some(), "killed by a signal");
}

/// Completion requests, as the shell scripts send them (the last word is being completed).
const COMPLETE_CASES: &[&[&str]] = &[
    &["__complete", ""],
    &["__complete", "v"],
    &["__complete", "version", "-"],
    &["__complete", "version", "--o"],
    &["__complete", "version", "-o", ""],
    &["__complete", "version", "--output=", ""],
    &["__complete", "help", ""],
    &["__complete", "help", "to"],
    &["__complete", "help", "token", ""],
    &["__complete", "help", "init", "phase", "c"],
    &["__completeNoDesc", ""],
    &["__completeNoDesc", "init", "phase", ""],
    &["__complete", "bogus", "x", ""],
    &["__complete", "init", "--config", ""],
    &["__complete", "init", "--dry-run", ""],
    &["__complete", "init", "--help", ""],
    &["__complete", "init", "-h", ""],
    &["__complete", "init", "--skip-phases", "x", "--skip"],
    &["__complete", "init", "--dry-run", "--d"],
    &["__complete", "kubeconfig", "user", ""],
    &["__complete", "kubeconfig", "user", "--config", "x", ""],
    &["__complete", "kubeconfig", "user", "--c"],
    &["__complete", "completion", ""],
    &["__complete", "completion", "bash", ""],
    &["__complete", "completion", "z"],
    &["__complete", "version", "--", ""],
    &["__complete", "version", "--", "-"],
    &["__complete", "version", "--foo=x"],
    &["__complete", "version", "--foo", ""],
    &["__complete", "-v", "5", "vers"],
    &["-v", "5", "__complete", "vers"],
    &["__complete"],
    &["__complete", "init", "phase", "ce"],
    &["__complete", "reset", "phase", "pre"],
    &["__complete", "token", "create", "abc", ""],
    &["__complete", "token", "-"],
    &["__complete", "reset", "-f", ""],
    &["__complete", "version", "-o=j"],
];

/// Completion candidates in sorted order, the `:directive` line kept last.
fn sorted_candidates(stdout: &str) -> String {
    let (mut candidates, directives): (Vec<&str>, Vec<&str>) =
        stdout.lines().partition(|l| !l.starts_with(':'));
    candidates.sort_unstable();
    candidates.extend(directives);
    candidates.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn completion_requests_match_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    for args in COMPLETE_CASES {
        let (mut up, mut us) = both(args, dir.path());
        // Upstream lists the shells of `completion` from a Go map, so their order
        // changes from run to run; compare that one candidate list as a set.
        if args.get(1) == Some(&"completion") {
            up.stdout = sorted_candidates(&up.stdout);
            us.stdout = sorted_candidates(&us.stdout);
        }
        if up != us {
            failures.push(describe(args, &up, &us));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} requests differ:\n{}",
        failures.len(),
        COMPLETE_CASES.len(),
        failures.join("\n")
    );
}
