//! A worker's `kubeadm join` (preflight skipped, as kind and Cluster API's retries run it) stopped
//! dead at every file change, API call, kubelet stop and restart in turn, then run again.
//!
//! The cluster is what `kubeadm init` leaves (made on fakes, as in `init_crash_points.rs`), with
//! the JWS signature of `cluster-info` that the controller-manager's bootstrap signer adds. The
//! joining node's disk is in memory; its kubelet, restarted by the join, writes `kubelet.conf` and
//! registers its Node (not Ready). A join is killed at its k-th operation (that operation and
//! everything after it fail, no clean-up runs: `bootstrap-kubelet.conf`, which holds the token,
//! may stay behind), then run again on what was left: it must finish and leave what an
//! uninterrupted join leaves: the same files byte for byte and mode, the token's file gone, the
//! Node annotated with the CRI socket.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_api::v1beta3::{BootstrapTokenDiscovery, JoinConfiguration};
use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::etcd::Etcd;
use kubeadm_phases::JoinData;
use kubeadm_testkit::fakes::{FakeCluster, FakeHost};
use serde_json::Value;

mod common;
mod crash;
use common::{Captured, Shared};
use crash::{CrashCluster, CrashFs, CrashPoint, KUBELET_CONF, Kubelet, MemFs, Node, try_each};

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
        let mut cfg = JoinConfiguration::default();
        cfg.discovery.bootstrap_token = Some(BootstrapTokenDiscovery {
            token: TOKEN.into(),
            api_server_endpoint: "192.0.2.2:6443".into(),
            ca_cert_hashes: vec![],
            unsafe_skip_ca_verification: true,
        });
        cfg.discovery.tls_bootstrap_token = TOKEN.into();
        cfg.discovery.timeout = Some(kubeadm_api::duration::Duration::from_nanos(10_000_000_000));
        cfg.node_registration.name = WORKER.into();
        cfg.node_registration.cri_socket = "unix:///var/run/containerd/containerd.sock".into();
        cfg.ca_cert_path = "/etc/kubernetes/pki/ca.crt".into();
        let (cluster, point) = (self.cluster.clone(), crash.clone());
        let mut data = JoinData {
            cfg,
            dry_run: false,
            ignore_preflight_errors: Default::default(),
            kubeconfig_dir: "/etc/kubernetes".into(),
            kubelet_dir: "/var/lib/kubelet".into(),
            hostname: WORKER.into(),
            host: kubeadm_api::dynamic::HostFacts {
                hostname: WORKER.into(),
                default_route_ipv4: Some("192.0.2.9".parse().expect("ip")),
                ..Default::default()
            },
            patches: None,
            init_system: Box::new(Kubelet {
                fs: self.fs.clone(),
                cluster: self.cluster.clone(),
                crash: crash.clone(),
                node: WORKER,
            }),
            host_probe: Box::new(FakeHost::default()),
            runtime: Box::new(kubeadm_host::cri::CriClient::new("unix:///nonexistent.sock").expect("client")),
            fs: Box::new(CrashFs(self.fs.clone(), crash.clone())),
            reporter: Box::new(Shared(Arc::new(Captured::default()))),
            connect: Box::new(move |_| {
                Ok(Box::new(CrashCluster(cluster.clone(), point.clone())) as Box<dyn Cluster>)
            }),
            fetch_url: Box::new(|url| Err(format!("Get {url:?}: no HTTPS in this test"))),
            tls_bootstrap: None,
            tls_bootstrap_timeout: kubeadm_phases::join::kubelet_start::TLS_BOOTSTRAP_TIMEOUT,
            init_cfg: None,
            control_plane_context: Box::new(|_| Err("a worker has no control-plane context".into())),
            control_plane: None,
            etcd: Box::new(|_, _| Err::<Box<dyn Etcd>, _>("a worker has no etcd".into())),
        };
        kubeadm_phases::join::workflow()
            .run(&mut data, &[], &["preflight".to_string()])
            .map_err(|e| format!("{e:#}"))
    }

    /// What is left: the node's files, and its Node object (without what the fake server sets).
    fn state(&self) -> (Files, Value) {
        let mut node = self
            .cluster
            .object(&Resource::nodes(), "", WORKER)
            .unwrap_or(Value::Null);
        if let Some(m) = node.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
        }
        (self.fs.files(), node)
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
