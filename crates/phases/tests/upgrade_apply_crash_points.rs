//! The whole of `kubeadm upgrade apply v1.25.16 --yes` ([`kubeadm_phases::upgrade::apply`], with
//! the command's defaults: etcd upgraded, certificates renewed) on fakes, stopped dead at every
//! operation in turn, then run again.
//!
//! The run reads its configuration from the cluster, runs the preflight and health checks (the
//! health-check Job on the fake API server, the host a fake), enforces the version policy against a
//! v1.25.15 API server, pulls the images (a fake runtime), upgrades the static pods (etcd, the API
//! server, the controller-manager, the scheduler: backups, renewed certificates, the new manifests
//! moved in, the kubelet's new mirror Pods waited for), renews admin.conf, removes the legacy
//! taint and runs the post-upgrade tasks.
//!
//! The node and cluster are what `kubeadm init` leaves (made on fakes, as in
//! `init_crash_points.rs`), aged to look like a v1.25.15 cluster made before 1.25: its manifests
//! and stored configuration name v1.25.15 and the legacy registry `k8s.gcr.io` (which the upgrade
//! moves to `registry.k8s.io`, in the `kubeadm-config` ConfigMap too), etcd runs 3.5.6-0, node1
//! has the legacy taint and a v1.25.15 kubelet, kube-proxy is v1.25.15, CoreDNS v1.8.6. A stand-in for the kubelet answers for
//! the mirror Pods: each carries a hash of its manifest on disk, as the kubelet's
//! `kubernetes.io/config.hash` does, and runs.
//!
//! Operations are file changes, API calls, etcd calls, the API server's version and image pulls. A
//! run killed at its k-th operation (that operation and everything after it fail; no clean-up
//! runs, as the process is gone) must not report success; run again on what it left, it must
//! succeed and leave what an uninterrupted run leaves: the same API objects, the same files (key
//! material aside), the same images, every certificate chained to its CA and matching its key, and
//! the certificates the upgrade renews renewed (a new key and expiry, the same subject, names,
//! usages and issuer), the others untouched.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kubeadm_core::pki::CertInfo;
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{
    Call, Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb,
};
use kubeadm_effects::cri::{
    Container, CriCall, CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion,
};
use kubeadm_effects::etcd::{Etcd, EtcdError, Member};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::keygen::{GeneratedKey, KeyAlgorithm, KeyGen, KeyGenError};
use kubeadm_phases::etcd_cluster::EtcdConnector;
use kubeadm_phases::upgrade::apply::{Apply, ApplyFlags, ServerVersion};
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd, FakeHost, started_member};
use serde_json::{Value, json};

mod common;
mod crash;
use common::Captured;
use crash::{
    CrashCluster, CrashFs, CrashPoint, KEYS, MemFs, NOW, comparable, file_problems, object_problems, objects,
    pki_problems, try_each,
};

const NODE: &str = "node1";
/// The node's advertise address (the golden configuration's).
const ADVERTISE: &str = "10.0.0.1";
const MANIFESTS: &str = "/etc/kubernetes/manifests";
const PKI: &str = "/etc/kubernetes/pki";
/// Where `kubelet.conf` finds the kubelet's client certificate (the kubelet folder of the init on
/// fakes).
const KUBELET_CLIENT_PEM: &str = "/nonexistent/kubelet/pki/kubelet-client-current.pem";
/// When the upgrade runs: a day after the cluster was made.
const UPGRADE_AFTER: i64 = 24 * 3600;

/// A node's state: its files, its API server and the images its runtime holds.
struct Node {
    fs: Arc<NodeFs>,
    cluster: Arc<FakeCluster>,
    images: Arc<Mutex<BTreeSet<String>>>,
}

impl Node {
    fn files(&self) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
        self.fs.0.files()
    }

    /// A copy: its files, its API server's objects, its images.
    fn copy(&self) -> Node {
        Node {
            fs: Arc::new(NodeFs(MemFs::with_files(&self.files()))),
            cluster: Arc::new(self.cluster.copy()),
            images: Arc::new(Mutex::new(self.images.lock().expect("images").clone())),
        }
    }
}

/// The node's disk: [`MemFs`], which also copies folders (etcd's data backup).
struct NodeFs(Arc<MemFs>);

