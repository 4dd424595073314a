//! What the crash-point tests share: a crash point that kills a run at its k-th operation (a file
//! change or an API call: that operation and everything after it fail, no clean-up runs), the file
//! system and API server behind it, a pool of keys, a node made by `kubeadm init` on fakes, and
//! the comparisons of what runs leave (key material aside).

#![allow(dead_code)] // each test file uses its own part

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kubeadm_api::v1beta3::{BootstrapTokenDiscovery, JoinConfiguration};
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource};
use kubeadm_effects::etcd::{Etcd, EtcdError, Member};
use kubeadm_effects::fs::{DryRunFs, Fs, FsChange};
use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};
use kubeadm_effects::keygen::{GeneratedKey, KeyAlgorithm, KeyGen, KeyGenError};
use kubeadm_phases::{ClusterAccess, JoinData};
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd};
use serde_json::{Value, json};

use crate::common::{Captured, Shared, context, effects, golden, load_config};

/// Where a run is killed: after `limit` operations (never, with `None`).
#[derive(Debug)]
pub struct CrashPoint {
    limit: Option<usize>,
    pub count: AtomicUsize,
    crashed: AtomicBool,
}

impl CrashPoint {
    pub fn new(limit: Option<usize>) -> Arc<Self> {
        Arc::new(CrashPoint {
            limit,
            count: AtomicUsize::new(0),
            crashed: AtomicBool::new(false),
        })
    }

    /// One operation: false when the process is dead (at this operation or before).
    pub fn step(&self) -> bool {
        if self.crashed.load(Ordering::SeqCst) {
            return false;
        }
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        if self.limit.is_some_and(|limit| n >= limit) {
            self.crashed.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }

    pub fn dead(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }
}

pub fn killed() -> io::Error {
    io::Error::other("simulated crash")
}

/// One time for every run (token expirations compare equal); now, as openssl checks the
/// certificates' validity against the clock.
pub static NOW: std::sync::LazyLock<i64> = std::sync::LazyLock::new(|| {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
});

/// Keys from a pool made once, handed out in turn across all runs (64 keys: two runs, the killed
/// one and the one after it, never share a key, so a certificate paired with another's key is
/// still caught). RSA generation would otherwise take most of the test's time.
pub struct PooledKeys {
    pool: Vec<GeneratedKey>,
    next: AtomicUsize,
}

pub static KEYS: std::sync::LazyLock<Arc<PooledKeys>> = std::sync::LazyLock::new(|| {
    let algorithms = vec![KeyAlgorithm::Rsa2048; 64];
    let pool = kubeadm_host::keygen::AwsLcKeyGen
        .generate(&algorithms)
        .expect("keys");
    Arc::new(PooledKeys {
        pool,
        next: AtomicUsize::new(0),
    })
});

impl KeyGen for PooledKeys {
    fn generate(&self, algorithms: &[KeyAlgorithm]) -> Result<Vec<GeneratedKey>, KeyGenError> {
        algorithms
            .iter()
            .map(|&algorithm| {
                let key = &self.pool[self.next.fetch_add(1, Ordering::SeqCst) % self.pool.len()];
                if key.algorithm == algorithm {
                    Ok(key.clone())
                } else {
                    Err(KeyGenError {
                        algorithm,
                        reason: "the pool holds RSA 2048 keys only".to_string(),
                    })
                }
            })
            .collect()
    }
}

pub type Overlay = Arc<DryRunFs<kubeadm_host::fs::RealFs>>;

pub struct CrashFs<F = DryRunFs<kubeadm_host::fs::RealFs>>(pub Arc<F>, pub Arc<CrashPoint>);

impl<F: Fs> CrashFs<F> {
    fn change<T>(&self, op: impl FnOnce(&F) -> io::Result<T>) -> io::Result<T> {
        if self.1.step() { op(&self.0) } else { Err(killed()) }
    }
    fn look<T>(&self, op: impl FnOnce(&F) -> io::Result<T>) -> io::Result<T> {
        if self.1.dead() { Err(killed()) } else { op(&self.0) }
    }
}

impl<F: Fs> Fs for CrashFs<F> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.look(|fs| fs.read(path))
    }
    fn read_on_disk(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.look(|fs| fs.read_on_disk(path))
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        self.change(|fs| fs.write(path, contents, mode))
    }
    fn exists(&self, path: &Path) -> bool {
        !self.1.dead() && self.0.exists(path)
    }
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        self.change(|fs| fs.create_dir_all(path, mode))
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.change(|fs| fs.remove_file(path))
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.look(|fs| fs.list_dir(path))
    }
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        self.change(|fs| fs.remove_all(path))
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.look(|fs| fs.canonicalize(path))
    }
    fn unmount(&self, path: &Path) -> io::Result<()> {
        self.change(|fs| fs.unmount(path))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.change(|fs| fs.rename(from, to))
    }
    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.change(|fs| fs.copy_dir(from, to))
    }
    fn lock(&self, path: &Path) -> io::Result<kubeadm_effects::fs::FileLock> {
        self.look(|fs| fs.lock(path))
    }
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> io::Result<()> {
        self.change(|fs| fs.chown(path, uid, gid))
    }
    fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        self.change(|fs| fs.chmod(path, mode))
    }
    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), kubeadm_effects::fs::PathIoError> {
        if self.1.step() {
            self.0.chown_tree(path, uid, gid)
        } else {
            Err(kubeadm_effects::fs::PathIoError {
                path: path.to_path_buf(),
                source: killed(),
            })
        }
    }
}

