//! The `bootstrap-token` phase: the configured token Secrets (created or updated: upstream's `init`
//! passes `failIfExists=false` here), the TLS-bootstrap RBAC, and the `cluster-info` ConfigMap in `kube-public`
//! made from `admin.conf`'s cluster, with its RBAC.

use kubeadm_api::timestamp::Time;
use kubeadm_core::cluster::{bootstrap_token, cluster_info};
use kubeadm_effects::cluster::{Cluster, ClusterError, Resource};
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::ClusterConnectError;
use crate::InitData;
use crate::init::finish::{JoinCommandError, current_cluster};
use crate::upload_config::{apply_rbac, resource_of};

/// Why the phase failed (upstream's wrapping texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BootstrapTokenError {
    /// No client.
    #[error(transparent)]
    Client(#[from] ClusterConnectError),
    /// The clock is out of range.
    #[error("the current time is out of range")]
    Clock,
    /// A token without a value.
    #[error("error updating or creating token: {0}")]
    Missing(#[source] bootstrap_token::TokenSecretError),
    /// A token Secret.
    #[error("error updating or creating token: {0}")]
    Token(#[source] ClusterError),
    /// An RBAC object, with the step's context.
    #[error("{what}: {source}")]
    Rbac {
        /// Upstream's wrap text.
        what: &'static str,
        /// Why.
        #[source]
        source: ClusterError,
    },
    /// An API error upstream returns as it is.
    #[error(transparent)]
    Unwrapped(ClusterError),
    /// `admin.conf` unusable.
    #[error("error creating bootstrap ConfigMap: {0}")]
    AdminConf(#[source] JoinCommandError),
    /// The ConfigMap.
    #[error("error creating bootstrap ConfigMap: {0}")]
    ClusterInfo(#[source] ClusterError),
    /// Its RBAC.
    #[error("error creating clusterinfo RBAC rules: {0}")]
    ClusterInfoRbac(#[source] ClusterError),
}

fn rbac(what: &'static str) -> impl Fn(ClusterError) -> BootstrapTokenError {
    move |source| BootstrapTokenError::Rbac { what, source }
}

/// Creates or updates cluster-wide RBAC objects (no retry, as upstream's `CreateOrUpdateClusterRole`).
fn apply(c: &dyn Cluster, objects: &[Value]) -> Result<(), ClusterError> {
    for obj in objects {
        c.create_or_update(&resource_of(obj), obj)?;
    }
    Ok(())
}

/// `bootstrap-token`.
pub(crate) fn run(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(BootstrapTokenError::Client)?;
    let tokens: Vec<String> = data
        .cfg
        .init
        .bootstrap_tokens
        .iter()
        .filter_map(|t| t.token.as_ref().map(ToString::to_string))
        .collect();
    if !data.skip_token_print {
        match tokens.as_slice() {
            [] => {}
            [one] => data.say(&format!("[bootstrap-token] Using token: {one}")),
            many => data.say(&format!("[bootstrap-token] Using tokens: [{}]", many.join(" "))),
        }
    }
    data.say("[bootstrap-token] Configuring bootstrap tokens, cluster-info ConfigMap, RBAC Roles");
    let now = Time::from_unix_seconds(data.now).ok_or(BootstrapTokenError::Clock)?;
    // Every Secret is built before the first is written: a token that cannot become one (no value,
    // an expiration out of range) leaves the cluster as it was.
    let secrets =
        token_secrets(&data.cfg.init.bootstrap_tokens, now).map_err(BootstrapTokenError::Missing)?;
    for (id, secret) in &secrets {
        c.create_or_update_token_secret(id, secret, false)
            .map_err(BootstrapTokenError::Token)?;
    }
    data.say("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to get nodes");
    apply(c, &bootstrap_token::allow_get_nodes())
        .map_err(rbac("error allowing bootstrap tokens to get Nodes"))?;
    data.say("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to post CSRs in order for nodes to get long term certificate credentials");
    apply(c, &[bootstrap_token::allow_post_csrs()])
        .map_err(rbac("error allowing bootstrap tokens to post CSRs"))?;
    data.say("[bootstrap-token] Configured RBAC rules to allow the csrapprover controller automatically approve CSRs from a Node Bootstrap Token");
    apply(c, &[bootstrap_token::auto_approve_node_bootstrap_tokens()])
        .map_err(rbac("error auto-approving node bootstrap tokens"))?;
    data.say("[bootstrap-token] Configured RBAC rules to allow certificate rotation for all node client certificates in the cluster");
    // Upstream returns this step's error without context.
    apply(c, &[bootstrap_token::auto_approve_node_certificate_rotation()])
        .map_err(BootstrapTokenError::Unwrapped)?;

    data.say(&format!(
        "[bootstrap-token] Creating the {:?} ConfigMap in the {:?} namespace",
        cluster_info::CLUSTER_INFO_CONFIG_MAP,
        kubeadm_core::cluster::meta::NAMESPACE_PUBLIC
    ));
    let admin = current_cluster(&*data.effects.fs, &data.cluster.kubeconfig_path)
        .map_err(BootstrapTokenError::AdminConf)?;
    let info = cluster_info::cluster_info_config_map(&admin.ca_pem, &admin.server);
    c.create_or_update(&Resource::config_maps(), &info)
        .map_err(BootstrapTokenError::ClusterInfo)?;
    apply_rbac(c, &cluster_info::cluster_info_rbac()).map_err(BootstrapTokenError::ClusterInfoRbac)?;
    Ok(())
}

/// Why `kubeadm token create` could not create its tokens.
#[derive(Debug, thiserror::Error)]
pub enum CreateTokensError {
    /// A token without a value (dynamic defaulting gives every token one).
    #[error(transparent)]
    Missing(#[from] bootstrap_token::TokenSecretError),
    /// The Secret exists already, or the API refused it.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// Upstream's `CreateNewTokens`: a Secret for each token, in order, failing on the first whose id is
/// taken (unlike the `bootstrap-token` phase, which updates existing ones).
pub fn create_new_tokens(
    c: &dyn Cluster,
    tokens: &[kubeadm_api::v1beta3::BootstrapToken],
    now: Time,
) -> Result<(), CreateTokensError> {
    for (id, secret) in &token_secrets(tokens, now)? {
        c.create_or_update_token_secret(id, secret, true)?;
    }
    Ok(())
}

/// Each token's id and Secret, in order; the first token that cannot become a Secret is the error.
fn token_secrets(
    tokens: &[kubeadm_api::v1beta3::BootstrapToken],
    now: Time,
) -> Result<Vec<(String, Value)>, bootstrap_token::TokenSecretError> {
    tokens
        .iter()
        .enumerate()
        .map(|(i, token)| {
            let secret = bootstrap_token::token_secret(token, i, now)?;
            let id = token.token.as_ref().map(|t| t.id.clone()).unwrap_or_default();
            Ok((id, secret))
        })
        .collect()
}
