//! `kubeadm join` next to upstream v1.25.16's: bad input (flags, config files, missing
//! discovery, `--config` mixed with flags) must fail alike, with the same message and exit code;
//! and against a real API server (upstream etcd + kube-apiserver on loopback, prepared by upstream
//! `init phase upload-config all | bootstrap-token | addon kube-proxy`), discovery must accept and
//! refuse what upstream's does, and `join phase kubelet-start` must write the same files (the
//! bootstrap kubeconfig, the CA, the kubelet's configuration and flags) and annotate the Node alike.
//!
//! Every join runs under `--rootfs <temp dir>`, so neither binary touches this machine. No kubelet
//! runs here: the test plays its part, writing `kubelet.conf` once `bootstrap-kubelet.conf`
//! appears (and keeping a copy of the latter, which join removes when it is done).
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kubeadm_testkit::apiserver::{ApiServer, InitConfig};
use kubeadm_testkit::oracle::{Run, diff, expected_code, run, upstream_kubeadm};

/// Files written into a node's root before a run: path, content.
type Files<'a> = Vec<(&'a str, &'a str)>;
/// The same, borrowed.
type FileSlice<'a> = &'a [(&'a str, &'a str)];

const TOKEN: &str = "abcdef.0123456789abcdef";
/// The node the worker joins as.
const WORKER: &str = "worker";
/// The control-plane node (created by the test as its kubelet would register it).
const CONTROL_PLANE: &str = "apiserver-test";

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn init_config(port: u16, cluster_extra: &str) -> String {
    let token = format!("bootstrapTokens:\n- token: {TOKEN}\n");
    InitConfig {
        node: CONTROL_PLANE,
        init_extra: &token,
        cluster_extra,
        ..InitConfig::default()
    }
    .render(port)
}

/// A server as `kubeadm init` leaves it for joining nodes: kubeadm-config, kubelet-config,
/// kube-proxy, cluster-info and its RBAC, the token; plus the JWS signature of cluster-info, which
/// the controller manager's bootstrap signer would add (no controller manager runs here). Returns
/// the server and the CA pin upstream prints in its join command.
fn prepared_server() -> (ApiServer, String) {
    prepared_server_with("")
}

/// [`prepared_server`] with `cluster_extra` added to the ClusterConfiguration it uploads.
fn prepared_server_with(cluster_extra: &str) -> (ApiServer, String) {
    let up = upstream_kubeadm();
    let server = ApiServer::start_with(&up);
    std::fs::write(
        server.root().join("init.yaml"),
        init_config(server.port(), cluster_extra),
    )
    .expect("config");
    server.create_node(CONTROL_PLANE, serde_json::json!({}));
    for phase in [
        &["upload-config", "all"][..],
        &["bootstrap-token"],
        &["addon", "kube-proxy"],
    ] {
        kubeadm_testkit::rootfs::init_phase(&up, &server.root(), phase, "/init.yaml");
    }
    let kubeconfig = cluster_info_kubeconfig(&server);
    let (id, secret) = TOKEN.split_once('.').expect("token");
    let jws = kubeadm_core::cluster::cluster_info::detached_jws(&kubeconfig, id, secret);
    let patch = serde_json::json!({"data": {format!("jws-kubeconfig-{id}"): jws}}).to_string();
    server.kubectl(&[
        "-n",
        "kube-public",
        "patch",
        "cm",
        "cluster-info",
        "--type",
        "merge",
        "-p",
        &patch,
    ]);
    // The pin as upstream prints it in its join command.
    let kc = server.kubeconfig().to_string_lossy().into_owned();
    let printed = run(
        &up,
        &["token", "create", "--print-join-command", "--kubeconfig", &kc],
        &server.root(),
        &[],
    );
    assert_eq!(printed.code, 0, "{printed:?}");
    let pin = printed
        .stdout
        .split_whitespace()
        .skip_while(|w| *w != "--discovery-token-ca-cert-hash")
        .nth(1)
        .expect("a pin in the join command")
        .to_string();
    (server, pin)
}

/// Runs `bin --rootfs <root> join <args>`.
fn join(bin: &Path, root: &Path, args: &[&str]) -> Run {
    let rootfs = root.to_string_lossy().into_owned();
    let mut all = vec!["--rootfs", rootfs.as_str(), "join"];
    all.extend_from_slice(args);
    run(bin, &all, root, &[])
}

fn node_root() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("kubeadm-rs-join")
        .tempdir()
        .expect("temp dir")
}

/// A klog line's header (`W1204 13:43:22.123456   12345 file.go:12] `) masked but for its severity
/// letter: the time and process id differ from run to run, and ours names its own source file.
fn mask_klog(line: &str) -> String {
    match kubeadm_testkit::oracle::klog_message(line) {
        Some((severity, message)) => format!("{severity} {message}"),
        None => line.to_string(),
    }
}

/// A run's whole standard error as compared: klog headers masked ([`mask_klog`]); of ours, the
/// deliberate additions (docs/differences.md, decoding-errors-name-the-place) taken out: where in
/// the config file a message comes from (`/c.yaml:1:1: `, `/c.yaml: `) and the lines that list
/// where each invalid field is (`\t/c.yaml:8:3: nodeRegistration.name`).
fn stderr_compared(stderr: &str, ours: bool) -> Vec<String> {
    let is_place = |l: &str| {
        l.strip_prefix("\t/")
            .and_then(|l| l.split_once(": "))
            .is_some_and(|(head, field)| {
                let mut parts = head.split(':').skip(1);
                parts.clone().count() == 2
                    && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
                    && !field.contains(' ')
            })
    };
    stderr
        .lines()
        .filter(|l| !(tool_dependent(l, ours) || (ours && is_place(l))))
        .map(|l| mask_resolver(&mask_klog(if ours { without_location(l) } else { l })))
        .collect()
}

