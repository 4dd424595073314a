//! The typed context `kubeadm init` phases share: the configuration, where things go, and the
//! effects they act through (real or dry-run, chosen by the caller).

use std::path::PathBuf;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::patches::PatchManager;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::init_system::InitSystem;
use kubeadm_effects::keygen::KeyGen;
use kubeadm_effects::report::Reporter;

use crate::certs::KeyPool;

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
    /// The init system that runs the kubelet (or the dry-run decorator).
    pub init_system: Box<dyn InitSystem>,
    /// What preflight reads from the host.
    pub host_probe: Box<dyn HostProbe>,
    /// The container runtime, over CRI.
    pub runtime: Box<dyn Runtime>,
    /// Where kubeconfig files go (`--kubeconfig-dir`).
    pub kubeconfig_dir: PathBuf,
    /// Patches to apply to what the phases write, read once per run (`--patches`).
    pub patches: Option<PatchManager>,
    /// Facts about the host that manifests depend on.
    pub manifest_facts: kubeadm_core::manifests::ManifestHostFacts,
    /// The file system (real, or the dry-run overlay).
    pub fs: Box<dyn Fs>,
    /// Where output goes.
    pub reporter: Box<dyn Reporter>,
    /// Generates private keys (in parallel batches).
    pub keygen: Box<dyn KeyGen>,
    /// Keys generated ahead of time by the `certs` and `kubeconfig` parent phases, handed out as
    /// the sub-phases need them.
    pub keys: KeyPool,
    /// The time certificates are issued at, Unix seconds (taken once per run).
    pub now: i64,
    /// Source of random 64-bit values for certificate serial numbers.
    pub random: fn() -> u64,
    /// The selectors of the phases this run will execute (empty: unknown, no keys are generated
    /// ahead of time).
    pub planned: std::collections::BTreeSet<String>,
    /// The cluster CA certificate is present without its key: the user manages the CA
    /// (upstream's `UsingExternalCA`, decided once before the phases run).
    pub external_ca: bool,
    /// Names whose validity period was already checked (upstream warns once per name).
    pub period_checked: std::collections::BTreeSet<String>,
}

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
        self.reporter.out(&format!("{line}\n"));
    }
}
