//! A control plane's `kubeadm join` (preflight skipped, as Cluster API's retries run it) stopped
//! dead at every file change, API call, etcd member addition, kubelet stop and restart in turn,
//! then run again.
//!
//! The cluster is what `kubeadm init --upload-certs` leaves (made on fakes, as in
//! `init_crash_points.rs`), with the JWS signature of `cluster-info` and the etcd Pod the kubelet
//! mirrors; its etcd has one member, and a member it adds starts at once (the kubelet would start
//! it from the manifest). The joining node's disk is in memory; its kubelet, restarted by the join,
//! writes `kubelet.conf` and registers its Node. A join is killed at its k-th operation (that
//! operation and everything after it fail, no clean-up runs), then run again on what was left: it
//! must finish and leave what an uninterrupted join leaves: the same files (key material aside;
//! every certificate chained to its CA and matching its key), one etcd member for this node, the
//! Node marked as a control plane.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_api::v1beta3::{ApiEndpoint, JoinControlPlane};
use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::etcd::Etcd;
use kubeadm_effects::fs::Fs;
use kubeadm_phases::ClusterAccess;
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd, started_member};
use serde_json::{Value, json};

mod common;
mod crash;
use common::{Captured, context, golden, load_config};
use crash::{
    CrashCluster, CrashEtcd, CrashFs, CrashPoint, KEYS, KUBELET_CONF, MemFs, NOW, Node, comparable,
    file_problems, joining_data, node_object, pki_problems, run_join, try_each,
};

const TOKEN: &str = "abcdef.0123456789abcdef";
/// The certificate key init uploads the certificates with.
const CERTIFICATE_KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const NODE: &str = "node2";
const ADDRESS: &str = "192.0.2.3";
/// The first control plane's address (the golden config's).
const FIRST: &str = "10.0.0.1";

type Files = BTreeMap<PathBuf, (u32, Vec<u8>)>;

/// The certificates and keys every control plane shares (what `kubeadm-certs` holds).
const SHARED: [&str; 8] = [
    "/etc/kubernetes/pki/ca.crt",
    "/etc/kubernetes/pki/ca.key",
    "/etc/kubernetes/pki/etcd/ca.crt",
    "/etc/kubernetes/pki/etcd/ca.key",
    "/etc/kubernetes/pki/front-proxy-ca.crt",
    "/etc/kubernetes/pki/front-proxy-ca.key",
    "/etc/kubernetes/pki/sa.key",
    "/etc/kubernetes/pki/sa.pub",
];

/// The cluster as `kubeadm init --upload-certs` left it: `cluster-info` signed for the token, the
/// first control plane's etcd Pod mirrored with its client URL; and the first control plane's
/// files.
fn cluster() -> (FakeCluster, Files) {
    let node = Node::new();
    // upload-certs reads the certificates from the disk itself (a dry run's are not there): the
    // init node's disk is in memory, with the kubelet's client certificate for kubelet-finalize.
    let disk = MemFs::with_files(&Files::new());
    disk.write(
        Path::new("/nonexistent/kubelet/pki/kubelet-client-current.pem"),
        b"pem",
        0o600,
    )
    .expect("disk");
    let cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
    let api = node.cluster.clone();
    let access = ClusterAccess::new(
        PathBuf::from("/etc/kubernetes/admin.conf"),
        Box::new(move |_| Ok(Box::new(api.clone()) as Box<dyn Cluster>)),
    );
    let mut data = context(
        cfg,
        Box::new(disk.clone()),
        Arc::new(Captured::default()),
        access,
        *NOW,
        false,
    );
    data.keygen = KEYS.clone();
    data.upload_certs = true;
    data.cfg.init.certificate_key = CERTIFICATE_KEY.into();
    kubeadm_phases::init::workflow()
        .run(&mut data, &[], &["preflight".to_string()])
        .unwrap_or_else(|e| panic!("init: {e:#}"));
    crash::sign_cluster_info(&node.cluster, TOKEN);
    node.cluster
        .create(
            &Resource::core("pods"),
            &json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {
                    "name": "etcd-node1", "namespace": "kube-system",
                    "labels": {"component": "etcd", "tier": "control-plane"},
                    "annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": format!("https://{FIRST}:2379")},
                },
            }),
        )
        .expect("etcd pod");
    (node.cluster.copy(), disk.files())
}

struct Joining {
    fs: Arc<MemFs>,
    cluster: Arc<FakeCluster>,
    etcd: Arc<FakeEtcd>,
}

impl Joining {
    fn new(cluster: &FakeCluster) -> Joining {
        Joining {
            fs: MemFs::with_files(&Files::new()),
            cluster: Arc::new(cluster.copy()),
            etcd: Arc::new(
                FakeEtcd::new(
                    &[&format!("https://{FIRST}:2379")],
                    vec![started_member(1, "node1", FIRST)],
                )
                .starting_new_members(),
            ),
        }
    }