/// Preflight's lines that differ by design in a node root without tools (docs/differences.md, "No
/// crictl" and "Host facts without external programs"): upstream needs `crictl` to reach the
/// container runtime and warns twice that it is missing, ours talks CRI itself and warns that the
/// runtime is not running; upstream runs `uname` for the kernel release and OS name and warns it
/// cannot, ours asks the kernel and goes on to look for the kernel's config.
fn tool_dependent(line: &str, ours: bool) -> bool {
    if ours {
        line.starts_with("\t[WARNING CRI]: container runtime is not running: ")
            || line.starts_with("\t[WARNING SystemVerification]: failed to parse kernel config: ")
    } else {
        line == "\t[WARNING FileExisting-crictl]: crictl not found in system path"
            || line.ends_with(
                "] [preflight] WARNING: Couldn't create the interface used for talking to the container runtime: crictl is required by the container runtime: executable file not found in $PATH",
            )
            || (line.starts_with("\t[WARNING SystemVerification]: failed to get ")
                && line.ends_with(": exec: \"uname\": executable file not found in $PATH"))
    }
}

/// A failed host name lookup, without the resolver's own words: which name server it asked and how
/// that failed depend on the resolver (Go's asks [::1]:53 when the root has no resolv.conf).
fn mask_resolver(line: &str) -> String {
    if let Some(at) = line.find("\": lookup ") {
        let after = at + "\": lookup ".len();
        if let Some(on) = line[after..].find(" on ") {
            return format!("{} on <resolver>: <error>", &line[..after + on]);
        }
    }
    line.to_string()
}

/// Standard output without the system verification report preflight prints in a chroot (upstream
/// cannot run `uname` there; ours reads the kernel release without it).
fn phase_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| !l.starts_with('\u{1b}') && !l.contains("system verification failed"))
        .collect()
}

/// Ours names the config file, and where in it a document starts (`/c.yaml:1:1: `), before
/// upstream's message; the message itself must be upstream's.
fn without_location(line: &str) -> &str {
    if !line.starts_with('/') {
        return line;
    }
    let Some((head, rest)) = line.split_once(": ") else {
        return line;
    };
    let mut parts = head.split(':').skip(1);
    if !head.contains(' ') && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
        rest
    } else {
        line
    }
}

fn assert_same(label: &str, up: &Run, us: &Run) {
    assert_eq!(
        expected_code(up),
        us.code,
        "exit code of {label}\nupstream: {up:#?}\nours: {us:#?}"
    );
    let (a, b) = (phase_lines(&up.stdout), phase_lines(&us.stdout));
    assert!(
        a == b,
        "stdout of {label}:\n{}",
        diff(&a.join("\n"), &b.join("\n"))
    );
    // The whole standard error: warnings, klog lines and the error.
    let (a, b) = (
        stderr_compared(&up.stderr, false),
        stderr_compared(&us.stderr, true),
    );
    assert!(
        a == b,
        "stderr of {label}:\n{}\nupstream:\n{}\nours:\n{}",
        diff(&a.join("\n"), &b.join("\n")),
        up.stderr,
        us.stderr
    );
}

/// Both binaries on the same arguments, each in a fresh root with `files` written into it.
fn both(label: &str, args: &[&str], files: &[(&str, &str)]) -> (Run, Run) {
    let runs: Vec<Run> = [upstream_kubeadm(), ours()]
        .iter()
        .map(|bin| {
            let root = node_root();
            for (path, text) in files {
                let p = root.path().join(path.trim_start_matches('/'));
                std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
                std::fs::write(p, text).expect("file");
            }
            join(bin, root.path(), args)
        })
        .collect();
    assert_same(label, &runs[0], &runs[1]);
    let mut it = runs.into_iter();
    (it.next().expect("upstream"), it.next().expect("ours"))
}

const BAD_CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    token: abcdef.0123456789abcdef
    apiServerEndpoint: 1.2.3.4
nodeRegistration:
  name: Bad_Name
";

/// A discovery file whose user authenticates with a `gcp` auth provider: upstream registers no
/// auth provider plugin and fails when it makes the client; kubeadm-rs fails alike, never running
/// the provider's `cmd-path`.
const AUTH_PROVIDER_DISCOVERY: &str = "apiVersion: v1
kind: Config
clusters:
- name: k
  cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}
contexts:
- name: c
  context: {cluster: k, user: u}
current-context: c
users:
- name: u
  user:
    auth-provider:
      name: gcp
      config: {cmd-path: /bin/sh, cmd-args: '-c :>/auth-provider-ran'}
";