impl Fs for NodeFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0.read(path)
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        self.0.write(path, contents, mode)
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        self.0.create_dir_all(path, mode)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.0.list_dir(path)
    }
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        self.0.remove_all(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.0.canonicalize(path)
    }
    fn unmount(&self, path: &Path) -> io::Result<()> {
        self.0.unmount(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to)
    }
    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        let below: Vec<_> = self
            .0
            .files()
            .into_iter()
            .filter(|(p, _)| p.starts_with(from))
            .collect();
        if below.is_empty() {
            return Err(io::ErrorKind::NotFound.into());
        }
        for (path, (mode, contents)) in below {
            let rel = path.strip_prefix(from).expect("below");
            self.0.write(&to.join(rel), &contents, mode)?;
        }
        Ok(())
    }
}

/// The node and cluster `kubeadm init` left, aged to a v1.25.15 cluster made before 1.25.
fn aged() -> Node {
    let made = crash::Node::new();
    made.init(&CrashPoint::new(None))
        .unwrap_or_else(|e| panic!("init: {e}"));
    let cluster = FakeCluster::new();
    let age = |text: &str| {
        text.replace("kubernetesVersion: v1.25.16", "kubernetesVersion: v1.25.15")
            .replace(":v1.25.16", ":v1.25.15")
            .replace("coredns:v1.9.3", "coredns:v1.8.6")
            .replace("etcd:3.5.9-0", "etcd:3.5.6-0")
            .replace("registry.k8s.io", "k8s.gcr.io")
    };
    for ((group_resource, _namespace, _name), object) in made.cluster.objects() {
        let (plural, group) = group_resource
            .split_once('.')
            .unwrap_or((group_resource.as_str(), ""));
        let mut object: Value =
            serde_json::from_str(&age(&serde_json::to_string(&object).expect("json"))).expect("json");
        if plural == "nodes" {
            let taints = object["spec"]["taints"].as_array_mut().expect("node1's taints");
            taints.push(json!({"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}));
            object["status"] = json!({"nodeInfo": {"kubeletVersion": "v1.25.15"}});
        }
        cluster
            .create(&Resource::new(group, "v1", plural), &object)
            .expect("stored");
    }
    let mut files = made.files();
    for (path, (_, contents)) in files.iter_mut() {
        if path.starts_with(MANIFESTS) {
            *contents = age(&String::from_utf8_lossy(contents)).into_bytes();
        }
    }
    let manifest = |c: &str| {
        String::from_utf8_lossy(&files[&PathBuf::from(format!("{MANIFESTS}/{c}.yaml"))].1).into_owned()
    };
    assert!(manifest("kube-apiserver").contains("k8s.gcr.io/kube-apiserver:v1.25.15"));
    assert!(manifest("etcd").contains("etcd:3.5.6-0"), "{}", manifest("etcd"));
    // The kubelet's rotated client certificate, which names the node (init on fakes writes a
    // placeholder).
    files.insert(
        PathBuf::from(KUBELET_CLIENT_PEM),
        (0o600, kubelet_client_pem(&files)),
    );
    // etcd's data, which the upgrade copies before it touches etcd.
    files.insert(
        PathBuf::from("/var/lib/etcd/member/snap/db"),
        (0o600, b"etcd data".to_vec()),
    );
    Node {
        fs: Arc::new(NodeFs(MemFs::with_files(&files))),
        cluster: Arc::new(cluster),
        images: Default::default(),
    }
}

/// `system:node:node1`'s client certificate and key, signed by the cluster CA in `files`.
fn kubelet_client_pem(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> Vec<u8> {
    use kubeadm_core::pki::{AltNames, CertTemplate, ExtKeyUsage, PrivateKey};
    let text = |p: &str| String::from_utf8_lossy(&files[&PathBuf::from(p)].1).into_owned();
    let ca = CertInfo::from_pem(&text(&format!("{PKI}/ca.crt"))).expect("ca.crt");
    let ca_key = PrivateKey::from_pem(&text(&format!("{PKI}/ca.key"))).expect("ca.key");
    let key = KeyGen::generate(&**KEYS, &[KeyAlgorithm::Rsa2048])
        .expect("key")
        .remove(0);
    let key = PrivateKey::from_pkcs8_der(&key.pkcs8_der).expect("key");
    let template = CertTemplate {
        common_name: format!("system:node:{NODE}"),
        organization: vec!["system:nodes".into()],
        alt_names: AltNames::default(),
        ext_key_usages: vec![ExtKeyUsage::ClientAuth],
    };
    let cert = kubeadm_core::pki::issue_signed(&template, &ca, &ca_key, &key, *NOW, None, 7).expect("issued");
    format!("{}{}", cert.pem, key.to_pem()).into_bytes()
}

/// The API server with the kubelet and the controllers behind it, as far as the upgrade sees
/// them: a GET of a mirror Pod answers with the hash of its manifest on disk, a LIST of Pods
/// shows the component's mirror Pod running (the API server's with its advertised endpoint), and
/// the health-check Job completes as soon as it exists. Every call is one of the run's
/// operations (through [`CrashCluster`]).
struct ControlPlane {
    api: CrashCluster,
    fs: Arc<NodeFs>,
}

impl ControlPlane {
    fn pod(&self, component: &str) -> Value {
        let manifest = self
            .fs
            .read(&Path::new(MANIFESTS).join(format!("{component}.yaml")))
            .unwrap_or_default();
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": format!("{component}-{NODE}"), "namespace": "kube-system",
                "labels": {"component": component, "tier": "control-plane"},
                "annotations": {
                    "kubernetes.io/config.hash": format!("{:x}", fnv(&manifest)),
                    "kubeadm.kubernetes.io/etcd.advertise-client-urls": format!("https://{ADVERTISE}:2379"),
                    "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint": format!("{ADVERTISE}:6443"),
                },
            },
            "spec": {"nodeName": NODE},
            "status": {"phase": "Running"},
        })
    }
}

/// A content hash good enough to tell manifests apart (FNV-1a).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

fn jobs() -> Resource {
    Resource::new("batch", "v1", "jobs")
}

impl Cluster for ControlPlane {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        let got = self.api.get(resource, namespace, name);
        if *resource == Resource::core("pods")
            && let Some(component) = name.strip_suffix(&format!("-{NODE}"))
        {
            return match got {
                Err(e) if !e.is_not_found() => Err(e),
                _ => Ok(self.pod(component)),
            };
        }
        if *resource == jobs() {
            return got.map(|mut job| {
                job["status"] = json!({"conditions": [{"type": "Complete", "status": "True"}]});
                job
            });
        }
        got
    }
    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        let listed = self.api.list(resource, namespace, options)?;
        if *resource == Resource::core("pods") {
            let component = options
                .label_selector
                .split(',')
                .find_map(|s| s.strip_prefix("component="))
                .unwrap_or("etcd");
            return Ok(vec![self.pod(component)]);
        }
        Ok(listed)
    }
    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        self.api.create(resource, object)
    }
    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        self.api.update(resource, object)
    }
    fn patch(
        &self,
        r: &Resource,
        ns: &str,
        name: &str,
        t: PatchType,
        p: &Value,
    ) -> Result<Value, ClusterError> {
        self.api.patch(r, ns, name, t, p)
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, p: Option<Propagation>) -> Result<(), ClusterError> {
        self.api.delete(r, ns, name, p)
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        self.api.healthy()
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        self.api.failing_readyz_checks()
    }
    fn pause(&self, d: Duration) {
        self.api.pause(d);
    }
}

