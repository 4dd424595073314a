//! A control plane's `kubeadm join` (preflight skipped, as Cluster API's retries run it) stopped
//! dead at every file change, API call, etcd member addition, kubelet stop and restart in turn,
//! then run again.
//!
//! The cluster is what `kubeadm init --upload-certs` leaves (made on fakes, as in
//! `init_crash_points.rs`), with the JWS signature of `cluster-info` and the etcd Pod the kubelet
//! mirrors; its etcd has one member. The joining node's disk is in memory; its kubelet, restarted
//! by the join, bootstraps from `bootstrap-kubelet.conf` (see `join_crash_points.rs`), writes
//! `kubelet.conf` and registers its Node; once `etcd.yaml` is in its manifests folder it runs
//! etcd: the member of the manifest's peer URL starts, under the manifest's `--name`, if the
//! manifest joins the existing cluster with its members (`--initial-cluster`), as etcd checks.
//! A member added and not started is a voter that does not answer: with two members and one of
//! them silent, etcd has no quorum, and the API server (its storage gone) fails every request.
//!
//! A join is killed at its k-th operation (that operation and everything after it fail, no
//! clean-up runs), then run again on what was left: it must finish and leave what an
//! uninterrupted join leaves: the same files (key material aside; every certificate chained to its
//! CA and matching its key), one etcd member for this node, the Node marked as a control plane.
//! Except where the kill comes after the member was added and before `etcd.yaml` is written:
//! there the cluster has lost its quorum, as upstream v1.25's join loses it (it adds a voter
//! before writing the manifest that starts it), and no re-run can reach the API; the test checks
//! that exactly those crash points lose it, names them, and that the window is no wider than
//! upstream's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_api::v1beta3::{ApiEndpoint, JoinControlPlane};
use kubeadm_effects::cluster::{
    Call, Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb,
};
use kubeadm_effects::etcd::{Etcd, EtcdError, Member};
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
    data.effects.keygen = KEYS.clone();
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

/// Where the joining node's kubelet finds etcd's manifest.
const ETCD_MANIFEST: &str = "/etc/kubernetes/manifests/etcd.yaml";

/// The joining node's kubelet running etcd beside the cluster's etcd.
struct EtcdHost {
    fs: Arc<MemFs>,
    etcd: Arc<FakeEtcd>,
}

impl EtcdHost {
    /// The kubelet's static pod: once `etcd.yaml` is there, the member it names starts, if its
    /// flags let it join the cluster (etcd's own checks: an existing cluster, whose members' peer
    /// URLs are the `--initial-cluster`'s, this member named as `--name` at its peer URL).
    fn kubelet_runs_etcd(&self) {
        let Ok(text) = self.fs.read(Path::new(ETCD_MANIFEST)) else {
            return;
        };
        let pod = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(&text))
            .expect("etcd.yaml is YAML")
            .remove(0)
            .value;
        let flags: BTreeMap<&str, &str> = pod["spec"]["containers"][0]["command"]
            .as_array()
            .expect("etcd's command")
            .iter()
            .filter_map(|a| a.as_str()?.strip_prefix("--")?.split_once('='))
            .collect();
        let flag = |name: &str| flags.get(name).copied().unwrap_or_default();
        let (name, peer) = (flag("name"), flag("initial-advertise-peer-urls"));
        let members = self.etcd.member_list();
        if members
            .iter()
            .any(|m| m.peer_urls == [peer] && !m.name.is_empty())
        {
            return; // already running
        }
        let mut initial: Vec<&str> = flag("initial-cluster")
            .split(',')
            .map(|m| m.split_once('=').map_or("", |(_, url)| url))
            .collect();
        let mut known: Vec<&str> = members
            .iter()
            .flat_map(|m| m.peer_urls.iter().map(String::as_str))
            .collect();
        initial.sort_unstable();
        known.sort_unstable();
        if flag("initial-cluster-state") != "existing"
            || initial != known
            || !flag("initial-cluster")
                .split(',')
                .any(|m| m == format!("{name}={peer}"))
        {
            return; // etcd exits: the kubelet restarts it, in vain
        }
        let _ = self.etcd.start_member(peer, name, flag("advertise-client-urls"));
    }

    fn quorum(&self) -> bool {
        self.kubelet_runs_etcd();
        self.etcd.has_quorum()
    }
}