/// Input upstream refuses before contacting anything: the same message and exit code.
#[test]
fn bad_input_fails_as_upstream() {
    let t = ["--token", TOKEN];
    let cases: Vec<(&str, Vec<&str>, Files)> = vec![
        ("no discovery", vec![], vec![]),
        ("no discovery (phase)", vec!["phase", "preflight"], vec![]),
        (
            "no discovery (kubelet-start)",
            vec!["phase", "kubelet-start"],
            vec![],
        ),
        ("endpoint without token", vec!["1.2.3.4:6443"], vec![]),
        ("malformed token", vec!["1.2.3.4:6443", "--token", "abc"], vec![]),
        ("no CA pin", [&["1.2.3.4:6443"][..], &t].concat(), vec![]),
        (
            "missing discovery file",
            vec!["--discovery-file", "/nonexistent"],
            vec![],
        ),
        ("missing config", vec!["--config", "/nonexistent"], vec![]),
        (
            "discovery file whose user names an auth provider",
            vec![
                "--discovery-file",
                "/disc.yaml",
                "--ignore-preflight-errors",
                "all",
            ],
            vec![("/disc.yaml", AUTH_PROVIDER_DISCOVERY)],
        ),
        (
            "config mixed with flags",
            vec![
                "--config",
                "/c.yaml",
                "--token",
                TOKEN,
                "--discovery-token-unsafe-skip-ca-verification",
            ],
            vec![("/c.yaml", BAD_CONFIG)],
        ),
        (
            "invalid config",
            vec!["--config", "/c.yaml"],
            vec![("/c.yaml", BAD_CONFIG)],
        ),
        (
            "not a config",
            vec!["--config", "/c.yaml"],
            vec![("/c.yaml", "kind: Foo\napiVersion: v1\n")],
        ),
        (
            "config of the wrong kind",
            vec!["--config", "/c.yaml"],
            vec![(
                "/c.yaml",
                "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n",
            )],
        ),
        (
            "unknown preflight error name mixed with all",
            [
                &[
                    "1.2.3.4:6443",
                    "--discovery-token-unsafe-skip-ca-verification",
                    "--ignore-preflight-errors",
                    "all,Swap",
                ][..],
                &t,
            ]
            .concat(),
            vec![],
        ),
        (
            "two endpoints",
            [&["1.2.3.4:6443", "5.6.7.8:6443"][..], &t].concat(),
            vec![],
        ),
        ("unknown flag", vec!["--frobnicate"], vec![]),
        (
            "control plane advertising something else than an address",
            [
                &[
                    "1.2.3.4:6443",
                    "--discovery-token-unsafe-skip-ca-verification",
                    "--control-plane",
                    "--apiserver-advertise-address",
                    "foo",
                ][..],
                &t,
            ]
            .concat(),
            vec![],
        ),
        (
            "control-plane-join phase without admin.conf",
            vec!["phase", "control-plane-join", "etcd", "--control-plane"],
            vec![],
        ),
    ];
    for (label, args, files) in cases {
        let (up, _) = both(label, &args, &files);
        assert_ne!(up.code, 0, "{label}: upstream accepted it: {up:?}");
    }
}

/// The key `kubeadm init phase upload-certs` encrypts the shared certificates with, in the tests.
const CERT_KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// The joining control plane.
const SECOND: &str = "cp2";
const SECOND_IP: &str = "10.0.0.2";

/// [`prepared_server`] whose shared certificates upstream's `init phase upload-certs` uploaded with
/// [`CERT_KEY`].
fn server_with_uploaded_certs() -> (ApiServer, String) {
    server_with_uploaded_certs_and("")
}

/// [`server_with_uploaded_certs`] whose ClusterConfiguration has `cluster_extra` added.
fn server_with_uploaded_certs_and(cluster_extra: &str) -> (ApiServer, String) {
    let (server, pin) = prepared_server_with(cluster_extra);
    let upload = InitConfig {
        node: CONTROL_PLANE,
        init_extra: &format!("certificateKey: {CERT_KEY}\n"),
        ..InitConfig::default()
    }
    .render(server.port());
    std::fs::write(server.root().join("upload.yaml"), upload).expect("config");
    kubeadm_testkit::rootfs::init_phase(
        &upstream_kubeadm(),
        &server.root(),
        &["upload-certs", "--upload-certs"],
        "/upload.yaml",
    );
    (server, pin)
}

/// One control-plane-prepare phase run by `bin` in `root`: token discovery against `server`, the
/// control-plane flags the phase takes.
fn prepare_phase(bin: &Path, root: &Path, server: &ApiServer, pin: &str, phase: &str, key: &str) -> Run {
    let ep = format!("127.0.0.1:{}", server.port());
    let discovery = ["--token", TOKEN, "--discovery-token-ca-cert-hash", pin];
    let mut args: Vec<&str> = vec!["phase", "control-plane-prepare", phase];
    match phase {
        "download-certs" | "kubeconfig" => {
            args.push(&ep);
            args.extend(discovery);
            args.extend(["--control-plane", "--certificate-key", key]);
        }
        "certs" => {
            args.push(&ep);
            args.extend(discovery);
            args.extend(["--control-plane", "--node-name", SECOND]);
            args.extend(["--apiserver-advertise-address", SECOND_IP]);
        }
        _ => args.extend(["--control-plane", "--apiserver-advertise-address", SECOND_IP]),
    }
    join(bin, root, &args)
}

/// `phase` run by upstream in `roots[0]` and by ours in `roots[1]`, each successful.
fn prepare_in_both(roots: &[tempfile::TempDir; 2], server: &ApiServer, pin: &str, phase: &str) -> Vec<Run> {
    let runs: Vec<Run> = [&upstream_kubeadm(), &ours()]
        .iter()
        .zip(roots)
        .map(|(bin, root)| prepare_phase(bin, root.path(), server, pin, phase, CERT_KEY))
        .collect();
    assert_eq!(runs[0].code, 0, "{phase}: upstream failed: {:#?}", runs[0]);
    assert_eq!(runs[1].code, 0, "{phase}: ours failed: {:#?}", runs[1]);
    runs
}

