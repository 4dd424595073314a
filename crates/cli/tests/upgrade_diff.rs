//! `kubeadm upgrade diff`, upstream and ours, on the same inputs: existing manifests written by
//! UPSTREAM kubeadm (`init phase control-plane all` of an older version, or of another config, or
//! edited by the test), the configuration from `--config` (the corpus in `tests/corpus/`) or from a
//! real API server (upstream etcd + kube-apiserver on loopback). Both binaries chroot into a temp
//! root with `--rootfs`, which needs root.
//!
//! Upstream ranges over a Go map of the three components, so the order of its three diffs changes
//! from run to run; ours is fixed (kube-apiserver, kube-controller-manager, kube-scheduler). Stdout
//! is therefore compared per component: the text before the first diff, then each component's
//! diff, byte for byte. Exit codes and the error lines of stderr are compared too, and the
//! messages of klog warnings (whose headers name different source files).
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubeadm_testkit::apiserver::{ApiServer, InitConfig};
use kubeadm_testkit::oracle::{self, diff, upstream_kubeadm};
use kubeadm_testkit::rootfs::init_phase;

const COMPONENTS: [&str; 3] = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];
/// The node no kubelet registers in the cluster test; the test creates it as a kubelet would.
const NODE: &str = "apiserver-test";

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(rel)
}

/// A klog line: `W1130 12:00:00.000000   123 file.go:42] message`.
fn is_klog(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 5
        && matches!(b[0], b'W' | b'I' | b'E')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && line.contains("] ")
}

#[derive(Debug)]
struct Outcome {
    /// The text before the first diff (`[upgrade/diff] Reading configuration …`).
    preamble: String,
    /// Each diff by the manifest path of its `---` line, and the paths in printed order.
    diffs: BTreeMap<String, String>,
    order: Vec<String>,
    /// stderr without klog lines.
    error_lines: String,
    /// The messages of klog warnings, minus upstream's failed internet look-ups (ours never looks).
    warnings: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
}

/// Splits the output at each `--- <path>` line followed by `+++ new manifest`.
fn split_diffs(stdout: &str) -> (String, BTreeMap<String, String>, Vec<String>) {
    let lines: Vec<&str> = stdout.split_inclusive('\n').collect();
    let (mut preamble, mut diffs, mut order) = (String::new(), BTreeMap::new(), Vec::new());
    let mut current: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(path) = line.strip_prefix("--- ")
            && lines.get(i + 1) == Some(&"+++ new manifest\n")
        {
            let path = path.trim_end().to_string();
            assert!(!diffs.contains_key(&path), "{path} diffed twice:\n{stdout}");
            diffs.insert(path.clone(), String::new());
            order.push(path.clone());
            current = Some(path);
        }
        match &current {
            Some(p) => diffs.get_mut(p).expect("current diff").push_str(line),
            None => preamble.push_str(line),
        }
    }
    (preamble, diffs, order)
}

/// Runs `bin --rootfs <root> upgrade diff <args>` with a clean environment.
fn upgrade_diff(bin: &Path, root: &Path, args: &[&str]) -> Outcome {
    let out = Command::new(bin)
        .arg("--rootfs")
        .arg(root)
        .args(["upgrade", "diff"])
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .expect("run kubeadm");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let (preamble, diffs, order) = split_diffs(&stdout);
    Outcome {
        preamble,
        diffs,
        order,
        error_lines: stderr
            .lines()
            .filter(|l| !is_klog(l))
            .map(|l| format!("{l}\n"))
            .collect(),
        warnings: stderr
            .lines()
            .filter(|l| is_klog(l))
            .filter_map(|l| l.split_once("] ").map(|(_, m)| m.to_string()))
            .filter(|m| {
                !m.starts_with("could not fetch a Kubernetes version from the internet")
                    && !m.starts_with("falling back to the local client version")
            })
            .collect(),
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr,
    }
}

