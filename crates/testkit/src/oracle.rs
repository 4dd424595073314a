//! Upstream kubeadm v1.25.16 as the oracle: run it and ours with the same arguments and compare.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What one run of a binary printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
}

/// The upstream kubeadm binary: `$KUBEADM_UPSTREAM`, else the testbed cache.
///
/// Panics with instructions when it is missing: a differential test without its oracle must fail,
/// never pass silently.
pub fn upstream_kubeadm() -> PathBuf {
    let path = upstream_path();
    assert!(
        path.is_file(),
        "upstream kubeadm not found at {}: run testbed/upstream/build.sh or set KUBEADM_UPSTREAM",
        path.display()
    );
    path
}

/// Runs `bin` with `args` in `cwd`, with a clean, fixed environment plus `env`.
pub fn run(bin: &Path, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", cwd)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let run = Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    };
    // Every run of our binary is audited for secrets it should not print.
    if bin.file_name().is_some_and(|n| n == "kubeadm") && bin != upstream_path() {
        let leaks = crate::secrets::audit(args, &run.stdout, &run.stderr);
        assert!(leaks.is_empty(), "secrets printed: {}", leaks.join("; "));
    }
    run
}

/// Where upstream's binary is (`KUBEADM_UPSTREAM`, else the cache the tests build it into).
fn upstream_path() -> PathBuf {
    match std::env::var_os("KUBEADM_UPSTREAM") {
        Some(p) => PathBuf::from(p),
        None => {
            let cache = std::env::var_os("KUBEADM_RS_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kubeadm-rs")
                });
            cache.join("upstream/kubeadm")
        }
    }
}

/// What a rule of `tests/corpus/deliberate-differences.txt` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowance {
    /// Upstream refuses bad input with exit 1 and this message: we exit 3.
    Exit3,
    /// Both refuse; upstream's line holding the text is worded differently by us: it pairs with
    /// our line holding the rule's `ours` text (`message: UPSTREAM => OURS`).
    Message,
    /// Upstream's line matching the text (a template) repeats, after it, what another of its
    /// lines ends with (a warning before the same error), or is a line it printed before: ours
    /// says it once.
    Repeat,
    /// Upstream's line matching the text (a template) that ours does not print: a known gap, with
    /// its reason.
    Omit,
    /// A line of ours that is the text, then the place of a field in the file, then the field,
    /// which upstream's message names (`place: \t`).
    Place,
    /// Both refuse; only what follows the text in upstream's line must be in ours.
    Key,
    /// Upstream refuses with this message; we accept.
    Accept,
    /// Upstream accepts; we refuse with this message.
    Refuse,
    /// A flag of ours that upstream v1.25.16's command lacks (`certs check-expiration -o
    /// --experimental-output`): its help and completion lines are ours alone.
    Flag,
}

/// A flag we add to a command of upstream's tree (a `flag:` rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedFlag {
    /// The command's words below the root (`["certs", "check-expiration"]`).
    pub path: Vec<String>,
    /// The flag's name, without dashes.
    pub name: String,
    /// Its shorthand, without the dash; empty when it has none.
    pub shorthand: String,
}

impl AddedFlag {
    /// Whether a line of our help text describes this flag (`  -o, --experimental-output string …`).
    pub fn in_help_line(&self, line: &str) -> bool {
        line.split_whitespace()
            .take(2)
            .any(|w| w.trim_end_matches(',') == format!("--{}", self.name))
    }

    /// Whether a line of our bash completion script declares this flag
    /// (`flags+=("--experimental-output=")`, `two_word_flags+=("-o")`, …).
    pub fn in_completion_line(&self, line: &str) -> bool {
        line.contains(&format!("(\"--{}\")", self.name))
            || line.contains(&format!("(\"--{}=\")", self.name))
            || (!self.shorthand.is_empty() && line.contains(&format!("(\"-{}\")", self.shorthand)))
    }
}

/// The flags we add to upstream's commands (the `flag:` rules), each read from
/// `WORDS… [-s] --name`.
pub fn added_flags() -> Vec<AddedFlag> {
    allowed(Allowance::Flag)
        .iter()
        .map(|text| {
            let mut flag = AddedFlag {
                path: Vec::new(),
                name: String::new(),
                shorthand: String::new(),
            };
            for w in text.split_whitespace() {
                if let Some(name) = w.strip_prefix("--") {
                    flag.name = name.to_string();
                } else if let Some(s) = w.strip_prefix('-') {
                    flag.shorthand = s.to_string();
                } else {
                    flag.path.push(w.to_string());
                }
            }
            assert!(
                !flag.name.is_empty(),
                "deliberate-differences.txt: a flag rule without --name: {text:?}"
            );
            flag
        })
        .collect()
}

/// One rule of the deliberate-differences list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The entry's name.
    pub name: String,
    /// What the rule allows.
    pub allowance: Allowance,
    /// The text it matches (a substring or template of upstream's, or for `Refuse` and `Place` our,
    /// standard error).
    pub text: String,
    /// For `Message`: what our line holds in place of upstream's (the text after ` => `).
    pub ours: String,
    /// Why this one rule is needed (its `  why: ` line): required for `message`, `key`, `repeat`,
    /// `omit` and `place`, the rules that excuse a line of output, so that each says what exact
    /// difference it excuses.
    pub why: String,
}

/// The file listing every deliberate difference from upstream, with its reasons.
const DIFFERENCES: &str = include_str!("../../../tests/corpus/deliberate-differences.txt");

