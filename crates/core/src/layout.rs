//! Where kubeadm keeps things on a host (upstream's `kubeadmconstants`): the well-known folders and
//! files, in one place. [`Layout`] roots them, so a caller that builds its paths from a layout can
//! run against a temporary folder instead of `/` (no root, no chroot); the constants are the paths
//! on the host itself, for flag defaults and messages that name them.

use std::path::{Path, PathBuf};

/// `/etc/kubernetes`: kubeconfig files, manifests and certificates.
pub const KUBERNETES_DIR: &str = "/etc/kubernetes";
/// The static Pod manifests the kubelet runs.
pub const MANIFESTS_DIR: &str = kubeadm_api::defaults::DEFAULT_MANIFESTS_DIR;
/// The default certificates folder (`certificatesDir`).
pub const PKI_DIR: &str = kubeadm_api::defaults::DEFAULT_CERTIFICATES_DIR;
/// The administrator's kubeconfig.
pub const ADMIN_CONF: &str = "/etc/kubernetes/admin.conf";
/// The kubelet's kubeconfig.
pub const KUBELET_CONF: &str = "/etc/kubernetes/kubelet.conf";
/// The kubelet's TLS bootstrap kubeconfig.
pub const BOOTSTRAP_KUBELET_CONF: &str = "/etc/kubernetes/bootstrap-kubelet.conf";
/// The kubelet's folder: its configuration, flags file and state.
pub const KUBELET_DIR: &str = "/var/lib/kubelet";
/// The kube-apiserver's static Pod manifest.
pub const APISERVER_MANIFEST: &str = "/etc/kubernetes/manifests/kube-apiserver.yaml";

/// The well-known paths under a root: `/` on a real host, a temporary folder in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Default for Layout {
    /// The host's own layout, rooted at `/`.
    fn default() -> Self {
        Layout::under("/")
    }
}

impl Layout {
    /// The layout under `root`.
    pub fn under(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }

    /// The root every path is under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A host path (absolute, as the constants above) under this layout's root.
    pub fn path(&self, host_path: &str) -> PathBuf {
        self.root.join(host_path.trim_start_matches('/'))
    }

    /// [`KUBERNETES_DIR`] under the root.
    pub fn kubernetes_dir(&self) -> PathBuf {
        self.path(KUBERNETES_DIR)
    }

    /// [`MANIFESTS_DIR`] under the root.
    pub fn manifests_dir(&self) -> PathBuf {
        self.path(MANIFESTS_DIR)
    }

    /// [`KUBELET_DIR`] under the root.
    pub fn kubelet_dir(&self) -> PathBuf {
        self.path(KUBELET_DIR)
    }

    /// [`ADMIN_CONF`] under the root.
    pub fn admin_conf(&self) -> PathBuf {
        self.path(ADMIN_CONF)
    }

    /// [`KUBELET_CONF`] under the root.
    pub fn kubelet_conf(&self) -> PathBuf {
        self.path(KUBELET_CONF)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_under_the_root() {
        assert_eq!(Layout::default().manifests_dir(), Path::new(MANIFESTS_DIR));
        assert_eq!(Layout::default().admin_conf(), Path::new(ADMIN_CONF));
        let tmp = Layout::under("/tmp/x");
        assert_eq!(tmp.kubelet_dir(), Path::new("/tmp/x/var/lib/kubelet"));
        assert_eq!(
            tmp.kubelet_conf(),
            Path::new("/tmp/x/etc/kubernetes/kubelet.conf")
        );
        assert_eq!(tmp.path(PKI_DIR), Path::new("/tmp/x/etc/kubernetes/pki"));
        assert_eq!(tmp.root(), Path::new("/tmp/x"));
    }

    #[test]
    fn the_constants_agree_with_each_other() {
        for p in [
            MANIFESTS_DIR,
            PKI_DIR,
            ADMIN_CONF,
            KUBELET_CONF,
            BOOTSTRAP_KUBELET_CONF,
        ] {
            assert!(p.starts_with(KUBERNETES_DIR), "{p}");
        }
        assert!(APISERVER_MANIFEST.starts_with(MANIFESTS_DIR));
    }
}
