//! The `kubeadm reset` workflow on recording fakes: what it prints and the order of what it does to
//! the host (kubelet stopped, kubelet mounts unmounted, pod sandboxes removed, etcd's data emptied,
//! directories emptied, kubeconfig files deleted, the kubelet's directory emptied last), for a
//! control-plane node with its configuration from the cluster, for a worker without one, and in a
//! dry run (nothing touched).
//!
//! The expected text is upstream v1.25.16's: the control-plane and worker texts are what upstream's
//! `kubeadm reset -f` printed on the testbed's node1 and node2 (minus the two `Reading configuration`
//! lines, which the CLI prints before the phases), the dry-run text what it printed chrooted into a
//! tree made by `init phase certs/kubeconfig/control-plane/etcd` (no init system, no configuration).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd, FakeHost};

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::cri::{
    CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion, SandboxState,
};
use kubeadm_effects::etcd::{Etcd, Member};
use kubeadm_effects::fs::{FileLock, Fs};
use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_phases::ResetData;
use kubeadm_phases::reset::finish::{CLEANUP_INSTRUCTIONS, clean_stateful_dirs};
use serde_json::json;

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: String) {
    log.lock().expect("log").push(entry);
}

/// An in-memory file system: files with content, directories as `None`; every change is logged.
struct MemFs {
    entries: Mutex<BTreeMap<PathBuf, Option<Vec<u8>>>>,
    log: Log,
    /// Mount points whose unmount fails (`EBUSY`).
    busy: Vec<PathBuf>,
}

impl MemFs {
    fn new(log: &Log, files: &[(&str, &[u8])], dirs: &[&str]) -> Self {
        let mut entries = BTreeMap::new();
        for d in dirs {
            entries.insert(PathBuf::from(d), None);
        }
        for (f, c) in files {
            entries.insert(PathBuf::from(f), Some(c.to_vec()));
        }
        Self {
            entries: Mutex::new(entries),
            log: log.clone(),
            busy: Vec::new(),
        }
    }

    fn paths(&self) -> Vec<String> {
        let e = self.entries.lock().expect("fs");
        e.keys().map(|p| p.display().to_string()).collect()
    }
}

impl Fs for MemFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.entries.lock().expect("fs").get(path) {
            Some(Some(c)) => Ok(c.clone()),
            _ => Err(io::ErrorKind::NotFound.into()),
        }
    }
    fn write(&self, path: &Path, contents: &[u8], _: u32) -> io::Result<()> {
        push(&self.log, format!("write {}", path.display()));
        self.entries
            .lock()
            .expect("fs")
            .insert(path.to_path_buf(), Some(contents.to_vec()));
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.entries.lock().expect("fs").contains_key(path)
    }
    fn create_dir_all(&self, path: &Path, _: u32) -> io::Result<()> {
        self.entries.lock().expect("fs").insert(path.to_path_buf(), None);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        push(&self.log, format!("rm {}", path.display()));
        self.entries.lock().expect("fs").remove(path);
        Ok(())
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let e = self.entries.lock().expect("fs");
        Ok(e.keys()
            .filter(|p| p.parent() == Some(path))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        push(&self.log, format!("rm -r {}", path.display()));
        self.entries
            .lock()
            .expect("fs")
            .retain(|p, _| !p.starts_with(path));
        Ok(())
    }
    /// Logged; held by nobody else (a missing file fails as an open would).
    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        push(&self.log, format!("lock {}", path.display()));
        if !self.exists(path) {
            return Err(io::Error::other(format!(
                "open {}: no such file or directory",
                path.display()
            )));
        }
        Ok(FileLock::new(0o644, Box::new(())))
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if self.exists(path) {
            Ok(path.to_path_buf())
        } else {
            Err(io::ErrorKind::NotFound.into())
        }
    }
    /// Logged; the mount point leaves the mount table (`/proc/mounts`), as the kernel's does,
    /// unless it is one of `busy`.
    fn unmount(&self, path: &Path) -> io::Result<()> {
        push(&self.log, format!("umount {}", path.display()));
        if self.busy.iter().any(|b| b == path) {
            return Err(io::Error::from_raw_os_error(16));
        }
        let mut entries = self.entries.lock().expect("fs");
        if let Some(Some(table)) = entries.get_mut(Path::new("/proc/mounts")) {
            let text = String::from_utf8_lossy(table).into_owned();
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            let on_path = |l: &&str| {
                l.split(' ')
                    .nth(1)
                    .is_some_and(|m| Path::new(&m.replace("\\040", " ")) == path)
            };
            if let Some(i) = lines.iter().rposition(on_path) {
                lines.remove(i);
            }
            *table = lines.concat().into_bytes();
        }
        Ok(())
    }
}

struct LoggedInit(Log, Option<InitSystemKind>);