/// The fake API server behind a crash point: once dead, it is down for this process.
pub struct CrashCluster(pub Arc<FakeCluster>, pub Arc<CrashPoint>);

impl CrashCluster {
    fn call(&self) {
        if !self.1.step() {
            // Refused from this call on (the fake records it, then answers "unavailable").
            self.0.go_down_at_call(0);
        }
    }
}

impl Cluster for CrashCluster {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<Value, ClusterError> {
        self.call();
        self.0.get(r, ns, name)
    }
    fn list(&self, r: &Resource, ns: &str, o: &ListOptions) -> Result<Vec<Value>, ClusterError> {
        self.call();
        self.0.list(r, ns, o)
    }
    fn create(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        self.call();
        self.0.create(r, o)
    }
    fn update(&self, r: &Resource, o: &Value) -> Result<Value, ClusterError> {
        self.call();
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
        self.call();
        self.0.patch(r, ns, name, t, p)
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, p: Option<Propagation>) -> Result<(), ClusterError> {
        self.call();
        self.0.delete(r, ns, name, p)
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        self.call();
        self.0.healthy()
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        self.call();
        self.0.failing_readyz_checks()
    }
    fn pause(&self, d: Duration) {
        self.0.pause(d);
    }
}

/// A node's state: its files (in the overlay) and its API server.
pub struct Node {
    pub overlay: Overlay,
    pub cluster: Arc<FakeCluster>,
}

