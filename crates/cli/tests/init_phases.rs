//! `kubeadm init phase control-plane all` and `init phase etcd local`, upstream and ours, each
//! chrooted (`--rootfs`, which needs root) into its own temporary root with the same config: the
//! printed lines, the manifest files, their bytes and their modes must be the same.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubeadm_testkit::oracle::{diff, expected_code, run, upstream_kubeadm};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Every file under `root/etc/kubernetes` and `root/var/lib/kubelet` with its mode and content.
fn tree(root: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    kubeadm_testkit::rootfs::tree(root, &["etc/kubernetes", "var/lib/kubelet"])
}

fn run_in_root(bin: &Path, cfg: &Path, phases: &[&[&str]]) -> (String, BTreeMap<String, (u32, Vec<u8>)>) {
    let root = tempfile::tempdir().expect("root");
    std::fs::copy(cfg, root.path().join("kubeadm.yaml")).expect("copy config");
    let mut stdout = String::new();
    for phase in phases {
        let mut args = vec!["--rootfs", root.path().to_str().expect("utf8"), "init", "phase"];
        args.extend_from_slice(phase);
        args.extend_from_slice(&["--config", "/kubeadm.yaml"]);
        let r = run(bin, &args, root.path(), &[]);
        assert_eq!(r.code, 0, "{} {args:?}: {}", bin.display(), r.stderr);
        stdout.push_str(&r.stdout);
    }
    (stdout, tree(root.path()))
}

#[test]
fn control_plane_etcd_and_kubelet_files_match_upstream() {
    assert!(
        std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s
            .lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))),
        "this test chroots with --rootfs and must run as root"
    );
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let phases: &[&[&str]] = &[&["control-plane", "all"], &["etcd", "local"], &["kubelet-start"]];
    let mut failures = Vec::new();
    let mut compared = 0;
    for name in [
        "01-empty-cluster.yaml",
        "03-ipv6.yaml",
        "04-dual-stack.yaml",
        "05-external-etcd.yaml",
        "07-cpe-no-port.yaml",
        "08-cpe-port.yaml",
        "10-image-repo.yaml",
        "11-feature-gates.yaml",
        "12-extra-args.yaml",
        "14-dns-domain.yaml",
        "17-ci-version.yaml",
        "18-ci-version-custom-repo.yaml",
        "16-kubelet-kubeproxy.yaml",
        "13-tokens.yaml",
        "02-init-only.yaml",
        "w45-cri-socket-naming-no-path.yaml",
    ] {
        let cfg = corpus().join("valid").join(name);
        let (up_out, up_tree) = run_in_root(&upstream_kubeadm(), &cfg, phases);
        let (our_out, our_tree) = run_in_root(&ours, &cfg, phases);
        if up_out != our_out {
            failures.push(format!("{name}: output\n{}", diff(&up_out, &our_out)));
        }
        let names = |t: &BTreeMap<String, (u32, Vec<u8>)>| t.keys().cloned().collect::<Vec<_>>();
        if names(&up_tree) != names(&our_tree) {
            failures.push(format!(
                "{name}: files {:?} vs {:?}",
                names(&up_tree),
                names(&our_tree)
            ));
        }
        for (path, (mode, text)) in &up_tree {
            compared += 1;
            match our_tree.get(path) {
                Some((m, t)) if m == mode && t == text => {}
                Some((m, t)) => failures.push(format!(
                    "{name}: {path} mode {m:o} vs {mode:o}\n{}",
                    diff(&String::from_utf8_lossy(text), &String::from_utf8_lossy(t))
                )),
                None => {}
            }
        }
    }
    assert!(compared >= 40, "only {compared} files compared");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Strips klog headers and the lines that differ by design (upstream's network lookups of version
/// labels, which we resolve offline).
fn stderr_core(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| match l.find("] ") {
            Some(i) if l.len() > 5 && l.as_bytes()[1..5].iter().all(u8::is_ascii_digit) => {
                l[i + 2..].to_string()
            }
            _ => l.to_string(),
        })
        .filter(|l| {
            !l.contains("could not fetch a Kubernetes version from the internet")
                && !l.contains("falling back to the local client version")
        })
        .collect()
}

