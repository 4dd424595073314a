//! A worker's `kubeadm join` (preflight skipped, as kind and Cluster API's retries run it) stopped
//! dead at every file change, API call, kubelet stop and restart in turn, then run again.
//!
//! The cluster is what `kubeadm init` leaves (made on fakes, as in `init_crash_points.rs`), with
//! the JWS signature of `cluster-info` that the controller-manager's bootstrap signer adds. The
//! joining node's disk is in memory; its kubelet, restarted by the join, bootstraps only from a
//! `bootstrap-kubelet.conf` the cluster accepts (its server and CA, a valid token: the last test
//! shows the stand-in refuses any other), then writes `kubelet.conf` and registers its Node (not
//! Ready). A join is killed at its k-th operation (that operation and
//! everything after it fail, no clean-up runs: `bootstrap-kubelet.conf`, which holds the token,
//! may stay behind), then run again on what was left: it must finish and leave what an
//! uninterrupted join leaves: the same files byte for byte and mode, the token's file gone, the
//! Node annotated with the CRI socket.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_testkit::fakes::FakeCluster;
use serde_json::Value;

mod common;
mod crash;
use crash::{
    BOOTSTRAP_KUBELET_CONF, CrashPoint, KUBELET_CONF, MemFs, NOW, Node, bootstrap_credentials, joining_data,
    node_object, run_join, try_each,
};

const TOKEN: &str = "abcdef.0123456789abcdef";
const WORKER: &str = "worker";

type Files = BTreeMap<PathBuf, (u32, Vec<u8>)>;

/// The cluster as `kubeadm init` left it, `cluster-info` signed for the token.
fn cluster() -> FakeCluster {
    let node = Node::new();
    node.init(&CrashPoint::new(None))
        .unwrap_or_else(|e| panic!("init: {e}"));
    crash::sign_cluster_info(&node.cluster, TOKEN);
    node.cluster.copy()
}

struct Joining {
    fs: Arc<MemFs>,
    cluster: Arc<FakeCluster>,
}

impl Joining {
    fn new(cluster: &FakeCluster) -> Joining {
        Joining {
            fs: MemFs::with_files(&Files::new()),
            cluster: Arc::new(cluster.copy()),
        }
    }

    /// `kubeadm join 192.0.2.2:6443 --token … --discovery-token-unsafe-skip-ca-verification
    /// --node-name worker --skip-phases=preflight` until `crash` kills it, if it does.
    fn join(&self, crash: &Arc<CrashPoint>) -> Result<(), String> {
        let cfg = crash::token_join_config(TOKEN, "192.0.2.2:6443", WORKER);
        run_join(&mut joining_data(
            cfg,
            WORKER,
            "192.0.2.9",
            &self.fs,
            &self.cluster,
            crash,
        ))
    }

    /// What is left: the node's files, and its Node object (without what the fake server sets).
    fn state(&self) -> (Files, Value) {
        (self.fs.files(), node_object(&self.cluster, WORKER))
    }
}

