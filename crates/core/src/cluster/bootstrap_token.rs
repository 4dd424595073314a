//! The `bootstrap-token` phase's objects: one `bootstrap.kubernetes.io/token` Secret per token, and
//! the RBAC that lets bootstrap tokens read nodes and post CSRs, and has the csrapprover
//! controller approve node client certificates and their rotation.

use std::collections::BTreeMap;

use kubeadm_api::duration::Duration;
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString};
use serde_json::Value;

use super::meta::{NAMESPACE_SYSTEM, object_meta, secret};
use super::rbac::{NODE_BOOTSTRAP_TOKEN_AUTH_GROUP, NODES_GROUP, Subject, binding, role, rule};

/// `bootstrapapi.SecretTypeBootstrapToken`.
pub const SECRET_TYPE_BOOTSTRAP_TOKEN: &str = "bootstrap.kubernetes.io/token";
/// `GetNodesClusterRoleName`.
pub const GET_NODES_ROLE: &str = "kubeadm:get-nodes";
/// `NodeKubeletBootstrap`.
pub const KUBELET_BOOTSTRAP_BINDING: &str = "kubeadm:kubelet-bootstrap";
/// `NodeBootstrapperClusterRoleName`.
pub const NODE_BOOTSTRAPPER_ROLE: &str = "system:node-bootstrapper";
/// `NodeAutoApproveBootstrapClusterRoleBinding`.
pub const AUTO_APPROVE_BOOTSTRAP_BINDING: &str = "kubeadm:node-autoapprove-bootstrap";
/// `CSRAutoApprovalClusterRoleName`.
pub const CSR_AUTO_APPROVAL_ROLE: &str = "system:certificates.k8s.io:certificatesigningrequests:nodeclient";
/// `NodeAutoApproveCertificateRotationClusterRoleBinding`.
pub const AUTO_APPROVE_ROTATION_BINDING: &str = "kubeadm:node-autoapprove-certificate-rotation";
/// `NodeSelfCSRAutoApprovalClusterRoleName`.
pub const SELF_CSR_AUTO_APPROVAL_ROLE: &str =
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient";

/// Why a bootstrap token cannot become a Secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenSecretError {
    /// The token has no `id.secret`.
    #[error("bootstrap token {index} has no token string")]
    Missing {
        /// Position of the token in `bootstrapTokens`.
        index: usize,
    },
    /// The token has a TTL but `now + ttl` is not a time the Secret can hold. Upstream writes the
    /// Secret anyway; one without an expiration would never expire (nor would what it owns, such
    /// as `kubeadm-certs`), so it is refused.
    #[error(
        "bootstrap token {index}: cannot compute its expiration: the current time plus its TTL {ttl} is out of range"
    )]
    Expiration {
        /// Position of the token in `bootstrapTokens`.
        index: usize,
        /// The token's TTL.
        ttl: Duration,
    },
}

/// `bootstrap-token-<id>`.
pub fn token_secret_name(token_id: &str) -> String {
    format!("bootstrap-token-{token_id}")
}

/// The Secret of a bootstrap token (upstream `BootstrapTokenToSecret`). The expiration is
/// `expires` when set, else `now + ttl` for a positive TTL, as RFC 3339 in UTC with whole seconds;
/// a token with neither never expires; an expiration out of range is an error. `index` only names
/// the token in the error.
pub fn token_secret(token: &BootstrapToken, index: usize, now: Time) -> Result<Value, TokenSecretError> {
    let bts = token.token.as_ref().ok_or(TokenSecretError::Missing { index })?;
    let mut data: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        data.insert(k.to_string(), Some(v.into_bytes()));
    };
    put("token-id", bts.id.clone());
    put("token-secret", bts.secret.clone());
    if !token.description.is_empty() {
        put("description", token.description.clone());
    }
    if let Some(expires) = token.expires {
        put("expiration", expires.to_string());
    } else if let Some(ttl) = token.ttl.filter(|d| d.as_nanos() > 0) {
        // Go adds the TTL to a nanosecond clock and then drops the fraction; with a whole-second
        // `now` that is the floor of the TTL in seconds.
        let t = now
            .unix_seconds()
            .checked_add(ttl.as_nanos().div_euclid(1_000_000_000))
            .and_then(Time::from_unix_seconds)
            .ok_or(TokenSecretError::Expiration { index, ttl })?;
        put("expiration", t.to_string());
    }
    for usage in &token.usages {
        put(&format!("usage-bootstrap-{usage}"), "true".to_string());
    }
    if !token.groups.is_empty() {
        put("auth-extra-groups", token.groups.join(","));
    }
    Ok(secret(
        object_meta(&token_secret_name(&bts.id), NAMESPACE_SYSTEM),
        SECRET_TYPE_BOOTSTRAP_TOKEN,
        &data,
    ))
}