impl InitSystem for LoggedInit {
    fn kind(&self) -> Option<InitSystemKind> {
        self.1
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

/// A runtime holding some pod sandboxes; every call but `status` is logged.
#[derive(Debug)]
struct LoggedRuntime(Log, Vec<String>);

impl Runtime for LoggedRuntime {
    fn endpoint(&self) -> &str {
        "unix:///run/fake.sock"
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
        push(&self.0, "crictl pods".into());
        Ok(self
            .1
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
        push(&self.0, format!("crictl stopp {id}"));
        Ok(())
    }
    fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        push(&self.0, format!("crictl rmp {id}"));
        Ok(())
    }
}

/// Standard output, and the warnings (message only) on the side.
#[derive(Default)]
struct Captured {
    out: Mutex<String>,
    warnings: Mutex<Vec<String>>,
}

struct Shared(Arc<Captured>);

impl Reporter for Shared {
    fn out(&self, text: &str) {
        self.0.out.lock().expect("out").push_str(text);
    }
    fn err(&self, text: &str) {
        self.0.warnings.lock().expect("err").push(text.to_string());
    }
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, severity: Severity, _: u8, _: &str, message: &str) {
        if severity == Severity::Warning {
            self.0.warnings.lock().expect("warn").push(message.to_string());
        }
    }
}

/// The golden default configuration on node1 at 192.0.2.2 (what the cluster hands back).
fn cluster_config() -> InitConfig {
    cluster_config_from("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n")
}

/// The configuration of `yaml` on node1 at 192.0.2.2.
fn cluster_config_from(yaml: &str) -> InitConfig {
    let host = HostFacts {
        hostname: "node1".to_string(),
        default_route_ipv4: Some("192.0.2.2".parse().expect("ip")),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config("kubeadm.yaml", yaml, &mut inputs).expect("config")
}

struct Node {
    data: ResetData,
    log: Log,
    captured: Arc<Captured>,
    etcd: Arc<FakeEtcd>,
}

/// The files a control-plane node has after `kubeadm init`, with a pod volume mounted.
const CONTROL_PLANE_FILES: &[(&str, &[u8])] = &[
    ("/etc/kubernetes/admin.conf", b"x"),
    ("/etc/kubernetes/kubelet.conf", b"x"),
    ("/etc/kubernetes/controller-manager.conf", b"x"),
    ("/etc/kubernetes/scheduler.conf", b"x"),
    ("/etc/kubernetes/manifests/etcd.yaml", b"x"),
    ("/etc/kubernetes/manifests/kube-apiserver.yaml", b"x"),
    ("/etc/kubernetes/pki/ca.crt", b"x"),
    ("/etc/kubernetes/pki/etcd/ca.crt", b"x"),
    ("/var/lib/etcd/member/snap/db", b"x"),
    ("/var/lib/kubelet/config.yaml", b"x"),
    ("/var/lib/kubelet/pods/p1/volumes/token/t", b"x"),
    ("/etc/cni/net.d/10-bridge.conflist", b"x"),
    (
        "/proc/mounts",
        b"overlay / overlay rw 0 0\ntmpfs /var/lib/kubelet/pods/p1/volumes/token tmpfs rw 0 0\n\
tmpfs /var/lib/kubelet-other/x tmpfs rw 0 0\nshm /run/containerd/io.containerd/sandboxes/s1/shm tmpfs rw 0 0\n",
    ),
];

const DIRS: &[&str] = &[
    "/etc/kubernetes",
    "/etc/kubernetes/manifests",
    "/etc/kubernetes/pki",
    "/etc/kubernetes/pki/etcd",
    "/var/lib/etcd",
    "/var/lib/etcd/member",
    "/var/lib/etcd/member/snap",
    "/var/lib/kubelet",
    "/var/lib/kubelet/pods",
    "/var/lib/kubelet/pods/p1",
    "/var/lib/kubelet/pods/p1/volumes",
    "/var/lib/kubelet/pods/p1/volumes/token",
    "/etc/cni",
    "/etc/cni/net.d",
];

fn node(
    files: &[(&str, &[u8])],
    cfg: Option<InitConfig>,
    dry_run: bool,
    init: Option<InitSystemKind>,
    etcd_members: Vec<Member>,
) -> Node {
    let log: Log = Arc::default();
    let captured = Arc::new(Captured::default());
    let etcd = Arc::new(FakeEtcd::new(&["https://192.0.2.2:2379"], etcd_members));
    let etcd_for_connector = etcd.clone();
    let cluster = FakeCluster::new().with_object(
        &Resource::core("pods"),
        json!({"metadata": {"name": "etcd-node1", "namespace": "kube-system",
            "labels": {"component": "etcd", "tier": "control-plane"},
            "annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://192.0.2.2:2379"}}}),
    );
    let connect_log = log.clone();
    let data = ResetData {
        cfg,
        dry_run,
        force: true,
        ignore_preflight_errors: Default::default(),
        cert_dir: PathBuf::from("/etc/kubernetes/pki"),
        kubernetes_dir: PathBuf::from("/etc/kubernetes"),
        kubelet_dir: PathBuf::from("/var/lib/kubelet"),
        mounts_file: PathBuf::from("/proc/mounts"),
        input: Box::new(io::Cursor::new(Vec::new())),
        dirs_to_clean: Vec::new(),
        stateful_dirs_after: true,
        runtime: Box::new(LoggedRuntime(log.clone(), vec!["s1".into(), "s2".into()])),
        cluster: Some(Box::new(cluster)),
        effects: Effects {
            init_system: Arc::new(LoggedInit(log.clone(), init)),
            etcd: Arc::new(move |endpoints, tls| {
                push(
                    &connect_log,
                    format!("etcd connect {endpoints:?} {}", tls.cert.display()),
                );
                Ok(Box::new(etcd_for_connector.clone()) as Box<dyn Etcd>)
            }),
            fs: Arc::new(MemFs::new(&log, files, DIRS)),
            host_probe: Arc::new(FakeHost::default()),
            // Reset acts on the runtime above, opened from the socket it chose.
            cri: Arc::new(|endpoint| panic!("reset opened a second runtime at {endpoint}")),
            keygen: Arc::new(kubeadm_host::keygen::AwsLcKeyGen),
            clock: Arc::new(|| 0),
            random: || 42,
            reporter: Arc::new(Shared(captured.clone())),
        },
    };
    Node {
        data,
        log,
        captured,
        etcd,
    }
}

/// The whole `kubeadm reset` after the data is built: the workflow, then the stateful directories
/// and the instructions.
fn reset(n: &mut Node) -> String {
    kubeadm_phases::reset::workflow()
        .run(&mut n.data, &[], &[])
        .expect("reset");
    clean_stateful_dirs(&n.data);
    n.data.effects.reporter.out(CLEANUP_INSTRUCTIONS);
    n.captured.out.lock().expect("out").clone()
}

/// Upstream's lines on the testbed's node1, after the configuration was read from the cluster.
const UPSTREAM_CONTROL_PLANE: &str = r#"[preflight] Running pre-flight checks
[reset] Stopping the kubelet service
[reset] Unmounting mounted directories in "/var/lib/kubelet"
[reset] Deleting contents of directories: [/etc/kubernetes/manifests /etc/kubernetes/pki]
[reset] Deleting files: [/etc/kubernetes/admin.conf /etc/kubernetes/kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/controller-manager.conf /etc/kubernetes/scheduler.conf]
[reset] Deleting contents of stateful directories: [/var/lib/etcd /var/lib/kubelet]
"#;

/// Upstream's lines on the testbed's worker node2 (no admin.conf, so no configuration).
const UPSTREAM_WORKER: &str = r#"[preflight] Running pre-flight checks
[reset] No etcd config found. Assuming external etcd
[reset] Please, manually reset etcd to prevent further issues
[reset] Stopping the kubelet service
[reset] Unmounting mounted directories in "/var/lib/kubelet"
[reset] Deleting contents of directories: [/etc/kubernetes/manifests /etc/kubernetes/pki]
[reset] Deleting files: [/etc/kubernetes/admin.conf /etc/kubernetes/kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/controller-manager.conf /etc/kubernetes/scheduler.conf]
[reset] Deleting contents of stateful directories: [/var/lib/kubelet]
"#;

/// Upstream's dry run chrooted into an init tree: no init system, no configuration.
const UPSTREAM_DRY_RUN: &str = r#"[preflight] Running pre-flight checks
[reset] Would unmount mounted directories in "/var/lib/kubelet"
[reset] Would remove Kubernetes-managed containers
[reset] Would delete contents of directories: [/etc/kubernetes/manifests /etc/kubernetes/pki]
[reset] Would delete files: [/etc/kubernetes/admin.conf /etc/kubernetes/kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/controller-manager.conf /etc/kubernetes/scheduler.conf]
[reset] Would delete contents of stateful directories: [/var/lib/etcd]
"#;

fn single_member() -> Vec<Member> {
    vec![Member {
        id: 11,
        name: "node1".into(),
        peer_urls: vec!["https://192.0.2.2:2380".into()],
        client_urls: vec!["https://192.0.2.2:2379".into()],
    }]
}

#[test]
fn control_plane_reset_prints_as_upstream_and_acts_in_order() {
    let mut n = node(
        CONTROL_PLANE_FILES,
        Some(cluster_config()),
        false,
        Some(InitSystemKind::Systemd),
        single_member(),
    );
    let out = reset(&mut n);
    assert_eq!(out, format!("{UPSTREAM_CONTROL_PLANE}{CLEANUP_INSTRUCTIONS}"));
    let log = n.log.lock().expect("log").clone();
    assert_eq!(
        log,
        [
            // remove-etcd-member: the only member, reached through this node: kept.
            "etcd connect [\"https://192.0.2.2:2379\"] /etc/kubernetes/pki/etcd/healthcheck-client.crt",
            "stop kubelet",
            "umount /var/lib/kubelet/pods/p1/volumes/token",
            "crictl pods",
            "crictl stopp s1",
            "crictl rmp s1",
            "crictl stopp s2",
            "crictl rmp s2",
            // Beyond upstream: etcd's data before the files that say where it is (upstream
            // empties it last, with the kubelet's directory; see `run_cleanup_node`).
            "rm -r /var/lib/etcd/member",
            "rm -r /etc/kubernetes/manifests/etcd.yaml",
            "rm -r /etc/kubernetes/manifests/kube-apiserver.yaml",
            "rm -r /etc/kubernetes/pki/ca.crt",
            "rm -r /etc/kubernetes/pki/etcd",
            "rm -r /etc/kubernetes/admin.conf",
            "rm -r /etc/kubernetes/kubelet.conf",
            "rm -r /etc/kubernetes/bootstrap-kubelet.conf",
            "rm -r /etc/kubernetes/controller-manager.conf",
            "rm -r /etc/kubernetes/scheduler.conf",
            "rm -r /var/lib/kubelet/config.yaml",
            "rm -r /var/lib/kubelet/pods",
        ]
    );
    assert_eq!(n.etcd.calls(), ["list"], "the last member is not removed");
    // What reset leaves: the emptied directories themselves, the CNI configuration, /proc/mounts.
    let fs_left: Vec<String> = {
        let n = n;
        let fs = &n.data.effects.fs;
        DIRS.iter()
            .chain(CONTROL_PLANE_FILES.iter().map(|(f, _)| f))
            .filter(|p| fs.exists(Path::new(p)))
            .map(|p| p.to_string())
            .collect()
    };
    assert_eq!(
        fs_left,
        [
            "/etc/kubernetes",
            "/etc/kubernetes/manifests",
            "/etc/kubernetes/pki",
            "/var/lib/etcd",
            "/var/lib/kubelet",
            "/etc/cni",
            "/etc/cni/net.d",
            "/etc/cni/net.d/10-bridge.conflist",
            "/proc/mounts",
        ]
    );
}

#[test]
fn a_member_among_several_is_removed() {
    let mut members = single_member();
    for (id, ip) in [(12, "192.0.2.3"), (13, "192.0.2.4")] {
        members.push(Member {
            id,
            name: format!("cp{id}"),
            peer_urls: vec![format!("https://{ip}:2380")],
            client_urls: vec![format!("https://{ip}:2379")],
        });
    }
    let mut n = node(
        CONTROL_PLANE_FILES,
        Some(cluster_config()),
        false,
        Some(InitSystemKind::Systemd),
        members,
    );
    reset(&mut n);
    assert_eq!(n.etcd.calls(), ["list", "remove 11"]);
    assert!(n.captured.warnings.lock().expect("w").is_empty());
}

#[test]
fn worker_reset_prints_as_upstream() {
    let worker_files: Vec<(&str, &[u8])> = CONTROL_PLANE_FILES
        .iter()
        .copied()
        .filter(|(p, _)| {
            !p.starts_with("/etc/kubernetes/manifests")
                && !p.starts_with("/var/lib/etcd")
                && !p.ends_with("admin.conf")
                && !p.ends_with("controller-manager.conf")
                && !p.ends_with("scheduler.conf")
        })
        .collect();
    let mut n = node(&worker_files, None, false, Some(InitSystemKind::Systemd), vec![]);
    n.data.cluster = None;
    let out = reset(&mut n);
    assert_eq!(out, format!("{UPSTREAM_WORKER}{CLEANUP_INSTRUCTIONS}"));
    let log = n.log.lock().expect("log").clone();
    assert_eq!(log[0], "stop kubelet");
    assert_eq!(
        log.last().map(String::as_str),
        Some("rm -r /var/lib/kubelet/pods")
    );
    assert!(!log.iter().any(|l| l.starts_with("etcd")));
    assert_eq!(
        n.captured.warnings.lock().expect("w").as_slice(),
        ["[reset] No kubeadm config, using etcd pod spec to get data directory"]
    );
}

#[test]
fn dry_run_prints_as_upstream_and_touches_nothing() {
    let mut n = node(CONTROL_PLANE_FILES, None, true, None, single_member());
    let before = {
        let fs: &dyn Fs = &*n.data.effects.fs;
        DIRS.iter()
            .chain(CONTROL_PLANE_FILES.iter().map(|(f, _)| f))
            .filter(|p| fs.exists(Path::new(p)))
            .count()
    };
    // The etcd manifest gives the data directory when there is no configuration.
    n.data
        .effects.fs
        .write(
            Path::new("/etc/kubernetes/manifests/etcd.yaml"),
            b"apiVersion: v1\nkind: Pod\nspec:\n  volumes:\n  - hostPath:\n      path: /etc/kubernetes/pki/etcd\n    name: etcd-certs\n  - hostPath:\n      path: /var/lib/etcd\n      type: DirectoryOrCreate\n    name: etcd-data\n",
            0o600,
        )
        .expect("manifest");
    n.log.lock().expect("log").clear();
    let out = reset(&mut n);
    assert_eq!(out, format!("{UPSTREAM_DRY_RUN}{CLEANUP_INSTRUCTIONS}"));
    assert_eq!(*n.log.lock().expect("log"), Vec::<String>::new());
    assert!(n.etcd.calls().is_empty());
    let fs: &dyn Fs = &*n.data.effects.fs;
    let after = DIRS
        .iter()
        .chain(CONTROL_PLANE_FILES.iter().map(|(f, _)| f))
        .filter(|p| fs.exists(Path::new(p)))
        .count();
    assert_eq!(before, after);
}

#[test]
fn a_dry_run_with_a_configuration_would_remove_the_member() {
    let mut n = node(
        CONTROL_PLANE_FILES,
        Some(cluster_config()),
        true,
        Some(InitSystemKind::Systemd),
        single_member(),
    );
    let out = reset(&mut n);
    let lines: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        lines,
        [
            "[preflight] Running pre-flight checks",
            "[reset] Would remove the etcd member on this node from the etcd cluster",
            "[reset] Would stop the kubelet service",
        ]
    );
    assert!(out.contains("[reset] Would delete contents of stateful directories: [/var/lib/etcd]\n"));
    assert!(n.log.lock().expect("log").is_empty());
}

