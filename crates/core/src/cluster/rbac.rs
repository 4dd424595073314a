//! RBAC objects (rbac.authorization.k8s.io/v1) as kubeadm builds them: roles with one rule each,
//! bindings to groups, users or service accounts.

use serde_json::{Map, Value, json};

use super::meta::{object, object_meta};

/// `rbac.GroupName`.
pub(crate) const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const RBAC_API_VERSION: &str = "rbac.authorization.k8s.io/v1";

/// The group every default bootstrap token authenticates as (`NodeBootstrapTokenAuthGroup`).
pub const NODE_BOOTSTRAP_TOKEN_AUTH_GROUP: &str = "system:bootstrappers:kubeadm:default-node-token";
/// The group of all nodes (`NodesGroup`).
pub const NODES_GROUP: &str = "system:nodes";

/// A `PolicyRule`. `verbs` is always written; the other lists are `omitempty`.
pub(crate) fn rule(
    verbs: &[&str],
    api_groups: &[&str],
    resources: &[&str],
    resource_names: &[&str],
) -> Value {
    let mut r = Map::new();
    r.insert("verbs".into(), json!(verbs));
    for (key, list) in [
        ("apiGroups", api_groups),
        ("resources", resources),
        ("resourceNames", resource_names),
    ] {
        if !list.is_empty() {
            r.insert(key.into(), json!(list));
        }
    }
    Value::Object(r)
}

/// The one-rule "get this named object of the core group" policy kubeadm grants so often.
pub(crate) fn get_named(resource: &str, name: &str) -> Value {
    rule(&["get"], &[""], &[resource], &[name])
}

/// A binding's subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject<'a> {
    /// `kind: Group` (no apiGroup: kubeadm leaves it empty).
    Group(&'a str),
    /// `kind: User`.
    User(&'a str),
    /// `kind: ServiceAccount` in a namespace.
    ServiceAccount(&'a str, &'a str),
}

impl Subject<'_> {
    fn to_value(self) -> Value {
        match self {
            Subject::Group(name) => json!({"kind": "Group", "name": name}),
            Subject::User(name) => json!({"kind": "User", "name": name}),
            Subject::ServiceAccount(name, ns) => {
                json!({"kind": "ServiceAccount", "name": name, "namespace": ns})
            }
        }
    }
}

/// A Role (or ClusterRole when `cluster` is set; upstream gives some ClusterRoles a namespace).
pub(crate) fn role(cluster: bool, name: &str, namespace: &str, rules: Vec<Value>) -> Value {
    let kind = if cluster { "ClusterRole" } else { "Role" };
    object(
        RBAC_API_VERSION,
        kind,
        object_meta(name, namespace),
        [("rules", Value::Array(rules))],
    )
}

/// A RoleBinding (or ClusterRoleBinding when `cluster` is set) to the role `role_kind`/`role_name`.
pub(crate) fn binding(
    cluster: bool,
    name: &str,
    namespace: &str,
    role_kind: &str,
    role_name: &str,
    subjects: &[Subject<'_>],
) -> Value {
    let kind = if cluster {
        "ClusterRoleBinding"
    } else {
        "RoleBinding"
    };
    let mut fields = vec![(
        "roleRef",
        json!({"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role_name}),
    )];
    if !subjects.is_empty() {
        fields.push((
            "subjects",
            Value::Array(subjects.iter().map(|s| s.to_value()).collect()),
        ));
    }
    object(RBAC_API_VERSION, kind, object_meta(name, namespace), fields)
}

/// A namespaced Role granting `get` on one named object, and its RoleBinding of the same name.
pub(crate) fn get_named_role_and_binding(
    name: &str,
    namespace: &str,
    resource: &str,
    object_name: &str,
    subjects: &[Subject<'_>],
) -> [Value; 2] {
    [
        role(false, name, namespace, vec![get_named(resource, object_name)]),
        binding(false, name, namespace, "Role", name, subjects),
    ]
}
