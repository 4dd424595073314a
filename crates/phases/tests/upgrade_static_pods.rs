//! The static-pod upgrade of `upgrade apply` and `upgrade node` on the fakes, with a stand-in for the
//! kubelet: the mirror Pod of each component carries a hash of the manifest on disk (as the kubelet's
//! `kubernetes.io/config.hash` does), or, for a kubelet that never picks the new manifest up, the
//! hash it had before. Real manifests on a temp dir; the API server and etcd are fakes; the waits
//! run on the fakes' virtual clock.
//!
//! Shown here: a v1.25.15 → v1.25.16 upgrade swaps the three control-plane manifests, backs up the
//! old ones and etcd's data (copied, and snapshotted through the etcd API), skips etcd whose manifest does not change, and cleans the temporary
//! folder; a component whose new Pod never comes is rolled back with every manifest moved so far,
//! and upstream's error says so; a bad patch leaves the running manifests untouched.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::manifests::{self, Component, ManifestHostFacts};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource};
use kubeadm_effects::cri::{Container, CriError, Image, PodSandbox, RuntimeStatus, RuntimeVersion};
use kubeadm_effects::etcd::Etcd;
use kubeadm_host::fs::RealFs;
use kubeadm_phases::etcd_cluster::EtcdConnector;
use kubeadm_phases::upgrade::staticpods::StaticPodUpgrade;
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd, started_member};
use serde_json::{Value, json};

mod common;
mod crash;
use common::{Captured, load_config};
use crash::{CrashFs, CrashPoint};

const NODE: &str = "node1";

fn config(version: &str, data_dir: &Path) -> InitConfig {
    load_config(&format!(
        "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 192.0.2.2
nodeRegistration:
  name: {NODE}
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: {version}
etcd:
  local:
    dataDir: {}
",
        data_dir.display()
    ))
}

/// The kubelet as far as the upgrade sees it: GETs of a mirror Pod answer with the hash of its
/// manifest on disk (when `follows` is true; otherwise always the first hash seen), LISTs show
/// every mirror Pod Running. Everything else goes to the fake API server.
struct Kubelet {
    api: FakeCluster,
    manifests: PathBuf,
    follows: bool,
    first: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Kubelet {
    fn hash(&self, component: &str) -> String {
        let now = std::fs::read(self.manifests.join(format!("{component}.yaml")))
            .map(|b| format!("{:x}", md5_like(&b)))
            .unwrap_or_default();
        let mut first = self.first.lock().expect("lock");
        let seen = first.entry(component.to_string()).or_insert_with(|| now.clone());
        if self.follows { now } else { seen.clone() }
    }
    fn pod(&self, component: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": format!("{component}-{NODE}"), "namespace": "kube-system",
                "labels": {"component": component, "tier": "control-plane"},
                "annotations": {
                    "kubernetes.io/config.hash": self.hash(component),
                    "kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://192.0.2.2:2379",
                },
            },
            "status": {"phase": "Running"},
        })
    }
}

/// A content hash good enough to tell manifests apart (FNV-1a).
fn md5_like(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

impl Cluster for Kubelet {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        if *resource == Resource::core("pods")
            && let Some(component) = name.strip_suffix(&format!("-{NODE}"))
        {
            self.api.get(resource, namespace, name).ok();
            return Ok(self.pod(component));
        }
        self.api.get(resource, namespace, name)
    }
    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        if *resource == Resource::core("pods") {
            let component = options
                .label_selector
                .split(',')
                .find_map(|s| s.strip_prefix("component="))
                .unwrap_or("etcd");
            return Ok(vec![self.pod(component)]);
        }
        self.api.list(resource, namespace, options)
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

/// The container runtime: no API calls but the containers' (a crashed API server when `crashed`).
#[derive(Debug, Default)]
struct Runtime {
    crashed: Option<PathBuf>,
}

impl kubeadm_effects::cri::Runtime for Runtime {
    fn endpoint(&self) -> &str {
        "unix:///run/fake.sock"
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
    fn image_status(&self, _: &str) -> Result<Option<Image>, CriError> {
        unreachable!("the upgrade checks no image")
    }
    fn pull_image_once(&self, _: &str) -> Result<String, CriError> {
        unreachable!("the upgrade pulls nothing here")
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        unreachable!("the upgrade lists no sandboxes")
    }
    fn stop_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        unreachable!()
    }
    fn remove_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        unreachable!()
    }
    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        let Some(log) = &self.crashed else {
            return Ok(Vec::new());
        };
        let container = |id: &str, created_at: i64| Container {
            id: id.into(),
            name: "kube-apiserver".into(),
            attempt: 3,
            state: "CONTAINER_EXITED".into(),
            created_at,
            labels: [(
                "io.kubernetes.pod.namespace".to_string(),
                "kube-system".to_string(),
            )]
            .into(),
            exit_code: 1,
            reason: "Error".into(),
            log_path: log.display().to_string(),
            ..Container::default()
        };
        Ok(vec![
            container("0123456789abcdef-old", 1),
            container("fedcba9876543210-new", 2),
        ])
    }
}