#[test]
fn a_join_killed_at_any_point_finishes_when_run_again() {
    let cluster = cluster();
    let reference = Joining::new(&cluster);
    let whole = CrashPoint::new(None);
    reference
        .join(&whole)
        .unwrap_or_else(|e| panic!("uninterrupted join: {e}"));
    let points = whole.count.load(Ordering::SeqCst);
    let want = reference.state();
    let paths: Vec<&Path> = want.0.keys().map(PathBuf::as_path).collect();
    assert_eq!(
        paths,
        [
            Path::new(KUBELET_CONF),
            Path::new("/etc/kubernetes/pki/ca.crt"),
            Path::new("/var/lib/kubelet/config.yaml"),
            Path::new("/var/lib/kubelet/kubeadm-flags.env"),
        ],
        "what an uninterrupted join leaves"
    );
    assert_eq!(
        want.1["metadata"]["annotations"]["kubeadm.alpha.kubernetes.io/cri-socket"],
        "unix:///var/run/containerd/containerd.sock"
    );

    let failures = try_each(
        "join (file changes, API calls, kubelet stop and restart)",
        points,
        |k| {
            let node = Joining::new(&cluster);
            let mut problems = Vec::new();
            // The last operation, the removal of bootstrap-kubelet.conf, is best effort (as
            // upstream's deferred removal): a run killed there ends as if it had finished, and
            // leaves the file behind.
            let crash = CrashPoint::new(Some(k));
            let _ = node.join(&crash);
            if !crash.dead() {
                problems.push("the killed run was not killed".to_string());
            }
            node.cluster.restart();
            if let Err(e) = node.join(&CrashPoint::new(None)) {
                problems.push(format!("the run after it failed: {e}"));
                return problems;
            }
            let (files, object) = node.state();
            for (path, (mode, contents)) in &files {
                match want.0.get(path) {
                    None => problems.push(format!("{} left over", path.display())),
                    Some((m, _)) if m != mode => {
                        problems.push(format!("{} mode {mode:o}, want {m:o}", path.display()))
                    }
                    Some((_, c)) if c != contents => problems.push(format!("{} differs", path.display())),
                    Some(_) => {}
                }
            }
            problems.extend(
                want.0
                    .keys()
                    .filter(|p| !files.contains_key(*p))
                    .map(|p| format!("{} missing", p.display())),
            );
            if object != want.1 {
                problems.push(format!("the Node is {object}, want {}", want.1));
            }
            problems
        },
    );
    assert!(points > 10, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The kubelet stand-in bootstraps only from what the cluster would accept: the
/// `bootstrap-kubelet.conf` a join writes passes; the same file with another server, another CA,
/// another token or a token the cluster does not know does not, nor does the file once its token's
/// Secret has expired or is not for authentication.
#[test]
fn the_kubelet_stand_in_bootstraps_only_from_a_bootstrap_kubeconfig_the_cluster_accepts() {
    use base64::Engine as _;
    use kubeadm_effects::cluster::{Cluster, Resource};

    let cluster = cluster();
    // A join killed once it has written bootstrap-kubelet.conf leaves it behind.
    let written = (0..40)
        .find_map(|k| {
            let node = Joining::new(&cluster);
            let _ = node.join(&CrashPoint::new(Some(k)));
            node.fs
                .files()
                .get(Path::new(BOOTSTRAP_KUBELET_CONF))
                .map(|f| String::from_utf8(f.1.clone()).expect("utf-8"))
        })
        .expect("no crash point leaves bootstrap-kubelet.conf");
    let accepted = |text: &str, cluster: &FakeCluster| bootstrap_credentials(text.as_bytes(), cluster, *NOW);
    accepted(&written, &cluster).unwrap_or_else(|e| panic!("the join's own file refused: {e}\n{written}"));

    let line = |key: &str| {
        written
            .lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("no {key} in {written}"))
            .to_string()
    };
    let (server, ca, token) = (
        line("server:"),
        line("certificate-authority-data:"),
        line("token:"),
    );
    let other_ca = format!(
        "    certificate-authority-data: {}",
        base64::engine::general_purpose::STANDARD.encode(b"another CA")
    );
    for (what, from, to, why) in [
        (
            "another server",
            server.as_str(),
            "    server: https://192.0.2.99:6443",
            "is not the cluster's",
        ),
        ("another CA", ca.as_str(), other_ca.as_str(), "the CA is not"),
        (
            "another secret",
            token.as_str(),
            "    token: abcdef.0000000000000000",
            "secret of token id abcdef",
        ),
        (
            "an unknown token",
            token.as_str(),
            "    token: zzzzzz.0123456789abcdef",
            "no Secret for token id zzzzzz",
        ),
    ] {
        let tampered = written.replace(from, to);
        assert_ne!(tampered, written, "{what}: nothing replaced");
        match accepted(&tampered, &cluster) {
            Err(e) => assert!(e.contains(why), "{what}: refused for another reason: {e}"),
            Ok(_) => panic!("{what}: the stand-in bootstrapped from\n{tampered}"),
        }
    }

    let secret_name = format!("bootstrap-token-{}", TOKEN.split_once('.').expect("token").0);
    for (what, key, value) in [
        ("has expired", "expiration", Some("2000-01-01T00:00:00Z")),
        (
            "is not for authentication",
            "usage-bootstrap-authentication",
            None,
        ),
    ] {
        let changed = cluster.copy();
        let mut secret = changed
            .object(&Resource::secrets(), "kube-system", &secret_name)
            .expect("the token's Secret");
        match value {
            Some(v) => secret["data"][key] = base64::engine::general_purpose::STANDARD.encode(v).into(),
            None => {
                secret["data"].as_object_mut().expect("data").remove(key);
            }
        }
        changed.update(&Resource::secrets(), &secret).expect("update");
        match accepted(&written, &changed) {
            Err(e) => assert!(e.contains(what), "{what}: refused for another reason: {e}"),
            Ok(_) => panic!("{what}: the stand-in bootstrapped with the token of {secret}"),
        }
    }
}
