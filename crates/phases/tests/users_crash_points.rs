//! The `RootlessControlPlane` step of the control-plane manifests (users and groups added to
//! `/etc/passwd` and `/etc/group`, the owners and modes of the files each component reads
//! changed) stopped dead at every file change in turn, then run again: the run after it must finish
//! and leave what an uninterrupted run leaves: the same account files, owners and modes. Each
//! account file is replaced whole (never torn), `/etc/group` before `/etc/passwd`, so a kill
//! between the two leaves groups that the next run finds and reuses.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use kubeadm_core::manifests::{self, ManifestHostFacts};
use kubeadm_effects::fs::{FileLock, Fs, PathIoError};
use kubeadm_phases::users::{AccountFiles, run_as_non_root};

mod common;
mod crash;
use common::{Captured, load_config};
use crash::{CrashFs, CrashPoint, try_each};

/// A file: owner, group, mode, content.
type File = (u32, u32, u32, Vec<u8>);

/// Files in memory with their owners.
#[derive(Default)]
struct OwnedFs(Mutex<BTreeMap<PathBuf, File>>);

impl OwnedFs {
    fn with(files: &BTreeMap<PathBuf, File>) -> Arc<OwnedFs> {
        Arc::new(OwnedFs(Mutex::new(files.clone())))
    }
    fn files(&self) -> BTreeMap<PathBuf, File> {
        self.0.lock().expect("files").clone()
    }
    fn update(&self, path: &Path, f: impl FnOnce(&mut File)) -> io::Result<()> {
        let mut files = self.0.lock().expect("files");
        let found = files.get_mut(path).ok_or(io::ErrorKind::NotFound)?;
        f(found);
        Ok(())
    }
}

impl Fs for OwnedFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let files = self.0.lock().expect("files");
        files
            .get(path)
            .map(|f| f.3.clone())
            .ok_or(io::ErrorKind::NotFound.into())
    }
    /// Replaces the file whole, keeping its owner (as the host's write does).
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        let mut files = self.0.lock().expect("files");
        let (uid, gid) = files.get(path).map_or((0, 0), |f| (f.0, f.1));
        files.insert(path.to_path_buf(), (uid, gid, mode, contents.to_vec()));
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.lock().expect("files").keys().any(|p| p.starts_with(path))
    }
    fn create_dir_all(&self, _: &Path, _: u32) -> io::Result<()> {
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.lock().expect("files").remove(path);
        Ok(())
    }
    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        let mode = self
            .0
            .lock()
            .expect("files")
            .get(path)
            .map(|f| f.2)
            .ok_or(io::ErrorKind::NotFound)?;
        Ok(FileLock::new(mode, Box::new(())))
    }
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> io::Result<()> {
        self.update(path, |f| (f.0, f.1) = (uid, gid))
    }
    fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        self.update(path, |f| f.2 = mode)
    }
    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), PathIoError> {
        for (p, f) in self.0.lock().expect("files").iter_mut() {
            if p.starts_with(path) {
                (f.0, f.1) = (uid, gid);
            }
        }
        Ok(())
    }
}

/// A node after `init phase certs` and `kubeconfig`: the files the components read, root's.
fn node() -> BTreeMap<PathBuf, File> {
    let mut files = BTreeMap::new();
    let mut put = |p: &str, mode: u32, text: &str| {
        files.insert(PathBuf::from(p), (0, 0, mode, text.as_bytes().to_vec()));
    };
    put("/etc/passwd", 0o644, "root:x:0:0:root:/root:/bin/bash\n");
    put("/etc/group", 0o644, "root:x:0:\n");
    for key in [
        "sa.pub",
        "sa.key",
        "apiserver.key",
        "apiserver-kubelet-client.key",
        "front-proxy-client.key",
        "apiserver-etcd-client.key",
        "ca.key",
        "etcd/server.key",
        "etcd/peer.key",
    ] {
        put(&format!("/etc/kubernetes/pki/{key}"), 0o600, "key");
    }
    put("/etc/kubernetes/controller-manager.conf", 0o600, "kubeconfig");
    put("/etc/kubernetes/scheduler.conf", 0o600, "kubeconfig");
    put("/var/lib/etcd/member/snap/db", 0o600, "data");
    files
}

/// The step for the four components, in init's order, until `crash` kills it.
fn run(fs: &Arc<OwnedFs>, crash: &Arc<CrashPoint>) -> Result<(), String> {
    let cfg = load_config(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nfeatureGates:\n  RootlessControlPlane: true\n",
    );
    let fs = CrashFs(fs.clone(), crash.clone());
    let out = Captured::default();
    let mut pods = manifests::control_plane_pods(
        &cfg.cluster,
        &cfg.init.local_api_endpoint,
        &cfg.resolved,
        &ManifestHostFacts::default(),
    );
    pods.push(
        manifests::etcd_pod(
            &cfg.cluster,
            &cfg.init.local_api_endpoint,
            "node1",
            &[],
            &cfg.resolved,
        )
        .map_err(|e| e.to_string())?,
    );
    for pod in &mut pods {
        run_as_non_root(&fs, &out, &AccountFiles::host(), &cfg.cluster, false, pod)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn the_rootless_step_killed_at_any_point_finishes_when_run_again() {
    let reference = OwnedFs::with(&node());
    let whole = CrashPoint::new(None);
    run(&reference, &whole).expect("uninterrupted");
    let points = whole.count.load(Ordering::SeqCst);
    let want = reference.files();
    let passwd = String::from_utf8_lossy(&want[Path::new("/etc/passwd")].3).into_owned();
    assert!(passwd.contains("kubeadm-etcd:x:"), "{passwd}");
    assert_eq!(want[Path::new("/etc/kubernetes/pki/sa.key")].1, 104);

    let failures = try_each("the rootless step", points, |k| {
        let fs = OwnedFs::with(&node());
        let mut problems = Vec::new();
        if run(&fs, &CrashPoint::new(Some(k))).is_ok() {
            problems.push("the killed run succeeded".to_string());
        }
        // Whatever the kill left, each account file is whole: either as it was or as written.
        for f in ["/etc/passwd", "/etc/group"] {
            let text = String::from_utf8_lossy(&fs.files()[Path::new(f)].3).into_owned();
            if !text.ends_with('\n') {
                problems.push(format!("{f} torn: {text:?}"));
            }
        }
        if let Err(e) = run(&fs, &CrashPoint::new(None)) {
            problems.push(format!("the run after it failed: {e}"));
            return problems;
        }
        let got = fs.files();
        for (path, file) in &want {
            if got.get(path) != Some(file) {
                problems.push(format!("{}: {:?} vs {file:?}", path.display(), got.get(path)));
            }
        }
        problems
    });
    assert!(points >= 20, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