struct Node {
    dir: tempfile::TempDir,
    data_dir: PathBuf,
}

impl Node {
    fn kubernetes_dir(&self) -> PathBuf {
        self.dir.path().join("etc/kubernetes")
    }
    fn manifests(&self) -> PathBuf {
        self.kubernetes_dir().join("manifests")
    }
    fn manifest(&self, component: &str) -> String {
        std::fs::read_to_string(self.manifests().join(format!("{component}.yaml"))).expect("manifest")
    }
    fn tmp_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.kubernetes_dir().join("tmp"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// A node running the control plane of `version`: its four manifests and etcd's data folder.
fn node(version: &str) -> Node {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("var/lib/etcd");
    std::fs::create_dir_all(data_dir.join("member/snap")).expect("data dir");
    std::fs::write(data_dir.join("member/snap/db"), b"etcd data").expect("db");
    let n = Node { dir, data_dir };
    let cfg = config(version, &n.data_dir);
    let facts = ManifestHostFacts::default();
    std::fs::create_dir_all(n.manifests()).expect("manifests");
    let mut pods: Vec<_> = Component::ALL
        .iter()
        .map(|c| {
            manifests::control_plane_pod(
                *c,
                &cfg.cluster,
                &cfg.init.local_api_endpoint,
                &cfg.resolved,
                &facts,
            )
        })
        .collect();
    pods.push(
        manifests::etcd_pod(
            &cfg.cluster,
            &cfg.init.local_api_endpoint,
            NODE,
            &[],
            &cfg.resolved,
        )
        .expect("etcd pod"),
    );
    for pod in pods {
        std::fs::write(n.manifests().join(format!("{}.yaml", pod.name)), pod.to_yaml()).expect("write");
    }
    n
}

fn etcd_connector() -> EtcdConnector {
    Arc::new(|_, _| {
        Ok(Box::new(FakeEtcd::new(
            &["https://192.0.2.2:2379"],
            vec![started_member(1, NODE, "192.0.2.2")],
        )) as Box<dyn Etcd>)
    })
}

fn upgrade(
    n: &Node,
    kubelet: &Kubelet,
    cfg: &InitConfig,
    patches: Option<&kubeadm_core::patches::PatchManager>,
    out: &Captured,
) -> Result<(), String> {
    upgrade_with(n, kubelet, cfg, patches, &Runtime::default(), out)
}

fn upgrade_with(
    n: &Node,
    kubelet: &Kubelet,
    cfg: &InitConfig,
    patches: Option<&kubeadm_core::patches::PatchManager>,
    runtime: &Runtime,
    out: &Captured,
) -> Result<(), String> {
    upgrade_through(n, kubelet, cfg, patches, runtime, &RealFs, out)
}

/// [`upgrade_with`] through the file system `fs`.
fn upgrade_through(
    n: &Node,
    kubelet: &Kubelet,
    cfg: &InitConfig,
    patches: Option<&kubeadm_core::patches::PatchManager>,
    runtime: &Runtime,
    fs: &dyn kubeadm_effects::fs::Fs,
    out: &Captured,
) -> Result<(), String> {
    let connector = etcd_connector();
    let keygen = kubeadm_host::keygen::AwsLcKeyGen;
    StaticPodUpgrade {
        cfg,
        kubernetes_dir: n.kubernetes_dir(),
        fs,
        cluster: kubelet,
        etcd: &connector,
        runtime,
        patches,
        facts: &ManifestHostFacts::default(),
        etcd_upgrade: true,
        renew_certs: false,
        keygen: &keygen,
        timeout: Duration::from_secs(10),
        now: 1_700_000_000,
        random: || 42,
        reporter: out,
        patches_announced: Default::default(),
    }
    .perform()
    .map_err(|e| e.to_string())
}

fn kubelet(n: &Node, follows: bool) -> Kubelet {
    Kubelet {
        api: FakeCluster::new(),
        manifests: n.manifests(),
        follows,
        first: Default::default(),
    }
}

#[test]
fn a_patch_release_swaps_the_control_plane_manifests_and_keeps_backups() {
    let n = node("v1.25.15");
    let old_apiserver = n.manifest("kube-apiserver");
    let old_etcd = n.manifest("etcd");
    let k = kubelet(&n, true);
    let out = Captured::default();
    let cfg = config("v1.25.16", &n.data_dir);
    upgrade(&n, &k, &cfg, None, &out).expect("upgrade");

    for c in ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
        assert!(
            n.manifest(c).contains(&format!("registry.k8s.io/{c}:v1.25.16")),
            "{c} not upgraded"
        );
    }
    // etcd's version does not change between these patch releases: its manifest is left alone.
    assert_eq!(n.manifest("etcd"), old_etcd);
    let text = out.0.lock().expect("out").clone();
    assert!(
        text.contains("[upgrade/staticpods] Current and new manifests of etcd are equal, skipping upgrade"),
        "{text}"
    );
    assert!(
        text.contains("[upgrade/staticpods] Component \"kube-scheduler\" upgraded successfully!"),
        "{text}"
    );
    // The temporary folder is gone; the manifest backup and etcd's data copy stay.
    let tmp = n.tmp_entries();
    assert_eq!(tmp.len(), 2, "{tmp:?}");
    let backup = n.kubernetes_dir().join("tmp").join(&tmp[1]);
    assert!(tmp[1].starts_with("kubeadm-backup-manifests-"), "{tmp:?}");
    assert_eq!(
        std::fs::read_to_string(backup.join("kube-apiserver.yaml")).expect("backup"),
        old_apiserver
    );
    let etcd_copy = n
        .kubernetes_dir()
        .join("tmp")
        .join(&tmp[0])
        .join("etcd/member/snap/db");
    assert!(tmp[0].starts_with("kubeadm-backup-etcd-"), "{tmp:?}");
    assert_eq!(std::fs::read(etcd_copy).expect("etcd copy"), b"etcd data");
    // Beyond upstream: a consistent snapshot of the member, through the etcd API, beside the copy.
    let snapshot = n.kubernetes_dir().join("tmp").join(&tmp[0]).join("snapshot.db");
    assert_eq!(std::fs::read(snapshot).expect("snapshot"), b"snapshot of node1");
}

#[test]
fn a_component_that_never_comes_back_is_rolled_back() {
    let n = node("v1.25.15");
    let before: Vec<String> = [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "etcd",
    ]
    .iter()
    .map(|c| n.manifest(c))
    .collect();
    let k = kubelet(&n, false);
    let out = Captured::default();
    let cfg = config("v1.25.16", &n.data_dir);
    let log = n.dir.path().join("0.log");
    std::fs::write(
        &log,
        "2026-12-01T10:00:00.000000001Z stderr F Error: unknown flag: --bogus\n2026-12-01T10:00:00.000000002Z stderr F exit\n",
    )
    .expect("log");
    let crashed = Runtime {
        crashed: Some(log.clone()),
    };
    let err = upgrade_with(&n, &k, &cfg, None, &crashed, &out)
        .expect_err("the kubelet never restarts the API server");
    assert!(
        err.starts_with(
            "couldn't upgrade control plane. kubeadm has tried to recover everything into the earlier state. Errors faced: "
        ) && err.contains("static Pod hash for component kube-apiserver on Node node1 did not change after 10s"),
        "{err}"
    );
    let after: Vec<String> = [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "etcd",
    ]
    .iter()
    .map(|c| n.manifest(c))
    .collect();
    assert_eq!(before, after, "the running manifests were not restored");
    // Nothing after the API server was touched, and the folders are kept for the user.
    let text = out.0.lock().expect("out").clone();
    // Beyond upstream: the newest container's end, from the runtime, before the rollback.
    let diagnosis = format!(
        "[upgrade/staticpods] Diagnosis: the newest kube-apiserver container fedcba9876543 (restarted 3 times) exited with code 1 (Error)\n\
         [upgrade/staticpods] Diagnosis: its last log lines ({}):\n\
         [upgrade/staticpods]   Error: unknown flag: --bogus\n\
         [upgrade/staticpods]   exit\n",
        log.display()
    );
    assert!(text.contains(&diagnosis), "{text}");
    assert!(
        !text.contains("Preparing for \"kube-controller-manager\" upgrade"),
        "{text}"
    );
    assert_eq!(n.tmp_entries().len(), 3);
}

#[test]
fn a_bad_patch_leaves_the_running_manifests_untouched() {
    let n = node("v1.25.15");
    let before = n.manifest("kube-apiserver");
    let patches = n.dir.path().join("patches");
    std::fs::create_dir_all(&patches).expect("patches");
    std::fs::write(
        patches.join("kube-apiserver+json.json"),
        r#"[{"op": "remove", "path": "/spec/nothing"}]"#,
    )
    .expect("patch");
    let file = kubeadm_core::patches::PatchFile {
        path: "kube-apiserver+json.json".into(),
        content: std::fs::read(patches.join("kube-apiserver+json.json")).expect("read"),
    };
    let pm = kubeadm_core::patches::PatchManager::from_files(&patches.display().to_string(), &[file])
        .expect("patch dir");
    let k = kubelet(&n, true);
    let out = Captured::default();
    let cfg = config("v1.25.16", &n.data_dir);
    let err = upgrade(&n, &k, &cfg, Some(&pm), &out).expect_err("the patch cannot apply");
    assert!(err.starts_with("error creating init static pod manifest files: failed to patch static Pod manifest file for \"kube-apiserver\""), "{err}");
    assert_eq!(n.manifest("kube-apiserver"), before);
}

/// A different number at each call: the temporary folders' names (upstream's are random).
fn counter() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// The static-pod upgrade on `n` with `fs`, the kubelet following the manifests, at `now`.
fn upgrade_on(n: &Node, fs: &dyn kubeadm_effects::fs::Fs, now: i64) -> Result<(), String> {
    let cfg = config("v1.25.16", &n.data_dir);
    let k = kubelet(n, true);
    let connector = etcd_connector();
    let keygen = kubeadm_host::keygen::AwsLcKeyGen;
    StaticPodUpgrade {
        cfg: &cfg,
        kubernetes_dir: n.kubernetes_dir(),
        fs,
        cluster: &k,
        etcd: &connector,
        runtime: &Runtime::default(),
        patches: None,
        facts: &ManifestHostFacts::default(),
        etcd_upgrade: true,
        renew_certs: false,
        keygen: &keygen,
        timeout: Duration::from_secs(10),
        now,
        random: counter,
        reporter: &Captured::default(),
        patches_announced: Default::default(),
    }
    .perform()
    .map_err(|e| e.to_string())
}

/// What an upgrade leaves that must not depend on where it was killed: the four manifests (the
/// node's folder masked), and the kinds of folder under `/etc/kubernetes/tmp`.
fn upgraded(n: &Node) -> (Vec<String>, Vec<String>) {
    let root = n.dir.path().display().to_string();
    let manifests = [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ]
    .iter()
    .map(|c| n.manifest(c).replace(&root, "<node>"))
    .collect();
    let mut kinds: Vec<String> = n
        .tmp_entries()
        .iter()
        .map(|e| {
            e.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
                .to_string()
        })
        .collect();
    kinds.dedup();
    (manifests, kinds)
}

/// `upgrade apply`'s static-pod upgrade killed at each file change in turn (that change and all
/// after it fail; no rollback runs), then run again: it must finish with the manifests an
/// uninterrupted upgrade writes, and leave nothing in `/etc/kubernetes/tmp` but backups.
#[test]
fn an_upgrade_killed_at_any_file_change_finishes_when_run_again() {
    let reference = node("v1.25.15");
    let whole = CrashPoint::new(None);
    upgrade_on(
        &reference,
        &CrashFs(Arc::new(RealFs), whole.clone()),
        1_700_000_000,
    )
    .expect("uninterrupted upgrade");
    let points = whole.count.load(std::sync::atomic::Ordering::SeqCst);
    let want = upgraded(&reference);
    assert_eq!(
        want.1,
        ["kubeadm-backup-etcd", "kubeadm-backup-manifests"],
        "an uninterrupted upgrade's temporary folders"
    );
    assert!(points > 8, "only {points} crash points");
    let mut failures = Vec::new();
    for k in 0..points {
        let n = node("v1.25.15");
        let killed = CrashFs(Arc::new(RealFs), CrashPoint::new(Some(k)));
        if upgrade_on(&n, &killed, 1_700_000_000).is_ok() {
            failures.push(format!("crash point {k}: the killed run succeeded"));
            continue;
        }
        if let Err(e) = upgrade_on(&n, &RealFs, 1_700_000_060) {
            failures.push(format!("crash point {k}: the run after it failed: {e}"));
            continue;
        }
        let got = upgraded(&n);
        if got != want {
            failures.push(format!("crash point {k}: left {:?}, want {:?}", got.1, want.1));
        }
    }
    eprintln!(
        "upgrade (static pods): {points} crash points tried, {} survived",
        points - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// With the `RootlessControlPlane` gate in the configuration upgraded to, the new manifests run as
/// the kubeadm users (created in the node's `/etc/passwd` and `/etc/group`), and the files each
/// component reads change owner and mode, as upstream's `CreateStaticPodFiles` and
/// `prepareAndWriteEtcdStaticPod` do during the upgrade. The node's fixed paths (the account
/// files, `/etc/kubernetes/pki`, the kubeconfig files) are taken below its temporary root.
#[test]
fn a_rootless_upgrade_runs_the_new_manifests_as_the_kubeadm_users() {
    use std::os::unix::fs::MetadataExt;
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test changes file owners and must run as root"
    );
    let n = node("v1.25.15");
    let root = n.dir.path();
    let put = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    put("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
    put("etc/group", "root:x:0:\n");
    let owned = [
        "etc/kubernetes/pki/sa.pub",
        "etc/kubernetes/pki/sa.key",
        "etc/kubernetes/pki/apiserver.key",
        "etc/kubernetes/pki/apiserver-kubelet-client.key",
        "etc/kubernetes/pki/front-proxy-client.key",
        "etc/kubernetes/pki/apiserver-etcd-client.key",
        "etc/kubernetes/pki/ca.key",
        "etc/kubernetes/pki/etcd/server.key",
        "etc/kubernetes/pki/etcd/peer.key",
        "etc/kubernetes/controller-manager.conf",
        "etc/kubernetes/scheduler.conf",
    ];
    for f in owned {
        put(f, "x");
    }
    let mut cfg = config("v1.25.16", &n.data_dir);
    cfg.cluster
        .feature_gates
        .insert("RootlessControlPlane".to_string(), true);
    let k = kubelet(&n, true);
    let out = Captured::default();
    let fs = common::RootedFs(root.to_path_buf());
    upgrade_through(&n, &k, &cfg, None, &Runtime::default(), &fs, &out).expect("upgrade");

    let passwd = std::fs::read_to_string(root.join("etc/passwd")).expect("passwd");
    let group = std::fs::read_to_string(root.join("etc/group")).expect("group");
    assert_eq!(
        passwd,
        "root:x:0:0:root:/root:/bin/bash\nkubeadm-etcd:x:100:100:::/bin/false\nkubeadm-kas:x:101:101:::/bin/false\n\
         kubeadm-kcm:x:102:102:::/bin/false\nkubeadm-ks:x:103:103:::/bin/false\n"
    );
    assert!(
        group.ends_with("kubeadm-sa-key-readers:x:104:kubeadm-kas,kubeadm-kcm\n"),
        "{group}"
    );
    let ids = |user, group| manifests::rootless::NonRootIds {
        user,
        group: user,
        sa_key_readers_group: group,
    };
    for (c, id) in [
        (Component::ApiServer, 101),
        (Component::ControllerManager, 102),
        (Component::Scheduler, 103),
    ] {
        let mut pod = manifests::control_plane_pod(
            c,
            &cfg.cluster,
            &cfg.init.local_api_endpoint,
            &cfg.resolved,
            &ManifestHostFacts::default(),
        );
        manifests::rootless::run_as_non_root(&mut pod, ids(id, 104), &cfg.cluster, false);
        assert_eq!(n.manifest(c.name()), pod.to_yaml(), "{}", c.name());
    }
    let etcd = n.manifest("etcd");
    assert!(etcd.contains("runAsUser: 100"), "{etcd}");
    let owner = |rel: &str| {
        let m = std::fs::metadata(root.join(rel)).expect("stat");
        (m.uid(), m.gid(), m.mode() & 0o777)
    };
    assert_eq!(owner("etc/kubernetes/pki/sa.key"), (0, 104, 0o640));
    assert_eq!(owner("etc/kubernetes/pki/sa.pub"), (101, 101, 0o600));
    assert_eq!(owner("etc/kubernetes/pki/ca.key"), (102, 102, 0o600));
    assert_eq!(owner("etc/kubernetes/scheduler.conf"), (103, 103, 0o600));
    assert_eq!(owner("etc/kubernetes/pki/etcd/peer.key"), (100, 100, 0o600));
    let db = std::fs::metadata(n.data_dir.join("member/snap/db")).expect("db");
    assert_eq!(
        (db.uid(), db.gid()),
        (100, 100),
        "etcd's data directory, all of it"
    );
}
