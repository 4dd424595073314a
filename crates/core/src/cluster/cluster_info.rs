//! The `cluster-info` ConfigMap in `kube-public` (a kubeconfig with only the cluster: the CA and the
//! API server URL, readable anonymously), its Role/RoleBinding, and the detached JWS signatures the
//! bootstrap signer adds to it (`jws-kubeconfig-<token-id>`), which joining nodes verify with their
//! token (k8s.io/cluster-bootstrap/token/jws).

use std::collections::BTreeMap;

use base64::Engine as _;
use hmac::{Hmac, KeyInit as _, Mac as _};
use serde_json::{Value, json};
use sha2::Sha256;

use super::meta::{NAMESPACE_PUBLIC, config_map, object_meta};
use super::rbac::{Subject, get_named_role_and_binding};

/// `bootstrapapi.ConfigMapClusterInfo`.
pub const CLUSTER_INFO_CONFIG_MAP: &str = "cluster-info";
/// `bootstrapapi.KubeConfigKey`.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// `bootstrapapi.JWSSignatureKeyPrefix`.
pub const JWS_SIGNATURE_KEY_PREFIX: &str = "jws-kubeconfig-";
/// `BootstrapSignerClusterRoleName`.
pub const BOOTSTRAP_SIGNER_CLUSTER_INFO_ROLE: &str = "kubeadm:bootstrap-signer-clusterinfo";
/// `user.Anonymous`.
pub const ANONYMOUS_USER: &str = "system:anonymous";

/// The kubeconfig stored in `cluster-info`: admin.conf's cluster (CA bytes embedded, server URL)
/// under the empty name, with no users or contexts, as `clientcmd.Write` renders it.
pub fn cluster_info_kubeconfig(ca_data: &[u8], server: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_data);
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "cluster": {"certificate-authority-data": ca, "server": server},
            "name": "",
        }],
        "contexts": null,
        "current-context": "",
        "preferences": {},
        "users": null,
    });
    kubeadm_yaml::to_string(&doc)
}

/// The `kube-public/cluster-info` ConfigMap, before the bootstrap signer adds signatures.
pub fn cluster_info_config_map(ca_data: &[u8], server: &str) -> Value {
    let data = BTreeMap::from([(
        KUBECONFIG_KEY.to_string(),
        cluster_info_kubeconfig(ca_data, server),
    )]);
    config_map(object_meta(CLUSTER_INFO_CONFIG_MAP, NAMESPACE_PUBLIC), &data)
}

/// The Role and RoleBinding letting anonymous users read `cluster-info`.
pub fn cluster_info_rbac() -> [Value; 2] {
    get_named_role_and_binding(
        BOOTSTRAP_SIGNER_CLUSTER_INFO_ROLE,
        NAMESPACE_PUBLIC,
        "configmaps",
        CLUSTER_INFO_CONFIG_MAP,
        &[Subject::User(ANONYMOUS_USER)],
    )
}

/// The data key of a token's signature in `cluster-info`.
pub fn jws_signature_key(token_id: &str) -> String {
    format!("{JWS_SIGNATURE_KEY_PREFIX}{token_id}")
}

/// `ComputeDetachedSignature`: an HS256 JWS (RFC 7515, appendix F) of `content` keyed by the token
/// secret, protected header `{"alg":"HS256","kid":"<token-id>"}`, with the payload part elided
/// (`<header>..<signature>`, unpadded base64url).
pub fn detached_jws(content: &str, token_id: &str, token_secret: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    // go-jose marshals the header as a map, so its keys come sorted: alg, then kid.
    let kid = serde_json::to_string(token_id).unwrap_or_else(|_| format!("\"{token_id}\""));
    let header = b64.encode(format!("{{\"alg\":\"HS256\",\"kid\":{kid}}}"));
    let payload = b64.encode(content);
    // HMAC accepts keys of any length, so this cannot fail.
    let signature = match Hmac::<Sha256>::new_from_slice(token_secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(header.as_bytes());
            mac.update(b".");
            mac.update(payload.as_bytes());
            b64.encode(mac.finalize().into_bytes())
        }
        Err(_) => String::new(),
    };
    format!("{header}..{signature}")
}

/// `DetachedTokenIsValid`: whether `signature` is the detached JWS of `content` for the token.
pub fn detached_jws_is_valid(signature: &str, content: &str, token_id: &str, token_secret: &str) -> bool {
    detached_jws(content, token_id, token_secret) == signature
}
