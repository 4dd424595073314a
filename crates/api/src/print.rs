//! The texts of `kubeadm config print init-defaults` and `join-defaults`: statically defaulted
//! configurations with placeholder values, rendered as upstream renders them.

use crate::defaults::{
    DEFAULT_CRI_SOCKET, default_cluster_configuration, default_init_configuration, default_join_configuration,
};
use crate::dynamic::{DynamicError, HostFacts, default_join_dynamic};
use crate::v1beta3::{
    API_VERSION, ApiEndpoint, BootstrapToken, BootstrapTokenDiscovery, BootstrapTokenString,
    ClusterConfiguration, Discovery, InitConfiguration, JoinConfiguration, NodeRegistrationOptions,
};
use crate::version::CURRENT_KUBERNETES_VERSION;

/// The placeholder token upstream prints instead of a random one.
pub const PLACEHOLDER_TOKEN: &str = "abcdef.0123456789abcdef";

/// A component config that `--component-configs` can add to the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentConfigKind {
    /// `KubeletConfiguration`.
    Kubelet,
    /// `KubeProxyConfiguration`.
    KubeProxy,
}

/// Why the defaults could not be printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrintError {
    /// `--component-configs` named something else.
    #[error("--component-configs needs to contain some of [KubeProxyConfiguration KubeletConfiguration]")]
    UnknownComponentConfig(String),
    /// Defaulting failed (e.g. an empty hostname for join-defaults).
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
}

impl ComponentConfigKind {
    /// Maps a `--component-configs` entry (a kind name) to a component config.
    pub fn from_kind(kind: &str) -> Result<Self, PrintError> {
        match kind {
            "KubeletConfiguration" => Ok(ComponentConfigKind::Kubelet),
            "KubeProxyConfiguration" => Ok(ComponentConfigKind::KubeProxy),
            other => Err(PrintError::UnknownComponentConfig(other.to_string())),
        }
    }
}

/// The statically defaulted init and cluster configurations `config print init-defaults` shows.
pub fn static_init_defaults() -> (InitConfiguration, ClusterConfiguration) {
    let mut init = InitConfiguration {
        local_api_endpoint: ApiEndpoint {
            advertise_address: "1.2.3.4".to_string(),
            ..ApiEndpoint::default()
        },
        bootstrap_tokens: vec![BootstrapToken {
            token: BootstrapTokenString::parse(PLACEHOLDER_TOKEN).ok(),
            ..BootstrapToken::default()
        }],
        node_registration: NodeRegistrationOptions {
            cri_socket: DEFAULT_CRI_SOCKET.to_string(),
            name: "node".to_string(),
            ..NodeRegistrationOptions::default()
        },
        ..InitConfiguration::default()
    };
    default_init_configuration(&mut init);
    let mut cluster = ClusterConfiguration {
        kubernetes_version: CURRENT_KUBERNETES_VERSION.to_string(),
        ..ClusterConfiguration::default()
    };
    default_cluster_configuration(&mut cluster);
    (init, cluster)
}

/// The join configuration `config print join-defaults` shows (the node name is the host's).
pub fn join_defaults(host: &HostFacts) -> Result<JoinConfiguration, DynamicError> {
    let mut join = JoinConfiguration {
        discovery: Discovery {
            bootstrap_token: Some(BootstrapTokenDiscovery {
                token: PLACEHOLDER_TOKEN.to_string(),
                api_server_endpoint: "kube-apiserver:6443".to_string(),
                unsafe_skip_ca_verification: true,
                ..BootstrapTokenDiscovery::default()
            }),
            ..Discovery::default()
        },
        node_registration: NodeRegistrationOptions {
            cri_socket: DEFAULT_CRI_SOCKET.to_string(),
            ..NodeRegistrationOptions::default()
        },
        ..JoinConfiguration::default()
    };
    default_join_configuration(&mut join);
    default_join_dynamic(&mut join, host)?;
    Ok(join)
}

/// Renders one object as a YAML document, with its apiVersion and kind set.
pub fn to_yaml<T: serde::Serialize>(obj: &T, kind: &str) -> String {
    let mut value = match serde_json::to_value(obj) {
        Ok(v) => v,
        // Our types serialise to JSON infallibly (string keys only, no non-finite floats).
        Err(e) => serde_json::Value::String(e.to_string()),
    };
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_string(), API_VERSION.into());
        map.insert("kind".to_string(), kind.into());
    }
    kubeadm_yaml::to_string(&value)
}

/// `kubeadm config print init-defaults [--component-configs ...]`, byte for byte.
pub fn print_init_defaults(host: &HostFacts, component_configs: &[&str]) -> Result<String, PrintError> {
    let (init, cluster) = static_init_defaults();
    let docs = vec![
        to_yaml(&init, "InitConfiguration"),
        to_yaml(&cluster, "ClusterConfiguration"),
    ];
    with_component_configs(docs, host, component_configs)
}

/// `kubeadm config print join-defaults [--component-configs ...]`, byte for byte.
pub fn print_join_defaults(host: &HostFacts, component_configs: &[&str]) -> Result<String, PrintError> {
    let join = join_defaults(host)?;
    with_component_configs(vec![to_yaml(&join, "JoinConfiguration")], host, component_configs)
}

fn with_component_configs(
    mut docs: Vec<String>,
    host: &HostFacts,
    kinds: &[&str],
) -> Result<String, PrintError> {
    let kinds = kinds
        .iter()
        .map(|k| ComponentConfigKind::from_kind(k))
        .collect::<Result<Vec<_>, _>>()?;
    for kind in kinds {
        docs.push(crate::componentconfig::default_document(kind, host)?);
    }
    Ok(docs.join("---\n"))
}