impl Node {
    pub fn new() -> Node {
        let overlay = Arc::new(DryRunFs::new(kubeadm_host::fs::RealFs));
        // The kubelet has its client certificate, so kubelet-finalize rewrites kubelet.conf.
        overlay
            .write(
                Path::new("/nonexistent/kubelet/pki/kubelet-client-current.pem"),
                b"pem",
                0o600,
            )
            .expect("overlay");
        let cluster = Arc::new(FakeCluster::new().with_object(
            &Resource::nodes(),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}}}),
        ));
        Node { overlay, cluster }
    }

    /// `kubeadm init` (preflight aside) until `crash` kills it, if it does.
    pub fn init(&self, crash: &Arc<CrashPoint>) -> Result<(), String> {
        let cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
        let (cluster, point) = (self.cluster.clone(), crash.clone());
        let access = ClusterAccess::new(
            PathBuf::from("/etc/kubernetes/admin.conf"),
            Box::new(move |_| Ok(Box::new(CrashCluster(cluster.clone(), point.clone())) as Box<dyn Cluster>)),
        );
        let fs = CrashFs(self.overlay.clone(), crash.clone());
        let mut data = context(
            cfg,
            Box::new(fs),
            Arc::new(Captured::default()),
            access,
            *NOW,
            false,
        );
        data.effects.keygen = KEYS.clone();
        kubeadm_phases::init::workflow()
            .run(&mut data, &[], &["preflight".to_string()])
            .map_err(|e| format!("{e:#}"))
    }

    /// The files the runs left: path → (mode, contents).
    pub fn files(&self) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
        let mut files = BTreeMap::new();
        for change in self.overlay.changes() {
            match change {
                FsChange::Write { path, contents, mode } => {
                    files.insert(path, (mode, contents));
                }
                FsChange::Remove { path } => {
                    files.remove(&path);
                }
                FsChange::RemoveAll { path } => files.retain(|p, _| !p.starts_with(&path)),
                FsChange::Rename { from, to } => {
                    if let Some(f) = files.remove(&from) {
                        files.insert(to, f);
                    }
                }
                FsChange::CreateDir { .. } | FsChange::Unmount { .. } | FsChange::CopyDir { .. } => {}
            }
        }
        files
    }
}

/// Key material (PEM blocks, runs of 100 or more base64 characters) masked: it differs between
/// any two runs.
pub fn masked(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_pem = false;
    for line in text.lines() {
        if line.starts_with("-----BEGIN ") {
            in_pem = true;
            out.push("<pem>".to_string());
        } else if line.starts_with("-----END ") {
            in_pem = false;
        } else if !in_pem {
            out.push(mask_base64(line));
        }
    }
    out.join("\n")
}

