//! `kubeadm reset`, upstream and ours, each chrooted (`--rootfs`, which needs root; never run reset
//! here without it: it would empty this machine's /etc/kubernetes and /var/lib/kubelet) into its own
//! copy of one tree made by upstream's `init phase certs all`, `kubeconfig all`, `control-plane all`
//! and `etcd local`, plus some etcd data and a kubelet pod directory. No API server answers at the
//! address in admin.conf, there is no init system and nothing serves the CRI socket.
//!
//! For every case: the same standard output, the same exit code, the same error line, the same files
//! left behind (mode and content).
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kubeadm_testkit::oracle::{Run, diff, expected_code, upstream_kubeadm};

struct Outcome {
    stdout: String,
    /// Standard error without klog lines (their timestamps and sources differ by design).
    error_lines: String,
    code: i32,
    tree: BTreeMap<String, (u32, Vec<u8>)>,
}

/// The tree upstream's init phases leave, made once and copied for every run.
fn prepared_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("root");
    std::fs::write(
        root.path().join("kubeadm.yaml"),
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n",
    )
    .expect("config");
    let upstream = upstream_kubeadm();
    for phase in [
        &["certs", "all"][..],
        &["kubeconfig", "all"],
        &["control-plane", "all"],
        &["etcd", "local"],
    ] {
        kubeadm_testkit::rootfs::init_phase(&upstream, root.path(), phase, "/kubeadm.yaml");
    }
    let r = root.path();
    std::fs::create_dir_all(r.join("var/lib/etcd/member/snap")).expect("etcd");
    std::fs::write(r.join("var/lib/etcd/member/snap/db"), b"data").expect("db");
    std::fs::create_dir_all(r.join("var/lib/kubelet/pods/p1/volumes")).expect("kubelet");
    std::fs::write(
        r.join("var/lib/kubelet/config.yaml"),
        b"kind: KubeletConfiguration\n",
    )
    .expect("kubelet");
    std::fs::create_dir_all(r.join("etc/cni/net.d")).expect("cni");
    std::fs::write(r.join("etc/cni/net.d/10-bridge.conflist"), b"{}").expect("cni");
    root
}

fn copy_tree(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().expect("copy");
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to.path())
        .status()
        .expect("cp");
    assert!(status.success());
    to
}

fn run(bin: &Path, prepared: &Path, args: &[&str], stdin: &str) -> Outcome {
    let root = copy_tree(prepared);
    let rootfs = root.path().to_str().expect("utf8").to_string();
    let mut child = Command::new(bin)
        .arg("--rootfs")
        .arg(&rootfs)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        error_lines: stderr
            .lines()
            .filter(|l| !(l.starts_with('W') || l.starts_with('I') || l.starts_with('E')) || !l.contains(']'))
            .map(|l| format!("{l}\n"))
            .collect(),
        code: out.status.code().unwrap_or(-1),
        tree: kubeadm_testkit::rootfs::tree(root.path(), &["etc", "var"]),
    }
}

