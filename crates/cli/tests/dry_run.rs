//! `kubeadm init --dry-run` as an unprivileged user, with no cluster and no container runtime needed:
//! the whole workflow runs and nothing is written anywhere.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every path under the given roots with its size and modification time.
fn snapshot(roots: &[&str]) -> BTreeMap<PathBuf, (u64, i64)> {
    let mut out = BTreeMap::new();
    let mut pending: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
    while let Some(p) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        out.insert(p.clone(), (meta.size(), meta.mtime()));
        if meta.is_dir()
            && let Ok(rd) = std::fs::read_dir(&p)
        {
            pending.extend(rd.flatten().map(|e| e.path()));
        }
    }
    out
}

#[test]
fn init_dry_run_as_nobody_succeeds_and_writes_nothing() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let home = tempfile::tempdir().expect("home");
    // `nobody` must be able to enter the directory it runs in.
    std::fs::set_permissions(home.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .expect("chmod");
    let watched = ["/etc/kubernetes", "/var/lib/kubelet", "/var/lib/etcd"];
    let before = snapshot(&watched);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&ours)
        .args(["init", "--dry-run", "--ignore-preflight-errors=all"])
        .current_dir(home.path())
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .output()
        .expect("run setpriv (util-linux)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "[certs] Generating \"ca\" certificate and key",
        "[control-plane] Creating static Pod manifest for \"kube-apiserver\"",
        "[dryrun] Would perform action CREATE on resource \"configmaps\" in API group \"core/v1\"",
        "Your Kubernetes control-plane has initialized successfully!",
        "kubeadm join ",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    assert_eq!(snapshot(&watched), before, "a dry run changed the host");
    let left: Vec<_> = std::fs::read_dir(home.path())
        .expect("home")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "a dry run left {left:?}");
    assert!(
        !Path::new("/etc/kubernetes/admin.conf").exists()
            || before.contains_key(Path::new("/etc/kubernetes/admin.conf"))
    );
}