#[test]
fn the_prompt_needs_y_or_yes() {
    for (answer, proceeds) in [
        ("y\n", true),
        ("YES\r\n", true),
        ("Yes", true),
        ("n\n", false),
        ("\n", false),
        ("", false),
        ("yess\n", false),
    ] {
        let mut n = node(CONTROL_PLANE_FILES, None, false, None, vec![]);
        n.data.force = false;
        n.data.input = Box::new(io::Cursor::new(answer.as_bytes().to_vec()));
        let result = kubeadm_phases::reset::workflow().run(&mut n.data, &["preflight".into()], &[]);
        let out = n.captured.out.lock().expect("out").clone();
        // Upstream returns right after the answer: no root check line.
        assert_eq!(
            out, "[reset] Are you sure you want to proceed? [y/N]: ",
            "{answer:?}"
        );
        // Beyond upstream, a warning before the question lists what will be emptied (etcd's data
        // directory is unknown here: no configuration and an etcd.yaml without its volume).
        assert_eq!(
            n.captured.warnings.lock().expect("w").as_slice(),
            [
                "[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.",
                "[reset] The contents of these directories will be deleted: [/etc/kubernetes/manifests /etc/kubernetes/pki /var/lib/kubelet]",
            ]
        );
        match result {
            Ok(()) => assert!(proceeds, "{answer:?} proceeded"),
            Err(e) => {
                assert!(!proceeds, "{answer:?}: {e}");
                assert_eq!(
                    e.to_string(),
                    "error execution phase preflight: won't proceed; the user didn't answer (Y|y) in order to continue"
                );
            }
        }
    }
}

