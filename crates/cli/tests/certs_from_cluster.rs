//! `certs check-expiration` and `certs renew all` without `--config` read the configuration of the
//! cluster `--kubeconfig` names, as upstream's `getInternalCfg` does: upstream v1.25.16 against ours
//! on one real kube-apiserver holding what `kubeadm init` uploads for a cluster with **external**
//! etcd (whose certificates kubeadm then neither lists nor renews), the control-plane Node and its
//! kube-apiserver mirror Pod (the node's API endpoint), each binary chrooted (`--rootfs`) into the
//! control plane's files. Then the same with a kubeconfig whose CA does not sign the server's
//! certificate: TLS verification fails, both fall back to the defaults (local etcd) with
//! upstream's line. Both must print the same and exit the same.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::apiserver::{ApiServer, InitConfig};
use kubeadm_testkit::oracle::{Run, diff, run, upstream_kubeadm};
use kubeadm_testkit::rootfs::{init_phase, is_root};

const NODE: &str = "apiserver-test";

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

const EXTERNAL_ETCD: &str = "etcd:
  external:
    endpoints: [https://127.0.0.1:2379]
    caFile: /etc/kubernetes/pki/etcd/ca.crt
    certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt
    keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key
";

/// A copy of the control plane's `/etc/kubernetes` under a new root.
fn copy_root(from: &Path) -> tempfile::TempDir {
    let to = tempfile::Builder::new()
        .prefix("kubeadm-rs-certs-from-cluster")
        .tempdir()
        .expect("temp dir");
    std::fs::create_dir_all(to.path().join("etc")).expect("etc");
    let status = std::process::Command::new("cp")
        .args(["-a"])
        .arg(from.join("etc/kubernetes"))
        .arg(to.path().join("etc/"))
        .status()
        .expect("cp");
    assert!(status.success());
    to
}

fn both(root_up: &Path, root_ours: &Path, args: &[&str]) -> (Run, Run) {
    let go = |bin: &Path, root: &Path| {
        let rootfs = root.to_string_lossy().into_owned();
        let mut all = vec!["--rootfs", rootfs.as_str()];
        all.extend_from_slice(args);
        run(bin, &all, root, &[])
    };
    (go(&upstream_kubeadm(), root_up), go(&ours(), root_ours))
}

fn same(what: &str, up: &Run, ours: &Run) {
    assert_eq!(
        (up.code, &up.stdout),
        (ours.code, &ours.stdout),
        "{what}: stdout differs (- upstream, + ours):\n{}\nupstream's stderr:\n{}\nour stderr:\n{}",
        diff(&up.stdout, &ours.stdout),
        up.stderr,
        ours.stderr
    );
}

#[test]
fn check_expiration_and_renew_read_the_clusters_configuration_as_upstream() {
    assert!(is_root(), "this test chroots with --rootfs and must run as root");
    let up = upstream_kubeadm();
    let server = ApiServer::start_with(&up);
    let root = server.root();
    let port = server.port();
    let config = InitConfig {
        node: NODE,
        cluster_extra: EXTERNAL_ETCD,
        ..InitConfig::default()
    }
    .render(port);
    std::fs::write(root.join("init.yaml"), config).expect("config");
    init_phase(&up, &root, &["kubeconfig", "kubelet"], "/init.yaml");
    server.create_node(NODE, serde_json::json!({}));
    init_phase(&up, &root, &["upload-config", "all"], "/init.yaml");
    server.create_apiserver_mirror_pod(NODE, "registry.k8s.io/kube-apiserver:v1.25.16");
    std::fs::write(
        root.join("etc/kubernetes/untrusting.conf"),
        server.untrusting_kubeconfig(),
    )
    .expect("kubeconfig");

    // check-expiration reads the files only: both run on the same root.
    let (theirs, mine) = both(&root, &root, &["certs", "check-expiration"]);
    same("check-expiration", &theirs, &mine);
    assert!(
        theirs.code == 0
            && theirs
                .stdout
                .starts_with("[check-expiration] Reading configuration from the cluster...\n")
            && !theirs.stdout.contains("Falling back")
            && !theirs.stdout.contains("etcd-server"),
        "upstream did not use the cluster's configuration (external etcd):\n{}{}",
        theirs.stdout,
        theirs.stderr
    );
    let (theirs, mine) = both(
        &root,
        &root,
        &[
            "certs",
            "check-expiration",
            "--kubeconfig",
            "/etc/kubernetes/untrusting.conf",
        ],
    );
    same(
        "check-expiration, the server's certificate not trusted",
        &theirs,
        &mine,
    );
    assert!(
        theirs.stdout.contains(
            "Error reading configuration from the Cluster. Falling back to default configuration\n\n"
        ) && theirs.stdout.contains("etcd-server"),
        "upstream did not fall back:\n{}{}",
        theirs.stdout,
        theirs.stderr
    );

    // renew all writes: each binary gets its own copy of the files.
    for (what, extra) in [
        ("renew all", &[][..]),
        (
            "renew all, the server's certificate not trusted",
            &["--kubeconfig", "/etc/kubernetes/untrusting.conf"][..],
        ),
    ] {
        let (root_up, root_ours) = (copy_root(&root), copy_root(&root));
        let mut args = vec!["certs", "renew", "all"];
        args.extend_from_slice(extra);
        let (theirs, mine) = both(root_up.path(), root_ours.path(), &args);
        same(what, &theirs, &mine);
        assert_eq!(theirs.code, 0, "{}", theirs.stderr);
        // What was renewed: the same files changed on both sides.
        let changed = |r: &Path| -> Vec<String> {
            let before = kubeadm_testkit::rootfs::tree(&root, &["etc/kubernetes"]);
            let after = kubeadm_testkit::rootfs::tree(r, &["etc/kubernetes"]);
            after
                .iter()
                .filter(|(k, v)| before.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .collect()
        };
        assert_eq!(changed(root_up.path()), changed(root_ours.path()), "{what}");
        assert_eq!(
            changed(root_up.path()).iter().any(|p| p.contains("etcd/server")),
            !extra.is_empty(),
            "{what}: etcd's certificates renewed only with the defaults (local etcd)"
        );
    }
}