    /// `kubeadm join 10.0.0.1:6443 --token … --discovery-token-unsafe-skip-ca-verification
    /// --control-plane --certificate-key … --apiserver-advertise-address 192.0.2.3 --node-name
    /// node2 --skip-phases=preflight` until `crash` kills it, if it does.
    fn join(&self, crash: &Arc<CrashPoint>, certificate_key: &str) -> Result<(), String> {
        let mut cfg = crash::token_join_config(TOKEN, &format!("{FIRST}:6443"), NODE);
        cfg.control_plane = Some(JoinControlPlane {
            local_api_endpoint: ApiEndpoint {
                advertise_address: ADDRESS.into(),
                bind_port: 6443,
            },
            certificate_key: certificate_key.into(),
        });
        let (cp_fs, cp_cluster, cp_point) = (self.fs.clone(), self.cluster.clone(), crash.clone());
        let (etcd, etcd_point) = (self.etcd.clone(), crash.clone());
        let mut data = joining_data(cfg, NODE, ADDRESS, &self.fs, &self.cluster, crash);
        data.control_plane_context = Box::new(move |cfg| {
            let (api, point) = (cp_cluster.clone(), cp_point.clone());
            let access = ClusterAccess::new(
                PathBuf::from("/etc/kubernetes/admin.conf"),
                Box::new(move |_| Ok(Box::new(CrashCluster(api.clone(), point.clone())) as Box<dyn Cluster>)),
            );
            let mut data = context(
                cfg,
                Box::new(CrashFs(cp_fs.clone(), cp_point.clone())),
                Arc::new(Captured::default()),
                access,
                *NOW,
                false,
            );
            data.keygen = KEYS.clone();
            data.kubelet_dir = "/var/lib/kubelet".into();
            data.hostname = NODE.into();
            data.skip_token_print = true;
            data.skip_certificate_key_print = true;
            Ok(data)
        });
        data.etcd =
            Box::new(move |_, _| Ok(Box::new(CrashEtcd(etcd.clone(), etcd_point.clone())) as Box<dyn Etcd>));
        run_join(&mut data)
    }

    /// What is left: the node's files, its Node object (without what the fake server sets), and
    /// etcd's members by name and peer URL.
    fn state(&self) -> (Files, Value, Vec<(String, Vec<String>)>) {
        let members = self
            .etcd
            .member_list()
            .into_iter()
            .map(|m| (m.name, m.peer_urls))
            .collect();
        (self.fs.files(), node_object(&self.cluster, NODE), members)
    }
}

/// Kills a control-plane join with `certificate_key` at each of its operations in turn, runs it
/// again, and compares what is left with what an uninterrupted join leaves.
fn killed_at_any_point_finishes_when_run_again(what: &str, certificate_key: &str) {
    let (cluster, first) = cluster();
    // With the key, the shared files are the first control plane's, byte for byte (their modes
    // are upstream's download's: sa.pub 0644 where init wrote it 0600, as upstream's do).
    let shared_problems = |files: &Files| -> Vec<String> {
        if certificate_key.is_empty() {
            return Vec::new();
        }
        SHARED
            .iter()
            .filter(|f| files.get(Path::new(f)).map(|f| &f.1) != first.get(Path::new(f)).map(|f| &f.1))
            .map(|f| format!("{f} is not the first control plane's"))
            .collect()
    };
    let reference = Joining::new(&cluster);
    let whole = CrashPoint::new(None);
    reference
        .join(&whole, certificate_key)
        .unwrap_or_else(|e| panic!("uninterrupted join: {e}"));
    let points = whole.count.load(Ordering::SeqCst);
    let (want_files, want_node, want_members) = reference.state();
    let want = comparable(&want_files);
    for file in [
        "/etc/kubernetes/admin.conf",
        "/etc/kubernetes/manifests/etcd.yaml",
        "/etc/kubernetes/manifests/kube-apiserver.yaml",
        "/etc/kubernetes/pki/apiserver.crt",
        "/etc/kubernetes/pki/etcd/peer.key",
        "/etc/kubernetes/pki/sa.key",
        KUBELET_CONF,
        "/var/lib/kubelet/config.yaml",
    ] {
        assert!(
            want.contains_key(Path::new(file)),
            "{file} not written: {:#?}",
            want.keys()
        );
    }
    assert!(
        !want.contains_key(Path::new("/etc/kubernetes/bootstrap-kubelet.conf")),
        "the token's file left"
    );
    assert!(
        pki_problems(&want_files).is_empty(),
        "{:?}",
        pki_problems(&want_files)
    );
    let shared = shared_problems(&want_files);
    assert!(shared.is_empty(), "{shared:?}");
    assert_eq!(
        want_node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"], "",
        "{want_node}"
    );
    assert_eq!(want_members.len(), 2, "{want_members:?}");

    let failures = try_each(what, points, |k| {
        let node = Joining::new(&cluster);
        let mut problems = Vec::new();
        let crash = CrashPoint::new(Some(k));
        let _ = node.join(&crash, certificate_key);
        if !crash.dead() {
            problems.push("the killed run was not killed".to_string());
        }
        node.cluster.restart();
        if let Err(e) = node.join(&CrashPoint::new(None), certificate_key) {
            problems.push(format!("the run after it failed: {e}"));
            return problems;
        }
        let (files, object, members) = node.state();
        problems.extend(file_problems(&want, &comparable(&files)));
        problems.extend(pki_problems(&files));
        problems.extend(shared_problems(&files));
        if object != want_node {
            problems.push(format!("the Node is {object}, want {want_node}"));
        }
        if members != want_members {
            problems.push(format!("etcd's members are {members:?}, want {want_members:?}"));
        }
        problems
    });
    assert!(points > 30, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// As Cluster API joins: the shared certificates downloaded from `kubeadm-certs`.
#[test]
fn a_control_plane_join_killed_at_any_point_finishes_when_run_again() {
    killed_at_any_point_finishes_when_run_again(
        "control-plane join with --certificate-key (file changes, API calls, etcd member addition, kubelet stop and restart)",
        CERTIFICATE_KEY,
    );
}

/// Without a certificate key the shared certificates must be copied in beforehand; with none there
/// and preflight skipped (its shared-certificates check not run), the join makes its own CAs, as
/// upstream's does: a kill while it writes one must not leave its pending copy behind.
#[test]
fn a_control_plane_join_making_its_cas_killed_at_any_point_finishes_when_run_again() {
    killed_at_any_point_finishes_when_run_again(
        "control-plane join making its CAs (file changes, API calls, etcd member addition, kubelet stop and restart)",
        "",
    );
}
