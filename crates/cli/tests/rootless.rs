//! The `RootlessControlPlane` feature gate, upstream and ours, each chrooted (`--rootfs`, which
//! needs root) into its own temporary root holding its own `/etc/passwd` and `/etc/group` (never
//! the host's): the users and groups written, the static Pod manifests (with `--patches` applied
//! after the gate's changes), the owners and modes of every file under `/etc/kubernetes` and of
//! etcd's data directory (also after `certs renew all`, which must keep the owners), the printed
//! lines, and the errors when the files refuse it.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

const CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.5
nodeRegistration:
  name: node-a
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
featureGates:
  RootlessControlPlane: true
";

const PASSWD: &str =
    "root:x:0:0:root:/root:/bin/bash\nsys:x:100:100:::/usr/sbin/nologin\nbin:x:102:2:::/usr/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nsys:x:100:\nbin:x:2:\nkubeadm-ks:x:110:kubeadm-ks\n";

fn require_root() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
}

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// A temporary root with the configuration at `/cfg.yaml` and the given files under it.
fn new_root(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("root");
    std::fs::write(root.path().join("cfg.yaml"), CONFIG).expect("config");
    // The same with `--patches` (which upstream takes only from the file once `--config` is given).
    let patched = CONFIG.replacen(
        "  name: node-a\n",
        "  name: node-a\npatches:\n  directory: /patches\n",
        1,
    );
    std::fs::write(root.path().join("cfg-patches.yaml"), patched).expect("config");
    for (rel, text) in files {
        let p = root.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
    }
    root
}

/// `kubeadm --rootfs <root> <args…>`.
fn kubeadm(bin: &Path, root: &Path, args: &[&str]) -> kubeadm_testkit::oracle::Run {
    let mut full = vec!["--rootfs", root.to_str().expect("utf8")];
    full.extend_from_slice(args);
    run(bin, &full, root, &[])
}

/// Every path under `etc/kubernetes` and `var/lib/etcd` with its owner, group and mode, and the
/// text of the manifests, `/etc/passwd` and `/etc/group` (certificates and keys differ by their
/// random keys, so only their owners and modes are compared).
fn state(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.join("etc/kubernetes"), root.join("var/lib/etcd")];
    while let Some(p) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let rel = p.strip_prefix(root).expect("under root").display().to_string();
        out.insert(
            rel.clone(),
            format!("{}:{} {:o}", meta.uid(), meta.gid(), meta.mode() & 0o7777),
        );
        if meta.is_dir() {
            pending.extend(std::fs::read_dir(&p).expect("list").flatten().map(|e| e.path()));
        } else if rel.ends_with(".yaml") {
            out.insert(
                format!("{rel} (text)"),
                std::fs::read_to_string(&p).expect("read"),
            );
        }
    }
    for f in ["etc/passwd", "etc/group"] {
        out.insert(
            f.to_string(),
            std::fs::read_to_string(root.join(f)).unwrap_or_default(),
        );
    }
    out
}

fn compare(
    case: &str,
    up: &BTreeMap<String, String>,
    our: &BTreeMap<String, String>,
    failures: &mut Vec<String>,
) {
    let keys = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    if keys(up) != keys(our) {
        failures.push(format!(
            "{case}: paths\n{}",
            diff(&keys(up).join("\n"), &keys(our).join("\n"))
        ));
    }
    for (k, v) in up {
        if let Some(o) = our.get(k)
            && o != v
        {
            failures.push(format!("{case}: {k}\n{}", diff(v, o)));
        }
    }
}

