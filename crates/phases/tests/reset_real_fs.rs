//! `kubeadm reset` on the real file system (`kubeadm_host::fs::RealFs`) in a temporary tree:
//! what stays mounted under the kubelet's directory is never deleted (real tmpfs and bind mounts,
//! nested, one with a space in its name, one kept busy, in a private mount namespace), and the
//! temporary files a killed write left in `/etc/kubernetes` are removed.
//!
//! The mount test needs root: run as root, it re-runs itself in a child made by util-linux's
//! `unshare --mount --propagation private`, so its mounts never reach the host's namespace;
//! otherwise it says it is skipped.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use kubeadm_effects::Effects;
use kubeadm_effects::cri::{CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_host::fs::RealFs;
use kubeadm_phases::ResetData;
use kubeadm_phases::reset::finish::clean_stateful_dirs;
use kubeadm_testkit::fakes::FakeHost;

/// Set in the child that runs the mount test's body inside its own mount namespace.
const CHILD: &str = "KUBEADM_RS_TEST_IN_MOUNT_NAMESPACE";

struct Kubelet;

impl InitSystem for Kubelet {
    fn kind(&self) -> Option<InitSystemKind> {
        Some(InitSystemKind::Systemd)
    }
    fn service_exists(&self, _: &str) -> bool {
        true
    }
    fn service_stop(&self, _: &str) -> Result<(), ServiceError> {
        Ok(())
    }
    fn service_restart(&self, _: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}

/// A runtime without pods.
#[derive(Debug)]
struct NoPods;

impl Runtime for NoPods {
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
        Ok(Vec::new())
    }
    fn stop_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        Ok(())
    }
    fn remove_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        Ok(())
    }
}

/// Standard output, and the warnings and `-v=1` lines on the side.
#[derive(Default)]
struct Captured {
    out: Mutex<String>,
    warnings: Mutex<Vec<String>>,
    info: Mutex<Vec<String>>,
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
        1
    }
    fn log(&self, severity: Severity, _: u8, _: &str, message: &str) {
        let list = if severity == Severity::Warning {
            &self.0.warnings
        } else {
            &self.0.info
        };
        list.lock().expect("log").push(message.to_string());
    }
}

/// The reset context for a node whose `/etc/kubernetes` and `/var/lib/kubelet` are below `root`.
fn data(root: &Path, mounts_file: &Path, captured: &Arc<Captured>) -> ResetData {
    ResetData {
        cfg: None,
        dry_run: false,
        force: true,
        ignore_preflight_errors: Default::default(),
        cert_dir: root.join("etc/kubernetes/pki"),
        kubernetes_dir: root.join("etc/kubernetes"),
        kubelet_dir: root.join("var/lib/kubelet"),
        mounts_file: mounts_file.to_path_buf(),
        input: Box::new(io::Cursor::new(Vec::new())),
        dirs_to_clean: Vec::new(),
        stateful_dirs_after: true,
        runtime: Box::new(NoPods),
        cluster: None,
        effects: Effects {
            init_system: Arc::new(Kubelet),
            etcd: Arc::new(|_, _| Err("no etcd in this test".into())),
            fs: Arc::new(RealFs),
            host_probe: Arc::new(FakeHost::default()),
            cri: Arc::new(|endpoint| panic!("reset opened a second runtime at {endpoint}")),
            keygen: Arc::new(kubeadm_host::keygen::AwsLcKeyGen),
            clock: Arc::new(|| 0),
            random: || 42,
            reporter: Arc::new(Shared(captured.clone())),
        },
    }
}

/// The whole `kubeadm reset`: the phases, then the stateful directories.
fn reset(data: &mut ResetData) {
    kubeadm_phases::reset::workflow()
        .run(data, &[], &[])
        .expect("reset");
    clean_stateful_dirs(data);
}