/// The API server on etcd: while etcd has no quorum, every request fails as kube-apiserver's do
/// then (its storage times out), and its health checks fail.
struct StorageBacked {
    api: CrashCluster,
    host: Arc<EtcdHost>,
}

impl StorageBacked {
    fn storage(&self, verb: Verb, r: &Resource, ns: &str, name: &str) -> Result<(), ClusterError> {
        if self.host.quorum() {
            return Ok(());
        }
        Err(ClusterError::Api {
            call: Box::new(Call::new(verb, r, ns, name)),
            code: 500,
            reason: "InternalError".into(),
            message: "etcdserver: request timed out".into(),
        })
    }
}

impl Cluster for StorageBacked {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<Value, ClusterError> {
        self.storage(Verb::Get, r, ns, name)?;
        self.api.get(r, ns, name)
    }
    fn list(&self, r: &Resource, ns: &str, o: &ListOptions) -> Result<Vec<Value>, ClusterError> {
        self.storage(Verb::List, r, ns, "")?;
        self.api.list(r, ns, o)
    }
    fn create(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        let ns = o["metadata"]["namespace"].as_str().unwrap_or_default();
        self.storage(Verb::Create, r, ns, name)?;
        self.api.create(r, o)
    }
    fn update(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        let ns = o["metadata"]["namespace"].as_str().unwrap_or_default();
        self.storage(Verb::Update, r, ns, name)?;
        self.api.update(r, o)
    }
    fn patch(
        &self,
        r: &Resource,
        ns: &str,
        name: &str,
        t: PatchType,
        p: &Value,
    ) -> Result<Value, ClusterError> {
        self.storage(Verb::Patch, r, ns, name)?;
        self.api.patch(r, ns, name, t, p)
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, p: Option<Propagation>) -> Result<(), ClusterError> {
        self.storage(Verb::Delete, r, ns, name)?;
        self.api.delete(r, ns, name, p)
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        Ok(self.host.quorum() && self.api.healthy()?)
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        if self.host.quorum() {
            self.api.failing_readyz_checks()
        } else {
            Ok(vec!["etcd".into()])
        }
    }
    fn pause(&self, d: std::time::Duration) {
        self.api.pause(d);
    }
}

/// The etcd cluster as the join reaches it, with the kubelet starting the joining member.
struct KubeletEtcd {
    etcd: CrashEtcd,
    host: Arc<EtcdHost>,
}

impl Etcd for KubeletEtcd {
    fn endpoints(&self) -> Vec<String> {
        self.etcd.endpoints()
    }
    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        self.host.kubelet_runs_etcd();
        self.etcd.list_members()
    }
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        self.host.kubelet_runs_etcd();
        self.etcd.remove_member(id)
    }
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        self.host.kubelet_runs_etcd();
        self.etcd.add_member(peer_url)
    }
    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        self.host.kubelet_runs_etcd();
        self.etcd.status(endpoint)
    }
}

struct Joining {
    fs: Arc<MemFs>,
    cluster: Arc<FakeCluster>,
    etcd: Arc<FakeEtcd>,
    host: Arc<EtcdHost>,
}

