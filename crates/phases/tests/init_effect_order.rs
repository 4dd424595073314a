//! The order of everything `kubeadm init` does to the host and the cluster, pinned: the whole init
//! workflow (preflight aside) runs on recording fakes — files into a dry-run overlay, the kubelet
//! service, an in-memory API server — that append to one shared log. The log, in steps, must follow
//! upstream v1.25.16's phase order (`cmd/kubeadm/app/cmd/init.go`): certificates, kubeconfig files,
//! the kubelet stopped, its files written and the kubelet started, control-plane manifests, etcd, the API server
//! wait, configuration upload, node marking, tokens and cluster-info, the kubelet.conf rewrite and
//! kubelet restart, then the addons.

use std::sync::{Arc, Mutex};

use kubeadm_testkit::fakes::FakeCluster;

use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};
use kubeadm_phases::ClusterAccess;
use serde_json::{Value, json};

mod common;
use common::{Captured, context, golden, load_config};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: String) {
    log.lock().expect("log").push(entry);
}

struct LoggedFs(DryRunFs<kubeadm_host::fs::RealFs>, Log);

impl Fs for LoggedFs {
    fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        self.0.read(path)
    }
    fn write(&self, path: &std::path::Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
        push(&self.1, format!("write {}", path.display()));
        self.0.write(path, contents, mode)
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.0.exists(path)
    }
    fn create_dir_all(&self, path: &std::path::Path, mode: u32) -> std::io::Result<()> {
        self.0.create_dir_all(path, mode)
    }
    fn remove_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        push(&self.1, format!("remove {}", path.display()));
        self.0.remove_file(path)
    }
}

struct LoggedInit(Log);

impl InitSystem for LoggedInit {
    fn kind(&self) -> Option<InitSystemKind> {
        Some(InitSystemKind::Systemd)
    }
    fn service_exists(&self, _: &str) -> bool {
        true
    }
    fn service_stop(&self, service: &str) -> Result<(), ServiceError> {
        push(&self.0, format!("stop {service}"));
        Ok(())
    }
    fn service_restart(&self, service: &str) -> Result<(), ServiceError> {
        push(&self.0, format!("restart {service}"));
        Ok(())
    }
}

struct LoggedCluster(Arc<FakeCluster>, Log);

impl LoggedCluster {
    fn note(&self, verb: &str, r: &Resource, ns: &str, name: &str) {
        push(&self.1, format!("api {verb} {} {ns}/{name}", r.plural));
    }
}

impl Cluster for LoggedCluster {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<Value, ClusterError> {
        self.0.get(r, ns, name)
    }
    fn list(&self, r: &Resource, ns: &str, o: &ListOptions) -> Result<Vec<Value>, ClusterError> {
        self.0.list(r, ns, o)
    }
    fn create(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        let (ns, name) = kubeadm_effects::cluster::object_key(o);
        self.note("create", r, ns, name);
        self.0.create(r, o)
    }
    fn update(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        let (ns, name) = kubeadm_effects::cluster::object_key(o);
        self.note("update", r, ns, name);
        self.0.update(r, o)
    }
    fn patch(
        &self,
        r: &Resource,
        ns: &str,
        name: &str,
        t: PatchType,
        p: &Value,
    ) -> Result<Value, ClusterError> {
        // What a Node patch changes tells the step apart: the CRI socket annotation or the role.
        let what = if p.pointer("/metadata/annotations").is_some() {
            "annotations"
        } else {
            "role"
        };
        self.note(&format!("patch-{what}"), r, ns, name);
        self.0.patch(r, ns, name, t, p)
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, p: Option<Propagation>) -> Result<(), ClusterError> {
        self.note("delete", r, ns, name);
        self.0.delete(r, ns, name, p)
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        push(&self.1, "api healthz".to_string());
        self.0.healthy()
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        push(&self.1, "api readyz".to_string());
        self.0.failing_readyz_checks()
    }
    fn pause(&self, d: std::time::Duration) {
        self.0.pause(d);
    }
}

