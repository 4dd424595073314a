//! The `kubeadm reset` phases (`preflight`, `remove-etcd-member`, `cleanup-node`), the typed context
//! they share ([`ResetData`]) and what `kubeadm reset` does after them (emptying the stateful
//! directories the phases collected, printing the manual-cleanup instructions).
//!
//! Upstream v1.25.16: `cmd/reset.go` and `cmd/phases/reset/*.go`. Every effect goes through the
//! context's traits; the `Would …` lines of a dry run are upstream's own, and in a dry run no effect
//! is invoked at all (the CLI also hands in the dry-run decorators, as a second guard).

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use kubeadm_api::internal::InitConfig;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::etcd::Etcd;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::init_system::InitSystem;
use kubeadm_effects::report::Reporter;
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::join_command::go_io_text;
use crate::preflight::{IgnoreSet, root_checks, run_checks};

/// Upstream's default `--cert-dir`.
pub const DEFAULT_CERT_DIR: &str = "/etc/kubernetes/pki";

/// Opens an etcd client on the given endpoints with the given CA, client certificate and key files.
pub type EtcdConnector = Box<dyn Fn(&[String], &EtcdTlsFiles) -> Result<Box<dyn Etcd>, String> + Send + Sync>;

/// The files of upstream's etcd client: `etcd/ca.crt`, `etcd/healthcheck-client.{crt,key}` under the
/// certificates directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdTlsFiles {
    /// The etcd CA certificate.
    pub ca: PathBuf,
    /// The client certificate.
    pub cert: PathBuf,
    /// The client key.
    pub key: PathBuf,
}

/// What the reset phases work from.
pub struct ResetData {
    /// The configuration fetched from the cluster, `None` when there is no cluster to ask (upstream
    /// only warns then).
    pub cfg: Option<InitConfig>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `-f/--force`: no confirmation prompt.
    pub force: bool,
    /// The preflight checks whose errors become warnings (lower case).
    pub ignore_preflight_errors: BTreeSet<String>,
    /// `--cert-dir`, emptied by `cleanup-node`.
    pub cert_dir: PathBuf,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// `/var/lib/kubelet`.
    pub kubelet_dir: PathBuf,
    /// Where `/proc/mounts` is read from.
    pub mounts_file: PathBuf,
    /// Where the confirmation answer is read from (standard input).
    pub input: Box<dyn BufRead + Send>,
    /// The directories emptied after the phases, in the order the phases added them.
    pub dirs_to_clean: Vec<PathBuf>,
    /// The file system.
    pub fs: Box<dyn Fs>,
    /// The init system that runs the kubelet.
    pub init_system: Box<dyn InitSystem>,
    /// The container runtime behind the CRI socket in use.
    pub runtime: Box<dyn Runtime>,
    /// What the root check reads.
    pub host_probe: Box<dyn HostProbe>,
    /// The API server, when `--kubeconfig` gave a usable client.
    pub cluster: Option<Box<dyn Cluster>>,
    /// Connects to etcd (only called outside dry runs, with a configuration from the cluster).
    pub etcd: EtcdConnector,
    /// Where output goes.
    pub reporter: Box<dyn Reporter>,
}

impl std::fmt::Debug for ResetData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResetData")
            .field("dry_run", &self.dry_run)
            .field("force", &self.force)
            .field("cert_dir", &self.cert_dir)
            .field("dirs_to_clean", &self.dirs_to_clean)
            .field("has_cfg", &self.cfg.is_some())
            .finish_non_exhaustive()
    }
}

impl ResetData {
    fn say(&self, line: &str) {
        self.reporter.out(&format!("{line}\n"));
    }
}

/// The user did not confirm the reset (upstream's `InteractivelyConfirmAction`).
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// Any answer but `y` or `yes`.
    #[error("won't proceed; the user didn't answer (Y|y) in order to continue")]
    Declined,
    /// Standard input could not be read.
    #[error("couldn't read from standard input: {0}")]
    Read(#[source] std::io::Error),
}

/// Go's `%v` of a `[]string`: `[a b c]`.
fn go_list(paths: &[PathBuf]) -> String {
    let items: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!("[{}]", items.join(" "))
}