fn assert_none(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The lines of a phase's output, without the klog lines that differ in their source name.
fn lines(out: &str) -> String {
    out.lines()
        .filter(|l| !l.contains("systemd-resolved"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rootless_phases_write_what_upstream_writes() {
    require_root();
    let patches = [
        // Applied after the gate's changes: the user it sets wins.
        (
            "patches/kube-scheduler+strategic.yaml",
            "spec:\n  securityContext:\n    runAsUser: 4242\n",
        ),
        (
            "patches/etcd+json.json",
            r#"[{"op": "add", "path": "/metadata/annotations/rootless", "value": "yes"}]"#,
        ),
    ];
    let mut failures = Vec::new();
    for (case, with_patches) in [("plain", false), ("patched", true)] {
        let mut files = vec![("etc/passwd", PASSWD), ("etc/group", GROUP)];
        if with_patches {
            files.extend(patches);
        }
        let mut states = Vec::new();
        for bin in [upstream_kubeadm(), ours()] {
            let root = new_root(&files);
            let mut out = String::new();
            for phase in [
                &["init", "phase", "certs", "all"][..],
                &["init", "phase", "kubeconfig", "all"],
                &["init", "phase", "control-plane", "all"],
                &["init", "phase", "etcd", "local"],
                // Run again: the users are found and reused, nothing changes.
                &["init", "phase", "control-plane", "all"],
                // A renewal rewrites the keys and kubeconfig files and keeps their owners.
                &["certs", "renew", "all"],
            ] {
                let mut args = phase.to_vec();
                let cfg = if with_patches {
                    "/cfg-patches.yaml"
                } else {
                    "/cfg.yaml"
                };
                args.extend_from_slice(&["--config", cfg]);
                let r = kubeadm(&bin, root.path(), &args);
                assert_eq!(r.code, 0, "{} {args:?}: {}", bin.display(), r.stderr);
                out.push_str(&r.stdout);
                out.push_str(&lines(&r.stderr));
            }
            let s = state(root.path());
            states.push((out, s));
        }
        let (up, our) = (&states[0], &states[1]);
        if up.0 != our.0 {
            failures.push(format!("{case}: output\n{}", diff(&up.0, &our.0)));
        }
        compare(case, &up.1, &our.1, &mut failures);
        // Not vacuous: the gate took effect.
        let passwd = &up.1["etc/passwd"];
        assert!(passwd.contains("kubeadm-kas:x:"), "{passwd}");
        let sa = &up.1["etc/kubernetes/pki/sa.key"];
        assert!(sa.starts_with("0:") && sa.ends_with(" 640"), "{sa}");
        let sched = &up.1["etc/kubernetes/manifests/kube-scheduler.yaml (text)"];
        assert_eq!(sched.contains("runAsUser: 4242"), with_patches, "{sched}");
    }
    assert_none(&failures);
}

#[test]
fn refusals_match_upstream() {
    require_root();
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "wrong shell",
            &[
                ("etc/passwd", "kubeadm-etcd:x:150:150:::/bin/sh\n"),
                ("etc/group", "kubeadm-etcd:x:150:kubeadm-etcd\n"),
            ],
        ),
        (
            "group of another name",
            &[
                ("etc/passwd", "kubeadm-kas:x:150:150:::/bin/false\n"),
                ("etc/group", "other:x:150:\n"),
            ],
        ),
        (
            "UID outside the range",
            &[
                ("etc/passwd", "kubeadm-kcm:x:150:150:::/bin/false\n"),
                ("etc/group", "kubeadm-kcm:x:150:kubeadm-kcm\n"),
                ("etc/login.defs", "SYS_UID_MIN 200\nSYS_UID_MAX 300\n"),
            ],
        ),
        (
            "group members",
            &[
                ("etc/passwd", ""),
                (
                    "etc/group",
                    "kubeadm-sa-key-readers:x:120:kubeadm-kcm,kubeadm-kas\n",
                ),
            ],
        ),
        (
            "range exhausted",
            &[
                ("etc/passwd", "a:x:100:1:::/bin/sh\n"),
                ("etc/group", ""),
                ("etc/login.defs", "SYS_UID_MIN\t100\nSYS_UID_MAX\t103\n"),
            ],
        ),
        (
            "login.defs value",
            &[
                ("etc/passwd", ""),
                ("etc/group", ""),
                ("etc/login.defs", "SYS_GID_MAX 1e3\n"),
            ],
        ),
        (
            "bad line",
            &[
                ("etc/passwd", "root:x:0:0:root:/root:/bin/bash\nbroken:x\n"),
                ("etc/group", ""),
            ],
        ),
        ("no group file", &[("etc/passwd", PASSWD)]),
    ];
    let mut failures = Vec::new();
    for (case, files) in cases {
        for (phase, sub) in [("control-plane", "apiserver"), ("etcd", "local")] {
            let mut runs = Vec::new();
            for bin in [upstream_kubeadm(), ours()] {
                let root = new_root(files);
                let r = kubeadm(
                    &bin,
                    root.path(),
                    &["init", "phase", phase, sub, "--config", "/cfg.yaml"],
                );
                let after: Vec<String> = files
                    .iter()
                    .map(|(f, _)| std::fs::read_to_string(root.path().join(f)).unwrap_or_default())
                    .collect();
                runs.push((r.code, lines(&r.stderr), r.stdout, after));
            }
            let (up, our) = (&runs[0], &runs[1]);
            assert_ne!(up.0, 0, "{case}: upstream accepted it");
            if up != our {
                failures.push(format!(
                    "{case} ({phase}): exit {} vs {}\n{}\n{}",
                    up.0,
                    our.0,
                    diff(&up.1, &our.1),
                    diff(&up.2, &our.2)
                ));
            }
            let unchanged: Vec<String> = files.iter().map(|(_, t)| t.to_string()).collect();
            assert_eq!(our.3, unchanged, "{case}: ours changed the files");
        }
    }
    assert_none(&failures);
}

#[test]
fn a_held_lock_times_out_as_upstreams() {
    require_root();
    let mut runs = Vec::new();
    for bin in [upstream_kubeadm(), ours()] {
        let root = new_root(&[("etc/passwd", PASSWD), ("etc/group", GROUP)]);
        let group = root.path().join("etc/group");
        // Another process holds the fcntl write lock for longer than the 5 s tried.
        let mut holder = kubeadm_testkit::rootfs::hold_fcntl_lock(&group, "time.sleep(30)");
        let r = kubeadm(
            &bin,
            root.path(),
            &[
                "init",
                "phase",
                "control-plane",
                "scheduler",
                "--config",
                "/cfg.yaml",
            ],
        );
        let _ = holder.kill();
        let _ = holder.wait();
        assert_eq!(std::fs::read_to_string(&group).expect("group"), GROUP);
        runs.push((r.code, lines(&r.stderr)));
    }
    assert_eq!(runs[0], runs[1]);
    assert!(
        runs[0]
            .1
            .contains("timeout attempting to obtain lock on file \"/etc/group\""),
        "{}",
        runs[0].1
    );
}

#[test]
fn init_dry_run_says_what_it_would_do_and_changes_nothing() {
    require_root();
    let mut said = Vec::new();
    for bin in [upstream_kubeadm(), ours()] {
        let root = new_root(&[("etc/passwd", PASSWD), ("etc/group", GROUP)]);
        let r = kubeadm(
            &bin,
            root.path(),
            &[
                "init",
                "--dry-run",
                "--config",
                "/cfg.yaml",
                "--ignore-preflight-errors=all",
            ],
        );
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        let ours_lines: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| {
                l.starts_with("[control-plane] Would")
                    || l.starts_with("[control-plane] Creating")
                    || l.starts_with("[etcd] Would")
            })
            .collect();
        said.push(ours_lines.join("\n"));
        assert_eq!(
            std::fs::read_to_string(root.path().join("etc/passwd")).expect("passwd"),
            PASSWD
        );
        assert_eq!(
            std::fs::read_to_string(root.path().join("etc/group")).expect("group"),
            GROUP
        );
    }
    assert!(said[0].contains("to run as non-root"), "{}", said[0]);
    assert_eq!(said[0], said[1], "\n{}", diff(&said[0], &said[1]));
}
