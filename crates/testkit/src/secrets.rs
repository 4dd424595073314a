//! The secrets audit: what our binary prints must hold no private key, no certificate key and no
//! bootstrap token (with its secret) except where upstream prints one on purpose:
//!
//! - a bootstrap token on standard output of `init` (the join commands), `token create`, `token
//!   list`, `token generate`, `init phase bootstrap-token`, and the configurations `config
//!   migrate` and `config print` print (defaulting makes one up; a certificate key of the
//!   configuration file is printed back too); help texts (their examples);
//! - a certificate key (64 hex digits) on standard output of `init` with `--upload-certs` (the
//!   control-plane join command), `certs certificate-key` and `init phase upload-certs`;
//! - a private key in the kubeconfig `kubeconfig user` prints.
//!
//! Nor may it print a source snippet (lines shaped `NN | …`, as YAML libraries quote the lines
//! around a parse error): those of a kubeconfig or of an exec plugin's output hold its secrets.
//!
//! Anything the caller gave on the command line may come back (upstream quotes a malformed
//! `--token` in its error, for one); what ours makes up itself may not. [`crate::oracle::run`]
//! audits every run of our binary in the cargo tests through [`audit`]; runs of upstream's are not
//! audited.

/// The secrets found in one output.
fn found(text: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if text.contains("PRIVATE KEY-----") {
        out.push(("a private key (PEM)", "PRIVATE KEY".to_string()));
    }
    for line in text.lines() {
        if is_snippet_line(line) {
            out.push(("a source snippet", line.trim().to_string()));
        }
        if let Some(value) = line.trim_start().strip_prefix("client-key-data:")
            && !value.trim().is_empty()
        {
            out.push(("a kubeconfig's client key", "client-key-data".to_string()));
        }
    }
    let bytes = text.as_bytes();
    let word = |i: usize, len: usize, ok: fn(u8) -> bool| {
        i + len <= bytes.len()
            && bytes[i..i + len].iter().all(|&b| ok(b))
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes.get(i + len).is_none_or(|b| !b.is_ascii_alphanumeric())
    };
    let token_char = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    for i in 0..bytes.len() {
        // A bootstrap token: [a-z0-9]{6}.[a-z0-9]{16}.
        if i + 23 <= bytes.len()
            && bytes[i + 6] == b'.'
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes[i..i + 6].iter().all(|&b| token_char(b))
            && word(i + 7, 16, token_char)
        {
            out.push(("a bootstrap token", text[i..i + 23].to_string()));
        }
        // A certificate key: 64 hex digits standing alone (not a `sha256:` digest, such as the CA
        // certificate hash of a join command).
        if word(i, 64, |b| b.is_ascii_hexdigit()) && !text[..i].ends_with("sha256:") {
            out.push(("a certificate key", text[i..i + 64].to_string()));
        }
    }
    out
}

/// A line of a source snippet: white space, the line's number, spaces, then `|` alone or before a
/// space (` 9 |   user:`, `10 |     client-key-data: …`).
fn is_snippet_line(line: &str) -> bool {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return false;
    }
    let after = &rest[digits..];
    let bar = after.trim_start_matches(' ');
    bar.len() < after.len() && (bar == "|" || bar.starts_with("| "))
}

/// The command's words (flags and their values left out): `["token", "create"]`.
fn command(args: &[&str]) -> Vec<String> {
    let mut words = Vec::new();
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if let Some(flag) = a.strip_prefix('-') {
            // A global flag taking a value as the next word.
            skip_value =
                !flag.contains('=') && matches!(flag.trim_start_matches('-'), "rootfs" | "kubeconfig" | "v");
            continue;
        }
        words.push((*a).to_string());
    }
    words
}