pub fn mask_base64(line: &str) -> String {
    let b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=');
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..].iter().take_while(|&&c| b64(c)).count();
        if run >= 100 {
            out.push_str("<base64>");
            i += run;
        } else if run > 0 {
            out.extend(&chars[i..i + run]);
            i += run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// What must hold of the files for the node to work: the certificates chain to their CAs and
/// match their keys, the kubeconfig files' client certificates chain to the cluster CA.
pub fn pki_problems(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> Vec<String> {
    let root = tempfile::tempdir().expect("root");
    for (path, (_, contents)) in files {
        let dest = root.path().join(path.strip_prefix("/").expect("absolute"));
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("dir");
        std::fs::write(&dest, contents).expect("write");
    }
    let mut problems = kubeadm_testkit::pki::verify_chains(
        root.path(),
        true,
        &[
            "admin.conf",
            "controller-manager.conf",
            "scheduler.conf",
            "kubelet.conf",
        ],
    );
    let pki = root.path().join("etc/kubernetes/pki");
    let public = |args: &[&str], file: &Path| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .arg(file)
            .output()
            .expect("openssl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for name in [
        "ca",
        "apiserver",
        "apiserver-kubelet-client",
        "front-proxy-ca",
        "front-proxy-client",
        "etcd/ca",
        "etcd/server",
        "etcd/peer",
        "etcd/healthcheck-client",
        "apiserver-etcd-client",
    ] {
        let (crt, key) = (pki.join(format!("{name}.crt")), pki.join(format!("{name}.key")));
        let from_cert = public(&["x509", "-noout", "-pubkey", "-in"], &crt);
        let from_key = public(&["pkey", "-pubout", "-in"], &key);
        if from_cert.is_empty() || from_cert != from_key {
            problems.push(format!("{name}.crt does not match {name}.key"));
        }
    }
    let sa_pub = std::fs::read_to_string(pki.join("sa.pub")).unwrap_or_default();
    if sa_pub.is_empty() || public(&["pkey", "-pubout", "-in"], &pki.join("sa.key")) != sa_pub {
        problems.push("sa.pub does not match sa.key".to_string());
    }
    problems
}

/// Files compared as text with key material masked; certificates and keys only by name and mode.
pub fn comparable(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> BTreeMap<PathBuf, (u32, String)> {
    files
        .iter()
        .map(|(p, (mode, contents))| {
            let text = match p.extension().and_then(|e| e.to_str()) {
                Some("crt" | "key" | "pub" | "pem") => String::new(),
                _ => masked(&String::from_utf8_lossy(contents)),
            };
            (p.clone(), (*mode, text))
        })
        .collect()
}

pub fn objects(cluster: &FakeCluster) -> BTreeMap<String, String> {
    cluster
        .objects()
        .into_iter()
        .map(|(k, v)| {
            (
                format!("{k:?}"),
                masked(&serde_json::to_string_pretty(&v).expect("json")),
            )
        })
        .collect()
}

/// A node whose disk holds `files` (as a run left them) and whose API server holds nothing.
pub fn node_with_files(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> Node {
    let overlay = Arc::new(DryRunFs::new(kubeadm_host::fs::RealFs));
    for (path, (mode, contents)) in files {
        overlay.write(path, contents, *mode).expect("overlay");
    }
    Node {
        overlay,
        cluster: Arc::new(FakeCluster::new()),
    }
}

/// What differs between the files a run left (`got`) and those it should have (`want`), both as
/// [`comparable`] makes them.
pub fn file_problems(
    want: &BTreeMap<PathBuf, (u32, String)>,
    got: &BTreeMap<PathBuf, (u32, String)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, want) in want {
        match got.get(path) {
            None => problems.push(format!("{} missing", path.display())),
            Some(g) if g.0 != want.0 => {
                problems.push(format!("{} mode {:o}, want {:o}", path.display(), g.0, want.0))
            }
            Some(g) if g.1 != want.1 => problems.push(format!("{} differs", path.display())),
            Some(_) => {}
        }
    }
    problems.extend(
        got.keys()
            .filter(|p| !want.contains_key(*p))
            .map(|p| format!("{} left over", p.display())),
    );
    problems
}

/// What differs between the API objects a run left and those it should have, as [`objects`]
/// makes them.
pub fn object_problems(want: &BTreeMap<String, String>, got: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, want) in want {
        match got.get(key) {
            None => problems.push(format!("object {key} missing")),
            Some(g) if g != want => problems.push(format!("object {key} differs:\n{g}\nwant\n{want}")),
            Some(_) => {}
        }
    }
    problems.extend(
        got.keys()
            .filter(|k| !want.contains_key(*k))
            .map(|k| format!("object {k} left over")),
    );
    problems
}

/// Tries crash points `0..points` on two threads (`try_point(k)` says what went wrong at k) and
/// returns the failures, one line per crash point, after printing how many were tried.
pub fn try_each(what: &str, points: usize, try_point: impl Fn(usize) -> Vec<String> + Sync) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= points {
                        break;
                    }
                    let problems = try_point(k);
                    if !problems.is_empty() {
                        failures
                            .lock()
                            .expect("failures")
                            .push(format!("crash point {k}: {}", problems.join("; ")));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("failures");
    failures.sort();
    eprintln!(
        "{what}: {points} crash points tried, {} survived",
        points - failures.len()
    );
    failures
}

/// A whole file system in memory (unlike the dry-run overlay, it lists and removes what runs
/// wrote): files with their modes; a directory exists while a file is below it or it was made.
#[derive(Debug, Default)]
pub struct MemFs {
    files: std::sync::Mutex<BTreeMap<PathBuf, (u32, Vec<u8>)>>,
    dirs: std::sync::Mutex<std::collections::BTreeSet<PathBuf>>,
}

impl MemFs {
    pub fn with_files(files: &BTreeMap<PathBuf, (u32, Vec<u8>)>) -> Arc<MemFs> {
        Arc::new(MemFs {
            files: std::sync::Mutex::new(files.clone()),
            dirs: Default::default(),
        })
    }

    pub fn files(&self) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
        self.files.lock().expect("files").clone()
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.dirs.lock().expect("dirs").contains(path)
            || self
                .files
                .lock()
                .expect("files")
                .keys()
                .any(|f| f != path && f.starts_with(path))
    }
}

impl Fs for MemFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .lock()
            .expect("files")
            .get(path)
            .map(|f| f.1.clone())
            .ok_or_else(|| io::ErrorKind::NotFound.into())
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        self.files
            .lock()
            .expect("files")
            .insert(path.to_path_buf(), (mode, contents.to_vec()));
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.lock().expect("files").contains_key(path) || self.is_dir(path)
    }
    fn create_dir_all(&self, path: &Path, _: u32) -> io::Result<()> {
        self.dirs.lock().expect("dirs").insert(path.to_path_buf());
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        match self.files.lock().expect("files").remove(path) {
            Some(_) => Ok(()),
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        if !self.is_dir(path) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let below = |p: &Path| {
            p.strip_prefix(path)
                .ok()
                .and_then(|rest| rest.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
        };
        let mut names: Vec<String> = self
            .files
            .lock()
            .expect("files")
            .keys()
            .filter_map(|p| below(p))
            .collect();
        names.extend(self.dirs.lock().expect("dirs").iter().filter_map(|p| below(p)));
        names.sort();
        names.dedup();
        names.retain(|n| !n.is_empty());
        Ok(names)
    }
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        self.files
            .lock()
            .expect("files")
            .retain(|p, _| !p.starts_with(path));
        self.dirs.lock().expect("dirs").retain(|p| !p.starts_with(path));
        Ok(())
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if self.exists(path) {
            Ok(path.to_path_buf())
        } else {
            Err(io::ErrorKind::NotFound.into())
        }
    }
    /// As the kernel does: the mount point leaves the mount table (`/proc/mounts`).
    fn unmount(&self, path: &Path) -> io::Result<()> {
        if let Some((_, table)) = self
            .files
            .lock()
            .expect("files")
            .get_mut(Path::new("/proc/mounts"))
        {
            *table = without_mount(table, path);
        }
        Ok(())
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut files = self.files.lock().expect("files");
        let f = files
            .remove(from)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        files.insert(to.to_path_buf(), f);
        Ok(())
    }
}

