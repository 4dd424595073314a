//! `kubeadm upgrade plan`, upstream and ours, against a real API server (upstream etcd +
//! kube-apiserver v1.25.16 on loopback) set up as `kubeadm init` leaves a cluster: the config
//! ConfigMaps, the control-plane Node (Ready, with its kubelet version), the addons and mirror
//! Pods, and the static Pod manifests and kubelet.conf under a temp root that both binaries chroot
//! into (`--rootfs`, which needs root; upstream must never run unchrooted here). The machine has
//! no internet, so upstream's version-label fetches fail and it falls back to its own version:
//! exactly what our offline resolution does. Each case compares stdout and the exit code; the
//! error lines of stderr (not klog's `W…]` lines) are compared too.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kubeadm_testkit::apiserver::ApiServer;
use kubeadm_testkit::oracle::upstream_kubeadm;

#[path = "support/upgrade_cluster.rs"]
mod upgrade_cluster;
use upgrade_cluster::{
    JobController, NODE, Outcome, apply_json, assert_same, cluster, init_config, node_status, outcome,
    wait_job_gone,
};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// Runs `bin --rootfs <root> upgrade plan <args>`.
fn plan(bin: &Path, root: &Path, args: &[&str]) -> (Outcome, String) {
    let out = Command::new(bin)
        .arg("--rootfs")
        .arg(root)
        .args(["upgrade", "plan"])
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .expect("run kubeadm");
    outcome(&out, str::to_string)
}

fn compare(server: &ApiServer, args: &[&str]) -> usize {
    let root = server.root();
    let (theirs, theirs_err) = plan(&upstream_kubeadm(), &root, args);
    wait_job_gone(server);
    let (mine, mine_err) = plan(&ours(), &root, args);
    wait_job_gone(server);
    // A debugging aid: `UPGRADE_PLAN_PROBE=1` prints both runs in full instead of asserting.
    assert_same(
        &format!("upgrade plan {args:?}"),
        "UPGRADE_PLAN_PROBE",
        (&theirs, &theirs_err),
        (&mine, &mine_err),
    );
    1
}