#[test]
fn the_root_check_fails_unless_ignored() {
    let mut n = node(CONTROL_PLANE_FILES, None, false, None, vec![]);
    n.data.effects.host_probe = Arc::new(FakeHost {
        uid: 1000,
        ..FakeHost::default()
    });
    let err = kubeadm_phases::reset::workflow()
        .run(&mut n.data, &[], &[])
        .expect_err("not root");
    assert_eq!(
        err.to_string(),
        "error execution phase preflight: [preflight] Some fatal errors occurred:\n\t[ERROR IsPrivilegedUser]: user is not running as root\n[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`"
    );
    assert!(
        n.log.lock().expect("log").is_empty(),
        "nothing done after the failed check"
    );

    let mut n = node(CONTROL_PLANE_FILES, None, false, None, vec![]);
    n.data.effects.host_probe = Arc::new(FakeHost {
        uid: 1000,
        ..FakeHost::default()
    });
    n.data.ignore_preflight_errors = ["isprivilegeduser".to_string()].into();
    kubeadm_phases::reset::workflow()
        .run(&mut n.data, &["preflight".into()], &[])
        .expect("ignored");
    assert!(
        n.captured
            .warnings
            .lock()
            .expect("w")
            .contains(&"\t[WARNING IsPrivilegedUser]: user is not running as root\n".to_string())
    );
}

