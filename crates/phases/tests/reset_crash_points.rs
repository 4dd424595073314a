//! `kubeadm reset -f` stopped dead at every file change, API call, etcd change, container removal
//! and service stop in turn, then run again.
//!
//! The node is what `kubeadm init` leaves (made on fakes, as in `init_crash_points.rs`), with
//! etcd's data, the kubelet's client certificate and a mounted pod volume, one of two etcd
//! members and two pod sandboxes. A reset is killed at its k-th operation (that operation and
//! everything after it fail, no clean-up runs), then run again as the command would run it on
//! what was left: with the configuration from the cluster while `admin.conf` is there, without
//! it otherwise. It must finish and leave what an uninterrupted reset leaves: the same files, the
//! same etcd members, no pod sandbox.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::cri::{
    CriCall, CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion, SandboxState,
};
use kubeadm_effects::etcd::{Etcd, Member};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};
use kubeadm_phases::ResetData;
use kubeadm_phases::reset::finish::clean_stateful_dirs;
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd};
use serde_json::json;

mod common;
mod crash;
use common::Captured;
use crash::{CrashCluster, CrashEtcd, CrashFs, CrashPoint, MemFs, Node, try_each};

type Files = BTreeMap<PathBuf, (u32, Vec<u8>)>;

/// The kubelet's service: stopping it is an operation.
struct Kubelet(Arc<CrashPoint>);

impl InitSystem for Kubelet {
    fn kind(&self) -> Option<InitSystemKind> {
        Some(InitSystemKind::Systemd)
    }
    fn service_exists(&self, _: &str) -> bool {
        true
    }
    fn service_stop(&self, _: &str) -> Result<(), ServiceError> {
        if self.0.step() {
            Ok(())
        } else {
            Err(ServiceError {
                command: "systemctl stop kubelet".into(),
                reason: "simulated crash".into(),
            })
        }
    }
    fn service_restart(&self, _: &str) -> Result<(), ServiceError> {
        unreachable!("reset restarts nothing")
    }
}

/// The runtime's pod sandboxes: stopping or removing one is an operation.
#[derive(Debug)]
struct Sandboxes(Arc<Mutex<Vec<String>>>, Arc<CrashPoint>);

impl Sandboxes {
    fn act(&self, id: &str, remove: bool) -> Result<(), CriError> {
        if !self.1.step() {
            return Err(CriError::Rpc {
                endpoint: self.endpoint().into(),
                call: CriCall::RemovePodSandbox(id.into()),
                code: "Unavailable".into(),
                message: "simulated crash".into(),
            });
        }
        if remove {
            self.0.lock().expect("sandboxes").retain(|s| s != id);
        }
        Ok(())
    }
}

impl Runtime for Sandboxes {
    fn endpoint(&self) -> &str {
        "unix:///run/containerd/containerd.sock"
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        unreachable!("reset does not ask for the version")
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        Ok(RuntimeStatus::default())
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        unreachable!("reset lists no images")
    }
    fn image_status(&self, _: &str) -> Result<Option<Image>, CriError> {
        unreachable!("reset checks no image")
    }
    fn pull_image_once(&self, _: &str) -> Result<String, CriError> {
        unreachable!("reset pulls nothing")
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        if self.1.dead() {
            return Err(CriError::Rpc {
                endpoint: self.endpoint().into(),
                call: CriCall::ListPodSandbox,
                code: "Unavailable".into(),
                message: "simulated crash".into(),
            });
        }
        Ok(self
            .0
            .lock()
            .expect("sandboxes")
            .iter()
            .map(|id| PodSandbox {
                id: id.clone(),
                name: String::new(),
                namespace: String::new(),
                uid: String::new(),
                attempt: 0,
                state: SandboxState::Ready,
                created_at: 0,
                labels: BTreeMap::new(),
                annotations: BTreeMap::new(),
                runtime_handler: String::new(),
            })
            .collect())
    }
    fn stop_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        self.act(id, false)
    }
    fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        self.act(id, true)
    }
}

