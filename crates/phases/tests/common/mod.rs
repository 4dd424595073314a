//! What the cluster-phase tests share: an output capture, the init context the cluster phases run
//! with, the golden default config loaded with fixed host facts, and an admin.conf.

#![allow(dead_code)] // each test file uses its own part

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_effects::Effects;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_phases::{ClusterAccess, InitData};

/// A file of the cluster golden set (made from the upstream binary).
pub fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../core/tests/golden/cluster/{name}"))
}

/// `yaml` loaded as upstream loads it on a host named node1 with 192.0.2.2 on its default route,
/// the token generator giving `abcdef.0123456789abcdef`.
pub fn load_config(yaml: &str) -> InitConfig {
    let host = HostFacts {
        hostname: "node1".to_string(),
        default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2))),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config("default.yaml", yaml, &mut inputs).expect("config")
}

/// The admin kubeconfig path the phases read.
pub fn admin_path() -> &'static Path {
    Path::new("/etc/kubernetes/admin.conf")
}

#[derive(Debug, Default)]
pub struct Captured(pub Mutex<String>);

impl Reporter for Captured {
    fn out(&self, text: &str) {
        self.0.lock().expect("out").push_str(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

/// Forwards to the shared capture (InitData owns a boxed reporter, the dry-run client an Arc).
pub struct Shared(pub Arc<Captured>);

impl Reporter for Shared {
    fn out(&self, text: &str) {
        self.0.out(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

/// An admin.conf naming `server` with the CA upstream generated.
pub fn admin_conf(server: &str, ca_b64: &str) -> String {
    format!(
        "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca_b64}
    server: {server}
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubernetes-admin
  name: kubernetes-admin@kubernetes
current-context: kubernetes-admin@kubernetes
kind: Config
users:
- name: kubernetes-admin
  user: {{}}
"
    )
}

/// The effects of a phase test: `fs` and `reporter` as given, the dry-run decorator over the host's
/// init system, a fake host, a CRI endpoint with nothing behind it, no etcd, real key generation,
/// a clock stopped at `now` and a random source always giving 42.
pub fn effects(fs: Arc<dyn Fs>, reporter: Arc<dyn Reporter>, now: i64) -> Effects {
    Effects {
        fs,
        init_system: Arc::new(kubeadm_effects::init_system::DryRunInitSystem::new(
            kubeadm_host::init_system::HostInitSystem::detect(),
        )),
        host_probe: Arc::new(kubeadm_testkit::fakes::FakeHost::default()),
        cri: Arc::new(|endpoint| {
            Box::new(kubeadm_host::cri::CriClient::new(endpoint).expect("endpoint"))
                as Box<dyn kubeadm_effects::cri::Runtime>
        }),
        etcd: Arc::new(|_, _| Err("no etcd in this test".into())),
        keygen: Arc::new(kubeadm_host::keygen::AwsLcKeyGen),
        clock: Arc::new(move || now),
        random: || 42,
        reporter,
    }
}

/// The init context the cluster phases run with: no kubelet files, no CRI, the given client.
pub fn context(
    cfg: InitConfig,
    fs: Box<dyn Fs>,
    out: Arc<Captured>,
    cluster: ClusterAccess,
    now: i64,
    dry_run: bool,
) -> InitData {
    InitData {
        cfg,
        dry_run,
        ignore_preflight_errors: Default::default(),
        upload_certs: false,
        skip_token_print: false,
        skip_certificate_key_print: false,
        manifest_dir: PathBuf::from("/etc/kubernetes/manifests"),
        kubelet_dir: PathBuf::from("/nonexistent/kubelet"),
        hostname: "node1".into(),
        runtime: Box::new(
            kubeadm_host::cri::CriClient::new("unix:///nonexistent/cri.sock").expect("endpoint"),
        ),
        kubeconfig_dir: PathBuf::from("/etc/kubernetes"),
        patches: None,
        manifest_facts: Default::default(),
        keys: Default::default(),
        now,
        // The control-plane phase ran earlier in upstream's run: its authorization modes are uploaded.
        planned: ["control-plane/apiserver".to_string()].into_iter().collect(),
        external_ca: false,
        period_checked: Default::default(),
        cluster,
        effects: effects(Arc::from(fs), Arc::new(Shared(out)), now),
    }
}

/// The host's file system as a chroot into `root` sees it: an absolute path outside `root` is
/// taken below it (`/etc/passwd` is `<root>/etc/passwd`), a path already below `root` as it is.
/// For the phases that reach fixed host paths (the account files, `/etc/kubernetes/*.conf`).
pub struct RootedFs(pub PathBuf);

impl RootedFs {
    fn map(&self, p: &Path) -> PathBuf {
        if p.starts_with(&self.0) {
            p.to_path_buf()
        } else {
            self.0.join(p.strip_prefix("/").unwrap_or(p))
        }
    }
}

impl Fs for RootedFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        kubeadm_host::fs::RealFs.read(&self.map(path))
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.write(&self.map(path), contents, mode)
    }
    fn exists(&self, path: &Path) -> bool {
        kubeadm_host::fs::RealFs.exists(&self.map(path))
    }
    fn create_dir_all(&self, path: &Path, mode: u32) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.create_dir_all(&self.map(path), mode)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.remove_file(&self.map(path))
    }
    fn list_dir(&self, path: &Path) -> std::io::Result<Vec<String>> {
        kubeadm_host::fs::RealFs.list_dir(&self.map(path))
    }
    fn remove_all(&self, path: &Path) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.remove_all(&self.map(path))
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.rename(&self.map(from), &self.map(to))
    }
    fn copy_dir(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.copy_dir(&self.map(from), &self.map(to))
    }
    fn remove_stale_temp_files(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        kubeadm_host::fs::RealFs.remove_stale_temp_files(&self.map(dir))
    }
    fn lock(&self, path: &Path) -> std::io::Result<kubeadm_effects::fs::FileLock> {
        kubeadm_host::fs::RealFs.lock(&self.map(path))
    }
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.chown(&self.map(path), uid, gid)
    }
    fn chmod(&self, path: &Path, mode: u32) -> std::io::Result<()> {
        kubeadm_host::fs::RealFs.chmod(&self.map(path), mode)
    }
    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), kubeadm_effects::fs::PathIoError> {
        kubeadm_host::fs::RealFs.chown_tree(&self.map(path), uid, gid)
    }
}
