//! Static pod manifests for the control plane and local etcd, as upstream kubeadm v1.25 writes them
//! to `/etc/kubernetes/manifests`.
//!
//! Pure: the cluster configuration, this node's API endpoint and the few host facts upstream reads
//! (which CA bundle directories exist, the proxy environment, whether the CA key is absent) come in
//! as values; a pod comes out as the JSON Go would marshal for a `v1.Pod`, and [`render`] writes it
//! as the YAML upstream writes. Patches (`--patches`) are applied by [`crate::patches`].

mod args;
mod control_plane;
mod etcd;
mod pod;
pub mod rootless;
mod volumes;

use kubeadm_api::dynamic::ResolvedCluster;
use kubeadm_api::v1beta3::{ApiEndpoint, ClusterConfiguration};
use serde_json::Value;

use crate::images::{ImageOverride, ImageSettings};

pub use args::argument_list;
pub use etcd::{EtcdMember, client_url, peer_url};
pub use volumes::CA_CERTS_EXTRA_PATHS;

/// The default time to wait for the control plane (4 minutes), used when the configuration has none.
const DEFAULT_CONTROL_PLANE_TIMEOUT_NANOS: i64 = 4 * 60 * 1_000_000_000;

/// A control-plane component kubeadm runs as a static pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    /// `kube-apiserver`.
    ApiServer,
    /// `kube-controller-manager`.
    ControllerManager,
    /// `kube-scheduler`.
    Scheduler,
}

impl Component {
    /// The three components, in the order upstream writes them.
    pub const ALL: [Component; 3] = [
        Component::ApiServer,
        Component::ControllerManager,
        Component::Scheduler,
    ];

    /// The component (and pod, container and manifest file) name.
    pub fn name(self) -> &'static str {
        match self {
            Component::ApiServer => "kube-apiserver",
            Component::ControllerManager => "kube-controller-manager",
            Component::Scheduler => "kube-scheduler",
        }
    }
}

/// What upstream reads from the host while building manifests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestHostFacts {
    /// Which of [`CA_CERTS_EXTRA_PATHS`] exist on the host (they are mounted when they do).
    pub existing_ca_cert_dirs: Vec<String>,
    /// The process environment in its order; `*_proxy` variables are passed to the control plane.
    pub environment: Vec<(String, String)>,
    /// The CA certificate exists without its key (an external CA): the controller-manager then gets
    /// empty cluster-signing flags.
    pub external_ca: bool,
}

/// A static pod and what upstream would log while building it.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticPod {
    /// `kube-apiserver`, `kube-controller-manager`, `kube-scheduler` or `etcd`: the file is
    /// `<name>.yaml` in the manifests directory.
    pub name: String,
    /// The pod, shaped as Go's JSON of a `v1.Pod`.
    pub pod: Value,
    /// Warnings upstream logs (unknown authorization modes, etcd version fallback).
    pub warnings: Vec<String>,
}

impl StaticPod {
    /// The manifest file content.
    pub fn to_yaml(&self) -> String {
        render(&self.pod)
    }
}

/// Why a manifest cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// A local etcd pod was asked for but the configuration uses an external etcd.
    #[error("etcd static pod manifest cannot be generated for cluster using external etcd")]
    ExternalEtcd,
}

/// Renders a pod as the YAML upstream writes (`sigs.k8s.io/yaml` of the JSON, keys sorted).
pub fn render(pod: &Value) -> String {
    kubeadm_yaml::to_string(pod)
}

/// The image settings of a (defaulted, dynamically resolved) cluster configuration.
pub fn image_settings(cfg: &ClusterConfiguration, resolved: &ResolvedCluster) -> ImageSettings {
    ImageSettings {
        image_repository: cfg.image_repository.clone(),
        ci_image_repository: resolved.ci_image_repository.clone(),
        kubernetes_version: cfg.kubernetes_version.clone(),
        local_etcd: cfg.etcd.local.as_ref().map(|l| ImageOverride {
            image_repository: l.image_repository.clone(),
            image_tag: l.image_tag.clone(),
        }),
        dns: ImageOverride {
            image_repository: cfg.dns.image_repository.clone(),
            image_tag: cfg.dns.image_tag.clone(),
        },
    }
}

fn control_plane_timeout(cfg: &ClusterConfiguration) -> i64 {
    cfg.api_server
        .timeout_for_control_plane
        .map_or(DEFAULT_CONTROL_PLANE_TIMEOUT_NANOS, |d| d.as_nanos())
}

/// `kube-apiserver` probes the advertise address unless it is a wildcard (then the pod IP).
fn probe_address(addr: Option<&String>) -> String {
    match addr.map(String::as_str) {
        None | Some("") => "127.0.0.1".to_string(),
        Some("0.0.0.0") | Some("::") => String::new(),
        Some(a) => a.to_string(),
    }
}

