//! The typed context `kubeadm join` phases share (upstream's `joinData`): the join configuration,
//! where things go, the effects they act through, and what discovery finds, computed once on first
//! use (the TLS bootstrap kubeconfig, then the cluster's configuration).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kubeadm_api::dynamic::HostFacts;
use kubeadm_api::internal::InitConfig;
use kubeadm_api::v1beta3::JoinConfiguration;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::Runtime;
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::InitData;
use crate::join::cluster_config::ensure_init_cfg;

/// What an API client is made from during a join.
#[derive(Debug, Clone, Copy)]
pub enum ClientSource<'a> {
    /// Anonymous, over TLS that does NOT verify the server: only token discovery's first read of
    /// `cluster-info` (`https://host:port`), whose answer is verified afterwards. Its answers must
    /// come whole within the duration given from the client's making (the discovery timeout), and
    /// are bounded in size.
    InsecureAnonymous(&'a str, std::time::Duration),
    /// A kubeconfig held in memory (YAML or JSON text), TLS verified as it says.
    Kubeconfig(&'a str),
    /// A kubeconfig file (the kubelet's `kubelet.conf` once it has bootstrapped).
    File(&'a Path),
}

/// Creates API clients for the join phases (the real kube client, or a fake in tests).
pub type JoinConnector = Box<dyn Fn(&ClientSource<'_>) -> Result<Box<dyn Cluster>, String> + Send + Sync>;

/// Fetches a discovery file given as an `https://` URL (`--discovery-file https://…`): the body,
/// whatever the status code, over TLS verified against the host's root certificates; or the error
/// as upstream prints it (`Get "https://…": …`). The whole answer must come within the duration
/// given (the discovery timeout).
pub type UrlFetcher = Box<dyn Fn(&str, std::time::Duration) -> Result<Vec<u8>, String> + Send + Sync>;

/// Makes the context a joining control plane's phases share with `kubeadm init`'s (certificates,
/// kubeconfig files, static pod manifests, the API client from `admin.conf`), from the cluster's
/// configuration with this node's registration and API endpoint.
pub type ControlPlaneContext = Box<dyn Fn(InitConfig) -> Result<InitData, String> + Send + Sync>;

/// What the join phases work from.
pub struct JoinData {
    /// The loaded, defaulted and validated join configuration.
    pub cfg: JoinConfiguration,
    /// `--dry-run`: the effects are the dry-run ones (files in an overlay, the init system only
    /// said), the cluster is read but not written, etcd is not contacted.
    pub dry_run: bool,
    /// The preflight checks whose errors become warnings (lower case).
    pub ignore_preflight_errors: BTreeSet<String>,
    /// Where kubeconfig files go (`/etc/kubernetes`).
    pub kubeconfig_dir: PathBuf,
    /// Where the kubelet's files go (`/var/lib/kubelet`).
    pub kubelet_dir: PathBuf,
    /// This host's name, as `os.Hostname()` gives it.
    pub hostname: String,
    /// What defaulting the fetched cluster configuration needs to know about the host.
    pub host: HostFacts,
    /// Patches to apply to the kubelet configuration and, for a control plane, to its static pods
    /// (`--patches`), read where first needed; a joining control plane's phases share them.
    pub patches: Option<crate::patches::Patches>,
    /// The container runtime, over CRI.
    pub runtime: Box<dyn Runtime>,
    /// Creates API clients.
    pub connect: JoinConnector,
    /// Fetches a discovery file given as an `https://` URL.
    pub fetch_url: UrlFetcher,
    /// The kubeconfig the kubelet bootstraps with (upstream's `TLSBootstrapCfg`), once discovered.
    pub tls_bootstrap: Option<Value>,
    /// How long `kubelet-start` waits for the kubelet's TLS bootstrap: upstream's 5 minutes unless
    /// `KUBEADM_TLS_BOOTSTRAP_TIMEOUT` says otherwise.
    pub tls_bootstrap_timeout: std::time::Duration,
    /// The cluster's configuration with this node's registration (upstream's `InitCfg`), once
    /// fetched.
    pub init_cfg: Option<InitConfig>,
    /// Makes [`JoinData::control_plane`] for a control-plane join.
    pub control_plane_context: ControlPlaneContext,
    /// The context of the control-plane phases, made on first use.
    pub control_plane: Option<InitData>,
    /// The effects the phases act through (real, or dry-run), chosen once by the caller.
    pub effects: kubeadm_effects::Effects,
}

impl std::fmt::Debug for JoinData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinData")
            .field("kubeconfig_dir", &self.kubeconfig_dir)
            .field("kubelet_dir", &self.kubelet_dir)
            .field("discovered", &self.tls_bootstrap.is_some())
            .finish_non_exhaustive()
    }
}

impl JoinData {
    /// Prints a line of phase output (upstream's `fmt.Printf` lines).
    pub fn say(&self, line: &str) {
        self.effects.reporter.out(&format!("{line}\n"));
    }

    /// A client made by the connector.
    pub(crate) fn client(&self, source: &ClientSource<'_>) -> Result<Box<dyn Cluster>, String> {
        (self.connect)(source)
    }

    /// Upstream's `CertificateKey()`: the key of a control-plane join, empty otherwise.
    pub fn certificate_key(&self) -> &str {
        self.cfg
            .control_plane
            .as_ref()
            .map_or("", |cp| cp.certificate_key.as_str())
    }

    /// The context of the control-plane phases: the cluster's configuration (discovered and
    /// fetched first when needed) with the effects `kubeadm init`'s phases act through.
    pub(crate) fn control_plane_data(&mut self) -> Result<&mut InitData, PhaseError> {
        if self.control_plane.is_none() {
            ensure_init_cfg(self)?;
            let cfg = self
                .init_cfg
                .clone()
                .ok_or("the cluster's configuration is missing")?;
            let made = (self.control_plane_context)(cfg).map_err(ControlPlaneContextError)?;
            self.control_plane = Some(made);
        }
        self.control_plane
            .as_mut()
            .ok_or_else(|| "no control-plane context".into())
    }
}

/// The control-plane phases' context could not be made.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ControlPlaneContextError(pub String);