/// Runs both binaries; returns a description of every difference (empty when they agree) and
/// upstream's outcome.
fn compare(root: &Path, args: &[&str]) -> (Vec<String>, Outcome) {
    let theirs = upgrade_diff(&upstream_kubeadm(), root, args);
    let mine = upgrade_diff(&ours(), root, args);
    let mut problems = Vec::new();
    let what = format!("upgrade diff {}", args.join(" "));
    let want_code = expected_code(&theirs);
    if want_code != mine.code {
        problems.push(format!(
            "{what}: exit {} (want {want_code}, upstream {})\nupstream stderr:\n{}ours:\n{}",
            mine.code, theirs.code, theirs.stderr, mine.stderr
        ));
    }
    if theirs.preamble != mine.preamble {
        problems.push(format!(
            "{what}: output before the diffs:\n{}",
            diff(&theirs.preamble, &mine.preamble)
        ));
    }
    if theirs.diffs.keys().ne(mine.diffs.keys()) {
        problems.push(format!(
            "{what}: diffed {:?}, upstream {:?}\n--- ours\n{}",
            mine.order, theirs.order, mine.stdout
        ));
    }
    for (path, want) in &theirs.diffs {
        if let Some(got) = mine.diffs.get(path)
            && got != want
        {
            problems.push(format!("{what}: diff of {path}:\n{}", diff(want, got)));
        }
    }
    // Ours in the order the manifests are written.
    let rank = |p: &String| COMPONENTS.iter().position(|c| p.contains(c));
    if !mine.order.windows(2).all(|w| rank(&w[0]) < rank(&w[1])) {
        problems.push(format!("{what}: our diffs are out of order: {:?}", mine.order));
    }
    if theirs.error_lines != mine.error_lines {
        problems.push(format!(
            "{what}: error output:\n{}",
            diff(&theirs.error_lines, &mine.error_lines)
        ));
    }
    if theirs.warnings != mine.warnings {
        problems.push(format!(
            "{what}: warnings {:?}, upstream {:?}",
            mine.warnings, theirs.warnings
        ));
    }
    (problems, theirs)
}

/// Upstream's `ValidateExactArgNumber` errors and the empty manifest path: bad input upstream
/// refuses with exit code 1, which this project refuses with 3, beyond the messages
/// `oracle::expected_code` lists.
const BAD_INPUT_EXIT_1: &[&str] = &["Required arguments: [version]", "empty manifest path"];

/// The exit code ours must give where upstream gave `theirs`'s.
fn expected_code(theirs: &Outcome) -> i32 {
    if theirs.code == 1 && BAD_INPUT_EXIT_1.iter().any(|m| theirs.error_lines.contains(m)) {
        return 3;
    }
    oracle::expected_code(&oracle::Run {
        stdout: theirs.stdout.clone(),
        stderr: theirs.stderr.clone(),
        code: theirs.code,
    })
}

