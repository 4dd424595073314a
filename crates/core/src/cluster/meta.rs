//! Object metadata and the small core/v1 kinds kubeadm creates (ConfigMap, Secret, ServiceAccount),
//! shaped as Go's `encoding/json` writes the typed objects: `creationTimestamp: null` always (a
//! zero `metav1.Time` is not omitted), empty maps and lists left out (`omitempty`).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value, json};

/// `metav1.NamespaceSystem`.
pub const NAMESPACE_SYSTEM: &str = "kube-system";
/// `metav1.NamespacePublic`.
pub const NAMESPACE_PUBLIC: &str = "kube-public";

/// `ObjectMeta` with a name and, when not empty, a namespace.
pub(crate) fn object_meta(name: &str, namespace: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("creationTimestamp".into(), Value::Null);
    meta.insert("name".into(), name.into());
    if !namespace.is_empty() {
        meta.insert("namespace".into(), namespace.into());
    }
    meta
}

/// A string map as JSON (`map[string]string`).
pub(crate) fn string_map<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

/// A typed object: apiVersion, kind, metadata and the kind's own fields.
pub(crate) fn object(
    api_version: &str,
    kind: &str,
    meta: Map<String, Value>,
    fields: impl IntoIterator<Item = (&'static str, Value)>,
) -> Value {
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), api_version.into());
    obj.insert("kind".into(), kind.into());
    obj.insert("metadata".into(), Value::Object(meta));
    for (k, v) in fields {
        obj.insert(k.into(), v);
    }
    Value::Object(obj)
}

/// A core/v1 ConfigMap (`data` left out when empty).
pub(crate) fn config_map(meta: Map<String, Value>, data: &BTreeMap<String, String>) -> Value {
    let fields = (!data.is_empty()).then(|| {
        (
            "data",
            Value::Object(
                data.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
        )
    });
    object("v1", "ConfigMap", meta, fields)
}

/// A core/v1 Secret. Values are base64 as Go writes `[]byte`; `None` is a nil slice, written `null`.
pub(crate) fn secret(
    meta: Map<String, Value>,
    secret_type: &str,
    data: &BTreeMap<String, Option<Vec<u8>>>,
) -> Value {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut fields = Vec::new();
    if !data.is_empty() {
        let data = data
            .iter()
            .map(|(k, v)| {
                let v = v.as_ref().map_or(Value::Null, |b| engine.encode(b).into());
                (k.clone(), v)
            })
            .collect();
        fields.push(("data", Value::Object(data)));
    }
    if !secret_type.is_empty() {
        fields.push(("type", secret_type.into()));
    }
    object("v1", "Secret", meta, fields)
}

/// A core/v1 ServiceAccount.
pub(crate) fn service_account(name: &str, namespace: &str) -> Value {
    object("v1", "ServiceAccount", object_meta(name, namespace), [])
}

/// Adds `key: value` under `metadata.<field>` (labels or annotations) of an object.
pub(crate) fn set_meta_entry(obj: &mut Value, field: &str, key: &str, value: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let entry = meta.entry(field).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        if let Some(map) = entry.as_object_mut() {
            map.insert(key.to_string(), value.into());
        }
    }
}

/// Where an object lives in the API, as upstream's dry-run client names it
/// (`Would perform action CREATE on resource "configmaps" in API group "core/v1"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiResource {
    /// The plural resource name.
    pub resource: &'static str,
    /// `group/version`, `core/v1` for the core group.
    pub group_version: &'static str,
}

/// The API resource of an object kubeadm builds, from its `apiVersion` and `kind`; `None` for
/// kinds kubeadm never creates.
pub fn api_resource(obj: &Value) -> Option<ApiResource> {
    let api_version = obj.get("apiVersion")?.as_str()?;
    let kind = obj.get("kind")?.as_str()?;
    let (resource, group_version) = match (api_version, kind) {
        ("v1", "ConfigMap") => ("configmaps", "core/v1"),
        ("v1", "Secret") => ("secrets", "core/v1"),
        ("v1", "ServiceAccount") => ("serviceaccounts", "core/v1"),
        ("v1", "Service") => ("services", "core/v1"),
        ("v1", "Node") => ("nodes", "core/v1"),
        ("apps/v1", "Deployment") => ("deployments", "apps/v1"),
        ("apps/v1", "DaemonSet") => ("daemonsets", "apps/v1"),
        ("rbac.authorization.k8s.io/v1", "Role") => ("roles", "rbac.authorization.k8s.io/v1"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => ("rolebindings", "rbac.authorization.k8s.io/v1"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => ("clusterroles", "rbac.authorization.k8s.io/v1"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            ("clusterrolebindings", "rbac.authorization.k8s.io/v1")
        }
        _ => return None,
    };
    Some(ApiResource {
        resource,
        group_version,
    })
}