/// The step of init an effect belongs to, by what it touches.
fn step(entry: &str) -> &'static str {
    let (what, rest) = entry.split_once(' ').unwrap_or((entry, ""));
    match what {
        // (A certificate's pending copy is removed once its key and it are written.)
        "write" | "remove" if rest.starts_with("/etc/kubernetes/pki/") => "certificates",
        "write" if rest.starts_with("/etc/kubernetes/manifests/etcd.yaml") => "etcd manifest",
        "write" if rest.starts_with("/etc/kubernetes/manifests/") => "control-plane manifests",
        "write" if rest.starts_with("/etc/kubernetes/tmp/") => "control-plane manifests",
        "write" if rest.ends_with("/kubelet.conf") && rest.starts_with("/etc/kubernetes/") => {
            "kubeconfig files"
        }
        "write" if rest.starts_with("/etc/kubernetes/") && rest.ends_with(".conf") => "kubeconfig files",
        "write" if rest.starts_with("/nonexistent/kubelet/") => "kubelet files",
        "restart" | "stop" => "kubelet service",
        "api" if rest == "healthz" => "API server wait",
        "api"
            if rest.contains("kubeadm-config")
                || rest.contains("kubelet-config")
                || rest.contains("kubeadm:nodes-kubeadm-config")
                || rest.contains("kubeadm:kubelet-config") =>
        {
            "upload-config"
        }
        "api" if rest.starts_with("patch-annotations nodes") => "upload-config",
        "api" if rest.starts_with("patch-role nodes") => "mark-control-plane",
        "api"
            if rest.contains("bootstrap-token")
                || rest.contains("kubeadm:get-nodes")
                || rest.contains("kubeadm:node-autoapprove")
                || rest.contains("kubeadm:kubelet-bootstrap") =>
        {
            "bootstrap-token"
        }
        "api" if rest.contains("cluster-info") || rest.contains("kubeadm:bootstrap-signer-clusterinfo") => {
            "cluster-info"
        }
        "api" if rest.contains("coredns") || rest.contains("kube-dns") => "coredns",
        "api" if rest.contains("kube-proxy") || rest.contains("node-proxier") => "kube-proxy",
        _ => "other",
    }
}

#[test]
fn init_effects_follow_upstream_phase_order() {
    let cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
    let log: Log = Arc::default();
    let cluster = Arc::new(FakeCluster::new().with_object(
        &Resource::nodes(),
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}}}),
    ));
    let client_log = log.clone();
    let access = ClusterAccess::new(
        std::path::PathBuf::from("/etc/kubernetes/admin.conf"),
        Box::new(move |_| {
            Ok(Box::new(LoggedCluster(cluster.clone(), client_log.clone())) as Box<dyn Cluster>)
        }),
    );
    // The kubelet has its client certificate, so kubelet-finalize rewrites kubelet.conf.
    let overlay = DryRunFs::new(kubeadm_host::fs::RealFs);
    overlay
        .write(
            std::path::Path::new("/nonexistent/kubelet/pki/kubelet-client-current.pem"),
            b"pem",
            0o600,
        )
        .expect("overlay");
    let fs = LoggedFs(overlay, log.clone());
    let mut data = context(
        cfg,
        Box::new(fs),
        Arc::new(Captured::default()),
        access,
        1_800_000_000,
        false,
    );
    data.effects.init_system = Arc::new(LoggedInit(log.clone()));
    kubeadm_phases::init::workflow()
        .run(&mut data, &[], &["preflight".to_string()])
        .unwrap_or_else(|e| panic!("init: {e:#}"));

    let entries = log.lock().expect("log").clone();
    let unknown: Vec<&String> = entries.iter().filter(|e| step(e) == "other").collect();
    assert!(unknown.is_empty(), "effects of no known step: {unknown:#?}");
    let mut steps: Vec<&str> = entries.iter().map(|e| step(e)).collect();
    steps.dedup();
    assert_eq!(
        steps,
        [
            "certificates",
            "kubeconfig files",
            "kubelet service",
            "kubelet files",
            "kubelet service",
            "control-plane manifests",
            "etcd manifest",
            "API server wait",
            "upload-config",
            "mark-control-plane",
            "bootstrap-token",
            "cluster-info",
            "kubeconfig files",
            "kubelet service",
            "coredns",
            "kube-proxy",
        ],
        "full log:\n{}",
        entries.join("\n")
    );
}
