//! The typed context of the phases that build a control-plane node: `kubeadm init`'s, and `join
//! --control-plane`'s control-plane phases (which build one from the cluster's configuration): the
//! configuration, where things go, and the effects they act through (real or dry-run, chosen by the
//! caller).

use std::path::PathBuf;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::layout::ADMIN_CONF;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;

use crate::pki::KeyPool;

/// What the init phases work from.
pub struct InitData {
    /// The loaded, defaulted and validated configuration.
    pub cfg: InitConfig,
    /// `--dry-run`.
    pub dry_run: bool,
    /// The preflight checks whose errors become warnings (lower case).
    pub ignore_preflight_errors: std::collections::BTreeSet<String>,
    /// `--upload-certs`.
    pub upload_certs: bool,
    /// `--skip-token-print`.
    pub skip_token_print: bool,
    /// `--skip-certificate-key-print`.
    pub skip_certificate_key_print: bool,
    /// Where static pod manifests go (`/etc/kubernetes/manifests`).
    pub manifest_dir: PathBuf,
    /// Where the kubelet's files go (`/var/lib/kubelet`).
    pub kubelet_dir: PathBuf,
    /// This host's name, as `os.Hostname()` gives it (the kubelet gets `--hostname-override` when the
    /// node name differs).
    pub hostname: String,
    /// The container runtime, over CRI.
    pub runtime: Box<dyn Runtime>,
    /// Where kubeconfig files go (`--kubeconfig-dir`).
    pub kubeconfig_dir: PathBuf,
    /// Patches to apply to what the phases write (`--patches`), read where first needed.
    pub patches: Option<crate::patches::Patches>,
    /// Facts about the host that manifests depend on.
    pub manifest_facts: kubeadm_core::manifests::ManifestHostFacts,
    /// Keys generated ahead of time by the `certs` and `kubeconfig` parent phases, handed out as
    /// the sub-phases need them.
    pub keys: KeyPool,
    /// The time certificates are issued at, Unix seconds (taken once per run).
    pub now: i64,
    /// The selectors of the phases this run will execute (empty: unknown, no keys are generated
    /// ahead of time).
    pub planned: std::collections::BTreeSet<String>,
    /// The cluster CA certificate is present without its key: the user manages the CA
    /// (upstream's `UsingExternalCA`, decided once before the phases run).
    pub external_ca: bool,
    /// Names whose validity period was already checked (upstream warns once per name).
    pub period_checked: std::collections::BTreeSet<String>,
    /// The API server, connected on first use (after `admin.conf` exists).
    pub cluster: ClusterAccess,
    /// The effects the phases act through (real, or dry-run), chosen once by the caller.
    pub effects: kubeadm_effects::Effects,
}

/// Opens the API client from a kubeconfig path (the real client, or the dry-run one that ignores it).
pub type ClusterConnector =
    Box<dyn Fn(&std::path::Path) -> Result<Box<dyn Cluster>, crate::SuppliedError> + Send + Sync>;

/// Upstream's `initData.Client()`: one client per run, created by the first phase that needs it,
/// from `--kubeconfig` (`/etc/kubernetes/admin.conf`).
pub struct ClusterAccess {
    /// `--kubeconfig`: the file the client is made from, and the one the join command is read from.
    pub kubeconfig_path: PathBuf,
    /// Creates the client.
    pub connect: ClusterConnector,
    client: std::sync::OnceLock<Box<dyn Cluster>>,
}

impl ClusterAccess {
    /// Access through `connect`, from `kubeconfig_path`.
    pub fn new(kubeconfig_path: PathBuf, connect: ClusterConnector) -> Self {
        Self {
            kubeconfig_path,
            connect,
            client: std::sync::OnceLock::new(),
        }
    }

    /// The client, connected on the first call.
    pub fn client(&self) -> Result<&dyn Cluster, ClusterConnectError> {
        if let Some(c) = self.client.get() {
            return Ok(c.as_ref());
        }
        let c = (self.connect)(&self.kubeconfig_path).map_err(ClusterConnectError)?;
        Ok(self.client.get_or_init(|| c).as_ref())
    }
}

impl std::fmt::Debug for ClusterAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterAccess")
            .field("kubeconfig_path", &self.kubeconfig_path)
            .field("connected", &self.client.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClusterAccess {
    /// No API server: every phase that needs one fails (for tests of the host-only phases).
    fn default() -> Self {
        Self::new(
            PathBuf::from(ADMIN_CONF),
            Box::new(|_| Err("no API server in this context".into())),
        )
    }
}

/// The API client could not be created.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClusterConnectError(pub crate::SuppliedError);

impl std::fmt::Debug for InitData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InitData")
            .field("dry_run", &self.dry_run)
            .field("manifest_dir", &self.manifest_dir)
            .field("kubeconfig_dir", &self.kubeconfig_dir)
            .finish_non_exhaustive()
    }
}

impl InitData {
    /// Prints a line of phase output (upstream's `fmt.Printf` lines).
    pub fn say(&self, line: &str) {
        self.effects.reporter.out(&format!("{line}\n"));
    }
}