/// A control-plane node after `kubeadm init`, with what its kubelet and etcd made.
struct ResetNode {
    fs: Arc<MemFs>,
    cluster: Arc<FakeCluster>,
    etcd: Arc<FakeEtcd>,
    sandboxes: Arc<Mutex<Vec<String>>>,
}

/// The disk and API objects of node1 after `kubeadm init` and its pods' start (the kubelet's
/// directory is `/nonexistent/kubelet` in the init tests' context).
fn initialised() -> (Files, Arc<FakeCluster>) {
    let node = Node::new();
    node.init(&CrashPoint::new(None))
        .unwrap_or_else(|e| panic!("init: {e}"));
    let mut files = node.files();
    // What the kubelet and etcd write: the kubelet's client certificate (naming node1, which reset
    // reads through kubelet.conf), a pod volume (mounted), etcd's data.
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "system:node:node1");
    let cert = params.self_signed(&key).expect("cert");
    let pem = format!("{}{}", cert.pem(), key.serialize_pem());
    for (path, mode, contents) in [
        (
            "/nonexistent/kubelet/pki/kubelet-client-current.pem",
            0o600,
            pem.into_bytes(),
        ),
        (
            "/nonexistent/kubelet/pods/p1/volumes/token/t",
            0o644,
            b"token".to_vec(),
        ),
        ("/var/lib/etcd/member/snap/db", 0o600, b"db".to_vec()),
        ("/var/lib/etcd/member/wal/0.wal", 0o600, b"wal".to_vec()),
        (
            "/proc/mounts",
            0o444,
            b"tmpfs /nonexistent/kubelet/pods/p1/volumes/token tmpfs rw 0 0\n".to_vec(),
        ),
    ] {
        files.insert(PathBuf::from(path), (mode, contents));
    }
    // The mirror pods the reset reads: etcd's client URL, the API server's endpoint.
    let cluster = node.cluster.clone();
    for (name, annotation, value) in [
        (
            "etcd-node1",
            "kubeadm.kubernetes.io/etcd.advertise-client-urls",
            "https://192.0.2.2:2379",
        ),
        (
            "kube-apiserver-node1",
            "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint",
            "192.0.2.2:6443",
        ),
    ] {
        let component = name.trim_end_matches("-node1");
        cluster
            .create(
                &Resource::core("pods"),
                &json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "namespace": "kube-system",
                        "labels": {"component": component, "tier": "control-plane"},
                        "annotations": {annotation: value}},
                    "spec": {"nodeName": "node1"}}),
            )
            .expect("pod");
    }
    (files, cluster)
}

impl ResetNode {
    fn new(files: &Files, cluster: &FakeCluster) -> ResetNode {
        let member = |id, name: &str, ip: &str| Member {
            id,
            name: name.into(),
            peer_urls: vec![format!("https://{ip}:2380")],
            client_urls: vec![format!("https://{ip}:2379")],
        };
        ResetNode {
            fs: MemFs::with_files(files),
            cluster: Arc::new(cluster.copy()),
            etcd: Arc::new(FakeEtcd::new(
                &["https://192.0.2.2:2379"],
                vec![member(11, "node1", "192.0.2.2"), member(12, "node2", "192.0.2.3")],
            )),
            sandboxes: Arc::new(Mutex::new(vec!["s1".into(), "s2".into()])),
        }
    }