/// etcd behind a crash point: every call is an operation of the run.
struct CrashingEtcd(FakeEtcd, Arc<CrashPoint>);

impl CrashingEtcd {
    fn call(&self, call: &str) -> Result<(), EtcdError> {
        if self.1.step() {
            Ok(())
        } else {
            Err(EtcdError {
                call: call.into(),
                endpoints: self.0.endpoints(),
                message: "simulated crash".into(),
            })
        }
    }
}

impl Etcd for CrashingEtcd {
    fn endpoints(&self) -> Vec<String> {
        self.0.endpoints()
    }
    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        self.call("MemberList")?;
        self.0.list_members()
    }
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        self.call("MemberRemove")?;
        self.0.remove_member(id)
    }
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        self.call("MemberAdd")?;
        self.0.add_member(peer_url)
    }
    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        self.call("Status")?;
        self.0.status(endpoint)
    }
    fn snapshot(&self, endpoint: &str) -> Result<Vec<u8>, EtcdError> {
        self.call("Snapshot")?;
        self.0.snapshot(endpoint)
    }
}

/// The container runtime: the images it holds; a pull is an operation of the run.
struct FakeRuntime {
    images: Arc<Mutex<BTreeSet<String>>>,
    crash: Arc<CrashPoint>,
}

impl FakeRuntime {
    fn dead(&self, call: CriCall) -> CriError {
        CriError::Client {
            endpoint: self.endpoint().into(),
            call,
            message: "simulated crash".into(),
        }
    }
}