/// The kubeconfig a joining node's kubelet writes once it has bootstrapped.
pub const KUBELET_CONF: &str = "/etc/kubernetes/kubelet.conf";
/// The kubeconfig a join leaves for the kubelet's TLS bootstrap (it holds the token).
pub const BOOTSTRAP_KUBELET_CONF: &str = "/etc/kubernetes/bootstrap-kubelet.conf";

/// A joining node's kubelet as its service: stopping it and restarting it are operations of the
/// join. A restarted kubelet runs on `kubelet.conf` when there is one; else it bootstraps from
/// `bootstrap-kubelet.conf`, only if that file lets it (see [`bootstrap_credentials`]): it then
/// writes `kubelet.conf` (the server and CA it bootstrapped with, its client certificate) and
/// registers its Node (`node`, not Ready). A kubelet that cannot bootstrap writes nothing and
/// registers nothing: the join waits for it in vain.
pub struct Kubelet {
    pub fs: Arc<MemFs>,
    pub cluster: Arc<FakeCluster>,
    pub crash: Arc<CrashPoint>,
    pub node: &'static str,
}

impl Kubelet {
    /// Whether the kubelet, just started, has a kubeconfig to run on.
    fn bootstrapped(&self) -> bool {
        if self.fs.exists(Path::new(KUBELET_CONF)) {
            return true;
        }
        let Ok(text) = self.fs.read(Path::new(BOOTSTRAP_KUBELET_CONF)) else {
            eprintln!(
                "{}'s kubelet: no {BOOTSTRAP_KUBELET_CONF} to bootstrap with",
                self.node
            );
            return false;
        };
        match bootstrap_credentials(&text, &self.cluster, *NOW) {
            Ok((server, ca)) => {
                // The kubelet is another process: what it writes is not the join's to lose.
                self.fs
                    .write(
                        Path::new(KUBELET_CONF),
                        kubelet_kubeconfig(&server, &ca).as_bytes(),
                        0o600,
                    )
                    .expect("kubelet.conf");
                true
            }
            Err(why) => {
                eprintln!("{}'s kubelet cannot bootstrap: {why}", self.node);
                false
            }
        }
    }
}