/// The config with its `kubernetesVersion` (YAML or JSON) replaced by `version`.
fn with_version(config: &str, version: &str) -> String {
    config
        .lines()
        .map(|line| match line.find("kubernetesVersion") {
            Some(at) => {
                let colon = at + line[at..].find(':').expect("kubernetesVersion: value");
                let rest = line[colon + 1..].trim_start();
                let end = if let Some(quoted) = rest.strip_prefix('"') {
                    quoted.find('"').map_or(rest.len(), |e| e + 2)
                } else {
                    rest.find([',', '}', ' ']).unwrap_or(rest.len())
                };
                format!("{}: \"{version}\"{}", &line[..colon], &rest[end..])
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A temp root holding `/cfg.yaml` (the corpus file) and the manifests upstream writes for it at
/// `old_version`.
fn root_for(config: &str, old_version: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp root");
    let text = std::fs::read_to_string(corpus(config)).expect("corpus config");
    std::fs::write(dir.path().join("cfg.yaml"), &text).expect("cfg.yaml");
    std::fs::write(dir.path().join("old.yaml"), with_version(&text, old_version)).expect("old.yaml");
    init_phase(
        &upstream_kubeadm(),
        dir.path(),
        &["control-plane", "all"],
        "/old.yaml",
    );
    dir
}

fn manifest(root: &Path, component: &str) -> PathBuf {
    root.join("etc/kubernetes/manifests")
        .join(format!("{component}.yaml"))
}

/// Copies the manifests of `from` to `<root>/other/` and returns the flags naming them.
fn other_manifests(from: &Path, root: &Path) -> Vec<String> {
    std::fs::create_dir_all(root.join("other")).expect("other dir");
    let flags = [
        "--api-server-manifest",
        "--controller-manager-manifest",
        "--scheduler-manifest",
    ];
    let mut args = Vec::new();
    for (flag, component) in flags.iter().zip(COMPONENTS) {
        std::fs::copy(
            manifest(from, component),
            root.join(format!("other/{component}.yaml")),
        )
        .expect("copy manifest");
        args.push(flag.to_string());
        args.push(format!("/other/{component}.yaml"));
    }
    args
}

fn check(problems: Vec<String>, cases: usize, min_cases: usize) {
    assert!(
        problems.is_empty(),
        "{} differences from upstream:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(cases >= min_cases, "only {cases} cases ran");
}

/// Configs from the corpus: IPv4, IPv6, dual-stack, external etcd, control-plane endpoints, image
/// repositories (custom, `k8s.gcr.io`), feature gates, extra args, JSON, CI versions, a version
/// label, and ones without a version or a ClusterConfiguration (the manifests then equal).
const CONFIGS: &[&str] = &[
    "valid/01-empty-cluster.yaml",
    "valid/02-init-only.yaml",
    "valid/03-ipv6.yaml",
    "valid/04-dual-stack.yaml",
    "valid/05-external-etcd.yaml",
    "valid/09-cpe-ipv6.yaml",
    "valid/10-image-repo.yaml",
    "valid/11-feature-gates.yaml",
    "valid/12-extra-args.yaml",
    "valid/14-dns-domain.yaml",
    "valid/15-json.yaml",
    "valid/17-ci-version.yaml",
    "valid/18-ci-version-custom-repo.yaml",
    "valid/19-k8s-gcr.yaml",
    "valid/21-label-version.yaml",
];

#[test]
fn diff_with_config_matches_upstream() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    // Manifests of a plain v1.24.3 config, to diff every config against something further away
    // than its own older version.
    let baseline = root_for("valid/02-init-only.yaml", "v1.24.3");
    let (mut problems, mut cases, mut non_empty) = (Vec::new(), 0, 0);
    for config in CONFIGS {
        let root = root_for(config, "v1.24.3");
        let other = other_manifests(baseline.path(), root.path());
        let other: Vec<&str> = other.iter().map(String::as_str).collect();
        let mut runs: Vec<Vec<&str>> = vec![
            vec![],
            vec!["-c", "0"],
            vec!["-c", "10", "v1.25.2"],
            vec!["1.25.4"],
            vec!["--context-lines=1"],
            vec!["-c", "-1", "v1.26.0-rc.1"],
        ];
        for r in &mut runs {
            r.splice(0..0, ["--config", "/cfg.yaml"]);
        }
        let mut elsewhere = vec!["--config", "/cfg.yaml"];
        elsewhere.extend(&other);
        runs.push(elsewhere.clone());
        elsewhere.extend(["-c", "2", "v1.25.0"]);
        runs.push(elsewhere);
        for args in &runs {
            let (p, theirs) = compare(root.path(), args);
            problems.extend(p.into_iter().map(|p| format!("{config}: {p}")));
            cases += 1;
            non_empty += usize::from(!theirs.diffs.is_empty());
        }
    }
    check(problems, cases, 8 * CONFIGS.len());
    assert!(
        non_empty > cases / 2,
        "only {non_empty} of {cases} runs showed a difference"
    );
}

/// Existing manifests edited in ways `init` never writes: no trailing newline, lines removed and
/// moved, an empty file; and a CA without its key (the controller-manager then gets empty
/// cluster-signing flags).
#[test]
fn diff_of_edited_manifests_matches_upstream() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let root = root_for("valid/12-extra-args.yaml", "v1.25.16");
    let r = root.path();
    let apiserver = std::fs::read_to_string(manifest(r, "kube-apiserver")).expect("apiserver");
    let mut lines: Vec<&str> = apiserver.lines().collect();
    lines.retain(|l| !l.contains("--secure-port") && !l.contains("readOnly: true"));
    let moved = lines.remove(5);
    lines.insert(20, moved);
    std::fs::write(manifest(r, "kube-apiserver"), lines.join("\n")).expect("write");
    std::fs::write(manifest(r, "kube-controller-manager"), "").expect("write");
    let scheduler = std::fs::read_to_string(manifest(r, "kube-scheduler")).expect("scheduler");
    let reversed: Vec<&str> = scheduler.lines().rev().collect();
    std::fs::write(manifest(r, "kube-scheduler"), reversed.join("\n") + "\n").expect("write");

    let mut problems = Vec::new();
    let mut cases = 0;
    // 2^62 context lines: Go's `n + n` wraps negative there, and upstream's hunks show it.
    for args in [
        &[][..],
        &["-c", "0"],
        &["-c", "7"],
        &["v1.25.3"],
        &["-c", "4611686018427387904"],
    ] {
        let mut a = vec!["--config", "/cfg.yaml"];
        a.extend(args);
        problems.extend(compare(r, &a).0);
        cases += 1;
    }
    // An external CA: upstream's own CA certificate, its key removed.
    init_phase(&upstream_kubeadm(), r, &["certs", "ca"], "/cfg.yaml");
    std::fs::remove_file(r.join("etc/kubernetes/pki/ca.key")).expect("remove ca.key");
    let (p, theirs) = compare(r, &["--config", "/cfg.yaml"]);
    problems.extend(p);
    cases += 1;
    assert!(
        theirs.stdout.contains("+    - --cluster-signing-cert-file=\n"),
        "upstream did not treat the CA as external:\n{}",
        theirs.stdout
    );
    check(problems, cases, 6);
}

/// Bad manifests, versions, configs and kubeconfigs: the same message as upstream, and its exit
/// code but for bad input upstream refuses with 1 (this project: 3).
#[test]
fn bad_input_fails_like_upstream() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let root = root_for("valid/03-ipv6.yaml", "v1.24.3");
    let r = root.path();
    std::fs::write(r.join("garbage.conf"), "garbage\n").expect("write");
    let empty = tempfile::tempdir().expect("empty root");
    std::fs::copy(r.join("cfg.yaml"), empty.path().join("cfg.yaml")).expect("copy cfg");

    let cfg = ["--config", "/cfg.yaml"];
    let mut problems = Vec::new();
    let mut cases = 0;
    let mut failing = 0;
    let runs: Vec<(&Path, Vec<&str>)> = vec![
        // Missing, empty and directory manifest paths (checked before the config is read).
        (empty.path(), cfg.to_vec()),
        (empty.path(), vec!["--config", "/missing.yaml"]),
        (
            r,
            vec!["--config", "/cfg.yaml", "--scheduler-manifest", "/nope.yaml"],
        ),
        (
            r,
            vec!["--config", "/cfg.yaml", "--controller-manager-manifest", "/etc"],
        ),
        (r, vec!["--config", "/cfg.yaml", "--api-server-manifest="]),
        (
            r,
            vec!["--config", "/cfg.yaml", "--api-server-manifest", "/cfg.yaml/x"],
        ),
        // Versions that are not semantic versions.
        (r, vec!["--config", "/cfg.yaml", "foo"]),
        (r, vec!["--config", "/cfg.yaml", "v1.25"]),
        (r, vec!["--config", "/cfg.yaml", "1.2.3.4"]),
        (r, vec!["--config", "/cfg.yaml", "v1.025.0"]),
        (r, vec!["--config", "/cfg.yaml", "1.25.0_x"]),
        (r, vec!["--config", "/cfg.yaml", "v1.25.0-01"]),
        (r, vec!["--config", "/cfg.yaml", ""]),
        // Versions upstream does not range-check when they come as the argument.
        (r, vec!["--config", "/cfg.yaml", "v1.20.0"]),
        (r, vec!["--config", "/cfg.yaml", "v1.30.0"]),
        // Two arguments: upstream ignores both.
        (r, vec!["--config", "/cfg.yaml", "foo", "bar"]),
        // A missing config file; no config and a missing or unusable kubeconfig.
        (r, vec!["--config", "/missing.yaml"]),
        (r, vec![]),
        (r, vec!["v1.25.0"]),
        (r, vec!["--kubeconfig", "/missing.conf"]),
    ];
    for (root, args) in &runs {
        let (p, theirs) = compare(root, args);
        problems.extend(p);
        cases += 1;
        failing += usize::from(theirs.code != 0);
    }
    // A kubeconfig that is not one: the parser's reason differs (Go's JSON decoder vs our YAML
    // parser); the rest of the message and the exit code must not.
    let theirs = upgrade_diff(&upstream_kubeadm(), r, &["--kubeconfig", "/garbage.conf"]);
    let mine = upgrade_diff(&ours(), r, &["--kubeconfig", "/garbage.conf"]);
    let prefix =
        "couldn't create a Kubernetes client from file \"/garbage.conf\": failed to load admin kubeconfig: ";
    assert!(theirs.error_lines.starts_with(prefix), "{}", theirs.stderr);
    assert!(mine.error_lines.starts_with(prefix), "{}", mine.stderr);
    assert_eq!((theirs.code, theirs.stdout), (mine.code, mine.stdout));
    check(problems, cases, 20);
    assert!(failing >= 16, "only {failing} runs failed upstream");
}

/// Invalid configuration files: upstream's message (each of its lines in ours: ours adds where
/// in the file the problem is, and names the position for decoding errors instead of Go types),
/// and upstream's exit code, or 3 where upstream refuses bad input with 1 (this project's rule).
#[test]
fn config_errors_follow_the_project_rules() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let root = root_for("valid/02-init-only.yaml", "v1.24.3");
    let r = root.path();
    let improved = [
        ("27-syntax.yaml", "27-syntax.yaml"),
        ("28-wrong-type.yaml", "localAPIEndpoint.bindPort"),
    ];
    let mut problems = Vec::new();
    let files = [
        "01-bad-pod-subnet.yaml",
        "05-old-version.yaml",
        "06-bad-version.yaml",
        "12-bad-node-name.yaml",
        "25-unknown-api.yaml",
        "27-syntax.yaml",
        "28-wrong-type.yaml",
        "29-duplicate-kind.yaml",
    ];
    for name in files {
        std::fs::copy(corpus(&format!("invalid/{name}")), r.join(name)).expect("copy config");
        let path = format!("/{name}");
        let args = ["--config", path.as_str(), "v1.25.3"];
        let theirs = upgrade_diff(&upstream_kubeadm(), r, &args);
        let mine = upgrade_diff(&ours(), r, &args);
        if theirs.code == 0 {
            problems.push(format!("{name}: upstream accepts it"));
            continue;
        }
        if mine.code != expected_code(&theirs) || !mine.stdout.is_empty() {
            problems.push(format!(
                "{name}: exit {} (upstream {}): {}",
                mine.code, theirs.code, mine.stderr
            ));
        }
        match improved.iter().find(|(n, _)| *n == name) {
            Some((_, key)) if !mine.error_lines.contains(key) => {
                problems.push(format!(
                    "{name}: our message lacks {key:?}:\n{}",
                    mine.error_lines
                ));
            }
            Some(_) => {}
            None => {
                for line in theirs.error_lines.lines() {
                    if !mine.error_lines.contains(line) {
                        problems.push(format!(
                            "{name}: missing upstream line {line:?} in:\n{}",
                            mine.error_lines
                        ));
                    }
                }
            }
        }
    }
    check(problems, files.len(), 8);
}

fn cluster_config(port: u16, version: &str, cluster_extra: &str) -> String {
    InitConfig {
        node: NODE,
        version,
        cluster_extra,
        ..InitConfig::default()
    }
    .render(port)
}

/// The configuration from the cluster: `kubeadm-config` uploaded by upstream, the Node (with the
/// CRI socket annotation upstream's `upload-config kubelet` adds), and the kube-apiserver mirror
/// Pod with its advertise-address annotation, as `kubeadm init` and the kubelet leave them.
#[test]
fn diff_from_cluster_matches_upstream() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let upstream = upstream_kubeadm();
    let server = ApiServer::start_with(&upstream);
    let root = server.root();
    let port = server.port();
    // The cluster was made with the legacy registry: upgrade diff shows the new one.
    std::fs::write(
        root.join("init.yaml"),
        cluster_config(port, "v1.24.3", "imageRepository: k8s.gcr.io\n"),
    )
    .expect("config");
    for phase in [&["control-plane", "all"][..], &["kubeconfig", "kubelet"]] {
        init_phase(&upstream, &root, phase, "/init.yaml");
    }
    server.create_node(NODE, serde_json::json!({}));
    init_phase(&upstream, &root, &["upload-config", "all"], "/init.yaml");
    server.create_apiserver_mirror_pod(NODE, "k8s.gcr.io/kube-apiserver:v1.24.3");

    let mut problems = Vec::new();
    let mut cases = 0;
    let mut run = |args: &[&str], problems: &mut Vec<String>| {
        let (p, theirs) = compare(&root, args);
        problems.extend(p);
        cases += 1;
        theirs
    };
    let theirs = run(&[], &mut problems);
    assert!(
        theirs
            .preamble
            .starts_with("[upgrade/diff] Reading configuration from the cluster")
            && theirs
                .stdout
                .contains("+    image: registry.k8s.io/kube-apiserver:v1.24.3"),
        "upstream did not diff the cluster's configuration:\n{}{}",
        theirs.stdout,
        theirs.stderr
    );
    for args in [
        &["v1.25.5"][..],
        &["-c", "0", "v1.25.16"],
        &["-c", "12", "1.25.1"],
        &["bogus"],
    ] {
        run(args, &mut problems);
    }
    // Another configuration in the cluster: extra args and a custom repository.
    std::fs::write(
        root.join("init2.yaml"),
        cluster_config(
            port,
            "v1.25.0",
            "  extraArgs:\n    audit-log-maxage: \"7\"\nscheduler:\n  extraArgs:\n    v: \"4\"\nimageRepository: my.registry:5000/k8s\n",
        ),
    )
    .expect("config");
    init_phase(&upstream, &root, &["upload-config", "kubeadm"], "/init2.yaml");
    for args in [&[][..], &["v1.25.9"]] {
        run(args, &mut problems);
    }
    check(problems, cases, 7);
}