impl std::fmt::Debug for FakeRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FakeRuntime")
    }
}

impl Runtime for FakeRuntime {
    fn endpoint(&self) -> &str {
        "unix:///var/run/containerd/containerd.sock"
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        unreachable!("the upgrade asks no version")
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        unreachable!("the upgrade asks no status")
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        unreachable!("the upgrade lists no images")
    }
    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
        if self.crash.dead() {
            return Err(self.dead(CriCall::ImageStatus(image.into())));
        }
        Ok(self
            .images
            .lock()
            .expect("images")
            .contains(image)
            .then(|| Image {
                repo_tags: vec![image.into()],
                ..Image::default()
            }))
    }
    fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
        if !self.crash.step() {
            return Err(self.dead(CriCall::PullImage(image.into())));
        }
        self.images.lock().expect("images").insert(image.into());
        Ok(image.into())
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        Ok(Vec::new())
    }
    fn stop_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        unreachable!("the upgrade stops no sandbox")
    }
    fn remove_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        unreachable!("the upgrade removes no sandbox")
    }
    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        Ok(Vec::new())
    }
}

/// The keys of the renewed certificates: a pool apart from [`KEYS`], which made the cluster, so that
/// a renewed certificate never has its old key by chance. Handed out in turn across all runs, as
/// [`KEYS`] are (64 keys: the killed run and the one after it never share one).
static RENEWAL_KEYS: std::sync::LazyLock<Arc<KeyPool>> = std::sync::LazyLock::new(|| {
    let pool = kubeadm_host::keygen::AwsLcKeyGen
        .generate(&[KeyAlgorithm::Rsa2048; 64])
        .expect("keys");
    Arc::new(KeyPool {
        pool,
        next: Default::default(),
    })
});

struct KeyPool {
    pool: Vec<GeneratedKey>,
    next: std::sync::atomic::AtomicUsize,
}

impl KeyGen for KeyPool {
    fn generate(&self, algorithms: &[KeyAlgorithm]) -> Result<Vec<GeneratedKey>, KeyGenError> {
        algorithms
            .iter()
            .map(|&algorithm| match algorithm {
                KeyAlgorithm::Rsa2048 => {
                    Ok(self.pool[self.next.fetch_add(1, Ordering::SeqCst) % self.pool.len()].clone())
                }
                _ => Err(KeyGenError {
                    algorithm,
                    reason: "the pool holds RSA 2048 keys only".into(),
                }),
            })
            .collect()
    }
}

/// A different number at each call: temporary folders' names and serial numbers.
fn counter() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// `kubeadm upgrade apply v1.25.16 --yes` on `node`, until `crash` kills it, if it does.
fn apply(node: &Node, crash: &Arc<CrashPoint>) -> Result<(), String> {
    let cluster = ControlPlane {
        api: CrashCluster(node.cluster.clone(), crash.clone()),
        fs: node.fs.clone(),
    };
    let fs = CrashFs(node.fs.clone(), crash.clone());
    let mut host = FakeHost::default();
    for c in ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
        host.files.insert(format!("{MANIFESTS}/{c}.yaml"), Vec::new());
    }
    host.files.insert(format!("{PKI}/ca.key"), Vec::new());
    let point = crash.clone();
    let etcd: EtcdConnector = Arc::new(move |_, _| {
        Ok(Box::new(CrashingEtcd(
            FakeEtcd::new(
                &[&format!("https://{ADVERTISE}:2379")],
                vec![started_member(1, NODE, ADVERTISE)],
            ),
            point.clone(),
        )) as Box<dyn Etcd>)
    });
    let (images, point) = (node.images.clone(), crash.clone());
    let runtime = move |_: &str| {
        Box::new(FakeRuntime {
            images: images.clone(),
            crash: point.clone(),
        }) as Box<dyn Runtime>
    };
    let point = crash.clone();
    let host_facts = || kubeadm_api::dynamic::HostFacts {
        hostname: NODE.into(),
        default_route_ipv4: Some(ADVERTISE.parse().expect("ip")),
        ..Default::default()
    };
    let args = ["v1.25.16".to_string()];
    Apply {
        args: &args,
        flags: ApplyFlags {
            yes: true,
            etcd_upgrade: true,
            renew_certs: true,
            ..ApplyFlags::default()
        },
        cluster: &cluster,
        host_facts: &host_facts,
        server_version: Box::new(move || {
            Ok(Box::new(move || {
                if point.step() {
                    Ok(json!({"gitVersion": "v1.25.15"}))
                } else {
                    Err(ClusterError::Unavailable {
                        call: Box::new(Call::new(Verb::Get, &Resource::core("version"), "", "")),
                        message: "simulated crash".into(),
                    })
                }
            }) as ServerVersion<'_>)
        }),
        manifest_facts: &|external_ca| kubeadm_core::manifests::ManifestHostFacts {
            external_ca,
            ..Default::default()
        },
        read_patches: &|dir| unreachable!("no --patches, yet {dir} read"),
        manifest_timeout: Some("10s".into()),
        kubernetes_dir: PathBuf::from("/etc/kubernetes"),
        kubelet_conf: PathBuf::from("/etc/kubernetes/kubelet.conf"),
        kubelet_dir: PathBuf::from("/nonexistent/kubelet"),
        read_answer: &mut || unreachable!("--yes asks nothing"),
        effects: Effects {
            host_probe: Arc::new(host),
            cri: Arc::new(runtime),
            etcd,
            keygen: RENEWAL_KEYS.clone(),
            random: counter,
            ..common::effects(Arc::new(fs), Arc::new(Captured::default()), *NOW + UPGRADE_AFTER)
        },
    }
    .run()
    .map_err(|e| e.to_string())
}