/// The kubeconfig the kubelet writes after its TLS bootstrap (as the kubelet writes it).
fn kubelet_kubeconfig(server: &str, ca_data: &str) -> String {
    [
        "apiVersion: v1",
        "clusters:",
        "- cluster:",
        &format!("    certificate-authority-data: {ca_data}"),
        &format!("    server: {server}"),
        "  name: default-cluster",
        "contexts:",
        "- context:",
        "    cluster: default-cluster",
        "    namespace: default",
        "    user: default-auth",
        "  name: default-context",
        "current-context: default-context",
        "kind: Config",
        "preferences: {}",
        "users:",
        "- name: default-auth",
        "  user:",
        "    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem",
        "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem",
        "",
    ]
    .join("\n")
}

/// What a kubelet bootstrapping from `bootstrap-kubelet.conf` (`text`) against `cluster` gets
/// past, as the API server and the kubelet check it: the current context's server and CA are
/// those `cluster-info` publishes (another server is another cluster; another CA fails TLS), and
/// its token is one of a bootstrap-token Secret, with the secret it holds, for authentication,
/// not expired at `now` (else 401). The server and the CA data when it can; why not when not.
pub fn bootstrap_credentials(
    text: &[u8],
    cluster: &FakeCluster,
    now: i64,
) -> Result<(String, String), String> {
    let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
    let doc = kubeadm_yaml::parse_documents(text)
        .map_err(|e| format!("not YAML: {e}"))?
        .into_iter()
        .next()
        .ok_or("empty")?
        .value;
    let config = kubeadm_core::kubeconfig::Config::from_value(&doc);
    let current = config.current_cluster().ok();
    let field = |get: fn(&kubeadm_core::kubeconfig::Cluster) -> &String| {
        current.map(get).filter(|s| !s.is_empty()).cloned()
    };
    let server = field(|c| &c.server).ok_or("no server in the current context's cluster")?;
    let ca = field(|c| &c.certificate_authority_data).ok_or("no CA data in the current context's cluster")?;
    let info = cluster
        .object(&Resource::config_maps(), "kube-public", "cluster-info")
        .ok_or("no cluster-info in the cluster")?;
    let published = kubeadm_yaml::parse_documents(info["data"]["kubeconfig"].as_str().unwrap_or_default())
        .map_err(|e| format!("cluster-info: {e}"))?
        .into_iter()
        .next()
        .ok_or("cluster-info: empty")?
        .value;
    // cluster-info's kubeconfig has one cluster and no context.
    let published = |key: &str| published["clusters"][0]["cluster"][key].as_str();
    if Some(server.as_str()) != published("server") {
        return Err(format!("server {server} is not the cluster's"));
    }
    if Some(ca.as_str()) != published("certificate-authority-data") {
        return Err("the CA is not the cluster's".into());
    }
    let user = doc
        .get("current-context")
        .and_then(Value::as_str)
        .and_then(|current| {
            doc["contexts"]
                .as_array()?
                .iter()
                .find(|c| c["name"] == current)?["context"]["user"]
                .as_str()
        })
        .ok_or("no user in the current context")?;
    let token = doc["users"]
        .as_array()
        .and_then(|users| users.iter().find(|u| u["name"] == user))
        .and_then(|u| u["user"]["token"].as_str())
        .ok_or("no token for the current context's user")?;
    let (id, _) = token.split_once('.').ok_or("not a bootstrap token")?;
    let secret = cluster
        .object(
            &Resource::secrets(),
            "kube-system",
            &kubeadm_core::cluster::bootstrap_token::token_secret_name(id),
        )
        .ok_or_else(|| format!("no Secret for token id {id}"))?;
    let known = kubeadm_core::cluster::bootstrap_token::token_from_secret(&secret)
        .map_err(|e| format!("the token's Secret: {e}"))?;
    if known.token.as_ref().map(ToString::to_string).as_deref() != Some(token) {
        return Err(format!("the secret of token id {id} is not the cluster's"));
    }
    if !known.usages.iter().any(|u| u == "authentication") {
        return Err(format!("token id {id} is not for authentication"));
    }
    if known.expires.is_some_and(|t| t.unix_seconds() <= now) {
        return Err(format!("token id {id} has expired"));
    }
    Ok((server, ca))
}

