//! What several handlers build the same way: the init workflow's data with the real (or dry-run)
//! effects (for `kubeadm init` and for a joining control plane), and upstream's `getClient` (for
//! `kubeadm upgrade node` and `kubeadm upgrade apply`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kubeadm_core::layout::Layout;
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, DryRunCluster};
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::KubeCluster;
use kubeadm_phases::InitData;

use crate::setup::{hostname, manifest_host_facts, open_check};

/// The init context with the real (or dry-run) effects and `init`'s flags at their defaults: what
/// `init` completes from its flags, and what a joining control plane runs `init`'s phases with.
pub(crate) fn init_data(
    cfg: kubeadm_api::internal::InitConfig,
    dry_run: bool,
    effects: Effects,
    patches: Option<kubeadm_phases::patches::Patches>,
    kubeconfig_dir: PathBuf,
    cluster: kubeadm_phases::ClusterAccess,
) -> InitData {
    let layout = Layout::default();
    let cert_dir = PathBuf::from(&cfg.cluster.certificates_dir);
    // The CA certificate without its key: the user manages the CA.
    let fs = &effects.fs;
    let manifest_facts =
        manifest_host_facts(fs.exists(&cert_dir.join("ca.crt")) && !fs.exists(&cert_dir.join("ca.key")));
    let runtime = effects.runtime(&cfg.init.node_registration.cri_socket);
    InitData {
        dry_run,
        ignore_preflight_errors: Default::default(),
        upload_certs: false,
        skip_token_print: false,
        skip_certificate_key_print: false,
        manifest_dir: layout.manifests_dir(),
        kubelet_dir: layout.kubelet_dir(),
        hostname: hostname(),
        runtime,
        kubeconfig_dir,
        patches,
        manifest_facts,
        keys: kubeadm_phases::KeyPool::default(),
        now: effects.now(),
        planned: Default::default(),
        external_ca: false,
        period_checked: Default::default(),
        cluster,
        cfg,
        effects,
    }
}

/// Upstream's `getClient`: the kubeconfig's client, or in a dry run a decorator over it that
/// records writes and prints every read with what it returned.
pub(crate) fn client(
    rep: &Arc<dyn Reporter>,
    path: &Path,
    dry_run: bool,
) -> Result<Box<dyn Cluster>, ClientError> {
    let real = real_client(path, dry_run)?;
    if !dry_run {
        return Ok(Box::new(real));
    }
    let rep = Arc::clone(rep);
    Ok(Box::new(
        DryRunCluster::new(rep, kubeadm_yaml::to_string)
            .with_backend(Box::new(real))
            .print_reads(),
    ))
}

/// The kubeconfig's client, after checking the file opens (upstream's `kubeconfigutil.ClientSetFromFile`
/// after its `os.Stat`).
pub(crate) fn real_client(path: &Path, dry_run: bool) -> Result<KubeCluster, ClientError> {
    open_check(path).map_err(|source| ClientError::Open {
        dry_run,
        path: path.to_path_buf(),
        source,
    })?;
    KubeCluster::from_kubeconfig(path).map_err(ClientError::Load)
}

/// Why no client could be made from a kubeconfig file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The file does not open.
    #[error(
        "failed to load {}kubeconfig: open {}: {}",
        if *dry_run { "" } else { "admin " },
        path.display(),
        kubeadm_api::gofmt::io_error(source)
    )]
    Open {
        /// Whether this is a dry run (upstream's message then does not say "admin").
        dry_run: bool,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The kubeconfig cannot be used.
    #[error(transparent)]
    Load(kubeadm_host::cluster::ClientError),
    /// The kubeconfig cannot be used, as `upgrade plan` words it.
    #[error("failed to create API client configuration from kubeconfig: {0}")]
    ApiConfig(#[source] kubeadm_host::cluster::ClientError),
}