/// The certificates the upgrade renews (`upgrade apply`'s `renewCertsByComponent` for the
/// components whose manifests change, then admin.conf), by file.
const RENEWED: [&str; 10] = [
    "pki/apiserver.crt",
    "pki/apiserver-kubelet-client.crt",
    "pki/front-proxy-client.crt",
    "pki/apiserver-etcd-client.crt",
    "pki/etcd/server.crt",
    "pki/etcd/peer.crt",
    "pki/etcd/healthcheck-client.crt",
    "controller-manager.conf",
    "scheduler.conf",
    "admin.conf",
];
/// Certificates the upgrade leaves alone.
const KEPT: [&str; 4] = [
    "pki/ca.crt",
    "pki/front-proxy-ca.crt",
    "pki/etcd/ca.crt",
    "kubelet.conf",
];

/// The certificate of `name` (under `/etc/kubernetes`): a PEM file's, or a kubeconfig's client
/// certificate.
fn certificate(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>, name: &str) -> Result<CertInfo, String> {
    let path = Path::new("/etc/kubernetes").join(name);
    let text = files
        .get(&path)
        .map(|f| String::from_utf8_lossy(&f.1).into_owned())
        .ok_or_else(|| format!("{name} missing"))?;
    let pem = if name.ends_with(".conf") {
        use base64::Engine as _;
        let doc = kubeadm_yaml::parse_documents(&text)
            .map_err(|e| e.to_string())?
            .remove(0)
            .value;
        let user = &doc["users"][0]["user"];
        match user["client-certificate-data"].as_str() {
            Some(data) => String::from_utf8_lossy(
                &base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| e.to_string())?,
            )
            .into_owned(),
            None => String::from_utf8_lossy(&files[&PathBuf::from(KUBELET_CLIENT_PEM)].1).into_owned(),
        }
    } else {
        text
    };
    CertInfo::from_pem(&pem).map_err(|e| format!("{name}: {e}"))
}

/// What is wrong with the certificates of `after` compared with those of `before` the upgrade.
fn renewal_problems(
    before: &BTreeMap<PathBuf, (u32, Vec<u8>)>,
    after: &BTreeMap<PathBuf, (u32, Vec<u8>)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for name in RENEWED {
        let (old, new) = match (certificate(before, name), certificate(after, name)) {
            (Ok(old), Ok(new)) => (old, new),
            (Err(e), _) | (_, Err(e)) => {
                problems.push(e);
                continue;
            }
        };
        let profile = |c: &CertInfo| {
            (
                c.common_name.clone(),
                c.organizations.clone(),
                c.dns_names.clone(),
                c.ips.clone(),
                c.ext_key_usages.clone(),
                c.raw_issuer.clone(),
            )
        };
        if profile(&old) != profile(&new) {
            problems.push(format!(
                "{name}: subject, names, usages or issuer changed by the renewal"
            ));
        }
        if old.spki == new.spki {
            problems.push(format!("{name} not renewed (same key)"));
        }
        if new.not_after != *NOW + UPGRADE_AFTER + 365 * 24 * 3600 {
            problems.push(format!(
                "{name} not renewed (not valid for a year from the upgrade: {} vs {})",
                new.not_after, old.not_after
            ));
        }
    }
    for name in KEPT {
        if certificate(before, name).map(|c| c.der) != certificate(after, name).map(|c| c.der) {
            problems.push(format!("{name} changed, though the upgrade does not renew it"));
        }
    }
    problems
}