/// Go's `%q` of a path (the paths kubeadm prints need no escapes beyond Rust's).
fn go_quote(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

/// The `preflight` phase: without `--force` (and outside a dry run) only the confirmation prompt,
/// as upstream returns right after it; otherwise `[preflight] Running pre-flight checks` and the
/// root check, whose failure is a [`crate::preflight::PreflightError`] (exit code 2).
pub(crate) fn run_preflight(data: &mut ResetData) -> Result<(), PhaseError> {
    if !data.force && !data.dry_run {
        data.reporter.warn(
            "preflight.go",
            "[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.",
        );
        data.reporter
            .out("[reset] Are you sure you want to proceed? [y/N]: ");
        let mut line = String::new();
        data.input
            .read_line(&mut line)
            .map_err(|e| Box::new(ConfirmError::Read(e)))?;
        // Go's line scanner drops the newline and a carriage return before it.
        let answer = line.strip_suffix('\n').unwrap_or(&line);
        let answer = answer.strip_suffix('\r').unwrap_or(answer).to_lowercase();
        return if answer == "y" || answer == "yes" {
            Ok(())
        } else {
            Err(Box::new(ConfirmError::Declined))
        };
    }
    data.say("[preflight] Running pre-flight checks");
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    run_checks(&root_checks(), &*data.host_probe, &*data.runtime, &ignore).report(&*data.reporter)?;
    Ok(())
}

/// Why the etcd data directory is unknown (upstream then assumes an external etcd).
#[derive(Debug, thiserror::Error)]
pub enum EtcdDataDirError {
    /// The manifest could not be read.
    #[error("failed to read manifest for {path:?}: {reason}")]
    Read {
        /// The manifest path.
        path: PathBuf,
        /// The error text.
        reason: String,
    },
    /// The manifest has no `etcd-data` host path volume.
    #[error("invalid etcd pod manifest")]
    Invalid,
}

/// Upstream's `getEtcdDataDir`: the local etcd's data directory from the configuration, or else
/// from the `etcd-data` volume of the static pod manifest.
pub fn etcd_data_dir(
    cfg: Option<&InitConfig>,
    manifest: &[u8],
    manifest_path: &Path,
) -> Result<String, EtcdDataDirError> {
    if let Some(local) = cfg.and_then(|c| c.cluster.etcd.local.as_ref()) {
        return Ok(local.data_dir.clone());
    }
    let doc = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(manifest))
        .map_err(|e| EtcdDataDirError::Read {
            path: manifest_path.to_path_buf(),
            reason: e.to_string(),
        })?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let dir = doc
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some("etcd-data"))
        .and_then(|v| v.pointer("/hostPath/path"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if dir.is_empty() {
        return Err(EtcdDataDirError::Invalid);
    }
    Ok(dir.to_string())
}

/// The `remove-etcd-member` phase: adds the local etcd's data directory to the directories to
/// empty and, with a configuration from the cluster, removes this node's member from the etcd
/// cluster (a failure is only a warning, as upstream).
pub(crate) fn run_remove_etcd_member(data: &mut ResetData) -> Result<(), PhaseError> {
    let manifest_path = data.kubernetes_dir.join("manifests/etcd.yaml");
    let has_local = data.cfg.as_ref().is_some_and(|c| c.cluster.etcd.local.is_some());
    let dir = if has_local {
        etcd_data_dir(data.cfg.as_ref(), b"", &manifest_path)
    } else {
        data.reporter.warn(
            "removeetcdmember.go",
            "[reset] No kubeadm config, using etcd pod spec to get data directory",
        );
        match data.fs.read(&manifest_path) {
            Ok(bytes) => etcd_data_dir(None, &bytes, &manifest_path),
            Err(e) => Err(EtcdDataDirError::Read {
                path: manifest_path.clone(),
                reason: format!("open {}: {}", manifest_path.display(), go_io_text(&e)),
            }),
        }
    };
    match dir {
        Ok(dir) => {
            data.dirs_to_clean.push(PathBuf::from(dir));
            if data.cfg.is_some() {
                if data.dry_run {
                    data.say("[reset] Would remove the etcd member on this node from the etcd cluster");
                } else if let Err(e) = crate::reset_cluster::remove_stacked_etcd_member(data) {
                    data.reporter.warn(
                        "removeetcdmember.go",
                        &format!(
                            "[reset] Failed to remove etcd member: {e}, please manually remove this etcd member using etcdctl"
                        ),
                    );
                }
            }
        }
        Err(e) => {
            data.reporter
                .info(1, "removeetcdmember.go", &format!("[reset] {e}"));
            data.say("[reset] No etcd config found. Assuming external etcd");
            data.say("[reset] Please, manually reset etcd to prevent further issues");
        }
    }
    Ok(())
}

/// The files `cleanup-node` deletes from `/etc/kubernetes`, in upstream's order.
const FILES_TO_CLEAN: [&str; 5] = [
    "admin.conf",
    "kubelet.conf",
    "bootstrap-kubelet.conf",
    "controller-manager.conf",
    "scheduler.conf",
];

/// The `cleanup-node` phase: stop the kubelet, unmount what is mounted under `/var/lib/kubelet`,
/// remove every pod sandbox, empty the manifests and certificates directories, delete the
/// kubeconfig files. Every failure is a warning, as upstream.
pub(crate) fn run_cleanup_node(data: &mut ResetData) -> Result<(), PhaseError> {
    const SRC: &str = "cleanupnode.go";
    match data.init_system.kind() {
        None => {
            data.reporter.warn(
                SRC,
                "[reset] The kubelet service could not be stopped by kubeadm. Unable to detect a supported init system!",
            );
            data.reporter
                .warn(SRC, "[reset] Please ensure kubelet is stopped manually");
        }
        Some(_) if data.dry_run => data.say("[reset] Would stop the kubelet service"),
        Some(_) => {
            data.say("[reset] Stopping the kubelet service");
            if let Err(e) = data.init_system.service_stop("kubelet") {
                data.reporter.warn(
                    SRC,
                    &format!("[reset] The kubelet service could not be stopped by kubeadm: [{e}]\n"),
                );
                data.reporter
                    .warn(SRC, "[reset] Please ensure kubelet is stopped manually");
            }
        }
    }

    let kubelet_dir = go_quote(&data.kubelet_dir);
    if data.dry_run {
        data.say(&format!(
            "[reset] Would unmount mounted directories in {kubelet_dir}"
        ));
    } else {
        data.say(&format!(
            "[reset] Unmounting mounted directories in {kubelet_dir}"
        ));
        if let Some(dir) = absolute_kubelet_dir(data) {
            data.dirs_to_clean.push(dir);
        }
    }

    if data.dry_run {
        data.say("[reset] Would remove Kubernetes-managed containers");
    } else {
        data.reporter
            .info(1, SRC, "[reset] Removing Kubernetes-managed containers");
        let removed = data
            .runtime
            .list_pod_sandboxes()
            .map_err(|e| e.to_string())
            .and_then(|pods| {
                let ids: Vec<String> = pods.into_iter().map(|p| p.id).collect();
                data.runtime.remove_pod_sandboxes(&ids).map_err(|e| e.to_string())
            });
        if let Err(e) = removed {
            data.reporter
                .warn(SRC, &format!("[reset] Failed to remove containers: {e}\n"));
        }
    }

    if data.cert_dir != Path::new(DEFAULT_CERT_DIR) {
        data.reporter.warn(
            SRC,
            &format!(
                "[reset] WARNING: Cleaning a non-default certificates directory: {}\n",
                go_quote(&data.cert_dir)
            ),
        );
    }
    reset_config_dir(data);

    let rootless = data.cfg.as_ref().is_some_and(|c| {
        c.cluster
            .feature_gates
            .get("RootlessControlPlane")
            .copied()
            .unwrap_or(false)
    });
    if rootless {
        if data.dry_run {
            data.say("[reset] Would remove users and groups created for rootless control-plane");
        } else {
            // kubeadm-rs creates no users for the rootless control plane yet, so there are none
            // of ours to remove; say so instead of touching /etc/passwd.
            data.reporter.warn(
                SRC,
                "[reset] Failed to remove users and groups: removing the rootless control-plane users is not implemented in kubeadm-rs\n",
            );
        }
    }
    Ok(())
}

/// Upstream's `absoluteKubeletRunDirectory`: the kubelet directory with symbolic links resolved,
/// after unmounting everything mounted below it; `None` (with a warning) when either step fails,
/// and the directory is then left alone.
fn absolute_kubelet_dir(data: &ResetData) -> Option<PathBuf> {
    const SRC: &str = "cleanupnode.go";
    let dir = match data.fs.canonicalize(&data.kubelet_dir) {
        Ok(d) => d,
        Err(e) => {
            data.reporter.warn(
                SRC,
                &format!(
                    "[reset] Failed to evaluate the {} directory. Skipping its unmount and cleanup: lstat {}: {}\n",
                    go_quote(&data.kubelet_dir),
                    data.kubelet_dir.display(),
                    go_io_text(&e)
                ),
            );
            return None;
        }
    };
    let mounts = match data.fs.read(&data.mounts_file) {
        Ok(m) => m,
        Err(_) => {
            data.reporter.warn(
                SRC,
                &format!(
                    "[reset] Failed to unmount mounted directories in {} \n",
                    data.kubelet_dir.display()
                ),
            );
            return None;
        }
    };
    for mount_point in mounts_below(&String::from_utf8_lossy(&mounts), &dir) {
        if data.fs.unmount(Path::new(&mount_point)).is_err() {
            data.reporter.warn(
                "unmount_linux.go",
                &format!(
                    "[reset] Failed to unmount mounted directory in {}/: {mount_point}",
                    dir.display()
                ),
            );
        }
    }
    Some(dir)
}

/// The mount points in a `/proc/mounts` text strictly below `dir`, in the file's order. As
/// upstream, the second space-separated field is compared as it is written (octal escapes such as
/// `\040` are not decoded).
pub fn mounts_below(mounts: &str, dir: &Path) -> Vec<String> {
    let mut prefix = dir.display().to_string();
    if !prefix.ends_with('/') {
        prefix.push('/');
    }
    mounts
        .split('\n')
        .filter_map(|line| line.split(' ').nth(1))
        .filter(|mount_point| mount_point.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// Upstream's `resetConfigDir`: empties the manifests and certificates directories, deletes the
/// kubeconfig files.
fn reset_config_dir(data: &ResetData) {
    let dirs = vec![data.kubernetes_dir.join("manifests"), data.cert_dir.clone()];
    if data.dry_run {
        data.say(&format!(
            "[reset] Would delete contents of directories: {}",
            go_list(&dirs)
        ));
    } else {
        data.say(&format!(
            "[reset] Deleting contents of directories: {}",
            go_list(&dirs)
        ));
        for dir in &dirs {
            if let Err(e) = clean_dir(&*data.fs, dir) {
                data.reporter.warn(
                    "cleanupnode.go",
                    &format!(
                        "[reset] Failed to delete contents of {} directory: {}",
                        go_quote(dir),
                        go_io_text(&e)
                    ),
                );
            }
        }
    }
    let files: Vec<PathBuf> = FILES_TO_CLEAN
        .iter()
        .map(|f| data.kubernetes_dir.join(f))
        .collect();
    if data.dry_run {
        data.say(&format!("[reset] Would delete files: {}", go_list(&files)));
    } else {
        data.say(&format!("[reset] Deleting files: {}", go_list(&files)));
        for file in &files {
            if let Err(e) = data.fs.remove_all(file) {
                data.reporter.warn(
                    "cleanupnode.go",
                    &format!(
                        "[reset] Failed to remove file: {} [{}]\n",
                        go_quote(file),
                        go_io_text(&e)
                    ),
                );
            }
        }
    }
}

/// Upstream's `CleanDir`: removes everything inside `dir`, keeping `dir`; nothing to do when it
/// does not exist. Stops at the first entry that cannot be removed.
pub fn clean_dir(fs: &dyn Fs, dir: &Path) -> std::io::Result<()> {
    if !fs.exists(dir) {
        return Ok(());
    }
    for name in fs.list_dir(dir)? {
        fs.remove_all(&dir.join(name))?;
    }
    Ok(())
}

/// Upstream's `cleanDirs`, run by `kubeadm reset` after its phases: empties the stateful directories
/// the phases collected (etcd's data, the kubelet's directory).
pub fn clean_stateful_dirs(data: &ResetData) {
    if data.dry_run {
        data.say(&format!(
            "[reset] Would delete contents of stateful directories: {}",
            go_list(&data.dirs_to_clean)
        ));
        return;
    }
    data.say(&format!(
        "[reset] Deleting contents of stateful directories: {}",
        go_list(&data.dirs_to_clean)
    ));
    for dir in &data.dirs_to_clean {
        data.reporter.info(
            1,
            "reset.go",
            &format!("[reset] Deleting contents of {}", dir.display()),
        );
        if let Err(e) = clean_dir(&*data.fs, dir) {
            data.reporter.warn(
                "reset.go",
                &format!(
                    "[reset] Failed to delete contents of {} directory: {}",
                    go_quote(dir),
                    go_io_text(&e)
                ),
            );
        }
    }
}

/// What `kubeadm reset` prints last: what it does not clean up (CNI configuration, iptables and
/// IPVS rules, the user's kubeconfig), upstream's two texts.
pub const CLEANUP_INSTRUCTIONS: &str = "
The reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d

The reset process does not reset or clean up iptables rules or IPVS tables.
If you wish to reset iptables, you must do so manually by using the \"iptables\" command.

If your cluster was setup to utilize IPVS, run ipvsadm --clear (or similar)
to reset your system's IPVS tables.

The reset process does not clean your kubeconfig files and you must remove them manually.
Please, check the contents of the $HOME/.kube/config file.
";