/// The files a run left under `etc/kubernetes`, text, with each certificate's identity (subject,
/// SANs, issuer) instead of its bytes and each kubeconfig's client credentials left out (keys,
/// serials and times differ between runs).
fn prepared_files(root: &Path) -> std::collections::BTreeMap<String, (u32, String)> {
    kubeadm_testkit::rootfs::tree(root, &["etc/kubernetes"])
        .into_iter()
        .map(|(path, (mode, bytes))| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let shared = ["/ca.", "/sa.", "/front-proxy-ca.", "/etcd/ca."]
                .iter()
                .any(|s| path.contains(s));
            let text = if shared || path.contains("/manifests/") || bytes.is_empty() {
                text
            } else if path.ends_with(".crt") {
                let c = kubeadm_core::pki::CertInfo::from_pem(&text).expect("certificate");
                format!(
                    "{} {:?} {:?} {:?} {:?}",
                    c.common_name, c.organizations, c.dns_names, c.ips, c.raw_issuer
                )
            } else if path.ends_with(".key") {
                "a key".to_string()
            } else {
                text.lines()
                    .filter(|l| !l.contains("client-certificate-data") && !l.contains("client-key-data"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            (path, (mode, text))
        })
        .collect()
}

/// `join phase control-plane-prepare` phase by phase next to upstream's, on a real API server whose
/// shared certificates upstream's `init phase upload-certs` uploaded: the same output (the
/// certificates' lines as a set: upstream walks its CAs in Go map order), the same files with the
/// same modes (the downloaded CAs and keys and the manifests byte for byte, the certificates with
/// this node's identity and SANs, signed by the downloaded CAs); then the bad inputs of
/// `download-certs` (a wrong key, a key of the wrong size, a key that is not hex, the Secret gone)
/// fail as upstream's do, and ours writes nothing.
#[test]
fn control_plane_prepare_writes_what_upstream_writes() {
    let (server, pin) = server_with_uploaded_certs();
    let up = upstream_kubeadm();
    let roots = [node_root(), node_root()];
    for phase in ["download-certs", "certs", "kubeconfig", "control-plane"] {
        let runs = prepare_in_both(&roots, &server, &pin, phase);
        let mut lines: Vec<Vec<&str>> = runs.iter().map(|r| phase_lines(&r.stdout)).collect();
        if phase == "certs" {
            lines.iter_mut().for_each(|l| l.sort_unstable());
        }
        assert!(
            lines[0] == lines[1],
            "{phase} stdout:\n{}",
            diff(&lines[0].join("\n"), &lines[1].join("\n"))
        );
    }
    let (a, b) = (prepared_files(roots[0].path()), prepared_files(roots[1].path()));
    assert!(a.contains_key("etc/kubernetes/pki/ca.key"), "{a:#?}");
    assert!(
        a.contains_key("etc/kubernetes/manifests/kube-apiserver.yaml"),
        "{a:#?}"
    );
    for (path, (mode, text)) in &a {
        let ours = b.get(path).unwrap_or_else(|| panic!("ours wrote no {path}"));
        assert_eq!(*mode, ours.0, "mode of {path}");
        assert!(*text == ours.1, "{path}:\n{}", diff(text, &ours.1));
    }
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    // The API server's certificate is this node's and the downloaded CA signed it.
    let apiserver =
        std::fs::read_to_string(roots[1].path().join("etc/kubernetes/pki/apiserver.crt")).expect("crt");
    let cert = kubeadm_core::pki::CertInfo::from_pem(&apiserver).expect("cert");
    assert!(
        cert.ips.contains(&SECOND_IP.parse().expect("ip")),
        "{:?}",
        cert.ips
    );
    assert!(cert.dns_names.iter().any(|d| d == SECOND), "{:?}", cert.dns_names);
    let ca = std::fs::read_to_string(server.root().join("etc/kubernetes/pki/ca.crt")).expect("ca");
    let ca = kubeadm_core::pki::CertInfo::from_pem(&ca).expect("ca");
    assert_eq!(cert.raw_issuer, ca.raw_subject);

    let bad_keys = [
        (
            "a wrong key",
            "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
        ),
        ("a key of the wrong size", "0123456789abcdef"),
        ("a key that is not hex", "0123456789abcdefg"),
    ];
    let check_refused = |label: &str| {
        let bad_key = bad_keys
            .iter()
            .find(|(l, _)| *l == label)
            .map_or(CERT_KEY, |(_, k)| *k);
        let runs: Vec<(Run, tempfile::TempDir)> = [&up, &ours()]
            .iter()
            .map(|bin| {
                let root = node_root();
                (
                    prepare_phase(bin, root.path(), &server, &pin, "download-certs", bad_key),
                    root,
                )
            })
            .collect();
        let (upr, our) = (&runs[0].0, &runs[1].0);
        assert_ne!(upr.code, 0, "{label}: upstream accepted it: {upr:#?}");
        assert_eq!(expected_code(upr), our.code, "{label}: {our:#?}");
        // The whole standard error, line by line; ours may add the cause to upstream's error.
        let (a, b) = (
            stderr_compared(&upr.stderr, false),
            stderr_compared(&our.stderr, true),
        );
        assert!(
            !a.is_empty()
                && a.len() == b.len()
                && a.iter()
                    .zip(&b)
                    .all(|(x, y)| x == y || (!x.is_empty() && y.starts_with(x.as_str()))),
            "{label}:\n{}",
            diff(&a.join("\n"), &b.join("\n"))
        );
        let b = b.join("\n");
        let written = kubeadm_testkit::rootfs::tree(runs[1].1.path(), &["etc/kubernetes"]);
        assert!(
            written.values().all(|(_, bytes)| bytes.is_empty()),
            "{label}: ours wrote {:?}",
            written.keys().collect::<Vec<_>>()
        );
        b
    };
    for (label, _) in bad_keys {
        let ours = check_refused(label);
        if label == "a wrong key" {
            assert!(
                ours.contains("kubeadm init phase upload-certs --upload-certs"),
                "{ours}"
            );
        }
    }
    server.kubectl(&["-n", "kube-system", "delete", "secret", "kubeadm-certs"]);
    let ours = check_refused("the Secret gone");
    assert!(ours.contains("might have expired"), "{ours}");
}

fn join_config(discovery: &str) -> String {
    format!(
        "apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
{discovery}
nodeRegistration:
  name: {WORKER}
"
    )
}

/// The kubeconfig of `cluster-info` (server and CA, no user), as a discovery file.
fn cluster_info_kubeconfig(server: &ApiServer) -> String {
    server.kubectl(&[
        "-n",
        "kube-public",
        "get",
        "cm",
        "cluster-info",
        "-o",
        "jsonpath={.data.kubeconfig}",
    ])
}

/// Discovery against a real API server: accepted and refused as upstream's is, with the same
/// output and errors (`join phase preflight` runs discovery and the configuration fetch).
#[test]
fn discovery_on_a_real_server_as_upstream() {
    let (server, pin) = prepared_server();
    let ep = format!("127.0.0.1:{}", server.port());
    let wrong_pin = format!("sha256:{}", "0".repeat(64));
    let token_args = |token: &str, extra: &[&str]| -> Vec<String> {
        [
            "phase",
            "preflight",
            &ep,
            "--token",
            token,
            "--node-name",
            WORKER,
            "--ignore-preflight-errors=all",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let pinned = ["--discovery-token-ca-cert-hash", pin.as_str()];
    let cases: Vec<(&str, Vec<String>, i32)> = vec![
        ("pinned CA", token_args(TOKEN, &pinned), 0),
        (
            "unpinned CA",
            token_args(TOKEN, &["--discovery-token-unsafe-skip-ca-verification"]),
            0,
        ),
        (
            "second pin matches",
            token_args(
                TOKEN,
                &[
                    "--discovery-token-ca-cert-hash",
                    &wrong_pin,
                    "--discovery-token-ca-cert-hash",
                    &pin,
                ],
            ),
            0,
        ),
        (
            "wrong pin",
            token_args(TOKEN, &["--discovery-token-ca-cert-hash", &wrong_pin]),
            1,
        ),
        (
            "short pin",
            token_args(TOKEN, &["--discovery-token-ca-cert-hash", "sha256:abc"]),
            1,
        ),
        (
            "unknown pin format",
            token_args(TOKEN, &["--discovery-token-ca-cert-hash", "md5:abc"]),
            1,
        ),
        ("wrong secret", token_args("abcdef.0000000000000000", &pinned), 1),
        (
            "the discovery token as TLS bootstrap token",
            [
                "phase",
                "preflight",
                &ep,
                "--discovery-token",
                TOKEN,
                "--discovery-token-unsafe-skip-ca-verification",
                "--node-name",
                WORKER,
                "--ignore-preflight-errors=all",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            0,
        ),
    ];
    for (label, args, code) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (up, _) = both(label, &args, &[]);
        assert_eq!(up.code, *code, "{label}: {up:#?}");
    }

    let info = cluster_info_kubeconfig(&server);
    let unknown_id = join_config(&format!(
        "  bootstrapToken: {{token: zzzzzz.0123456789abcdef, apiServerEndpoint: '{ep}', unsafeSkipCAVerification: true}}\n  tlsBootstrapToken: zzzzzz.0123456789abcdef\n  timeout: 6s"
    ));
    let file_with_token = join_config(&format!(
        "  file: {{kubeConfigPath: /discovery.conf}}\n  tlsBootstrapToken: {TOKEN}\n  timeout: 20s"
    ));
    let file_without_credentials = join_config("  file: {kubeConfigPath: /discovery.conf}\n  timeout: 20s");
    for (label, cfg, code) in [
        ("token without signature", unknown_id.as_str(), 1),
        ("file and TLS bootstrap token", file_with_token.as_str(), 0),
        ("file without credentials", file_without_credentials.as_str(), 1),
    ] {
        let (up, _) = both(
            label,
            &[
                "phase",
                "preflight",
                "--config",
                "/join.yaml",
                "--ignore-preflight-errors=all",
            ],
            &[("/join.yaml", cfg), ("/discovery.conf", &info)],
        );
        assert_eq!(up.code, code, "{label}: {up:#?}");
    }

    // A discovery file client-go refuses (its context names no cluster).
    let unnamed = format!(
        "{}contexts:\n- context: {{cluster: '', user: joiner}}\n  name: joining\ncurrent-context: joining\nusers:\n- name: joiner\n  user: {{token: {TOKEN}}}\n",
        info.replace("contexts: null\n", "")
            .replace("current-context: \"\"\n", "")
            .replace("users: null\n", "")
    );
    let (up, _) = both(
        "discovery file refused by client-go's validation",
        &[
            "phase",
            "preflight",
            "--config",
            "/join.yaml",
            "--ignore-preflight-errors=all",
        ],
        &[
            ("/join.yaml", &file_without_credentials),
            ("/discovery.conf", &unnamed),
        ],
    );
    assert!(up.stderr.contains("invalid configuration"), "{up:#?}");
}

/// Plays the kubelet's part in the TLS bootstrap: once `bootstrap-kubelet.conf` appears under
/// `root`, keeps its text and writes `kubelet.conf` (the admin kubeconfig: a usable client). Gives
/// up when `done` is set (the join ended without writing it).
fn play_kubelet(
    root: &Path,
    admin: PathBuf,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Option<String>> {
    let dir = root.join("etc/kubernetes");
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        let bootstrap = dir.join("bootstrap-kubelet.conf");
        while Instant::now() < deadline && !done.load(std::sync::atomic::Ordering::SeqCst) {
            if let Ok(text) = std::fs::read_to_string(&bootstrap)
                && text.contains("users:")
            {
                // Let the writer finish.
                std::thread::sleep(Duration::from_millis(200));
                let text = std::fs::read_to_string(&bootstrap).expect("read bootstrap kubeconfig");
                std::fs::copy(&admin, dir.join("kubelet.conf")).expect("write kubelet.conf");
                return Some(text);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    })
}

/// What one `kubelet-start` run left: its output, the bootstrap kubeconfig it wrote, the files
/// under the node's root (without the `kubelet.conf` the test wrote), and the Node's annotations.
#[derive(Debug, PartialEq)]
struct KubeletStart {
    code: i32,
    stdout: String,
    bootstrap: String,
    files: std::collections::BTreeMap<String, (u32, String)>,
    annotations: String,
}

fn kubelet_start(bin: &Path, server: &ApiServer, args: &[&str], files: &[(&str, &str)]) -> KubeletStart {
    let root = node_root();
    for (path, text) in files {
        std::fs::write(root.path().join(path.trim_start_matches('/')), text).expect("file");
    }
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let kubelet = play_kubelet(root.path(), server.kubeconfig(), done.clone());
    let r = join(bin, root.path(), args);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let bootstrap = kubelet
        .join()
        .expect("kubelet thread")
        .unwrap_or_else(|| panic!("{} wrote no bootstrap-kubelet.conf: {r:#?}", bin.display()));
    let mut tree: std::collections::BTreeMap<String, (u32, String)> =
        kubeadm_testkit::rootfs::tree(root.path(), &["etc/kubernetes", "var/lib/kubelet"])
            .into_iter()
            .map(|(k, (mode, bytes))| (k, (mode, String::from_utf8_lossy(&bytes).into_owned())))
            .collect();
    tree.remove("etc/kubernetes/kubelet.conf");
    let annotations = server.kubectl(&["get", "node", WORKER, "-o", "jsonpath={.metadata.annotations}"]);
    server.kubectl(&[
        "annotate",
        "node",
        WORKER,
        "kubeadm.alpha.kubernetes.io/cri-socket-",
    ]);
    KubeletStart {
        code: r.code,
        stdout: r.stdout,
        bootstrap,
        files: tree,
        annotations,
    }
}

/// `join phase kubelet-start` with token discovery and with a discovery file carrying its own
/// credentials (a token file, embedded as upstream embeds it): the same bootstrap kubeconfig, CA,
/// kubelet configuration and flags, the same output and the same Node annotation as upstream's.
#[test]
fn kubelet_start_writes_what_upstream_writes() {
    let (server, pin) = prepared_server();
    server.create_node(WORKER, serde_json::json!({}));
    let ep = format!("127.0.0.1:{}", server.port());
    let token_args = [
        "phase",
        "kubelet-start",
        ep.as_str(),
        "--token",
        TOKEN,
        "--discovery-token-ca-cert-hash",
        pin.as_str(),
        "--node-name",
        WORKER,
    ];
    let info = cluster_info_kubeconfig(&server);
    let with_user = format!(
        "{}contexts:\n- context: {{cluster: joined, user: joiner}}\n  name: joining\ncurrent-context: joining\nusers:\n- name: joiner\n  user: {{tokenFile: /token}}\n",
        info.replace("  name: \"\"\n", "  name: joined\n")
            .replace("contexts: null\n", "")
            .replace("current-context: \"\"\n", "")
            .replace("users: null\n", "")
    );
    let file_cfg = join_config("  file: {kubeConfigPath: /discovery.conf}\n  timeout: 20s");
    let file_files = [
        ("/join.yaml", file_cfg.as_str()),
        ("/discovery.conf", with_user.as_str()),
        ("/token", TOKEN),
    ];
    let mut whole = token_args[2..].to_vec();
    whole.push("--ignore-preflight-errors=all");
    let cases: [(&str, &[&str], FileSlice); 3] = [
        ("whole join (token discovery)", &whole, &[]),
        ("token discovery", &token_args, &[]),
        (
            "file discovery with a token file",
            &["phase", "kubelet-start", "--config", "/join.yaml"],
            &file_files,
        ),
    ];
    for (label, args, files) in cases {
        let up = kubelet_start(&upstream_kubeadm(), &server, args, files);
        let us = kubelet_start(&ours(), &server, args, files);
        assert_eq!(up.code, 0, "{label}: upstream failed: {up:#?}");
        let (a, b) = (phase_lines(&up.stdout), phase_lines(&us.stdout));
        assert!(a == b, "{label} stdout:\n{}", diff(&a.join("\n"), &b.join("\n")));
        assert!(
            up.bootstrap == us.bootstrap,
            "{label} bootstrap-kubelet.conf:\n{}",
            diff(&up.bootstrap, &us.bootstrap)
        );
        assert!(up.bootstrap.contains(TOKEN), "{label}: {}", up.bootstrap);
        for (path, (mode, text)) in &up.files {
            let ours = us
                .files
                .get(path)
                .unwrap_or_else(|| panic!("{label}: ours wrote no {path}"));
            assert_eq!(*mode, ours.0, "{label}: mode of {path}");
            assert!(*text == ours.1, "{label}: {path}:\n{}", diff(text, &ours.1));
        }
        assert_eq!(
            up.files.keys().collect::<Vec<_>>(),
            us.files.keys().collect::<Vec<_>>(),
            "{label}: files left (bootstrap-kubelet.conf must be gone)"
        );
        assert!(
            up.annotations.contains("cri-socket"),
            "{label}: {}",
            up.annotations
        );
        assert_eq!(up.annotations, us.annotations, "{label}: Node annotations");
        assert_eq!(
            (&up.bootstrap, &up.files, up.code),
            (&us.bootstrap, &us.files, us.code),
            "{label}"
        );
    }
}

/// Beyond upstream: `KUBEADM_TLS_BOOTSTRAP_TIMEOUT` sets how long `kubelet-start` waits for the
/// kubelet's TLS bootstrap (upstream's 5 minutes otherwise); a value that is not a duration is
/// refused, naming the variable. With no kubelet to bootstrap, the wait gives up after it with
/// upstream's error, and the diagnosis says that no certificate signing request came from the
/// token's user.
#[test]
fn the_tls_bootstrap_wait_takes_its_timeout_from_the_environment() {
    let (server, pin) = prepared_server();
    let ep = format!("127.0.0.1:{}", server.port());
    let root = node_root();
    let rootfs = root.path().to_string_lossy().into_owned();
    let args = [
        "--rootfs",
        rootfs.as_str(),
        "join",
        "phase",
        "kubelet-start",
        ep.as_str(),
        "--token",
        TOKEN,
        "--discovery-token-ca-cert-hash",
        pin.as_str(),
        "--node-name",
        WORKER,
    ];
    let bad = run(
        &ours(),
        &args,
        root.path(),
        &[("KUBEADM_TLS_BOOTSTRAP_TIMEOUT", "soon")],
    );
    assert_eq!(bad.code, 3, "{bad:#?}");
    assert!(
        bad.stderr
            .contains("KUBEADM_TLS_BOOTSTRAP_TIMEOUT=\"soon\": not a positive duration"),
        "{bad:#?}"
    );
    let start = Instant::now();
    let r = run(
        &ours(),
        &args,
        root.path(),
        &[("KUBEADM_TLS_BOOTSTRAP_TIMEOUT", "2s")],
    );
    // Far below the 5 minutes the wait would otherwise take (not a speed check: the setting's).
    assert!(start.elapsed() < Duration::from_secs(120), "{r:#?}");
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(r.stderr.contains("timed out waiting for the condition"), "{r:#?}");
    assert!(
        r.stdout
            .contains("\t- no certificate signing request from system:bootstrap:abcdef: "),
        "{r:#?}"
    );
}

/// `join phase preflight --control-plane` on a cluster that can take one: without a certificate key
/// the shared certificates must be on the node, and upstream's "not satisfied" text says which is
/// missing; with one (and `--ignore-preflight-errors=all` for the chroot) both go on to init's
/// checks for a secondary control plane and the image pull, printing the same lines.
#[test]
fn control_plane_preflight_as_upstream() {
    let (server, pin) = server_with_uploaded_certs();
    let ep = format!("127.0.0.1:{}", server.port());
    let args = |extra: &[&'static str]| -> Vec<String> {
        [
            "phase",
            "preflight",
            ep.as_str(),
            "--token",
            TOKEN,
            "--discovery-token-ca-cert-hash",
            pin.as_str(),
            "--node-name",
            SECOND,
            "--control-plane",
            "--apiserver-advertise-address",
            SECOND_IP,
            "--ignore-preflight-errors=all",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let without_key = args(&[]);
    let without_key: Vec<&str> = without_key.iter().map(String::as_str).collect();
    let (up, us) = both("control plane without certificate key", &without_key, &[]);
    assert_eq!(up.code, 1, "{up:#?}");
    for r in [&up, &us] {
        assert!(
            r.stderr.contains(
                "One or more conditions for hosting a new control plane instance is not satisfied."
            ) && r.stderr.contains("failure loading certificate for CA"),
            "{r:#?}"
        );
    }
    let with_key = args(&["--certificate-key", CERT_KEY]);
    let with_key: Vec<&str> = with_key.iter().map(String::as_str).collect();
    // In this chroot upstream then fails to pull without crictl (not a check it can ignore), where
    // ours, which needs no crictl, warns: the lines printed up to there are compared.
    let runs: Vec<Run> = [upstream_kubeadm(), ours()]
        .iter()
        .map(|bin| join(bin, node_root().path(), &with_key))
        .collect();
    let (a, b) = (phase_lines(&runs[0].stdout), phase_lines(&runs[1].stdout));
    assert!(a == b, "with a key:\n{}", diff(&a.join("\n"), &b.join("\n")));
    assert!(
        a.contains(
            &"[preflight] Running pre-flight checks before initializing the new control plane instance"
        ),
        "{a:?}"
    );
    assert!(runs[0].stderr.contains("crictl is required"), "{:#?}", runs[0]);
}

/// Upstream's dry run writes into a temporary folder and prints its paths; ours keeps its files in
/// memory and prints where they would go. Upstream's lines with its folder, mapped to ours; its two
/// lines about the folder itself dropped (see `print_dry_run_files` in the phases).
fn upstream_dry_run_lines(stdout: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in phase_lines(stdout) {
        if line.starts_with("[dryrun] Wrote certificates") || line.starts_with("[dryrun] Please examine") {
            continue;
        }
        let Some(at) = line.find("kubeadm-join-dryrun") else {
            out.push(line.to_string());
            continue;
        };
        // The quoted path around the folder (upstream's folder sits under --rootfs oddly), and the
        // file in it.
        let open = line[..at].rfind('"').map_or(0, |i| i + 1);
        let close = line[at..].find('"').map_or(line.len(), |i| at + i);
        let file_name = line[at..close].split_once('/').map_or("", |(_, f)| f);
        let real = match file_name {
            "" if line.contains("kubeconfig folder") => "/etc/kubernetes".to_string(),
            "" if line.contains("certificateDir folder") || line.contains("now exist in") => {
                "/etc/kubernetes/pki".to_string()
            }
            "" => "/etc/kubernetes/manifests".to_string(),
            "config.yaml" | "kubeadm-flags.env" => format!("/var/lib/kubelet/{file_name}"),
            f if f.ends_with(".yaml") => format!("/etc/kubernetes/manifests/{f}"),
            f => format!("/etc/kubernetes/{f}"),
        };
        out.push(format!("{}{real}{}", &line[..open], &line[close..]));
    }
    out
}

/// `join --dry-run`, worker and control plane, on a real API server: ours writes nothing (no file
/// under the node's root, no Node, no etcd member) and prints what upstream's prints, with the
/// files where they would go.
#[test]
fn dry_run_prints_as_upstream_and_writes_nothing() {
    let (server, pin) = server_with_uploaded_certs();
    let up = upstream_kubeadm();
    // The etcd Pod as the kubelet would mirror it: how both find etcd (upstream's dry run connects).
    let etcd_pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("etcd-{CONTROL_PLANE}"), "namespace": "kube-system",
            "labels": {"component": "etcd", "tier": "control-plane"},
            "annotations": {
                "kubeadm.kubernetes.io/etcd.advertise-client-urls": server.etcd_client_url(),
                "kubernetes.io/config.mirror": "test",
            },
        },
        "spec": {"nodeName": CONTROL_PLANE, "containers": [{"name": "etcd", "image": "registry.k8s.io/etcd:3.5.9-0"}]},
    });
    let pod_file = server.root().join("etcd-pod.json");
    std::fs::write(&pod_file, etcd_pod.to_string()).expect("pod");
    server.kubectl(&["create", "-f", &pod_file.to_string_lossy()]);
    let ep = format!("127.0.0.1:{}", server.port());
    let worker = vec![
        ep.as_str(),
        "--token",
        TOKEN,
        "--discovery-token-ca-cert-hash",
        pin.as_str(),
        "--node-name",
        WORKER,
        "--dry-run",
        "--ignore-preflight-errors=all",
    ];
    let mut control_plane = worker.clone();
    control_plane.extend([
        "--control-plane",
        "--certificate-key",
        CERT_KEY,
        "--apiserver-advertise-address",
        SECOND_IP,
    ]);
    for (label, args) in [("worker", &worker), ("control plane", &control_plane)] {
        let up_root = node_root();
        std::fs::create_dir_all(up_root.path().join("tmp")).expect("tmp");
        let upr = join(&up, up_root.path(), args);
        let root = node_root();
        let our = join(&ours(), root.path(), args);
        assert_eq!(upr.code, 0, "{label}: upstream failed: {upr:#?}");
        assert_eq!(our.code, 0, "{label}: ours failed: {our:#?}");
        let mut a = upstream_dry_run_lines(&upr.stdout);
        let mut b: Vec<String> = phase_lines(&our.stdout).iter().map(|l| l.to_string()).collect();
        // The certificates' lines come in Go map order upstream: that block is compared as a set.
        for lines in [&mut a, &mut b] {
            let certs: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("[certs] "))
                .collect();
            if let (Some(&first), Some(&last)) = (certs.first(), certs.last()) {
                lines[first..=last].sort();
            }
        }
        assert!(a == b, "{label}:\n{}", diff(&a.join("\n"), &b.join("\n")));
        let written = kubeadm_testkit::rootfs::tree(root.path(), &["etc", "var"]);
        assert!(
            written.is_empty(),
            "{label}: ours wrote {:?}",
            written.keys().collect::<Vec<_>>()
        );
    }
    let nodes = server.kubectl(&["get", "nodes", "-o", "name"]);
    assert!(!nodes.contains(WORKER), "{nodes}");
}

/// With the `RootlessControlPlane` gate in the cluster's configuration, `join phase
/// control-plane-prepare control-plane` next to upstream's, each chrooted into a root with its own
/// `/etc/passwd` and `/etc/group`: the same output, users and groups, manifests, and owners and
/// modes of the downloaded and generated keys and kubeconfig files.
#[test]
fn a_rootless_control_plane_joins_as_upstream() {
    use std::os::unix::fs::MetadataExt;
    let (server, pin) = server_with_uploaded_certs_and("featureGates:\n  RootlessControlPlane: true\n");
    let roots = [node_root(), node_root()];
    for root in &roots {
        std::fs::create_dir_all(root.path().join("etc")).expect("etc");
        std::fs::write(
            root.path().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/bash\n",
        )
        .expect("passwd");
        std::fs::write(
            root.path().join("etc/group"),
            "root:x:0:\nkubeadm-kcm:x:300:kubeadm-kcm\n",
        )
        .expect("group");
    }
    for phase in ["download-certs", "certs", "kubeconfig", "control-plane"] {
        let runs = prepare_in_both(&roots, &server, &pin, phase);
        if phase == "control-plane" {
            let lines: Vec<Vec<&str>> = runs.iter().map(|r| phase_lines(&r.stdout)).collect();
            assert!(
                lines[0] == lines[1],
                "{phase} stdout:\n{}",
                diff(&lines[0].join("\n"), &lines[1].join("\n"))
            );
        }
    }
    let state = |root: &Path| -> Vec<String> {
        let mut out: Vec<String> = ["etc/passwd", "etc/group"]
            .iter()
            .map(|f| std::fs::read_to_string(root.join(f)).expect("read"))
            .collect();
        for (path, (_, bytes)) in kubeadm_testkit::rootfs::tree(root, &["etc/kubernetes"]) {
            let m = std::fs::metadata(root.join(&path)).expect("stat");
            out.push(format!("{path} {}:{} {:o}", m.uid(), m.gid(), m.mode() & 0o7777));
            if path.contains("/manifests/") {
                out.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        out
    };
    let (a, b) = (state(roots[0].path()), state(roots[1].path()));
    assert!(a[0].contains("kubeadm-kcm:x:"), "{}", a[0]);
    assert!(
        a.iter().any(|l| l.starts_with("etc/kubernetes/pki/sa.key 0:")),
        "{a:#?}"
    );
    assert!(a == b, "{}", diff(&a.join("\n"), &b.join("\n")));
}
