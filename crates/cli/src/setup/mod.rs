//! The effects setup: where the command handlers get the real host from. This module and `main`
//! are the only places in the binary that read the host directly (files, environment, clock); the
//! handlers take what they need from here and pass it to the workflows as values and effects.

// The one module allowed what `clippy.toml` forbids the rest of the binary.
#![allow(clippy::disallowed_methods)]

pub(crate) mod host_facts;
pub(crate) mod secrets;
pub(crate) mod workflow_data;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kubeadm_core::manifests::{CA_CERTS_EXTRA_PATHS, ManifestHostFacts};
use kubeadm_effects::Effects;
use kubeadm_effects::cri::{CriError, Image, PodSandbox, Runtime, RuntimeStatus, RuntimeVersion};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::init_system::{DryRunInitSystem, InitSystem};
use kubeadm_host::cri::CriClient;
use kubeadm_host::fs::RealFs;
use kubeadm_host::host_probe::RealHostProbe;
use kubeadm_host::init_system::HostInitSystem;
use kubeadm_host::keygen::AwsLcKeyGen;
use kubeadm_host::report::TerminalReporter;

use crate::cobra::execute::Invocation;

/// Every effect a workflow acts through, chosen once for the run: the host's, or with `--dry-run`
/// the decorators that print and keep writes (files in an overlay, the init system only said). The
/// reporter follows the invocation's `-v` and `--skip-headers`.
pub(crate) fn effects(inv: &Invocation<'_>, dry_run: bool) -> Effects {
    Effects {
        fs: Arc::from(fs(dry_run)),
        init_system: Arc::from(init_system(dry_run)),
        host_probe: Arc::new(RealHostProbe),
        cri: Arc::new(runtime),
        etcd: etcd_connector(),
        // Key generation (RSA and ECDSA, on every core).
        keygen: Arc::new(AwsLcKeyGen),
        clock: Arc::new(unix_now),
        random: secrets::random_u64,
        reporter: Arc::new(reporter(inv)),
    }
}

/// The file system: the real one, or with `--dry-run` the dry-run decorator over it (reads pass
/// through, writes are printed and kept in memory).
pub(crate) fn fs(dry_run: bool) -> Box<dyn Fs> {
    if dry_run {
        Box::new(DryRunFs::new(RealFs))
    } else {
        Box::new(RealFs)
    }
}

/// The host's init system, or with `--dry-run` the decorator that only says what it would do.
pub(crate) fn init_system(dry_run: bool) -> Box<dyn InitSystem> {
    if dry_run {
        Box::new(DryRunInitSystem::new(HostInitSystem::detect()))
    } else {
        Box::new(HostInitSystem::detect())
    }
}

/// What the preflight checks read from the host.
pub(crate) fn host_probe() -> Box<dyn HostProbe> {
    Box::new(RealHostProbe)
}

/// The container runtime at a CRI endpoint (`unix://…` or a socket path). An endpoint that names
/// no Unix socket is no error until the runtime is used: upstream runs `crictl -r <endpoint>`, which
/// fails then, so the phases that never use it (`init phase control-plane`, …) run.
pub(crate) fn runtime(endpoint: &str) -> Box<dyn Runtime> {
    match CriClient::new(endpoint) {
        Ok(client) => Box::new(client),
        Err(e) => Box::new(UnusableRuntime {
            endpoint: endpoint.to_string(),
            reason: match e {
                CriError::InvalidEndpoint { reason, .. } => reason,
                other => other.to_string(),
            },
        }),
    }
}

/// The runtime behind a `--cri-socket` that is not a Unix socket: every call fails with the reason,
/// as upstream's `crictl -r <garbage>` fails at each call (reset warns when removing containers,
/// preflight reports the runtime not running, a pull fails for its image).
#[derive(Debug)]
struct UnusableRuntime {
    endpoint: String,
    reason: String,
}

impl UnusableRuntime {
    fn error(&self) -> CriError {
        CriError::InvalidEndpoint {
            endpoint: self.endpoint.clone(),
            reason: self.reason.clone(),
        }
    }
}

impl Runtime for UnusableRuntime {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        Err(self.error())
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        Err(self.error())
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        Err(self.error())
    }
    fn image_status(&self, _: &str) -> Result<Option<Image>, CriError> {
        Err(self.error())
    }
    fn pull_image_once(&self, _: &str) -> Result<String, CriError> {
        Err(self.error())
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        Err(self.error())
    }
    fn stop_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        Err(self.error())
    }
    fn remove_pod_sandbox(&self, _: &str) -> Result<(), CriError> {
        Err(self.error())
    }
}

/// This host's name, as the kubelet registers it by default (empty when it cannot be read).
pub(crate) fn hostname() -> String {
    kubeadm_host::probe::hostname().unwrap_or_default()
}