/// The temporary file a write by process `pid` makes for `name` (the real file system's).
fn temp_file_name(name: &str, pid: u32) -> String {
    format!(".{name}.tmp-{pid}")
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("true");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

#[test]
fn reset_removes_the_temp_files_a_killed_write_left() {
    let root = tempfile::tempdir().expect("tempdir");
    let k8s = root.path().join("etc/kubernetes");
    fs::create_dir_all(k8s.join("tmp")).expect("mkdir");
    let dead = dead_pid();
    let mut live = Command::new("sleep").arg("60").spawn().expect("sleep");
    let stale = [
        k8s.join(temp_file_name("admin.conf", dead)),
        k8s.join("tmp").join(temp_file_name("kubeadm-config.yaml", dead)),
    ];
    let in_use = k8s.join(temp_file_name("super-admin.conf", live.id()));
    for f in stale.iter().chain([&in_use]) {
        fs::write(f, b"client-key-data: secret").expect("write");
    }
    let captured = Arc::new(Captured::default());
    let mut data = data(root.path(), &root.path().join("mounts"), &captured);
    reset(&mut data);
    let left_stale: Vec<&PathBuf> = stale.iter().filter(|f| f.exists()).collect();
    let in_use_kept = in_use.exists();
    let _ = live.kill();
    let _ = live.wait();
    assert!(left_stale.is_empty(), "left: {left_stale:?}");
    assert!(in_use_kept, "a running write's temp file is kept");
    // Output unchanged: said at -v=1 only.
    let warnings = captured.warnings.lock().expect("w").clone();
    assert!(!warnings.iter().any(|w| w.contains("tmp-")), "{warnings:#?}");
    let info = captured.info.lock().expect("info").clone();
    assert!(
        info.iter().any(|l| l.contains(&stale[0].display().to_string())),
        "{info:#?}"
    );
}

/// Whether this process runs as root (effective user id 0).
fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mount_tmpfs(at: &Path) {
    fs::create_dir_all(at).expect("mkdir");
    run(Command::new("mount").args(["-t", "tmpfs", "tmpfs"]).arg(at));
}

fn bind(from: &Path, at: &Path) {
    fs::create_dir_all(at).expect("mkdir");
    run(Command::new("mount").arg("--bind").arg(from).arg(at));
}

/// The mount points strictly below `dir`, deepest first (read here on their own, not with the
/// code under test): the fifth field of each `/proc/self/mountinfo` line, `\040` a space.
fn mounted_below(dir: &Path) -> Vec<PathBuf> {
    let table = fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let mut below: Vec<PathBuf> = table
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(m.replace("\\040", " ")))
        .filter(|m| m != dir && m.starts_with(dir))
        .collect();
    below.sort_by_key(|m| std::cmp::Reverse(m.components().count()));
    below
}