impl Joining {
    fn new(cluster: &FakeCluster) -> Joining {
        let fs = MemFs::with_files(&Files::new());
        let etcd = Arc::new(FakeEtcd::new(
            &[&format!("https://{FIRST}:2379")],
            vec![started_member(1, "node1", FIRST)],
        ));
        Joining {
            host: Arc::new(EtcdHost {
                fs: fs.clone(),
                etcd: etcd.clone(),
            }),
            fs,
            cluster: Arc::new(cluster.copy()),
            etcd,
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
        let (cp_fs, cp_point) = (self.fs.clone(), crash.clone());
        let (etcd, etcd_point, host) = (self.etcd.clone(), crash.clone(), self.host.clone());
        let mut data = joining_data(cfg, NODE, ADDRESS, &self.fs, &self.cluster, crash);
        let (cluster, host2, point) = (self.cluster.clone(), self.host.clone(), crash.clone());
        let api = move || -> Box<dyn Cluster> {
            Box::new(StorageBacked {
                api: CrashCluster(cluster.clone(), point.clone()),
                host: host2.clone(),
            })
        };
        let api = Arc::new(api);
        let discovery_api = api.clone();
        data.connect = Box::new(move |_| Ok(discovery_api()));
        data.control_plane_context = Box::new(move |cfg| {
            let api = api.clone();
            let access = ClusterAccess::new(
                PathBuf::from("/etc/kubernetes/admin.conf"),
                Box::new(move |_| Ok(api())),
            );
            let mut data = context(
                cfg,
                Box::new(CrashFs(cp_fs.clone(), cp_point.clone())),
                Arc::new(Captured::default()),
                access,
                *NOW,
                false,
            );
            data.effects.keygen = KEYS.clone();
            data.kubelet_dir = "/var/lib/kubelet".into();
            data.hostname = NODE.into();
            data.skip_token_print = true;
            data.skip_certificate_key_print = true;
            Ok(data)
        });
        data.effects.etcd = Arc::new(move |_, _| {
            Ok(Box::new(KubeletEtcd {
                etcd: CrashEtcd(etcd.clone(), etcd_point.clone()),
                host: host.clone(),
            }) as Box<dyn Etcd>)
        });
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

    let lost = std::sync::Mutex::new(Vec::new());
    let failures =
        try_each(what, points, |k| {
            let node = Joining::new(&cluster);
            let mut problems = Vec::new();
            let crash = CrashPoint::new(Some(k));
            let killed = node.join(&crash, certificate_key);
            if !crash.dead() {
                problems.push("the killed run was not killed".to_string());
            }
            if killed.is_ok() {
                problems.push("the killed run reported success".to_string());
            }
            node.cluster.restart();
            if !node.host.quorum() {
                // Upstream's window: the member added, its manifest not written. Nothing else may
                // cost the quorum, and no re-run can get past it.
                let added = node
                    .etcd
                    .member_list()
                    .iter()
                    .any(|m| m.peer_urls == [format!("https://{ADDRESS}:2380")] && m.name.is_empty());
                if !added || node.fs.exists(Path::new(ETCD_MANIFEST)) {
                    problems.push(format!(
                    "etcd lost its quorum other than by a member added and not started: {:?}, etcd.yaml {}",
                    node.etcd.member_list(),
                    if node.fs.exists(Path::new(ETCD_MANIFEST)) { "written" } else { "not written" }
                ));
                }
                match node.join(&CrashPoint::new(None), certificate_key) {
                    Ok(()) => problems.push("a join succeeded while etcd had no quorum".to_string()),
                    Err(e) if !e.contains("etcdserver: request timed out") => {
                        problems.push(format!("the run without quorum failed otherwise: {e}"))
                    }
                    Err(_) => lost.lock().expect("lost").push(k),
                }
                return problems;
            }
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
    let mut lost = lost.into_inner().expect("lost");
    lost.sort_unstable();
    eprintln!(
        "{what}: crash points {lost:?} of {points} lose etcd's quorum (killed after MemberAdd, before etcd.yaml is written, as upstream's join)"
    );
    // The window is the writing of the manifest (and its folder): contiguous, and no wider.
    assert!(
        !lost.is_empty() && lost.len() <= 2 && lost.windows(2).all(|w| w[1] == w[0] + 1),
        "crash points losing the quorum: {lost:?}"
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