/// The reporter for an invocation's `-v` and `--skip-headers`.
pub(crate) fn reporter(inv: &Invocation<'_>) -> TerminalReporter {
    let v = u8::try_from(inv.flags.int("v").clamp(0, 255)).unwrap_or(u8::MAX);
    TerminalReporter::new(v, inv.flags.bool("skip-headers"))
}

/// What the control-plane manifests take from this host: the CA certificate folders that exist, the
/// environment (proxy variables), and whether the CA is external.
pub(crate) fn manifest_host_facts(external_ca: bool) -> ManifestHostFacts {
    ManifestHostFacts {
        existing_ca_cert_dirs: CA_CERTS_EXTRA_PATHS
            .iter()
            .filter(|d| Path::new(d).is_dir())
            .map(|d| d.to_string())
            .collect(),
        environment: std::env::vars().collect(),
        external_ca,
    }
}

/// The API server reached with the kubeconfig at `path`, connected when a phase first needs it.
pub(crate) fn cluster_access(path: PathBuf) -> kubeadm_phases::ClusterAccess {
    kubeadm_phases::ClusterAccess::new(
        path,
        Box::new(|p| {
            kubeadm_host::cluster::KubeCluster::from_kubeconfig(p)
                .map(|c| Box::new(c) as Box<dyn kubeadm_effects::cluster::Cluster>)
                .map_err(kubeadm_phases::SuppliedError::from)
        }),
    )
}

/// The etcd client reset and a control-plane join use: TLS from the etcd CA and a client
/// certificate, endpoints synced with the member list.
pub(crate) fn etcd_connector() -> kubeadm_phases::etcd_cluster::EtcdConnector {
    Arc::new(|endpoints, tls| {
        kubeadm_host::etcd::EtcdClient::connect(endpoints, &tls.ca, &tls.cert, &tls.key)
            .map(|c| Box::new(c) as Box<dyn kubeadm_effects::etcd::Etcd>)
            .map_err(kubeadm_phases::SuppliedError::from)
    })
}

/// The current time as Unix seconds (the one clock read of a run).
pub(crate) fn unix_now() -> i64 {
    unix_seconds(now())
}

/// The clock: the only place the binary reads it.
pub(crate) fn now() -> SystemTime {
    SystemTime::now()
}

/// Seconds since the Unix epoch at `t` (negative before it).
pub(crate) fn unix_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Nanoseconds since the Unix epoch now (0 before it).
pub(crate) fn unix_nanos_now() -> i128 {
    now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

/// An environment variable of this process, `None` when unset or not Unicode.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether `stat` succeeds on `path` (Go's `os.Stat(path) == nil`).
pub(crate) fn stat_ok(path: &Path) -> bool {
    path.metadata().is_ok()
}

/// Go's `os.Open(path)` for its error alone: whether the file can be opened for reading.
pub(crate) fn open_check(path: &Path) -> std::io::Result<()> {
    std::fs::metadata(path)
        .and_then(|_| std::fs::File::open(path))
        .map(drop)
}

/// The regular files below `dir`, each directory's entries in name order, subdirectories after
/// the files beside them (the patch directory as the patch manager reads it).
pub(crate) fn files_below(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)?.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                pending.push(path);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// The global `--rootfs` flag: like upstream's persistent pre-run, chroot into the given directory
/// (and go to its `/`) before any command runs, so every path the command uses lives under it.
pub(crate) fn enter_rootfs(rootfs: &str) -> Result<(), RootfsError> {
    if rootfs.is_empty() {
        return Ok(());
    }
    std::os::unix::fs::chroot(rootfs).map_err(|source| RootfsError::Chroot {
        rootfs: rootfs.to_string(),
        source,
    })?;
    std::env::set_current_dir("/").map_err(RootfsError::Chdir)
}

/// Why `--rootfs` could not be entered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RootfsError {
    /// The chroot failed.
    #[error("unable to chroot to {rootfs}: {}", kubeadm_api::gofmt::io_error(source))]
    Chroot {
        /// The `--rootfs` directory.
        rootfs: String,
        /// Why.
        source: std::io::Error,
    },
    /// Going to the new root's `/` failed.
    #[error("unable to chdir to /: {}", kubeadm_api::gofmt::io_error(.0))]
    Chdir(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unusable_runtime_names_the_endpoint_in_every_error() {
        // `unix://x` names a host and no socket path.
        let r = runtime("x");
        let err = r.list_pod_sandboxes().expect_err("unusable").to_string();
        assert!(
            err.contains("\"x\"") && err.contains("the endpoint names no socket path"),
            "{err}"
        );
        assert!(r.pull_image("pause").is_err());
        assert!(matches!(
            r.remove_pod_sandboxes(&["a".into()]),
            Err(e) if e.to_string().starts_with("failed to stop running pod a")
        ));
    }
}
