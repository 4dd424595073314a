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
    let path = match std::env::var_os("KUBEADM_UPSTREAM") {
        Some(p) => PathBuf::from(p),
        None => {
            let cache = std::env::var_os("KUBEADM_RS_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kubeadm-rs")
                });
            cache.join("upstream/kubeadm")
        }
    };
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
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Upstream's messages for bad input it refuses with exit code 1 (a YAML file that does not decode, an
/// unknown API version, a version string that is not one, flags mixed with `--config`, a malformed
/// token or address, an unknown feature gate, phase or output format…). This project exits 3 for all
/// bad input (its rule: 3 for validation, 2 for preflight, 1 otherwise); upstream v1.25.16 exits 3 only
/// for field validation errors. Files that cannot be read and the flag parser's usage errors are not
/// in this list: both exit 1.
const BAD_INPUT_EXIT_1: &[&str] = &[
    "can not mix '--config' with arguments",
    "doesn't match patterns for neither semantic version nor labels",
    "this version of kubeadm only supports deploying clusters with the control plane version",
    "must be ipv4 or ipv6 address",
    "was not of the form",
    "unrecognized feature-gate key",
    "for feature-gate key",
    "invalid phase name",
    "hostport ",
    "unable to match a printer suitable for the output format",
    "flag is mandatory",
    "could not interpret GroupVersionKind",
    "cannot unmarshal",
    "your configuration file uses an old API spec",
    "is registered for version",
    "kind and apiVersion is mandatory",
    "time: invalid duration",
    "unsupported apiVersion",
    "no InitConfiguration or ClusterConfiguration kind was found",
    "no JoinConfiguration found",
    "cannot use --certificate-key without --print-join-command",
    "given token didn't match pattern",
    "'token delete' is missing token",
    "as the bind address for the API Server",
    "cannot parse IP address",
    // `cmdutil.ValidateExactArgNumber` (`upgrade apply` without or with too many versions).
    "missing one or more required arguments. Required arguments:",
    "too many arguments. Required arguments:",
    // apimachinery's `ParseSemantic`, for versions given as arguments (`upgrade plan|diff`).
    "as version\n",
    "illegal version string",
    "illegal zero-prefixed version component",
    "illegal non-numeric version component",
    "could not parse pre-release/metadata",
];

/// The exit code ours must give where upstream gave `upstream`: 3 where upstream refuses bad input
/// with 1 (the messages of `BAD_INPUT_EXIT_1`), else upstream's own code.
pub fn expected_code(upstream: &Run) -> i32 {
    if upstream.code == 1 && BAD_INPUT_EXIT_1.iter().any(|m| upstream.stderr.contains(m)) {
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

/// Strips klog headers and drops the lines that differ by design: upstream tries the network to resolve
/// version labels and says so; we resolve them offline; and the stack-trace hint.
pub fn stderr_lines(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| {
            let b = l.as_bytes();
            if b.len() > 30
                && matches!(b[0], b'I' | b'W' | b'E' | b'F')
                && b[1..5].iter().all(u8::is_ascii_digit)
            {
                match l.find("] ") {
                    Some(i) => l[i + 2..].to_string(),
                    None => l.to_string(),
                }
            } else {
                l.to_string()
            }
        })
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