#[test]
fn addon_print_manifest_matches_upstream() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = corpus().join("valid/04-dual-stack.yaml");
    let cfg = cfg.to_str().expect("utf8");
    let cases: &[&[&str]] = &[
        &["coredns"],
        &["kube-proxy"],
        &[
            "all",
            "--service-cidr",
            "10.10.0.0/16",
            "--pod-network-cidr",
            "10.20.0.0/16",
        ],
        &["kube-proxy", "--control-plane-endpoint", "cp.example:9443"],
        &[
            "kube-proxy",
            "--apiserver-advertise-address",
            "2001:db8::5",
            "--apiserver-bind-port",
            "7443",
        ],
        &[
            "coredns",
            "--image-repository",
            "k8s.gcr.io",
            "--kubernetes-version",
            "v1.24.2",
        ],
        &[
            "coredns",
            "--service-dns-domain",
            "corp.internal",
            "--feature-gates",
            "PublicKeysECDSA=true",
        ],
        // Upstream refuses --config with --print-manifest.
        &["coredns", "--config", cfg],
    ];
    let mut failures = Vec::new();
    for case in cases {
        let mut args = vec!["init", "phase", "addon"];
        args.extend_from_slice(case);
        args.push("--print-manifest");
        let up = run(&upstream_kubeadm(), &args, tmp.path(), &[]);
        let us = run(&ours, &args, tmp.path(), &[]);
        if (expected_code(&up), &up.stdout) != (us.code, &us.stdout)
            || stderr_core(&up.stderr) != stderr_core(&us.stderr)
        {
            failures.push(format!(
                "{args:?}: exit {} vs {}\n{}{}",
                up.code,
                us.code,
                diff(&up.stdout, &us.stdout),
                diff(
                    &stderr_core(&up.stderr).join("\n"),
                    &stderr_core(&us.stderr).join("\n")
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

/// A config whose InitConfiguration points at `/patches` (patches cannot be mixed with --config as a flag).
const PATCHES_CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\npatches:\n  directory: /patches\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n";

#[test]
fn bad_patches_fail_like_upstream_and_leave_manifests_as_they_were() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    // (name, patch file, content, what our error must name)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "malformed yaml",
            "kube-apiserver.yaml",
            "spec: [unclosed",
            "kube-apiserver",
        ),
        (
            "unknown patch type",
            "kube-apiserver+foo.yaml",
            "metadata: {labels: {a: b}}",
            "unknown or missing patch type",
        ),
        (
            "bad json op",
            "kube-scheduler+json.json",
            r#"[{"op": "frobnicate", "path": "/x"}]"#,
            "frobnicate",
        ),
        (
            "json remove of nothing",
            "kube-scheduler+json.json",
            r#"[{"op": "remove", "path": "/spec/nope"}]"#,
            "/spec/nope",
        ),
        (
            "patch breaks the pod",
            "kube-scheduler.yaml",
            r#"spec: {containers: "notalist"}"#,
            "spec.containers",
        ),
        (
            "wrong field type",
            "kube-controller-manager+merge.yaml",
            r#"spec: {hostNetwork: "yes please"}"#,
            "hostNetwork",
        ),
        (
            "json patch not a list",
            "kube-apiserver+json.yaml",
            "op: add",
            "kube-apiserver",
        ),
        (
            "merge patch not a map",
            "kube-scheduler+merge.json",
            "[1, 2]",
            "kube-scheduler",
        ),
    ];
    let mut failures = Vec::new();
    for (name, file, content, key) in cases {
        let mut codes = Vec::new();
        for bin in [upstream_kubeadm(), ours.clone()] {
            let root = tempfile::tempdir().expect("root");
            std::fs::write(root.path().join("c.yaml"), PATCHES_CONFIG).expect("config");
            std::fs::create_dir(root.path().join("patches")).expect("patches dir");
            let rootfs = root.path().to_str().expect("utf8");
            let args = [
                "--rootfs",
                rootfs,
                "init",
                "phase",
                "control-plane",
                "all",
                "--config",
                "/c.yaml",
            ];
            // A good run first, so there is something to keep.
            let good = run(&bin, &args, root.path(), &[]);
            assert_eq!(good.code, 0, "{}", good.stderr);
            let before = tree(root.path());
            std::fs::write(root.path().join("patches").join(file), content).expect("patch");
            let r = run(&bin, &args, root.path(), &[]);
            codes.push(r.code);
            if bin == ours {
                if tree(root.path()) != before {
                    failures.push(format!("{name}: our manifests changed"));
                }
                if !r.stderr.contains(key) {
                    failures.push(format!("{name}: our error lacks {key:?}: {}", r.stderr));
                }
            }
        }
        if codes[0] == 0 || codes[0] != codes[1] {
            failures.push(format!(
                "{name}: exit codes upstream {} ours {}",
                codes[0], codes[1]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Beyond upstream (which writes such manifests and leaves a control plane that never starts):
/// extra volumes the kubelet would refuse are a validation error naming the field and its place in
/// the file, and nothing is written.
#[test]
fn bad_extra_volumes_are_refused_and_leave_manifests_as_they_were() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let vol = |component: &str, body: &str| {
        format!(
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n{component}:\n  extraVolumes:\n  - {body}\n"
        )
    };
    let cases = [
        (
            "unknown hostPath type",
            vol(
                "apiServer",
                "{name: a, hostPath: /a, mountPath: /a, pathType: Bogus}",
            ),
            "apiServer.extraVolumes[0].pathType",
        ),
        (
            "relative hostPath",
            vol("apiServer", "{name: a, hostPath: a, mountPath: /a}"),
            "apiServer.extraVolumes[0].hostPath",
        ),
        (
            "relative mountPath",
            vol("controllerManager", "{name: a, hostPath: /a, mountPath: a}"),
            "controllerManager.extraVolumes[0].mountPath",
        ),
        (
            "no name",
            vol("scheduler", "{hostPath: /a, mountPath: /a}"),
            "scheduler.extraVolumes[0].name",
        ),
        (
            "name not a label",
            vol("scheduler", "{name: Not_A_Label, hostPath: /a, mountPath: /a}"),
            "scheduler.extraVolumes[0].name",
        ),
        (
            "no hostPath",
            vol("controllerManager", "{name: a, mountPath: /a}"),
            "controllerManager.extraVolumes[0].hostPath",
        ),
        (
            "lower-case type",
            vol(
                "apiServer",
                "{name: a, hostPath: /a, mountPath: /a, pathType: directory}",
            ),
            "apiServer.extraVolumes[0].pathType",
        ),
    ];
    let mut failures = Vec::new();
    for (name, config, field) in &cases {
        let root = tempfile::tempdir().expect("root");
        let rootfs = root.path().to_str().expect("utf8");
        std::fs::write(
            root.path().join("good.yaml"),
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n",
        )
        .expect("config");
        let args = |cfg: &'static str| {
            [
                "--rootfs",
                rootfs,
                "init",
                "phase",
                "control-plane",
                "all",
                "--config",
                cfg,
            ]
        };
        let good = run(&ours, &args("/good.yaml"), root.path(), &[]);
        assert_eq!(good.code, 0, "{}", good.stderr);
        let before = tree(root.path());
        std::fs::write(root.path().join("bad.yaml"), config).expect("config");
        let r = run(&ours, &args("/bad.yaml"), root.path(), &[]);
        if r.code != 3 {
            failures.push(format!("{name}: exit {} (want 3): {}", r.code, r.stderr));
        }
        if !r.stderr.contains(field) || !r.stderr.contains("/bad.yaml:") {
            failures.push(format!(
                "{name}: error lacks {field:?} or its place in the file: {}",
                r.stderr
            ));
        }
        if tree(root.path()) != before {
            failures.push(format!("{name}: manifests changed"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Where the `[patches]` lines come: upstream reads the directory where a phase first applies a patch
/// (the first manifest `control-plane` writes) and prints its lines there, once per run.
#[test]
fn patches_are_announced_where_upstream_reads_them() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let mut outputs = Vec::new();
    for bin in [upstream_kubeadm(), ours] {
        let root = tempfile::tempdir().expect("root");
        std::fs::write(root.path().join("c.yaml"), PATCHES_CONFIG).expect("config");
        let patches = root.path().join("patches");
        std::fs::create_dir(&patches).expect("patches dir");
        std::fs::write(
            patches.join("kube-scheduler0+strategic.yaml"),
            "metadata: {annotations: {patched: \"yes\"}}",
        )
        .expect("patch");
        std::fs::write(
            patches.join("etcd+merge.yaml"),
            "metadata: {labels: {patched: \"yes\"}}",
        )
        .expect("patch");
        std::fs::write(patches.join("notes.txt"), "not a patch").expect("ignored file");
        let rootfs = root.path().to_str().expect("utf8");
        let mut stdout = String::new();
        for phase in [["control-plane", "all"], ["etcd", "local"]] {
            let args = [
                "--rootfs", rootfs, "init", "phase", phase[0], phase[1], "--config", "/c.yaml",
            ];
            let r = run(&bin, &args, root.path(), &[]);
            assert_eq!(r.code, 0, "{} {args:?}: {}", bin.display(), r.stderr);
            stdout.push_str(&r.stdout);
        }
        outputs.push(stdout);
    }
    assert!(outputs[0].contains("[patches] Reading patches"), "{}", outputs[0]);
    assert_eq!(outputs[0], outputs[1], "{}", diff(&outputs[0], &outputs[1]));
}