impl InitSystem for Kubelet {
    fn kind(&self) -> Option<InitSystemKind> {
        Some(InitSystemKind::Systemd)
    }
    fn service_exists(&self, _: &str) -> bool {
        true
    }
    fn service_stop(&self, service: &str) -> Result<(), ServiceError> {
        if self.crash.step() {
            Ok(())
        } else {
            Err(ServiceError {
                command: format!("systemctl stop {service}"),
                reason: "simulated crash".into(),
            })
        }
    }
    fn service_restart(&self, service: &str) -> Result<(), ServiceError> {
        if !self.crash.step() {
            return Err(ServiceError {
                command: format!("systemctl restart {service}"),
                reason: "simulated crash".into(),
            });
        }
        // systemd restarts it either way; one that cannot bootstrap exits on its own.
        if self.bootstrapped() && self.cluster.object(&Resource::nodes(), "", self.node).is_none() {
            self.cluster
                .create(
                    &Resource::nodes(),
                    &json!({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": self.node, "labels": {"kubernetes.io/hostname": self.node}},
                        "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
                )
                .expect("node");
        }
        Ok(())
    }
}

/// `cluster-info` signed for `token` (`id.secret`), as the controller-manager's bootstrap signer
/// does.
pub fn sign_cluster_info(cluster: &FakeCluster, token: &str) {
    let info = cluster
        .object(&Resource::config_maps(), "kube-public", "cluster-info")
        .expect("cluster-info");
    let kubeconfig = info["data"]["kubeconfig"].as_str().expect("kubeconfig");
    let (id, secret) = token.split_once('.').expect("token");
    let jws = kubeadm_core::cluster::cluster_info::detached_jws(kubeconfig, id, secret);
    let mut signed = info.clone();
    signed["data"][format!("jws-kubeconfig-{id}")] = Value::String(jws);
    cluster
        .update(&Resource::config_maps(), &signed)
        .expect("sign cluster-info");
}

/// The etcd cluster behind a crash point: adding and removing a member are operations; once
/// dead, every call fails.
pub struct CrashEtcd(pub Arc<FakeEtcd>, pub Arc<CrashPoint>);

impl CrashEtcd {
    fn dead(&self, call: &str) -> EtcdError {
        EtcdError {
            call: call.into(),
            endpoints: self.0.endpoints(),
            message: "simulated crash".into(),
        }
    }
    fn look(&self, call: &str) -> Result<(), EtcdError> {
        if self.1.dead() {
            Err(self.dead(call))
        } else {
            Ok(())
        }
    }
    fn change(&self, call: &str) -> Result<(), EtcdError> {
        if self.1.step() {
            Ok(())
        } else {
            Err(self.dead(call))
        }
    }
}

impl Etcd for CrashEtcd {
    fn endpoints(&self) -> Vec<String> {
        self.0.endpoints()
    }
    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        self.look("MemberList")?;
        self.0.list_members()
    }
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        self.change("MemberRemove")?;
        self.0.remove_member(id)
    }
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        self.change("MemberAdd")?;
        self.0.add_member(peer_url)
    }
    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        self.look("Status")?;
        self.0.status(endpoint)
    }
}

