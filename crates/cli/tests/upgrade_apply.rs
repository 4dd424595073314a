//! `kubeadm upgrade apply`, upstream v1.25.16 and ours, against a real API server set up as
//! `kubeadm init` of v1.25.15 leaves a cluster (see `support/upgrade_cluster.rs`), both chrooted
//! into the same temp root (`--rootfs`, which needs root).
//!
//! The dry run must print the same (after normalising the random part of upstream's temporary
//! folder names) and change nothing, on the API server or on disk (upstream leaves a temporary
//! folder behind); the refusals (a version that
//! skips a minor, a downgrade without `--force`, an unstable version, no version, an unreachable
//! API server, an unhealthy cluster) must give upstream's output and exit code, and change nothing.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kubeadm_testkit::apiserver::ApiServer;
use kubeadm_testkit::oracle::upstream_kubeadm;

#[path = "support/upgrade_cluster.rs"]
mod upgrade_cluster;
use upgrade_cluster::{JobController, Outcome, assert_same, cluster, node_status, outcome, wait_job_gone};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// Runs `bin --rootfs <root> upgrade <args>` (`apply …` or `node …`) with `stdin` as its input.
fn upgrade(bin: &Path, root: &Path, args: &[&str], stdin: &str) -> (Outcome, String) {
    use std::io::Write;
    let mut child = Command::new(bin)
        .arg("--rootfs")
        .arg(root)
        .arg("upgrade")
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kubeadm");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    outcome(&out, normalise)
}

/// Upstream's temporary folders end in random digits (Go's `os.MkdirTemp`); a printed LIST
/// response carries the store's current revision as its `resourceVersion`, which moves on its own
/// between two runs (the API server's own leases).
fn normalise(text: &str) -> String {
    let mut in_list = false;
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with('[') {
                in_list = l == "[dryrun] Returning faked LIST response:";
            }
            if in_list && l.starts_with("\t  resourceVersion: ") {
                "\t  resourceVersion: <revision>\n".to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    let marker = "kubeadm-upgrade-dryrun";
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i + marker.len()]);
        rest = rest[i + marker.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("<random>");
    }
    out.push_str(rest);
    out
}