/// The static pod of one control-plane component.
pub fn control_plane_pod(
    component: Component,
    cfg: &ClusterConfiguration,
    endpoint: &ApiEndpoint,
    resolved: &ResolvedCluster,
    host: &ManifestHostFacts,
) -> StaticPod {
    let images = image_settings(cfg, resolved);
    let mounts = volumes::mounts_for(component, cfg, &host.existing_ca_cert_dirs);
    let timeout = control_plane_timeout(cfg);
    let mut warnings = Vec::new();
    let mut annotations = Vec::new();
    let (command, requests, liveness, readiness, startup) = match component {
        Component::ApiServer => {
            let (command, w) = control_plane::api_server_command(cfg, endpoint);
            warnings = w;
            annotations.push((
                "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint",
                args::join_host_port(&endpoint.advertise_address, endpoint.bind_port),
            ));
            let probe = probe_address(Some(&endpoint.advertise_address));
            let port = i64::from(endpoint.bind_port);
            (
                command,
                "250m",
                pod::Probe::liveness(&probe, "/livez", port, "HTTPS"),
                Some(pod::Probe::readiness(&probe, "/readyz", port, "HTTPS")),
                pod::Probe::startup(&probe, "/livez", port, "HTTPS", timeout),
            )
        }
        Component::ControllerManager => {
            let probe = probe_address(cfg.controller_manager.extra_args.get("bind-address"));
            (
                control_plane::controller_manager_command(cfg, host.external_ca),
                "200m",
                pod::Probe::liveness(&probe, "/healthz", 10257, "HTTPS"),
                None,
                pod::Probe::startup(&probe, "/healthz", 10257, "HTTPS", timeout),
            )
        }
        Component::Scheduler => {
            let probe = probe_address(cfg.scheduler.extra_args.get("bind-address"));
            (
                control_plane::scheduler_command(cfg),
                "100m",
                pod::Probe::liveness(&probe, "/healthz", 10259, "HTTPS"),
                None,
                pod::Probe::startup(&probe, "/healthz", 10259, "HTTPS", timeout),
            )
        }
    };
    let container = pod::Container {
        name: component.name().to_string(),
        image: images.kubernetes_image(component.name()),
        command,
        env: pod::proxy_env(&host.environment),
        requests: vec![("cpu", requests)],
        mounts: mounts.mounts.values().cloned().collect(),
        liveness: Some(liveness),
        readiness,
        startup: Some(startup),
    };
    StaticPod {
        name: component.name().to_string(),
        pod: pod::component_pod(&container, &mounts.volumes, &annotations),
        warnings,
    }
}

/// The three control-plane static pods, in upstream's order.
pub fn control_plane_pods(
    cfg: &ClusterConfiguration,
    endpoint: &ApiEndpoint,
    resolved: &ResolvedCluster,
    host: &ManifestHostFacts,
) -> Vec<StaticPod> {
    Component::ALL
        .iter()
        .map(|c| control_plane_pod(*c, cfg, endpoint, resolved, host))
        .collect()
}

/// The local etcd static pod for `node_name`. With no `initial_cluster` the node starts a new
/// cluster of its own; otherwise it joins those members (`initial-cluster-state=existing`).
pub fn etcd_pod(
    cfg: &ClusterConfiguration,
    endpoint: &ApiEndpoint,
    node_name: &str,
    initial_cluster: &[EtcdMember],
    resolved: &ResolvedCluster,
) -> Result<StaticPod, ManifestError> {
    let local = cfg.etcd.local.as_ref().ok_or(ManifestError::ExternalEtcd)?;
    let images = image_settings(cfg, resolved);
    let (image, warning) = images.etcd_image().ok_or(ManifestError::ExternalEtcd)?;
    let pod = etcd::pod(
        cfg,
        local,
        endpoint,
        node_name,
        initial_cluster,
        image,
        control_plane_timeout(cfg),
    );
    Ok(StaticPod {
        name: "etcd".to_string(),
        pod,
        warnings: warning.into_iter().map(|w| w.0).collect(),
    })
}

/// Upstream's kube-apiserver builder also writes the chosen `authorization-mode` back into the
/// cluster configuration's `apiServer.extraArgs`, and that configuration is what `init` uploads
/// to the `kubeadm-config` ConfigMap afterwards. Callers that upload it call this first to keep
/// that side effect; returns upstream's warnings about the requested modes.
pub fn record_authorization_mode(cfg: &mut ClusterConfiguration) -> Vec<String> {
    let requested = cfg
        .api_server
        .extra_args
        .get("authorization-mode")
        .cloned()
        .unwrap_or_default();
    let (modes, warnings) = control_plane::authorization_modes(&requested);
    cfg.api_server
        .extra_args
        .insert("authorization-mode".to_string(), modes);
    warnings
}