/// Where upstream prints `kind` on purpose: on standard output of these commands.
fn allowed_on_stdout(kind: &str, cmd: &[String], args: &[&str]) -> bool {
    let starts = |prefix: &[&str]| cmd.len() >= prefix.len() && cmd.iter().zip(prefix).all(|(a, b)| a == b);
    match kind {
        "a bootstrap token" => {
            starts(&["init"])
                || starts(&["config", "migrate"])
                || starts(&["config", "print"])
                || starts(&["token", "create"])
                || starts(&["token", "list"])
                || starts(&["token", "generate"])
        }
        "a certificate key" => {
            (starts(&["init"]) && args.iter().any(|a| a.starts_with("--upload-certs")))
                || starts(&["config", "migrate"])
                || starts(&["config", "print"])
                || starts(&["certs", "certificate-key"])
                || starts(&["init", "phase", "upload-certs"])
        }
        "a private key (PEM)" | "a kubeconfig's client key" => starts(&["kubeconfig", "user"]),
        _ => false,
    }
}

/// The secrets in our run's output that upstream would not print: each as `what (where)`, with
/// the secret itself never repeated.
pub fn audit(args: &[&str], stdout: &str, stderr: &str) -> Vec<String> {
    // Help texts show made-up tokens in their examples.
    if args.iter().any(|a| matches!(*a, "--help" | "-h")) || args.first() == Some(&"help") {
        return Vec::new();
    }
    let cmd = command(args);
    let given = |secret: &str| args.iter().any(|a| a.contains(secret));
    let mut problems = Vec::new();
    for (stream, text) in [("stdout", stdout), ("stderr", stderr)] {
        for (kind, secret) in found(text) {
            if given(&secret) || (stream == "stdout" && allowed_on_stdout(kind, &cmd, args)) {
                continue;
            }
            problems.push(format!("{kind} on {stream} of `kubeadm {}`", cmd.join(" ")));
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_kind_of_secret() {
        let token = "abcdef.0123456789abcdef";
        let key = "0123456789abcdef".repeat(4);
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n";
        assert!(
            audit(&["version"], token, "")
                .iter()
                .any(|p| p.contains("bootstrap token"))
        );
        assert!(
            audit(&["version"], "", &format!("key {key}"))
                .iter()
                .any(|p| p.contains("certificate key"))
        );
        assert!(
            audit(&["init", "--dry-run"], pem, "")
                .iter()
                .any(|p| p.contains("private key"))
        );
        assert!(audit(&["-v", "10", "join"], "", "    client-key-data: LS0t\n").len() == 1);
        // A YAML library's snippet of the document it could not parse.
        let snippet = "error: line 11 column 4: did not find expected key\n  --> <input>:11:4\n   |\n \
                       9 |   user:\n10 |     client-key-data: S0tLS0t\n11 |    bad: x\n   |    ^\n";
        assert_eq!(
            audit(&["token", "list"], "", snippet),
            ["a source snippet on stderr of `kubeadm token list`"]
        );
        assert!(audit(&["token", "list"], snippet, "").len() == 1);
        assert!(
            audit(
                &["token", "list"],
                "",
                "failed to parse kubeconfig YAML: line 11, column 4: did not find expected key\n"
            )
            .is_empty()
        );
        assert!(audit(&["version"], "CERTIFICATE | EXPIRES\nv1 | 2 of 3\n", "").is_empty());
        // Where upstream prints them on purpose, or the user gave them.
        assert!(audit(&["token", "create"], &format!("{token}\n"), "").is_empty());
        assert!(
            audit(
                &["init", "--upload-certs"],
                &format!("--certificate-key {key}\n"),
                ""
            )
            .is_empty()
        );
        assert!(audit(&["init", "--token", token], "", &format!("bad token {token:?}")).is_empty());
        assert!(audit(&["kubeconfig", "user", "--client-name", "x"], pem, "").is_empty());
        // On standard error, never (a log line).
        assert!(!audit(&["token", "create"], "", token).is_empty());
        // Not secrets: a longer hex run, a token-like word inside a longer one, digests.
        assert!(audit(&["version"], &"a".repeat(65), "x-abcdef.0123456789abcdefg").is_empty());
        assert!(
            audit(
                &["init"],
                &format!("--discovery-token-ca-cert-hash sha256:{key}"),
                ""
            )
            .is_empty()
        );
    }
}