#[test]
fn reset_never_deletes_through_what_stays_mounted() {
    if std::env::var_os(CHILD).is_some() {
        return in_mount_namespace();
    }
    if !is_root() {
        eprintln!(
            "SKIPPED reset_never_deletes_through_what_stays_mounted: mounting needs root (run the tests as root to include it)"
        );
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private"])
        .arg(exe)
        .args([
            "--exact",
            "reset_never_deletes_through_what_stays_mounted",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("unshare (util-linux)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "in the mount namespace:\n{text}");
    assert!(text.contains("1 passed"), "the child ran nothing:\n{text}");
}

/// The body, in a private mount namespace.
fn in_mount_namespace() {
    let tmpdir = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmpdir.path()).expect("real path");
    // Dropped before the tree (and after the files held open below): nothing stays mounted in it,
    // even when an assertion fails.
    let _unmount = UnmountBelow(root.clone());
    let kubelet = root.join("var/lib/kubelet");
    let pods = kubelet.join("pods");
    fs::create_dir_all(root.join("etc/kubernetes/manifests")).expect("mkdir");
    fs::create_dir_all(&pods).expect("mkdir");
    fs::write(kubelet.join("config.yaml"), b"kind: KubeletConfiguration").expect("write");

    // Storage outside the kubelet's directory, bind-mounted into pods as NFS or CSI would be.
    let nfs = root.join("srv/nfs-export");
    let sub = root.join("srv/subpath-source");
    for d in [&nfs, &sub] {
        fs::create_dir_all(d).expect("mkdir");
        fs::write(d.join("data"), b"on shared storage").expect("write");
    }
    // 1. A pod's emptyDir on tmpfs: unmounts.
    let empty_dir = pods.join("p1/volumes/kubernetes.io~empty-dir/cache");
    mount_tmpfs(&empty_dir);
    fs::write(empty_dir.join("f"), b"x").expect("write");
    // 2. An NFS share (a bind mount here, on the same device as the kubelet's directory), its name
    //    with a space, kept busy by an open file: umount(2) fails with EBUSY.
    let share = pods.join("p2/volumes/kubernetes.io~nfs/my share");
    bind(&nfs, &share);
    let busy = fs::File::open(share.join("data")).expect("open");
    // 3. A volume on tmpfs with a subPath bind mount inside it: parent first fails (EBUSY).
    let vol = pods.join("p3/volumes/kubernetes.io~empty-dir/vol");
    mount_tmpfs(&vol);
    bind(&sub, &vol.join("sub"));
    // 4. A busy tmpfs (another device), its name with a space too.
    let tmp = pods.join("p4/volumes/kubernetes.io~empty-dir/tmp vol");
    mount_tmpfs(&tmp);
    fs::write(tmp.join("data"), b"busy").expect("write");
    let busy_tmp = fs::File::open(tmp.join("data")).expect("open");
    assert_eq!(mounted_below(&kubelet).len(), 5);

    let captured = Arc::new(Captured::default());
    let mut data = data(&root, Path::new("/proc/self/mountinfo"), &captured);
    reset(&mut data);

    // The busy mounts are left with what they hold.
    assert_eq!(
        fs::read(nfs.join("data")).expect("NFS data"),
        b"on shared storage"
    );
    assert_eq!(
        fs::read(share.join("data")).expect("through the mount"),
        b"on shared storage"
    );
    assert_eq!(fs::read(tmp.join("data")).expect("tmpfs data"), b"busy");
    assert_eq!(
        fs::read(sub.join("data")).expect("subPath source"),
        b"on shared storage"
    );
    // Everything else is unmounted (the subPath mount first, then its volume).
    let mut left = mounted_below(&kubelet);
    left.sort();
    assert_eq!(left, [share.clone(), tmp.clone()]);
    // Around them, the kubelet's directory is emptied.
    let mut rest: Vec<String> = fs::read_dir(&pods)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    rest.sort();
    assert_eq!(rest, ["p2", "p4"]);
    assert!(!kubelet.join("config.yaml").exists());
    assert!(!pods.join("p3").exists() && !pods.join("p1").exists());
    // Said, with the reason, in the warning style.
    let warnings = captured.warnings.lock().expect("w").clone();
    for path in [&share, &tmp] {
        assert!(
            warnings.contains(&format!(
                "[reset] Failed to unmount mounted directory in {}/: {}",
                kubelet.display(),
                path.display()
            )),
            "{warnings:#?}"
        );
        assert!(
            warnings.contains(&format!(
                "[reset] Not deleting \"{}\" or anything in it: it is still a mount point",
                path.display()
            )),
            "{warnings:#?}"
        );
    }
    // Nothing else is said about the pods.
    let about_pods = warnings
        .iter()
        .filter(|w| w.contains(&pods.display().to_string()))
        .count();
    assert_eq!(about_pods, 4, "{warnings:#?}");

    // The real file system's own guard: a tree removal does not cross into another device.
    let err = RealFs
        .remove_all(&pods.join("p4"))
        .expect_err("on another device");
    assert_eq!(
        err.to_string(),
        format!("{} left: on another file system (still mounted)", tmp.display())
    );
    assert_eq!(fs::read(tmp.join("data")).expect("tmpfs data"), b"busy");
    drop((busy, busy_tmp));
}

/// Unmounts everything below its directory when dropped, deepest first.
struct UnmountBelow(PathBuf);

impl Drop for UnmountBelow {
    fn drop(&mut self) {
        for m in mounted_below(&self.0) {
            let _ = Command::new("umount").arg(&m).status();
        }
    }
}
