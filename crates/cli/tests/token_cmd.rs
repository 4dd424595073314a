//! `kubeadm token create|list|delete` against a real API server (upstream etcd + kube-apiserver
//! v1.25.16 on loopback), ours next to upstream's on the same server: the same printed output
//! (token ids swapped), the same Secrets, the same errors and exit codes, the same dry-run report.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use kubeadm_testkit::apiserver::ApiServer;
use kubeadm_testkit::oracle::{Run, diff, expected_code, run, upstream_kubeadm};

fn ours() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// `ours` with each `expiration: <base64 time>` line that is at most two seconds from the same line
/// of `theirs` replaced by theirs.
fn same_expirations(theirs: &str, ours: &str) -> String {
    use base64::Engine as _;
    let time = |line: &str| -> Option<jiff::Timestamp> {
        let b64 = line.trim().strip_prefix("expiration: ")?;
        let raw = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        String::from_utf8(raw).ok()?.parse().ok()
    };
    let theirs: Vec<&str> = theirs.lines().collect();
    let mut out = String::with_capacity(ours.len());
    for (i, line) in ours.split_inclusive('\n').enumerate() {
        let close = theirs.get(i).is_some_and(|t| {
            matches!((time(t), time(line)), (Some(a), Some(b)) if a.duration_until(b).as_secs().abs() <= 2)
        });
        if close {
            out.push_str(theirs[i]);
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

/// One command run by upstream and by ours, each with its own token id (`up`/`us` replace `%ID%` in
/// the arguments); the outputs are compared with ours' id turned back into upstream's.
struct Pair<'a> {
    server: &'a ApiServer,
    env: Vec<(&'static str, String)>,
}

impl Pair<'_> {
    fn run_one(&self, bin: &Path, args: &[String]) -> Run {
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(bin, &args, &self.server.root(), &env)
    }

    /// Runs `args` (with `ID` replaced) with both binaries and asserts they behave alike.
    fn same(&self, args: &[&str], up_id: &str, us_id: &str) -> Run {
        let with = |id: &str| -> Vec<String> { args.iter().map(|a| a.replace("%ID%", id)).collect() };
        let up = self.run_one(&upstream_kubeadm(), &with(up_id));
        let mut us = self.run_one(&ours(), &with(us_id));
        if !us_id.is_empty() {
            // The id also shows base64-encoded, in the Secret a dry run prints.
            use base64::Engine as _;
            let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
            for text in [&mut us.stdout, &mut us.stderr] {
                *text = text.replace(us_id, up_id).replace(&b64(us_id), &b64(up_id));
            }
        }
        // A dry run prints the Secret with its expiration (base64 of an RFC 3339 time, to the
        // second), computed when each binary ran: a second boundary between the two runs must not
        // fail the test, a later or earlier expiration must.
        us.stdout = same_expirations(&up.stdout, &us.stdout);
        let label = args.join(" ");
        assert_eq!(
            expected_code(&up),
            us.code,
            "exit code of `{label}`\nupstream: {up:?}\nours: {us:?}"
        );
        assert!(
            up.stdout == us.stdout,
            "stdout of `{label}`:\n{}",
            diff(&up.stdout, &us.stdout)
        );
        if up.code != 0 {
            // Upstream's error is ours' first line; upstream adds its stack-trace hint.
            let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
            assert_eq!(first(&up.stderr), first(&us.stderr), "error of `{label}`");
        } else {
            assert_eq!(up.stderr, us.stderr, "stderr of `{label}`");
        }
        up
    }
}

/// A token Secret as JSON, with what the server and the clock set removed and the id masked;
/// the expiration is returned apart, as Unix seconds.
fn secret_view(server: &ApiServer, id: &str) -> (serde_json::Value, Option<i64>) {
    let text = server.kubectl(&[
        "-n",
        "kube-system",
        "get",
        "secret",
        &format!("bootstrap-token-{id}"),
        "--show-managed-fields",
        "-o",
        "json",
    ]);
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("secret JSON");
    let meta = v["metadata"].as_object_mut().expect("metadata");
    for k in ["uid", "resourceVersion", "creationTimestamp"] {
        meta.remove(k);
    }
    // Who wrote it, as the API server recorded from the User-Agent (`kubeadm`), and how.
    let writers: Vec<serde_json::Value> = meta
        .remove("managedFields")
        .and_then(|m| m.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|f| serde_json::json!([f["manager"], f["operation"]]))
        .collect();
    meta.insert("managedFields".into(), writers.into());
    meta.insert("name".into(), "bootstrap-token-ID".into());
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let data = v["data"].as_object_mut().expect("data");
    let expiration = data.remove("expiration").map(|e| {
        let text =
            String::from_utf8(b64.decode(e.as_str().unwrap_or_default()).expect("base64")).expect("utf-8");
        let t: jiff::Timestamp = text.parse().expect("RFC 3339 expiration");
        t.as_second()
    });
    data.insert("token-id".into(), b64.encode("ID").into());
    (v, expiration)
}

fn assert_same_secret(server: &ApiServer, up_id: &str, us_id: &str) {
    let (up, up_exp) = secret_view(server, up_id);
    let (us, us_exp) = secret_view(server, us_id);
    assert_eq!(up, us, "Secret of token {us_id} (ours) vs {up_id} (upstream)");
    assert_eq!(up["metadata"]["managedFields"][0][0], "kubeadm", "{up}");
    match (up_exp, us_exp) {
        (None, None) => {}
        (Some(a), Some(b)) => assert!((a - b).abs() <= 60, "expirations {a} vs {b}"),
        other => panic!("expiration present on one side only: {other:?}"),
    }
}

fn token_exists(server: &ApiServer, id: &str) -> bool {
    server
        .kubectl(&["-n", "kube-system", "get", "secrets", "-o", "name"])
        .lines()
        .any(|l| l == format!("secret/bootstrap-token-{id}"))
}

#[test]
fn token_commands_match_upstream_on_a_real_server() {
    let server = ApiServer::start_with(&upstream_kubeadm());
    let kc = server.kubeconfig().to_string_lossy().into_owned();
    let pair = Pair {
        server: &server,
        env: vec![],
    };
    let k = ["--kubeconfig", kc.as_str()];
    let args = |rest: &[&'static str]| -> Vec<&str> { rest.iter().copied().chain(k).collect() };

    // create: from flags, with each flag; the printed token; the Secret written.
    let s = "0123456789abcdef";
    let full = |id: &str| format!("{id}.{s}");
    pair.same(
        &args(&[
            "token",
            "create",
            "%ID%.0123456789abcdef",
            "--ttl",
            "1h",
            "--description",
            "for the test",
            "--groups",
            "system:bootstrappers:extra,system:bootstrappers:more",
            "--usages",
            "signing,authentication",
        ]),
        "aaaaa1",
        "bbbbb1",
    );
    assert_same_secret(&server, "aaaaa1", "bbbbb1");
    // Defaults (24h, both usages, the default group) and a token that never expires.
    pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef"]),
        "aaaaa2",
        "bbbbb2",
    );
    assert_same_secret(&server, "aaaaa2", "bbbbb2");
    pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef", "--ttl", "0"]),
        "aaaaa3",
        "bbbbb3",
    );
    assert_same_secret(&server, "aaaaa3", "bbbbb3");
    // The join commands, worker and control plane, on one line.
    let join = pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef", "--print-join-command"]),
        "aaaaa4",
        "bbbbb4",
    );
    assert!(
        join.stdout.starts_with("kubeadm join 127.0.0.1:"),
        "{}",
        join.stdout
    );
    pair.same(
        &args(&[
            "token",
            "create",
            "%ID%.0123456789abcdef",
            "--print-join-command",
            "--certificate-key",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ]),
        "aaaaa5",
        "bbbbb5",
    );
    // Tokens from a config file: every one is created, the first printed.
    for (side, ids) in [("up", ["aaaaa6", "aaaaa7"]), ("us", ["bbbbb6", "bbbbb7"])] {
        std::fs::write(
            server.root().join(format!("tokens-{side}.yaml")),
            format!(
                "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nbootstrapTokens:\n- token: {}\n  ttl: 2h\n  description: first\n- token: {}\n  usages: [authentication]\n  groups: [system:bootstrappers:two]\nlocalAPIEndpoint:\n  advertiseAddress: 10.254.254.254\nnodeRegistration:\n  name: node\n  criSocket: unix:///var/run/containerd/containerd.sock\n",
                full(ids[0]),
                full(ids[1])
            ),
        )
        .expect("config");
    }
    let up = pair.run_one(
        &upstream_kubeadm(),
        &[
            "token",
            "create",
            "--config",
            "tokens-up.yaml",
            "--kubeconfig",
            &kc,
        ]
        .map(String::from),
    );
    let us = pair.run_one(
        &ours(),
        &[
            "token",
            "create",
            "--config",
            "tokens-us.yaml",
            "--kubeconfig",
            &kc,
        ]
        .map(String::from),
    );
    assert_eq!(
        (up.code, up.stdout.replace("aaaaa6", "ID")),
        (us.code, us.stdout.replace("bbbbb6", "ID"))
    );
    assert_same_secret(&server, "aaaaa6", "bbbbb6");
    assert_same_secret(&server, "aaaaa7", "bbbbb7");
    // A token id in use, a malformed token, --certificate-key alone, flags mixed with --config.
    pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef"]),
        "aaaaa1",
        "bbbbb1",
    );
    pair.same(&args(&["token", "create", "%ID%.0123456789"]), "aaaaa8", "bbbbb8");
    pair.same(&args(&["token", "create", "--certificate-key", "abc"]), "", "");
    pair.same(
        &args(&["token", "create", "--config", "tokens-up.yaml", "--ttl", "1h"]),
        "",
        "",
    );
    pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef", "--usages", "nope"]),
        "aaaaa9",
        "bbbbb9",
    );
    let invalid = pair.same(
        &args(&[
            "token",
            "create",
            "%ID%.0123456789abcdef",
            "--usages",
            "signing",
            "--groups",
            "system:bootstrappers:x",
        ]),
        "aaaaa9",
        "bbbbb9",
    );
    assert_eq!(invalid.code, 3, "{invalid:?}");
    assert!(!token_exists(&server, "aaaaa9") && !token_exists(&server, "bbbbb9"));

    // list: both list the same tokens (created within the last minute, so the TTLs agree), in every
    // format; and a malformed token Secret is reported on stderr and skipped.
    let bad = server.root().join("bad-token.json");
    std::fs::write(
        &bad,
        r#"{"apiVersion":"v1","kind":"Secret","type":"bootstrap.kubernetes.io/token","metadata":{"name":"bootstrap-token-zzzzzz","namespace":"kube-system"},"stringData":{"token-id":"yyyyyy","token-secret":"0123456789abcdef"}}"#,
    )
    .expect("bad token");
    server.kubectl(&["create", "-f", &bad.to_string_lossy()]);
    let listed = pair.same(&args(&["token", "list"]), "", "");
    assert!(listed.stdout.starts_with("TOKEN "), "{}", listed.stdout);
    assert!(listed.stdout.contains("aaaaa7.") && listed.stdout.contains("bbbbb7."));
    assert!(
        listed.stderr.contains("bootstrap-token-zzzzzz"),
        "{}",
        listed.stderr
    );
    pair.same(&args(&["token", "list", "-o", "json"]), "", "");
    pair.same(&args(&["token", "list", "-o", "yaml"]), "", "");
    pair.same(&args(&["token", "list", "-o", "wide"]), "", "");
    // The template printers, run once per token as upstream's are. (Their failures are left out:
    // upstream's error names the whole token, which the secrets audit refuses on stderr.)
    for format in [
        "jsonpath={.token} {.usages[*]}{\"\\n\"}",
        "jsonpath-as-json={.description}",
        "jsonpath={.missing}",
        "go-template={{.token}} {{.expires}} {{range .usages}}{{.}},{{end}}{{printf \"%q\\n\" .description}}",
        "go-template={{.missing}}",
        "jsonpath={.kind",
        "go-template={{.kind",
    ] {
        pair.same(&args(&["token", "list", "-o", format]), "", "");
    }
    // The kubeconfig found through $KUBECONFIG when --kubeconfig is not given.
    let via_env = Pair {
        server: &server,
        env: vec![("KUBECONFIG", format!("/nonexistent:{kc}"))],
    };
    via_env.same(&["token", "list"], "", "");

    // Dry runs: reads go to the server, writes are only reported.
    pair.same(
        &args(&["token", "create", "%ID%.0123456789abcdef", "--dry-run"]),
        "aaaab1",
        "bbbbc1",
    );
    assert!(!token_exists(&server, "aaaab1") && !token_exists(&server, "bbbbc1"));
    pair.same(
        &args(&["token", "delete", "%ID%", "--dry-run"]),
        "aaaaa1",
        "bbbbb1",
    );
    assert!(token_exists(&server, "aaaaa1") && token_exists(&server, "bbbbb1"));
    pair.same(&args(&["token", "list", "--dry-run"]), "", "");

    // delete: by id and by whole token; an unknown id; a malformed argument; none.
    pair.same(&args(&["token", "delete", "%ID%"]), "aaaaa1", "bbbbb1");
    pair.same(
        &args(&["token", "delete", "%ID%.0123456789abcdef", "%ID%"]),
        "aaaaa2",
        "bbbbb2",
    );
    let gone = pair.same(&args(&["token", "delete", "%ID%"]), "aaaaa1", "bbbbb1");
    assert_ne!(gone.code, 0);
    pair.same(&args(&["token", "delete", "not-a-token"]), "", "");
    pair.same(&args(&["token", "delete"]), "", "");
    for id in ["aaaaa1", "bbbbb1", "aaaaa2", "bbbbb2"] {
        assert!(!token_exists(&server, id), "{id} still there");
    }
    // Without a reachable kubeconfig.
    pair.same(
        &["token", "list", "--kubeconfig", "/nonexistent/admin.conf"],
        "",
        "",
    );
    pair.same(
        &[
            "token",
            "create",
            "--dry-run",
            "--kubeconfig",
            "/nonexistent/admin.conf",
        ],
        "",
        "",
    );
}