#[test]
fn fetched_configuration_takes_the_node_from_the_cluster() {
    // A kubelet.conf whose client certificate names node1, the Node with its CRI socket, the API
    // server Pod with its endpoint annotation.
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "system:node:node1");
    let cert = params.self_signed(&key).expect("cert");
    let b64 = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(cert.pem())
    };
    let kubelet_conf = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: ctx\ncontexts:\n- name: ctx\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n    client-certificate-data: {b64}\n"
    );
    let log: Log = Arc::default();
    let fs = MemFs::new(
        &log,
        &[("/etc/kubernetes/kubelet.conf", kubelet_conf.as_bytes())],
        &[],
    );
    let cluster = FakeCluster::new()
        .with_object(
            &Resource::config_maps(),
            json!({"metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
                "data": {"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncertificatesDir: /etc/kubernetes/pki\netcd:\n  local:\n    dataDir: /var/lib/etcd-elsewhere\n"}}),
        )
        .with_object(
            &Resource::config_maps(),
            json!({"metadata": {"name": "kubelet-config", "namespace": "kube-system"},
                "data": {"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"}}),
        )
        .with_object(
            &Resource::nodes(),
            json!({"metadata": {"name": "node1", "annotations": {"kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/other.sock"}},
                "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}}),
        )
        .with_object(
            &Resource::core("pods"),
            json!({"metadata": {"name": "kube-apiserver-node1", "namespace": "kube-system",
                "labels": {"component": "kube-apiserver", "tier": "control-plane"},
                "annotations": {"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint": "192.0.2.7:6443"}},
                "spec": {"nodeName": "node1"}}),
        );
    let host = HostFacts {
        hostname: "somehost".to_string(),
        default_route_ipv4: Some("192.0.2.99".parse().expect("ip")),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let mut warnings = Vec::new();
    let cfg = kubeadm_phases::config_from_cluster::fetch_init_config(
        &cluster,
        &fs,
        Path::new("/etc/kubernetes/kubelet.conf"),
        &mut inputs,
        &mut warnings,
    )
    .expect("fetched");
    // No kube-proxy ConfigMap: upstream goes on with a warning.
    assert_eq!(
        warnings,
        [
            "Warning: No kubeproxy.config.k8s.io/v1alpha1 config is loaded. Continuing without it: configmaps \"kube-proxy\" not found"
        ]
    );
    assert_eq!(cfg.init.node_registration.name, "node1");
    assert_eq!(cfg.init.node_registration.cri_socket, "unix:///run/other.sock");
    assert_eq!(
        cfg.init
            .node_registration
            .taints
            .as_ref()
            .map(|t| t[0].key.as_str()),
        Some("node-role.kubernetes.io/control-plane")
    );
    assert_eq!(cfg.init.local_api_endpoint.advertise_address, "192.0.2.7");
    assert_eq!(
        cfg.cluster.etcd.local.as_ref().map(|l| l.data_dir.as_str()),
        Some("/var/lib/etcd-elsewhere")
    );
    assert!(fs.paths().len() == 1 && log.lock().expect("log").is_empty());

    // Without the ConfigMap, the error upstream wraps.
    let err = kubeadm_phases::config_from_cluster::fetch_init_config(
        &FakeCluster::new(),
        &fs,
        Path::new("/etc/kubernetes/kubelet.conf"),
        &mut inputs,
        &mut Vec::new(),
    )
    .expect_err("no config map");
    assert!(err.to_string().starts_with("failed to get config map: "), "{err}");

    // Without the kubelet's ConfigMap, the fetch fails as upstream's `FetchFromCluster` does.
    cluster
        .delete(&Resource::config_maps(), "kube-system", "kubelet-config", None)
        .expect("delete");
    let err = kubeadm_phases::config_from_cluster::fetch_init_config(
        &cluster,
        &fs,
        Path::new("/etc/kubernetes/kubelet.conf"),
        &mut inputs,
        &mut Vec::new(),
    )
    .expect_err("no kubelet config");
    assert_eq!(
        err.to_string(),
        "failed to get component configs: could not download the kubelet configuration from ConfigMap \"kubelet-config\": configmaps \"kubelet-config\" not found"
    );
}

/// etcd's manifest with its data volume at `dir`.
fn etcd_manifest(dir: &str) -> Vec<u8> {
    format!("apiVersion: v1\nkind: Pod\nspec:\n  volumes:\n  - hostPath:\n      path: /etc/kubernetes/pki/etcd\n    name: etcd-certs\n  - hostPath:\n      path: {dir}\n      type: DirectoryOrCreate\n    name: etcd-data\n").into_bytes()
}

/// A control-plane node whose configuration from the cluster names `data_dir` as etcd's data, with
/// the manifest mounting /var/lib/etcd and the files `extra`.
fn node_with_data_dir(data_dir: &str, extra: &[(&str, &[u8])]) -> Node {
    let manifest = etcd_manifest("/var/lib/etcd");
    let mut files: Vec<(&str, &[u8])> = CONTROL_PLANE_FILES
        .iter()
        .copied()
        .filter(|(p, _)| !p.ends_with("etcd.yaml"))
        .collect();
    files.push(("/etc/kubernetes/manifests/etcd.yaml", &manifest));
    files.extend_from_slice(extra);
    let mut cfg = cluster_config();
    cfg.cluster.etcd.local.as_mut().expect("local etcd").data_dir = data_dir.to_string();
    let n = node(
        &files,
        Some(cfg),
        false,
        Some(InitSystemKind::Systemd),
        single_member(),
    );
    // The directories above, so that emptying `/` or `/etc` would reach them.
    for dir in ["/", "/etc", "/var", "/var/lib", "/srv", "/srv/data"] {
        n.data
            .effects
            .fs
            .create_dir_all(Path::new(dir), 0o755)
            .expect("mkdir");
    }
    n
}

#[test]
fn a_data_directory_from_the_cluster_is_emptied_only_when_it_is_etcds() {
    for (data_dir, why) in [
        ("/", "it is a system directory"),
        ("/etc", "it is a system directory"),
        ("/var/lib/etcd/../../lib/", "it is a system directory"),
        (
            "/srv/data",
            "it is not the directory this node's etcd.yaml mounts as its data, and it holds no etcd member/ directory",
        ),
    ] {
        let mut n = node_with_data_dir(
            data_dir,
            &[("/srv/data/precious", b"x"), ("/etc/passwd", b"root")],
        );
        let out = reset(&mut n);
        let log = n.log.lock().expect("log").clone();
        assert!(
            !log.iter().any(|l| l.starts_with("rm -r /srv")
                || l.starts_with("rm -r /etc/passwd")
                || l.starts_with("rm -r /var/lib/etcd")),
            "{data_dir}: {log:#?}"
        );
        let fs = &n.data.effects.fs;
        assert!(fs.exists(Path::new("/srv/data/precious")) && fs.exists(Path::new("/etc/passwd")));
        // The member is still removed; only the emptying is refused, with the reason.
        assert_eq!(n.etcd.calls(), ["list"]);
        assert_eq!(
            n.captured.warnings.lock().expect("w").as_slice(),
            [format!(
                "[reset] Not deleting the contents of the etcd data directory \"{data_dir}\": {why}"
            )],
        );
        assert!(
            out.contains("[reset] Deleting contents of stateful directories: [/var/lib/kubelet]\n"),
            "{out}"
        );
    }

    // The directory etcd.yaml mounts is emptied even without member/ (etcd had not started); one
    // holding member/ even when the manifest is gone. Output as upstream's.
    for (data_dir, extra, without) in [
        ("/var/lib/etcd", &[][..], "/var/lib/etcd/member"),
        (
            "/data/etcd",
            &[("/data/etcd/member/snap/db", &b"x"[..])][..],
            "/etc/kubernetes/manifests/etcd.yaml",
        ),
    ] {
        let mut n = node_with_data_dir(data_dir, extra);
        n.data.effects.fs.remove_all(Path::new(without)).expect("rm");
        let fs = &n.data.effects.fs;
        for dir in ["/data/etcd", "/data/etcd/member", "/data/etcd/member/snap"] {
            if data_dir == "/data/etcd" {
                fs.create_dir_all(Path::new(dir), 0o700).expect("mkdir");
            }
        }
        if data_dir == "/var/lib/etcd" {
            n.data
                .effects
                .fs
                .write(Path::new("/var/lib/etcd/wal"), b"x", 0o600)
                .expect("wal");
        }
        n.log.lock().expect("log").clear();
        let out = reset(&mut n);
        assert_eq!(
            out,
            format!("{UPSTREAM_CONTROL_PLANE}{CLEANUP_INSTRUCTIONS}").replace(
                "[/var/lib/etcd /var/lib/kubelet]",
                &format!("[{data_dir} /var/lib/kubelet]")
            )
        );
        assert!(n.captured.warnings.lock().expect("w").is_empty());
        let emptied = n.data.effects.fs.list_dir(Path::new(data_dir)).expect("ls");
        assert!(emptied.is_empty(), "{data_dir}: {emptied:?}");
    }
}

#[test]
fn the_prompt_lists_etcds_data_only_when_reset_would_empty_it() {
    for (data_dir, listed) in [("/var/lib/etcd", true), ("/", false), ("/srv/data", false)] {
        let mut n = node_with_data_dir(data_dir, &[]);
        n.data.force = false;
        n.data.input = Box::new(io::Cursor::new(b"n\n".to_vec()));
        kubeadm_phases::reset::workflow()
            .run(&mut n.data, &[], &[])
            .expect_err("declined");
        let etcd = if listed {
            format!(" {data_dir}")
        } else {
            String::new()
        };
        assert_eq!(
            *n.captured.out.lock().expect("out"),
            "[reset] Are you sure you want to proceed? [y/N]: "
        );
        assert_eq!(
            n.captured.warnings.lock().expect("w").last().expect("warning"),
            &format!(
                "[reset] The contents of these directories will be deleted: [/etc/kubernetes/manifests /etc/kubernetes/pki{etcd} /var/lib/kubelet]"
            )
        );
        assert!(
            n.log.lock().expect("log").is_empty(),
            "nothing done before the answer"
        );
    }
}

#[test]
fn what_stays_mounted_is_never_deleted() {
    // A pod's NFS volume that will not unmount (busy), a volume with a space in its name (written
    // `\040` in the table) holding a subPath mount, and the kubelet's own pod directory.
    let table = b"overlay / overlay rw 0 0\n\
nfs /var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared nfs4 rw 0 0\n\
tmpfs /var/lib/kubelet/pods/p2/volumes/my\\040vol tmpfs rw 0 0\n\
tmpfs /var/lib/kubelet/pods/p2/volumes/my\\040vol/sub tmpfs rw 0 0\n";
    let files: Vec<(&str, &[u8])> = CONTROL_PLANE_FILES
        .iter()
        .copied()
        .filter(|(p, _)| *p != "/proc/mounts")
        .chain([
            ("/proc/mounts", &table[..]),
            (
                "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared/data",
                &b"on the NFS server"[..],
            ),
            ("/var/lib/kubelet/pods/p1/etc-hosts", &b"x"[..]),
        ])
        .collect();
    let mut n = node(
        &files,
        Some(cluster_config()),
        false,
        Some(InitSystemKind::Systemd),
        single_member(),
    );
    let mut fs = MemFs::new(&n.log, &files, DIRS);
    fs.busy = vec![PathBuf::from(
        "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared",
    )];
    for dir in [
        "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs",
        "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared",
        "/var/lib/kubelet/pods/p2",
        "/var/lib/kubelet/pods/p2/volumes",
        "/var/lib/kubelet/pods/p2/volumes/my vol",
        "/var/lib/kubelet/pods/p2/volumes/my vol/sub",
    ] {
        fs.create_dir_all(Path::new(dir), 0o755).expect("mkdir");
    }
    n.data.effects.fs = Arc::new(fs);
    let out = reset(&mut n);
    assert_eq!(out, format!("{UPSTREAM_CONTROL_PLANE}{CLEANUP_INSTRUCTIONS}"));
    let fs = &n.data.effects.fs;
    assert_eq!(
        fs.read(Path::new(
            "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared/data"
        ))
        .expect("kept"),
        b"on the NFS server"
    );
    let log = n.log.lock().expect("log").clone();
    let umounts: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("umount"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        umounts,
        [
            // Deepest first; of equal depth, the later in the table first.
            "umount /var/lib/kubelet/pods/p2/volumes/my vol/sub",
            "umount /var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared",
            "umount /var/lib/kubelet/pods/p2/volumes/my vol",
        ]
    );
    // Around it, the kubelet's directory is emptied.
    assert!(!fs.exists(Path::new("/var/lib/kubelet/pods/p1/etc-hosts")));
    assert!(!fs.exists(Path::new("/var/lib/kubelet/config.yaml")));
    assert!(!fs.exists(Path::new("/var/lib/kubelet/pods/p2")));
    assert_eq!(
        n.captured.warnings.lock().expect("w").as_slice(),
        [
            "[reset] Failed to unmount mounted directory in /var/lib/kubelet/: /var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared",
            "[reset] Not deleting \"/var/lib/kubelet/pods/p1/volumes/kubernetes.io~nfs/shared\" or anything in it: it is still a mount point",
        ]
    );
}

/// A whole reset of a control-plane node holding `files` whose cluster configuration has the
/// `RootlessControlPlane` gate; its output is upstream's.
fn rootless_reset(files: &[(&str, &[u8])]) -> Node {
    let cfg = cluster_config_from(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nfeatureGates:\n  RootlessControlPlane: true\n",
    );
    let mut n = node(
        files,
        Some(cfg),
        false,
        Some(InitSystemKind::Systemd),
        single_member(),
    );
    let out = reset(&mut n);
    assert_eq!(out, format!("{UPSTREAM_CONTROL_PLANE}{CLEANUP_INSTRUCTIONS}"));
    n
}

/// With the `RootlessControlPlane` gate in the cluster's configuration, `cleanup-node` removes the
/// users and groups kubeadm made (upstream's `RemoveUsersAndGroups`: every line of a managed name,
/// `/etc/passwd` and `/etc/group` locked), after the configuration directories, printing nothing
/// more than upstream's lines; other users and groups stay.
#[test]
fn rootless_reset_removes_the_managed_users_and_groups() {
    let passwd = "root:x:0:0:::/bin/sh\nkubeadm-etcd:x:101:101:::/bin/false\nalice:x:1000:1000:::/bin/sh\n\
kubeadm-kas:x:102:102:::/bin/false\nkubeadm-kcm:x:103:103:::/bin/false\nkubeadm-ks:x:104:104:::/bin/false\n";
    let group = "root:x:0:\nkubeadm-etcd:x:101:kubeadm-etcd\nkubeadm-kas:x:102:kubeadm-kas\n\
kubeadm-kcm:x:103:kubeadm-kcm\nkubeadm-ks:x:104:kubeadm-ks\nkubeadm-sa-key-readers:x:105:kubeadm-kas,kubeadm-kcm\n\
alice:x:1000:\n";
    let mut files = CONTROL_PLANE_FILES.to_vec();
    files.push(("/etc/passwd", passwd.as_bytes()));
    files.push(("/etc/group", group.as_bytes()));
    let n = rootless_reset(&files);
    assert!(n.captured.warnings.lock().expect("warnings").is_empty());
    let log = n.log.lock().expect("log").clone();
    let tail: Vec<&str> = log
        .iter()
        .map(String::as_str)
        .skip_while(|l| !l.starts_with("lock"))
        .collect();
    assert_eq!(
        tail,
        [
            "lock /etc/passwd",
            "lock /etc/group",
            "write /etc/passwd",
            "write /etc/group",
            "rm -r /var/lib/kubelet/config.yaml",
            "rm -r /var/lib/kubelet/pods",
        ]
    );
    let fs = &n.data.effects.fs;
    let text = |p: &str| String::from_utf8(fs.read(Path::new(p)).expect("read")).expect("utf8");
    assert_eq!(
        text("/etc/passwd"),
        "root:x:0:0:::/bin/sh\nalice:x:1000:1000:::/bin/sh\n"
    );
    assert_eq!(text("/etc/group"), "root:x:0:\nalice:x:1000:\n");
}

/// Upstream only warns when the users cannot be removed, and reset goes on.
#[test]
fn rootless_reset_warns_when_the_files_cannot_be_locked() {
    let n = rootless_reset(CONTROL_PLANE_FILES);
    assert_eq!(
        *n.captured.warnings.lock().expect("warnings"),
        ["[reset] Failed to remove users and groups: open /etc/passwd: no such file or directory\n"]
    );
}
