//! The host paths mounted into the control-plane pods (upstream `controlplane/volumes.go`):
//! certificates, the system CA bundles that exist on the host, kubeconfigs, the flexvolume plugin
//! directory, the external etcd certificate directories, and the user's extra volumes. Volumes are
//! keyed by name per component, so a later volume of the same name replaces an earlier one.

use std::collections::BTreeMap;

use kubeadm_api::v1beta3::{ClusterConfiguration, ExternalEtcd};
use serde_json::Value;

use super::Component;
use super::args::{dir, join};
use super::pod::HostPathMount;

/// Where the system CA certificates live on every distribution.
const CA_CERTS_PATH: &str = "/etc/ssl/certs";
/// CA bundle directories some distributions have; mounted only when they exist on the host.
pub const CA_CERTS_EXTRA_PATHS: [&str; 4] = [
    "/etc/pki",
    "/usr/share/ca-certificates",
    "/usr/local/share/ca-certificates",
    "/etc/ca-certificates",
];
const DEFAULT_FLEXVOLUME_DIR: &str = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec";
const DIR_OR_CREATE: &str = "DirectoryOrCreate";
const FILE_OR_CREATE: &str = "FileOrCreate";

/// One component's volumes and mounts, each keyed by volume name.
#[derive(Debug, Default)]
pub(crate) struct ComponentMounts {
    pub(crate) volumes: BTreeMap<String, Value>,
    pub(crate) mounts: BTreeMap<String, Value>,
}

impl ComponentMounts {
    fn add(&mut self, m: &HostPathMount) {
        self.volumes.insert(m.name.clone(), m.volume());
        self.mounts.insert(m.name.clone(), m.volume_mount());
    }
}

/// The mounts of `component`; `existing_ca_dirs` lists which of [`CA_CERTS_EXTRA_PATHS`] exist.
pub(crate) fn mounts_for(
    component: Component,
    cfg: &ClusterConfiguration,
    existing_ca_dirs: &[String],
) -> ComponentMounts {
    let mut out = ComponentMounts::default();
    let certs = &cfg.certificates_dir;
    let ca_extra = || {
        CA_CERTS_EXTRA_PATHS
            .iter()
            .filter(|p| existing_ca_dirs.iter().any(|e| e == *p))
            .map(|p| HostPathMount::new(&p.replace('/', "-")[1..], p, p, true, DIR_OR_CREATE))
    };
    let extra = match component {
        Component::ApiServer => {
            out.add(&HostPathMount::new(
                "k8s-certs",
                certs,
                certs,
                true,
                DIR_OR_CREATE,
            ));
            out.add(&HostPathMount::new(
                "ca-certs",
                CA_CERTS_PATH,
                CA_CERTS_PATH,
                true,
                DIR_OR_CREATE,
            ));
            if let Some(ext) = &cfg.etcd.external {
                for m in etcd_cert_mounts(ext, certs) {
                    out.add(&m);
                }
            }
            ca_extra().for_each(|m| out.add(&m));
            &cfg.api_server.extra_volumes
        }
        Component::ControllerManager => {
            out.add(&HostPathMount::new(
                "k8s-certs",
                certs,
                certs,
                true,
                DIR_OR_CREATE,
            ));
            out.add(&HostPathMount::new(
                "ca-certs",
                CA_CERTS_PATH,
                CA_CERTS_PATH,
                true,
                DIR_OR_CREATE,
            ));
            let kubeconfig = "/etc/kubernetes/controller-manager.conf";
            out.add(&HostPathMount::new(
                "kubeconfig",
                kubeconfig,
                kubeconfig,
                true,
                FILE_OR_CREATE,
            ));
            let flex = cfg
                .controller_manager
                .extra_args
                .get("flex-volume-plugin-dir")
                .map_or(DEFAULT_FLEXVOLUME_DIR, String::as_str);
            out.add(&HostPathMount::new(
                "flexvolume-dir",
                flex,
                flex,
                false,
                DIR_OR_CREATE,
            ));
            ca_extra().for_each(|m| out.add(&m));
            &cfg.controller_manager.extra_volumes
        }
        Component::Scheduler => {
            let kubeconfig = "/etc/kubernetes/scheduler.conf";
            out.add(&HostPathMount::new(
                "kubeconfig",
                kubeconfig,
                kubeconfig,
                true,
                FILE_OR_CREATE,
            ));
            &cfg.scheduler.extra_volumes
        }
    };
    for v in extra {
        out.add(&HostPathMount::new(
            &v.name,
            &v.host_path,
            &v.mount_path,
            v.read_only,
            &v.path_type,
        ));
    }
    out
}

/// The directories of the external etcd CA, certificate and key that are not already mounted
/// (under the system CA paths or the certificates directory), nested ones folded into their parent,
/// named `etcd-certs-<i>` in sorted order.
fn etcd_cert_mounts(ext: &ExternalEtcd, certificates_dir: &str) -> Vec<HostPathMount> {
    let mut dirs: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for path in [&ext.ca_file, &ext.cert_file, &ext.key_file] {
        let d = dir(path);
        let covered = CA_CERTS_EXTRA_PATHS.iter().any(|p| d.starts_with(p))
            || d.starts_with(CA_CERTS_PATH)
            || d.starts_with(certificates_dir);
        if d == "." || covered {
            continue;
        }
        // Upstream compares by plain string prefix (so `/etc/a` covers `/etc/ab`); kept as is.
        let mut already = false;
        for existing in dirs.clone() {
            if existing.starts_with(&d) {
                dirs.remove(&existing);
            } else if d.starts_with(&existing) {
                already = true;
            }
        }
        if !already {
            dirs.insert(d);
        }
    }
    dirs.iter()
        .enumerate()
        .map(|(i, d)| HostPathMount::new(&format!("etcd-certs-{i}"), d, d, true, DIR_OR_CREATE))
        .collect()
}

/// The kubeconfig file of a component, as upstream joins it.
pub(crate) fn kubeconfig_path(name: &str) -> String {
    join("/etc/kubernetes", name)
}
