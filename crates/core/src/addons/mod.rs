//! The essential addons `kubeadm init` deploys, CoreDNS and kube-proxy: the exact text of
//! `init phase addon <name> --print-manifest`, and the typed objects the addon phase creates or
//! updates, as `serde_json::Value`s shaped as Go's `encoding/json` writes them.
//!
//! How upstream applies them: create-or-update, except the CoreDNS Service (create; on AlreadyExists
//! or Invalid, update) and, on upgrade, a user-modified Corefile (its ConfigMap is retained or
//! migrated, which is not done here).
//!
//! Pure: the host's proxy environment and the replica count of a running CoreDNS come in as
//! arguments. Depends on kubeadm-api (configuration) and the crate's image and cluster-object rules.

pub mod coredns;
pub mod kube_proxy;

pub use coredns::{coredns_manifest, coredns_objects};
pub use kube_proxy::{KubeProxyInputs, kube_proxy_manifest, kube_proxy_objects};

use kubeadm_api::internal::InitConfig;

/// One of the essential addons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addon {
    /// `coredns`.
    CoreDns,
    /// `kube-proxy`.
    KubeProxy,
}

/// What `--print-manifest` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintedManifest {
    /// The exact standard output.
    pub text: String,
    /// Warnings upstream logs (klog) while rendering, in order.
    pub warnings: Vec<String>,
}

/// What `kubeadm init phase addon <addon> --print-manifest` prints for a configuration built from
/// flags (upstream refuses `--config` together with `--print-manifest`).
pub fn print_manifest(addon: Addon, cfg: &InitConfig) -> Result<PrintedManifest, AddonError> {
    match addon {
        Addon::CoreDns => Ok(PrintedManifest {
            text: coredns_manifest(&cfg.cluster, &cfg.resolved)?,
            warnings: Vec::new(),
        }),
        Addon::KubeProxy => {
            let inputs = KubeProxyInputs {
                cluster: &cfg.cluster,
                resolved: &cfg.resolved,
                local_api_endpoint: &cfg.init.local_api_endpoint,
                config: cfg
                    .component_configs
                    .kube_proxy
                    .as_ref()
                    .ok_or(AddonError::NoKubeProxyConfig)?,
            };
            let (_, warning) =
                kube_proxy::control_plane_url_with_warning(&cfg.cluster, &cfg.init.local_api_endpoint)?;
            Ok(PrintedManifest {
                text: kube_proxy_manifest(&inputs)?,
                warnings: warning.into_iter().map(str::to_string).collect(),
            })
        }
    }
}

/// Why an addon cannot be rendered; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddonError {
    /// The configuration carries no kube-proxy component config.
    #[error("no kube-proxy component config found in the active component config set")]
    NoKubeProxyConfig,
    /// The service subnet yields no DNS Service IP.
    #[error("unable to get internal Kubernetes Service IP from the given service CIDR ({0})")]
    DnsIp(String),
    /// The control-plane endpoint or local API endpoint is unusable.
    #[error("{0}")]
    Endpoint(String),
}
