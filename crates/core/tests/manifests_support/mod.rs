//! Shared by the `manifests_*`, `kubelet_*` and `patches_*` differential tests: runs upstream
//! kubeadm chrooted into a temporary root (`--rootfs`) and loads the same configuration with our api
//! crate, so each test can compare what both produce, byte for byte.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kubeadm_api::componentconfig::ComponentConfigs;
use kubeadm_api::componentconfig::kubelet::KubeletConfiguration;
use kubeadm_api::defaults::{default_cluster_configuration, default_init_configuration};
use kubeadm_api::dynamic::{DynamicInputs, HostFacts, ResolvedCluster, default_init_dynamic};
use kubeadm_api::v1beta3::{BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_testkit::oracle;
use serde_json::Value;

/// Upstream's `--rootfs` chroots, which needs root: fail loudly rather than skip.
pub fn require_root() {
    let out = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("run id -u");
    let uid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        uid, "0",
        "these differential tests run upstream kubeadm with --rootfs (chroot) and must run as root"
    );
}

/// A temporary root holding `/cfg.yaml` (and optionally `/patches`).
pub struct Root {
    pub dir: tempfile::TempDir,
}

impl Root {
    /// A root with `config` (a list of documents) written as `/cfg.yaml`, one JSON document per
    /// YAML document (JSON is YAML, so upstream reads it as is).
    pub fn new(config: &[Value]) -> Root {
        let dir = tempfile::tempdir().expect("tempdir");
        let text: Vec<String> = config
            .iter()
            .map(|d| serde_json::to_string_pretty(d).expect("json"))
            .collect();
        std::fs::write(dir.path().join("cfg.yaml"), text.join("\n---\n") + "\n").expect("write cfg");
        Root { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file under the root (creating parent directories).
    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    /// Creates a directory under the root.
    pub fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path().join(rel)).expect("mkdir");
    }

    /// Runs upstream `kubeadm --rootfs <root> <args>` with `env` added to a clean environment.
    pub fn upstream(&self, args: &[&str], env: &[(&str, &str)]) -> oracle::Run {
        let bin = oracle::upstream_kubeadm();
        let root = self.path().to_str().expect("utf-8 path").to_string();
        let mut full = vec!["--rootfs", root.as_str()];
        full.extend_from_slice(args);
        oracle::run(&bin, &full, self.path(), env)
    }

    /// Reads a file under the root.
    pub fn read(&self, rel: &str) -> String {
        let p: PathBuf = self.path().join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }
}

/// The configuration as our api crate loads it: decoded, statically and dynamically defaulted.
pub struct Loaded {
    pub init: InitConfiguration,
    pub cluster: ClusterConfiguration,
    pub kubelet: KubeletConfiguration,
    pub resolved: ResolvedCluster,
    pub host: HostFacts,
}

/// This machine's hostname, as upstream's `os.Hostname()` sees it (chroot does not change it).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("hostname")
        .trim()
        .to_string()
}

/// Decodes and defaults `docs` as upstream does for `init` (the configs set the node name and
/// advertise address explicitly, so the host's routes do not matter).
pub fn load(docs: &[Value]) -> Loaded {
    let mut init = InitConfiguration::default();
    let mut cluster = ClusterConfiguration::default();
    let mut kubelet = None;
    for d in docs {
        match d["kind"].as_str() {
            Some("InitConfiguration") => init = serde_json::from_value(d.clone()).expect("init"),
            Some("ClusterConfiguration") => cluster = serde_json::from_value(d.clone()).expect("cluster"),
            Some("KubeletConfiguration") => {
                kubelet = Some(serde_json::from_value(d.clone()).expect("kubelet"))
            }
            other => panic!("unexpected kind {other:?}"),
        }
    }
    default_init_configuration(&mut init);
    default_cluster_configuration(&mut cluster);
    let host = HostFacts {
        hostname: hostname(),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let fetch = kubeadm_api::version::offline;
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &fetch,
    };
    let mut components = ComponentConfigs {
        kubelet,
        kube_proxy: None,
    };
    let resolved = default_init_dynamic(
        &mut init,
        &mut cluster,
        &mut components,
        &mut inputs,
        &mut Vec::new(),
    )
    .expect("dynamic defaults");
    let kubelet = components.kubelet.expect("kubelet configuration defaulted");
    Loaded {
        init,
        cluster,
        kubelet,
        resolved,
        host,
    }
}

/// Asserts two texts are equal, showing a line diff when not.
pub fn assert_same(case: &str, file: &str, upstream: &str, ours: &str) {
    assert!(
        upstream == ours,
        "{case}: {file} differs from upstream (- upstream, + ours):\n{}",
        oracle::diff(upstream, ours)
    );
}