/// What a run could have changed: every object kubeadm reads or writes, and the root's files.
fn state(server: &ApiServer) -> String {
    let mut s = server.kubectl(&[
        "get",
        "nodes,configmaps,roles,rolebindings,clusterroles,clusterrolebindings,deployments,daemonsets,services,serviceaccounts",
        "-A",
        "-o",
        "custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name,RV:.metadata.resourceVersion",
    ]);
    let root = server.root();
    let mut files: Vec<String> = walk(&root.join("etc/kubernetes"))
        .into_iter()
        .chain(walk(&root.join("var/lib/kubelet")))
        .map(|p| {
            // The contents (a hash of them, so that a failure prints a line per file) and the
            // mode: a rewrite of the same size is a change too.
            use std::hash::{Hash, Hasher};
            use std::os::unix::fs::PermissionsExt;
            let bytes = std::fs::read(&p).unwrap_or_default();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            let mode = std::fs::metadata(&p).map_or(0, |m| m.permissions().mode());
            format!("{} {} {:o} {:016x}", p.display(), bytes.len(), mode, h.finish())
        })
        .collect();
    files.sort();
    s.push_str(&files.join("\n"));
    s
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `upgrade apply <args>` by both.
fn compare(server: &ApiServer, args: &[&str], stdin: &str) -> usize {
    let mut all = vec!["apply"];
    all.extend_from_slice(args);
    compare_upgrade(server, &all, stdin)
}

/// `upgrade <args>` by both: the same output and exit code, and ours changes nothing.
fn compare_upgrade(server: &ApiServer, args: &[&str], stdin: &str) -> usize {
    let root = server.root();
    let (theirs, theirs_err) = upgrade(&upstream_kubeadm(), &root, args, stdin);
    wait_job_gone(server);
    // Taken after upstream's run: its dry run leaves the kubelet's configuration behind in
    // /etc/kubernetes/tmp/kubeadm-upgrade-dryrun*/ (ours writes nothing at all).
    let before = state(server);
    let (mine, mine_err) = upgrade(&ours(), &root, args, stdin);
    wait_job_gone(server);
    let what = format!("upgrade {args:?}");
    if !assert_same(
        &what,
        "UPGRADE_APPLY_PROBE",
        (&theirs, &theirs_err),
        (&mine, &mine_err),
    ) {
        return 1;
    }
    assert_eq!(
        before,
        state(server),
        "upgrade apply {args:?} changed the cluster or the files"
    );
    1
}

#[test]
fn dry_run_prints_what_upstream_prints_and_changes_nothing() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let server = cluster("v1.25.15", "v1.25.16");
    let _jobs = JobController::start(&server);
    // A cluster made by 1.24: the legacy registry in kubeadm-config, the legacy taint on the node.
    let cm = server.kubectl(&["-n", "kube-system", "get", "cm", "kubeadm-config", "-o", "json"]);
    let mut cm: serde_json::Value = serde_json::from_str(&cm).expect("kubeadm-config");
    let cc = cm["data"]["ClusterConfiguration"]
        .as_str()
        .expect("ClusterConfiguration");
    let cc = cc.replace("imageRepository: registry.k8s.io", "imageRepository: k8s.gcr.io");
    cm["data"]["ClusterConfiguration"] = serde_json::Value::String(cc);
    upgrade_cluster::apply_json(&server, "kubeadm-config.json", &cm.to_string(), "replace");
    server.kubectl(&[
        "taint",
        "node",
        upgrade_cluster::NODE,
        "node-role.kubernetes.io/master:NoSchedule",
    ]);
    let patches = server.root().join("patches");
    std::fs::create_dir_all(&patches).expect("patches");
    std::fs::write(
        patches.join("kube-apiserver+json.json"),
        r#"[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--v=4"}]"#,
    )
    .expect("patch");
    std::fs::write(patches.join("kubeletconfiguration.yaml"), "maxPods: 42\n").expect("patch");
    // Component configurations upgraded by hand: they replace the cluster's.
    std::fs::write(
        server.root().join("kubelet-only.yaml"),
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 99\n",
    )
    .expect("kubelet-only.yaml");
    let mut n = 0;
    for args in [
        &["v1.25.16", "--dry-run"][..],
        &["v1.25.16", "--dry-run", "--patches", "/patches"],
        &["v1.25.16", "--dry-run", "--print-config", "--etcd-upgrade=false"],
        &["v1.25.16", "--dry-run", "--config", "/kubelet-only.yaml"],
    ] {
        n += compare(&server, args, "");
    }
    // The same node's `upgrade node`, as on a second control plane: its configuration from the
    // cluster (with `k8s.gcr.io` read as `registry.k8s.io`, not written back), the image pull
    // announced, the new manifests and the kubelet's configuration printed.
    for args in [
        &["node", "--dry-run"][..],
        &["node", "--dry-run", "--patches", "/patches"],
        &[
            "node",
            "phase",
            "control-plane",
            "--dry-run",
            "--etcd-upgrade=false",
        ],
        &[
            "node",
            "phase",
            "kubelet-config",
            "--dry-run",
            "--patches",
            "/patches",
        ],
    ] {
        n += compare_upgrade(&server, args, "");
    }
    assert_eq!(n, 8);
}

#[test]
fn refusals_are_upstreams_and_change_nothing() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let server = cluster("v1.25.15", "v1.25.16");
    let _jobs = JobController::start(&server);
    let admin = std::fs::read_to_string(server.root().join("etc/kubernetes/admin.conf")).expect("admin.conf");
    let port = format!("127.0.0.1:{}", server.port());
    std::fs::write(
        server.root().join("etc/kubernetes/unreachable.conf"),
        admin.replace(&port, "127.0.0.1:1"),
    )
    .expect("unreachable.conf");
    let mut n = 0;
    for (args, stdin) in [
        (&[][..], ""),
        (&["v1.25.16", "v1.25.17"], ""),
        (&["v1.27.0", "-y"], ""),
        (&["v1.24.9", "-y"], ""),
        (&["v1.23.0", "-y"], ""),
        (&["v1.25.17", "-y"], ""),
        (&["v1.26.0-rc.1", "-y"], ""),
        (&["v1.25.16"], "n\n"),
        (&["v1.25.16"], ""),
        (&["foo", "-y"], ""),
        (
            &[
                "v1.25.16",
                "-y",
                "--kubeconfig",
                "/etc/kubernetes/unreachable.conf",
            ],
            "",
        ),
        (
            &["v1.25.16", "-y", "--kubeconfig", "/etc/kubernetes/missing.conf"],
            "",
        ),
        (&["v1.25.16", "-y", "--ignore-preflight-errors", "all,Swap"], ""),
        (&["v1.25.16", "-y", "--config", "/missing.yaml"], ""),
    ] {
        n += compare(&server, args, stdin);
    }
    // An unhealthy cluster: the control-plane node is not Ready.
    node_status(&server, "v1.25.16", false);
    n += compare(&server, &["v1.25.16", "-y"], "");
    assert_eq!(n, 15);
}