/// The rules of `tests/corpus/deliberate-differences.txt`, in order. Panics on a malformed file.
pub fn differences() -> Vec<Difference> {
    let mut out: Vec<Difference> = Vec::new();
    let mut name = String::new();
    let mut reasons = 0;
    for line in DIFFERENCES.lines() {
        if let Some(why) = line.strip_prefix("  why: ") {
            let last = out
                .last_mut()
                .unwrap_or_else(|| panic!("deliberate-differences.txt: {line:?} before any rule"));
            assert!(
                last.why.is_empty(),
                "deliberate-differences.txt: two why lines for {:?}",
                last.text
            );
            last.why = why.trim().to_string();
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() || line.starts_with("  ") {
            continue;
        }
        if let Some(n) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            name = n.to_string();
            continue;
        }
        let (rule, text) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("deliberate-differences.txt: bad line {line:?}"));
        let allowance = match rule {
            "reason" => {
                reasons += 1;
                continue;
            }
            "exit-3" => Allowance::Exit3,
            "message" => Allowance::Message,
            "repeat" => Allowance::Repeat,
            "place" => Allowance::Place,
            "omit" => Allowance::Omit,
            "key" => Allowance::Key,
            "accept" => Allowance::Accept,
            "refuse" => Allowance::Refuse,
            "flag" => Allowance::Flag,
            other => panic!("deliberate-differences.txt: unknown rule {other:?}"),
        };
        assert!(
            !name.is_empty(),
            "deliberate-differences.txt: a rule before any [entry]"
        );
        let (text, ours) = match allowance {
            Allowance::Message => {
                let (up, us) = text.split_once(" => ").unwrap_or_else(|| {
                    panic!(
                        "deliberate-differences.txt: {line:?} names upstream's words without ours (` => `)"
                    )
                });
                (up, us)
            }
            _ => (text, ""),
        };
        out.push(Difference {
            name: name.clone(),
            allowance,
            text: text.replace("\\n", "\n").replace("\\t", "\t"),
            ours: ours.replace("\\n", "\n").replace("\\t", "\t"),
            why: String::new(),
        });
    }
    for d in &out {
        assert!(
            !matches!(
                d.allowance,
                Allowance::Message | Allowance::Key | Allowance::Repeat | Allowance::Place | Allowance::Omit
            ) || !d.why.is_empty(),
            "deliberate-differences.txt: the rule {:?} of [{}] needs its own `  why: ` line",
            d.text,
            d.name
        );
    }
    let entries = out
        .iter()
        .map(|d| &d.name)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(
        reasons, entries,
        "deliberate-differences.txt: every entry needs one reason"
    );
    out
}

/// The texts of the rules of one kind.
pub fn allowed(kind: Allowance) -> Vec<String> {
    differences()
        .into_iter()
        .filter(|d| d.allowance == kind)
        .map(|d| d.text)
        .collect()
}

/// The exit code ours must give where upstream gave `upstream`: 3 where upstream refuses bad input
/// with 1 (the `exit-3` rules of `tests/corpus/deliberate-differences.txt`), else upstream's own code.
/// The flag parser's own errors (`invalid argument "5" for "--token-ttl" flag: time: missing unit
/// …`) keep upstream's 1 even when their text holds an `exit-3` rule's, as every cobra program's.
pub fn expected_code(upstream: &Run) -> i32 {
    let flag_parser = upstream.stderr.contains("invalid argument \"") && upstream.stderr.contains(" flag: ");
    if upstream.code == 1
        && !flag_parser
        && allowed(Allowance::Exit3)
            .iter()
            .any(|m| upstream.stderr.contains(m.as_str()))
    {
        3
    } else {
        upstream.code
    }
}

/// Bootstrap tokens are random when defaulted: mask every token-shaped string.
pub fn mask_tokens(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let tok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    while i < b.len() {
        if i + 23 <= b.len()
            && b[i..i + 6].iter().all(|&c| tok(c))
            && b[i + 6] == b'.'
            && b[i + 7..i + 23].iter().all(|&c| tok(c))
            && (i == 0 || !tok(b[i - 1]))
            && (i + 23 == b.len() || !tok(b[i + 23]))
        {
            out.push_str("<token>");
            i += 23;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// A klog line (`W1204 13:43:22.123456   12345 file.go:12] message`) split into its severity
/// letter and its message; `None` for any other line.
pub fn klog_message(line: &str) -> Option<(char, &str)> {
    let b = line.as_bytes();
    let header =
        b.len() > 30 && matches!(b[0], b'I' | b'W' | b'E' | b'F') && b[1..5].iter().all(u8::is_ascii_digit);
    let (_, message) = line.split_once("] ").filter(|_| header)?;
    Some((char::from(b[0]), message))
}

/// Strips klog headers and drops the lines that differ by design: upstream tries the network to resolve
/// version labels and says so; we resolve them offline; and the stack-trace hint.
pub fn stderr_lines(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| klog_message(l).map_or(l, |(_, message)| message).to_string())
        .filter(|l| {
            !l.contains("could not fetch a Kubernetes version from the internet")
                && !l.contains("falling back to the local client version")
                && !l.starts_with("To see the stack trace of this error")
        })
        .collect()
}

/// A unified-style line diff of two texts, for assertion messages.
pub fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    let n = e.len().max(a.len());
    for i in 0..n {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("{:>4} - {x}\n", i + 1));
                }
                if let Some(y) = y {
                    out.push_str(&format!("{:>4} + {y}\n", i + 1));
                }
            }
        }
    }
    out
}