/// `AllowBoostrapTokensToGetNodes`: the `kubeadm:get-nodes` ClusterRole and its binding (upstream
/// gives both a `kube-system` namespace, which the API server ignores for cluster objects).
pub fn allow_get_nodes() -> [Value; 2] {
    [
        role(
            true,
            GET_NODES_ROLE,
            NAMESPACE_SYSTEM,
            vec![rule(&["get"], &[""], &["nodes"], &[])],
        ),
        binding(
            true,
            GET_NODES_ROLE,
            NAMESPACE_SYSTEM,
            "ClusterRole",
            GET_NODES_ROLE,
            &[Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP)],
        ),
    ]
}

/// `AllowBootstrapTokensToPostCSRs`.
pub fn allow_post_csrs() -> Value {
    binding(
        true,
        KUBELET_BOOTSTRAP_BINDING,
        "",
        "ClusterRole",
        NODE_BOOTSTRAPPER_ROLE,
        &[Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP)],
    )
}

/// `AutoApproveNodeBootstrapTokens`.
pub fn auto_approve_node_bootstrap_tokens() -> Value {
    binding(
        true,
        AUTO_APPROVE_BOOTSTRAP_BINDING,
        "",
        "ClusterRole",
        CSR_AUTO_APPROVAL_ROLE,
        &[Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP)],
    )
}

/// `AutoApproveNodeCertificateRotation`.
pub fn auto_approve_node_certificate_rotation() -> Value {
    binding(
        true,
        AUTO_APPROVE_ROTATION_BINDING,
        "",
        "ClusterRole",
        SELF_CSR_AUTO_APPROVAL_ROLE,
        &[Subject::Group(NODES_GROUP)],
    )
}

/// Why a Secret is not a bootstrap token; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFromSecretError {
    /// No `token-id`.
    #[error("bootstrap Token Secret has no token-id data: {0}")]
    NoId(String),
    /// The name is not `bootstrap-token-<token-id>`.
    #[error(
        "bootstrap token name is not of the form 'bootstrap-token-(token-id)'. Actual: {actual:?}. Expected: {expected:?}"
    )]
    Name {
        /// The Secret's name.
        actual: String,
        /// The name its token id calls for.
        expected: String,
    },
    /// No `token-secret`.
    #[error("bootstrap Token Secret has no token-secret data: {0}")]
    NoSecret(String),
    /// `id.secret` is malformed.
    #[error("bootstrap Token Secret is invalid and couldn't be parsed: {0}")]
    Invalid(#[source] kubeadm_api::v1beta3::BootstrapTokenError),
    /// `expiration` is not RFC 3339.
    #[error("can't parse expiration time of bootstrap token {name:?}: {reason}")]
    Expiration {
        /// The Secret's name.
        name: String,
        /// The parse error.
        reason: kubeadm_api::timestamp::TimeParseError,
    },
}

/// `BootstrapTokenFromSecret`: a token read back from its Secret (`secret` as JSON, data base64):
/// usages are the `usage-bootstrap-*` keys set to exactly `true`, sorted; groups from
/// `auth-extra-groups`.
pub fn token_from_secret(secret: &Value) -> Result<BootstrapToken, TokenFromSecretError> {
    use base64::Engine as _;
    let name = secret
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let data: BTreeMap<String, String> = secret
        .get("data")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let bytes = v
                .as_str()
                .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                .unwrap_or_default();
            (k.clone(), String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    let get = |k: &str| data.get(k).cloned().unwrap_or_default();
    let id = get("token-id");
    if id.is_empty() {
        return Err(TokenFromSecretError::NoId(name));
    }
    let expected = token_secret_name(&id);
    if name != expected {
        return Err(TokenFromSecretError::Name {
            actual: name,
            expected,
        });
    }
    let token_secret = get("token-secret");
    if token_secret.is_empty() {
        return Err(TokenFromSecretError::NoSecret(name));
    }
    let token = BootstrapTokenString::parse(&format!("{id}.{token_secret}"))
        .map_err(TokenFromSecretError::Invalid)?;
    let expiration = get("expiration");
    let expires = if expiration.is_empty() {
        None
    } else {
        Some(
            Time::parse(&expiration).map_err(|reason| TokenFromSecretError::Expiration {
                name: name.clone(),
                reason,
            })?,
        )
    };
    // BTreeMap iteration is already in key order, so the usages come out sorted.
    let usages = data
        .iter()
        .filter(|(_, v)| v.as_str() == "true")
        .filter_map(|(k, _)| k.strip_prefix("usage-bootstrap-"))
        .map(str::to_string)
        .collect();
    let groups_text = get("auth-extra-groups");
    let groups = if groups_text.split(',').next().is_some_and(|g| !g.is_empty()) {
        groups_text.split(',').map(str::to_string).collect()
    } else {
        Vec::new()
    };
    Ok(BootstrapToken {
        token: Some(token),
        description: get("description"),
        ttl: None,
        expires,
        usages,
        groups,
    })
}