#[test]
fn reset_matches_upstream_on_an_init_tree() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let prepared = prepared_tree();
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let upstream = upstream_kubeadm();
    let cases: &[(&[&str], &str)] = &[
        (&["reset", "-f", "--dry-run"], ""),
        (&["reset", "-f"], ""),
        (
            &["reset", "-f", "--cri-socket", "unix:///run/nothing-serves.sock"],
            "",
        ),
        (&["reset", "-f", "--cri-socket", "garbage"], ""),
        (&["reset", "-f", "--cri-socket", "garbage", "--dry-run"], ""),
        (&["reset"], "n\n"),
        (&["reset"], ""),
        (&["reset"], "yes\n"),
        (&["reset", "--dry-run"], ""),
        (&["reset", "-f", "--cert-dir", "/etc/kubernetes/other"], ""),
        (&["reset", "-f", "--skip-phases", "cleanup-node"], ""),
        (
            &["reset", "-f", "--skip-phases", "remove-etcd-member,preflight"],
            "",
        ),
        (&["reset", "-f", "--skip-phases", "foo"], ""),
        (
            &["reset", "-f", "--ignore-preflight-errors", "all,IsPrivilegedUser"],
            "",
        ),
        (&["reset", "-f", "--ignore-preflight-errors", "all"], ""),
        (&["reset", "-f", "--kubeconfig", "/nonexistent.conf"], ""),
        (&["reset", "phase", "foo"], ""),
        (&["reset", "phase", "preflight"], "n\n"),
        (&["reset", "phase", "preflight", "-f"], ""),
        (&["reset", "phase", "remove-etcd-member"], ""),
        (&["reset", "phase", "cleanup-node"], ""),
        (
            &[
                "reset",
                "phase",
                "cleanup-node",
                "--cert-dir",
                "/etc/kubernetes/pki/etcd",
            ],
            "",
        ),
        (&["reset", "phase", "remove-etcd-member", "--dry-run"], ""),
    ];
    let mut failures = Vec::new();
    for (args, stdin) in cases {
        let want = run(&upstream, prepared.path(), args, stdin);
        let got = run(&ours, prepared.path(), args, stdin);
        let name = format!("{args:?} <<{stdin:?}");
        if want.stdout != got.stdout {
            failures.push(format!("{name}: stdout\n{}", diff(&want.stdout, &got.stdout)));
        }
        let want_code = expected_code(&Run {
            stdout: String::new(),
            stderr: want.error_lines.clone(),
            code: want.code,
        });
        if want_code != got.code {
            failures.push(format!(
                "{name}: exit code {} vs {} (want {want_code})",
                want.code, got.code
            ));
        }
        if want.error_lines != got.error_lines {
            failures.push(format!(
                "{name}: error\n{}",
                diff(&want.error_lines, &got.error_lines)
            ));
        }
        if want.tree != got.tree {
            let keys = |t: &BTreeMap<String, (u32, Vec<u8>)>| t.keys().cloned().collect::<Vec<_>>();
            failures.push(format!(
                "{name}: files left\n{}",
                diff(&keys(&want.tree).join("\n"), &keys(&got.tree).join("\n"))
            ));
        }
    }
    // The case the rest relies on: a real reset empties the directories and deletes the files.
    let after = run(&ours, prepared.path(), &["reset", "-f"], "");
    assert!(
        !after.tree.contains_key("etc/kubernetes/admin.conf")
            && !after.tree.contains_key("etc/kubernetes/manifests/etcd.yaml")
            && !after.tree.contains_key("var/lib/etcd/member")
            && after.tree.contains_key("etc/cni/net.d/10-bridge.conflist"),
        "{:?}",
        after.tree.keys().collect::<Vec<_>>()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The root check, run as `nobody` (so nothing on this machine can be touched; `--dry-run` besides):
/// the same output and error; the exit code is 2, the code kubeadm documents for preflight errors,
/// where upstream v1.25.16 exits 1 (its workflow wraps the error and loses the type it picks 2 by).
#[test]
fn the_root_check_fails_for_other_users() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test switches to nobody and must start as root"
    );
    let args = [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "BIN",
        "reset",
        "-f",
        "--dry-run",
        "--kubeconfig",
        "/nonexistent.conf",
    ];
    let run_as_nobody = |bin: &Path| {
        let bin = bin.to_str().expect("utf8");
        let args: Vec<&str> = args.iter().map(|a| if *a == "BIN" { bin } else { a }).collect();
        let out = Command::new("setpriv")
            .args(&args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .expect("setpriv");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code().unwrap_or(-1),
        )
    };
    let (up_out, up_err, up_code) = run_as_nobody(&upstream_kubeadm());
    let (our_out, our_err, our_code) = run_as_nobody(Path::new(env!("CARGO_BIN_EXE_kubeadm")));
    assert_eq!(up_out, "[preflight] Running pre-flight checks\n");
    assert_eq!(our_out, up_out);
    assert!(
        up_err.contains("[ERROR IsPrivilegedUser]: user is not running as root"),
        "{up_err}"
    );
    assert_eq!(our_err, up_err);
    assert_eq!((up_code, our_code), (1, 2));
}