/// `kubeadm join <endpoint> --token <token> --discovery-token-unsafe-skip-ca-verification
/// --node-name <node>`'s configuration (containerd's socket, a 10 s discovery timeout).
pub fn token_join_config(token: &str, endpoint: &str, node: &str) -> JoinConfiguration {
    let mut cfg = JoinConfiguration::default();
    cfg.discovery.bootstrap_token = Some(BootstrapTokenDiscovery {
        token: token.into(),
        api_server_endpoint: endpoint.into(),
        ca_cert_hashes: vec![],
        unsafe_skip_ca_verification: true,
    });
    cfg.discovery.tls_bootstrap_token = token.into();
    cfg.discovery.timeout = Some(kubeadm_api::duration::Duration::from_nanos(10_000_000_000));
    cfg.node_registration.name = node.into();
    cfg.node_registration.cri_socket = "unix:///var/run/containerd/containerd.sock".into();
    cfg.ca_cert_path = "/etc/kubernetes/pki/ca.crt".into();
    cfg
}

/// A join's context on node `node` (its default route through `ip`): its disk `fs` and the API
/// server `cluster`, both behind `crash`, and the [`Kubelet`] as its service. A worker's: no
/// control-plane context and no etcd (a control-plane join sets them).
pub fn joining_data(
    cfg: JoinConfiguration,
    node: &'static str,
    ip: &str,
    fs: &Arc<MemFs>,
    cluster: &Arc<FakeCluster>,
    crash: &Arc<CrashPoint>,
) -> JoinData {
    let (api, point) = (cluster.clone(), crash.clone());
    JoinData {
        cfg,
        dry_run: false,
        ignore_preflight_errors: Default::default(),
        kubeconfig_dir: "/etc/kubernetes".into(),
        kubelet_dir: "/var/lib/kubelet".into(),
        hostname: node.into(),
        host: kubeadm_api::dynamic::HostFacts {
            hostname: node.into(),
            default_route_ipv4: Some(ip.parse().expect("ip")),
            ..Default::default()
        },
        patches: None,
        runtime: Box::new(kubeadm_host::cri::CriClient::new("unix:///nonexistent.sock").expect("client")),
        connect: Box::new(
            move |_| Ok(Box::new(CrashCluster(api.clone(), point.clone())) as Box<dyn Cluster>),
        ),
        fetch_url: Box::new(|url, _| Err(format!("Get {url:?}: no HTTPS in this test"))),
        tls_bootstrap: None,
        tls_bootstrap_timeout: kubeadm_phases::join::kubelet_start::TLS_BOOTSTRAP_TIMEOUT,
        init_cfg: None,
        control_plane_context: Box::new(|_| Err("a worker has no control-plane context".into())),
        control_plane: None,
        effects: Effects {
            init_system: Arc::new(Kubelet {
                fs: fs.clone(),
                cluster: cluster.clone(),
                crash: crash.clone(),
                node,
            }),
            etcd: Arc::new(|_, _| Err::<Box<dyn Etcd>, _>("a worker has no etcd".into())),
            ..effects(
                Arc::new(CrashFs(fs.clone(), crash.clone())),
                Arc::new(Shared(Arc::new(Captured::default()))),
                *NOW,
            )
        },
    }
}

/// The join workflow, preflight skipped (as kind and Cluster API's retries run it).
pub fn run_join(data: &mut JoinData) -> Result<(), String> {
    kubeadm_phases::join::workflow()
        .run(data, &[], &["preflight".to_string()])
        .map_err(|e| format!("{e:#}"))
}

/// Node `name` as a run left it, without what the fake server sets (`Null` when there is none).
pub fn node_object(cluster: &FakeCluster, name: &str) -> Value {
    let mut node = cluster
        .object(&Resource::nodes(), "", name)
        .unwrap_or(Value::Null);
    if let Some(m) = node.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    node
}

/// A `/proc/mounts` text without its last mount on `path` (the one on top).
pub fn without_mount(table: &[u8], path: &Path) -> Vec<u8> {
    let text = String::from_utf8_lossy(table);
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let on_path = |l: &&str| {
        l.split(' ')
            .nth(1)
            .is_some_and(|m| Path::new(&m.replace("\\040", " ")) == path)
    };
    if let Some(i) = lines.iter().rposition(on_path) {
        lines.remove(i);
    }
    lines.concat().into_bytes()
}