#[test]
fn plan_matches_upstream_on_a_v1_25_16_cluster() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let server = cluster("v1.25.16", "v1.24.9");
    let _jobs = JobController::start(&server);
    // Two workers: kubelet rows are counted per version and sorted, only the first one named.
    for (name, version) in [("worker-a", "v1.23.17"), ("worker-b", "v1.24.9")] {
        apply_json(
            &server,
            &format!("{name}.json"),
            &format!(r#"{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{name}"}}}}"#),
            "create",
        );
        server.kubectl(&[
            "patch",
            "node",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &format!(r#"{{"status":{{"nodeInfo":{{"kubeletVersion":"{version}","machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}}}}}"#),
        ]);
    }
    // A reconfiguring --config (kubeadm types): its version is the target, its external etcd
    // drops the etcd row and the etcd manifest lookup.
    std::fs::write(
        server.root().join("external.yaml"),
        init_config(server.port(), "v1.25.17").replace(
            "apiServer:",
            "etcd:\n  external:\n    endpoints: [https://127.0.0.1:2379]\napiServer:",
        ),
    )
    .expect("external.yaml");
    // Component configs of the user's in a --config file without kubeadm types.
    for (file, version) in [
        ("proxy-v1alpha1.yaml", "v1alpha1"),
        ("proxy-v1alpha2.yaml", "v1alpha2"),
    ] {
        std::fs::write(
            server.root().join(file),
            format!("apiVersion: kubeproxy.config.k8s.io/{version}\nkind: KubeProxyConfiguration\n"),
        )
        .expect("proxy config");
    }
    let mut n = 0;
    for args in [
        &[][..],
        &["v1.25.17", "--config", "/proxy-v1alpha1.yaml"],
        &["v1.25.17", "--config", "/proxy-v1alpha2.yaml"],
        &["-o", "json"],
        &["-o", "yaml"],
        &["v1.25.17"],
        &["v1.25.17", "-o", "json"],
        &["v1.25.17", "-o", "yaml"],
        &["v1.26.1"],
        &["v1.26.0-rc.1"],
        &["v1.26.0-beta.0", "--allow-experimental-upgrades"],
        &["v1.25.16"],
        &["v1.25.16", "-o", "json"],
        &["--allow-experimental-upgrades"],
        &["--allow-release-candidate-upgrades", "-o", "yaml"],
        &[
            "v1.26.0-rc.1",
            "--allow-release-candidate-upgrades",
            "--allow-experimental-upgrades",
        ],
        &["v1.25.17", "--print-config"],
        &["v1.25.17", "--print-config", "-o", "json"],
        &["v1.25.17", "--config", "/init.yaml"],
        &["v1.25.17", "--ignore-preflight-errors", "all,CreateJob"],
        &["v1.25.17", "--feature-gates", "PublicKeysECDSA=true"],
        &["--config", "/external.yaml"],
        &["--config", "/external.yaml", "-o", "json"],
    ] {
        n += compare(&server, args);
    }
    // Component configs: a user-supplied kube-proxy config of another version needs a manual
    // upgrade; without the kube-proxy ConfigMap, only the kubelet's is listed.
    let proxy = server.kubectl(&["-n", "kube-system", "get", "cm", "kube-proxy", "-o", "json"]);
    let mut cm: serde_json::Value = serde_json::from_str(&proxy).expect("kube-proxy cm");
    let conf = cm["data"]["config.conf"].as_str().expect("config.conf").replace(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1",
        "apiVersion: kubeproxy.config.k8s.io/v1alpha2",
    );
    cm["data"]["config.conf"] = serde_json::Value::String(conf);
    apply_json(&server, "kube-proxy-cm.json", &cm.to_string(), "replace");
    n += compare(&server, &["v1.25.17"]);
    server.kubectl(&["-n", "kube-system", "delete", "cm", "kube-proxy"]);
    n += compare(&server, &["v1.25.17"]);
    n += compare(&server, &["v1.25.17", "-o", "yaml"]);
    assert_eq!(n, 26);
}

#[test]
fn plan_fails_as_upstream_on_bad_input() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let server = cluster("v1.25.16", "v1.25.16");
    let _jobs = JobController::start(&server);
    // A kubeconfig whose server does not answer.
    let admin = std::fs::read_to_string(server.root().join("etc/kubernetes/admin.conf")).expect("admin.conf");
    let port = format!("127.0.0.1:{}", server.port());
    std::fs::write(
        server.root().join("etc/kubernetes/unreachable.conf"),
        admin.replace(&port, "127.0.0.1:1"),
    )
    .expect("unreachable.conf");
    let mut n = 0;
    for args in [
        &["foo"][..],
        &["v1.25"],
        &["-o", "bogus"],
        &["-o", "JSON"],
        &["--kubeconfig", "/etc/kubernetes/missing.conf"],
        &["--kubeconfig", "/etc/kubernetes/unreachable.conf"],
        &["--kubeconfig", "/etc/kubernetes/unreachable.conf", "-o", "json"],
        &["--ignore-preflight-errors", "all,Swap"],
        &["v1.25.17", "extra"],
        &["--config", "/missing.yaml"],
        &["--ignore-preflight-errors", "bogus"],
        &["--feature-gates", "Bogus=true"],
    ] {
        n += compare(&server, args);
    }
    // A control-plane Node that is not Ready fails the health check.
    node_status(&server, "v1.25.16", false);
    n += compare(&server, &["v1.25.17"]);
    n += compare(
        &server,
        &["v1.25.17", "--ignore-preflight-errors", "ControlPlaneNodesReady"],
    );
    node_status(&server, "v1.25.16", true);
    // Without the etcd manifest, the etcd version cannot be read.
    let etcd = server.root().join("etc/kubernetes/manifests/etcd.yaml");
    let saved = std::fs::read(&etcd).expect("etcd.yaml");
    std::fs::remove_file(&etcd).expect("remove etcd.yaml");
    n += compare(&server, &["v1.25.17"]);
    std::fs::write(&etcd, saved).expect("restore etcd.yaml");
    // Without a scheduler manifest, the static Pod health check fails.
    let sched = server.root().join("etc/kubernetes/manifests/kube-scheduler.yaml");
    let saved = std::fs::read(&sched).expect("kube-scheduler.yaml");
    std::fs::remove_file(&sched).expect("remove kube-scheduler.yaml");
    n += compare(&server, &["v1.25.17"]);
    std::fs::write(&sched, saved).expect("restore kube-scheduler.yaml");
    // A configuration naming the legacy registry is moved to registry.k8s.io, in the ConfigMap too.
    let original = server.kubectl(&["-n", "kube-system", "get", "cm", "kubeadm-config", "-o", "json"]);
    let mut legacy: serde_json::Value = serde_json::from_str(&original).expect("kubeadm-config");
    let text = legacy["data"]["ClusterConfiguration"]
        .as_str()
        .expect("ClusterConfiguration");
    assert!(text.contains("imageRepository: registry.k8s.io\n"), "{text}");
    legacy["data"]["ClusterConfiguration"] = text
        .replace("imageRepository: registry.k8s.io", "imageRepository: k8s.gcr.io")
        .into();
    legacy["metadata"]
        .as_object_mut()
        .expect("metadata")
        .retain(|k, _| k == "name" || k == "namespace");
    let stored = |server: &ApiServer| -> String {
        let cm = server.kubectl(&["-n", "kube-system", "get", "cm", "kubeadm-config", "-o", "json"]);
        let cm: serde_json::Value = serde_json::from_str(&cm).expect("kubeadm-config");
        cm["data"]["ClusterConfiguration"]
            .as_str()
            .expect("ClusterConfiguration")
            .to_string()
    };
    let mut runs = Vec::new();
    for bin in [upstream_kubeadm(), ours()] {
        apply_json(&server, "legacy-cm.json", &legacy.to_string(), "replace");
        let (outcome, _) = plan(&bin, &server.root(), &["v1.25.17", "-o", "json"]);
        wait_job_gone(&server);
        runs.push((outcome, stored(&server)));
    }
    assert_eq!(
        runs[0], runs[1],
        "legacy imageRepository: (outcome, stored ClusterConfiguration)"
    );
    assert!(runs[0].1.contains("imageRepository: registry.k8s.io\n"));
    assert!(
        runs[0]
            .0
            .stdout
            .contains("[upload-config] Storing the configuration used in ConfigMap")
    );
    n += 1;
    // A CRI socket stored with its scheme twice (kubeadm v1.24.0-2) is repaired on the Node.
    let annotation = |server: &ApiServer| {
        server.kubectl(&[
            "get",
            "node",
            NODE,
            "-o",
            "jsonpath={.metadata.annotations.kubeadm\\.alpha\\.kubernetes\\.io/cri-socket}",
        ])
    };
    let mut runs = Vec::new();
    for bin in [upstream_kubeadm(), ours()] {
        server.kubectl(&[
            "annotate",
            "--overwrite",
            "node",
            NODE,
            "kubeadm.alpha.kubernetes.io/cri-socket=unix://unix:///var/run/containerd/containerd.sock",
        ]);
        let (outcome, _) = plan(&bin, &server.root(), &["v1.25.17"]);
        wait_job_gone(&server);
        runs.push((outcome, annotation(&server)));
    }
    assert_eq!(
        runs[0], runs[1],
        "doubled CRI socket scheme: (outcome, annotation)"
    );
    assert_eq!(runs[0].1, "unix:///var/run/containerd/containerd.sock");
    n += 1;
    // CoreDNS checks: a version the migration library does not know, then no CoreDNS config.
    server.kubectl(&[
        "-n",
        "kube-system",
        "set",
        "image",
        "deployment/coredns",
        "coredns=registry.k8s.io/coredns/coredns:v1.10.1",
    ]);
    n += compare(&server, &["v1.25.17"]);
    n += compare(
        &server,
        &["v1.25.17", "--ignore-preflight-errors", "CoreDNSMigration"],
    );
    n += compare(
        &server,
        &[
            "v1.25.17",
            "--ignore-preflight-errors",
            "CoreDNSMigration,CoreDNSUnsupportedPlugins",
        ],
    );
    server.kubectl(&["-n", "kube-system", "delete", "cm", "coredns"]);
    n += compare(&server, &["v1.25.17"]);
    // Without the kubeadm-config ConfigMap there is nothing to plan from.
    server.kubectl(&["-n", "kube-system", "delete", "cm", "kubeadm-config"]);
    n += compare(&server, &["v1.25.17"]);
    n += compare(&server, &["v1.25.17", "-o", "yaml"]);
    assert_eq!(n, 24);
}