    /// `kubeadm reset -f` until `crash` kills it, if it does: whether it was killed.
    fn reset(&self, crash: &Arc<CrashPoint>) -> bool {
        let fs = CrashFs(self.fs.clone(), crash.clone());
        // As the command: a client while admin.conf is there, the configuration through it.
        let admin = Path::new("/etc/kubernetes/admin.conf");
        let cluster: Option<Box<dyn Cluster>> = self
            .fs
            .read(admin)
            .is_ok()
            .then(|| Box::new(CrashCluster(self.cluster.clone(), crash.clone())) as Box<dyn Cluster>);
        let host = HostFacts {
            hostname: "node1".into(),
            ..HostFacts::default()
        };
        let mut token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
        let mut inputs = DynamicInputs {
            host: &host,
            new_token: &mut token,
            fetch_version: &kubeadm_api::version::offline,
        };
        let cfg = cluster.as_deref().and_then(|c| {
            kubeadm_phases::config_from_cluster::fetch_init_config(
                c,
                &fs,
                Path::new("/etc/kubernetes/kubelet.conf"),
                &mut inputs,
                &mut Vec::new(),
            )
            .ok()
        });
        let (etcd, point) = (self.etcd.clone(), crash.clone());
        let mut data = ResetData {
            cfg,
            dry_run: false,
            force: true,
            ignore_preflight_errors: Default::default(),
            cert_dir: PathBuf::from("/etc/kubernetes/pki"),
            kubernetes_dir: PathBuf::from("/etc/kubernetes"),
            kubelet_dir: PathBuf::from("/nonexistent/kubelet"),
            mounts_file: PathBuf::from("/proc/mounts"),
            input: Box::new(io::Cursor::new(Vec::new())),
            dirs_to_clean: Vec::new(),
            stateful_dirs_after: true,
            runtime: Box::new(Sandboxes(self.sandboxes.clone(), crash.clone())),
            cluster,
            effects: Effects {
                init_system: Arc::new(Kubelet(crash.clone())),
                etcd: Arc::new(move |_, _| {
                    Ok(Box::new(CrashEtcd(etcd.clone(), point.clone())) as Box<dyn Etcd>)
                }),
                ..common::effects(
                    Arc::new(fs),
                    Arc::new(common::Shared(Arc::new(Captured::default()))),
                    0,
                )
            },
        };
        kubeadm_phases::reset::workflow()
            .run(&mut data, &[], &[])
            .unwrap_or_else(|e| panic!("reset: {e}"));
        clean_stateful_dirs(&data);
        crash.dead()
    }

    /// What is left: the files, the etcd members' names, the pod sandboxes.
    fn state(&self) -> (Vec<PathBuf>, Vec<String>, Vec<String>) {
        (
            self.fs.files().into_keys().collect(),
            self.etcd.member_list().into_iter().map(|m| m.name).collect(),
            self.sandboxes.lock().expect("sandboxes").clone(),
        )
    }
}

#[test]
fn reset_killed_at_any_point_finishes_when_run_again() {
    let (files, cluster) = initialised();
    let reference = ResetNode::new(&files, &cluster);
    let whole = CrashPoint::new(None);
    assert!(!reference.reset(&whole), "uninterrupted reset");
    let points = whole.count.load(Ordering::SeqCst);
    let want = reference.state();
    // What reset leaves of init's files (the CNI configuration and the like are not kubeadm's;
    // there are none here), and of the cluster: etcd without this node's member.
    assert_eq!(
        want.0,
        [PathBuf::from("/proc/mounts")],
        "left by an uninterrupted reset"
    );
    assert_eq!(want.1, ["node2"]);
    assert!(want.2.is_empty());

    let failures = try_each(
        "reset (file changes, API calls, etcd, CRI, kubelet stop)",
        points,
        |k| {
            let node = ResetNode::new(&files, &cluster);
            let mut problems = Vec::new();
            if !node.reset(&CrashPoint::new(Some(k))) {
                problems.push("the killed run was not killed".to_string());
            }
            node.cluster.restart();
            if node.reset(&CrashPoint::new(None)) {
                problems.push("the run after it was killed".to_string());
            }
            let got = node.state();
            if got != want {
                problems.push(format!("left {got:?}, want {want:?}"));
            }
            problems
        },
    );
    assert!(points > 20, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