/// The manifests of the three control-plane components and etcd.
fn manifests(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> String {
    [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ]
    .iter()
    .map(|c| String::from_utf8_lossy(&files[&PathBuf::from(format!("{MANIFESTS}/{c}.yaml"))].1).into_owned())
    .collect()
}

#[test]
fn upgrade_apply_killed_at_any_point_finishes_when_run_again() {
    let started = std::time::Instant::now();
    let start = aged();
    let before = start.files();
    let reference = start.copy();
    let whole = CrashPoint::new(None);
    apply(&reference, &whole).unwrap_or_else(|e| panic!("uninterrupted run: {e}"));
    let points = whole.count.load(Ordering::SeqCst);
    let want_objects = objects(&reference.cluster);
    let want_files = comparable(&reference.files());
    let want_images = reference.images.lock().expect("images").clone();

    // The uninterrupted run upgraded what an upgrade upgrades.
    let after = reference.files();
    let upgraded = manifests(&after);
    for image in [
        "registry.k8s.io/kube-apiserver:v1.25.16",
        "registry.k8s.io/kube-controller-manager:v1.25.16",
        "registry.k8s.io/kube-scheduler:v1.25.16",
        "registry.k8s.io/etcd:3.5.9-0",
    ] {
        assert!(
            upgraded.contains(image),
            "{image} not in the manifests:\n{upgraded}"
        );
    }
    let problems = renewal_problems(&before, &after);
    assert!(problems.is_empty(), "{problems:#?}");
    let problems = pki_problems(&after);
    assert!(problems.is_empty(), "{problems:#?}");
    let node1 = reference
        .cluster
        .object(&Resource::nodes(), "", NODE)
        .expect("node1");
    assert_eq!(
        node1["spec"]["taints"],
        json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
        "the legacy taint removed, the control-plane taint kept"
    );
    let old_objects = objects(&start.cluster);
    let changed: Vec<&String> = want_objects
        .iter()
        .filter(|(k, v)| old_objects.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    for what in [
        "\"nodes\"",
        "kubeadm-config",
        "\"deployments.apps\"",
        "\"daemonsets.apps\"",
    ] {
        assert!(
            changed.iter().any(|k| k.contains(what)),
            "{what} not changed by the run: {changed:#?}"
        );
    }
    let config = reference
        .cluster
        .object(&Resource::config_maps(), "kube-system", "kubeadm-config")
        .expect("kubeadm-config");
    let stored = config["data"]["ClusterConfiguration"].as_str().expect("stored");
    assert!(
        stored.contains("imageRepository: registry.k8s.io") && stored.contains("kubernetesVersion: v1.25.16"),
        "{stored}"
    );
    assert!(
        want_images.contains("registry.k8s.io/kube-apiserver:v1.25.16"),
        "{want_images:?}"
    );
    assert!(
        !want_objects.keys().any(|k| k.contains("upgrade-health-check")),
        "the health check's Job was left"
    );

    let failures = try_each(
        "upgrade apply (file changes, API calls, etcd calls, image pulls)",
        points,
        |k| {
            let node = start.copy();
            let mut problems = Vec::new();
            let crash = CrashPoint::new(Some(k));
            if apply(&node, &crash).is_ok() {
                problems.push("the killed run reported success".to_string());
            }
            if !crash.dead() {
                problems.push("the killed run was not killed".to_string());
            }
            node.cluster.restart();
            if let Err(e) = apply(&node, &CrashPoint::new(None)) {
                problems.push(format!("the run after it failed: {e}"));
                return problems;
            }
            let files = node.files();
            problems.extend(object_problems(&want_objects, &objects(&node.cluster)));
            problems.extend(file_problems(&want_files, &comparable(&files)));
            if *node.images.lock().expect("images") != want_images {
                problems.push("other images pulled".to_string());
            }
            problems.extend(renewal_problems(&before, &files));
            problems.extend(pki_problems(&files));
            problems
        },
    );
    eprintln!(
        "upgrade apply: {points} crash points in {:.1?}",
        started.elapsed()
    );
    assert!(points > 100, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
