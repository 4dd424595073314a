//! The Kubernetes API server as kubeadm uses it: get, list, create, update, patch and delete of
//! objects held as `serde_json::Value` (shaped as Go's `encoding/json` writes the typed objects), and
//! the write policies of upstream's `apiclient/idempotency.go` (create-or-update, create-or-mutate,
//! create-or-retain, the node patch loop, retries) as provided methods, so that the real client
//! (kubeadm-host), the dry-run decorator ([`DryRunCluster`]) and test fakes all follow them alike.
//!
//! Waits go through [`Cluster::pause`], so a fake can make them instant; a policy counts the time
//! it paused as well as the wall clock, so it gives up after the same number of attempts as
//! upstream even when pauses take no time.

mod dry_run;
mod error;
mod policy;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde_json::Value;

pub use dry_run::{DryRunAction, DryRunCluster, MarshalFn};
pub use error::ClusterError;
pub use policy::{Attempt, Backoff, Poll};

/// A kind of object, by where it lives in the REST API.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// The API group, empty for the core group.
    pub group: String,
    /// The version, e.g. `v1`.
    pub version: String,
    /// The plural resource name, e.g. `configmaps`.
    pub plural: String,
}

impl Resource {
    /// A resource in `group` (empty for core) at `version`.
    pub fn new(group: &str, version: &str, plural: &str) -> Self {
        Self {
            group: group.to_string(),
            version: version.to_string(),
            plural: plural.to_string(),
        }
    }

    /// A core/v1 resource.
    pub fn core(plural: &str) -> Self {
        Self::new("", "v1", plural)
    }

    /// A resource from a `group/version` as the dry-run output writes it (`core/v1`,
    /// `rbac.authorization.k8s.io/v1`) or as an `apiVersion` (`v1`, `apps/v1`).
    pub fn from_group_version(group_version: &str, plural: &str) -> Self {
        match group_version.split_once('/') {
            Some(("core", version)) => Self::new("", version, plural),
            Some((group, version)) => Self::new(group, version, plural),
            None => Self::new("", group_version, plural),
        }
    }

    /// `ConfigMap`s.
    pub fn config_maps() -> Self {
        Self::core("configmaps")
    }
    /// `Secret`s.
    pub fn secrets() -> Self {
        Self::core("secrets")
    }
    /// `Node`s.
    pub fn nodes() -> Self {
        Self::core("nodes")
    }

    /// Whether objects of this kind live outside namespaces (known kinds: Nodes, Namespaces,
    /// cluster RBAC, CSRs and the like). Upstream sets `kube-system` on some cluster-scoped objects
    /// (`kubeadm:get-nodes`); the typed client ignores it, and so must the URL.
    pub fn is_cluster_scoped(&self) -> bool {
        matches!(
            self.plural.as_str(),
            "nodes"
                | "namespaces"
                | "persistentvolumes"
                | "clusterroles"
                | "clusterrolebindings"
                | "certificatesigningrequests"
                | "customresourcedefinitions"
                | "priorityclasses"
                | "storageclasses"
                | "runtimeclasses"
                | "apiservices"
                | "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
        )
    }

    /// The namespace a call on this resource goes to: `namespace`, or none when cluster-scoped.
    pub fn scope<'a>(&self, namespace: &'a str) -> &'a str {
        if self.is_cluster_scoped() { "" } else { namespace }
    }

    /// `group/version` with `core` for the core group, as upstream's dry-run prints it.
    pub fn group_version_label(&self) -> String {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        format!("{group}/{}", self.version)
    }

    /// `plural.group` (just `plural` for core), as the API server names a resource in its errors
    /// (`clusterroles.rbac.authorization.k8s.io "x" not found`).
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// How upstream's idempotency helpers name the kind in their wrapped errors
    /// (`unable to create ConfigMap`, `unable to update RBAC role`).
    pub fn noun(&self) -> String {
        match self.plural.as_str() {
            "configmaps" => "ConfigMap".to_string(),
            "secrets" => "secret".to_string(),
            "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings" => {
                format!("RBAC {}", self.plural.trim_end_matches('s'))
            }
            other => other.trim_end_matches('s').to_string(),
        }
    }
}

/// An API verb, upper-case as the dry-run output prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// LIST of a collection.
    List,
    /// CREATE (POST).
    Create,
    /// UPDATE (PUT).
    Update,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verb::Get => "GET",
            Verb::List => "LIST",
            Verb::Create => "CREATE",
            Verb::Update => "UPDATE",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        })
    }
}

/// One API call, named in errors: verb, resource, namespace (empty when cluster-scoped) and name
/// (empty for LIST).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The verb.
    pub verb: Verb,
    /// The resource.
    pub resource: Resource,
    /// The namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's name, empty for LIST.
    pub name: String,
}

impl Call {
    /// A call on `resource` in `namespace` (empty: cluster-scoped) for `name` (empty: the collection).
    pub fn new(verb: Verb, resource: &Resource, namespace: &str, name: &str) -> Self {
        Self {
            verb,
            resource: resource.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource.group_resource())?;
        if !self.name.is_empty() {
            write!(f, " {:?}", self.name)?;
        }
        if !self.namespace.is_empty() {
            write!(f, " in namespace {:?}", self.namespace)?;
        }
        Ok(())
    }
}

/// How a PATCH body is to be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/strategic-merge-patch+json` (what upstream uses for Nodes).
    Strategic,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
}

/// What a DELETE does with the object's dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Dependents are deleted before the object (upstream's `DeletePropagationForeground`).
    Foreground,
    /// The object goes first, dependents in the background.
    Background,
    /// Dependents are left alone.
    Orphan,
}

/// Selectors of a LIST.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// A label selector (`k8s-app=kube-dns`), empty for all.
    pub label_selector: String,
    /// A field selector (`type=bootstrap.kubernetes.io/token`), empty for all.
    pub field_selector: String,
}

/// `metadata.namespace` and `metadata.name` of an object (empty when absent).
pub fn object_key(object: &Value) -> (&str, &str) {
    let meta = object.get("metadata");
    let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or("");
    (field("namespace"), field("name"))
}

/// Upstream's `constants.APICallRetryInterval`.
pub const API_CALL_RETRY_INTERVAL: Duration = Duration::from_millis(500);
/// Upstream's `constants.APICallWithWriteTimeout`.
pub const API_CALL_WITH_WRITE_TIMEOUT: Duration = Duration::from_secs(40);
/// Upstream's `constants.PatchNodeTimeout`.
pub const PATCH_NODE_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a Node not yet registered (or a patch that conflicted) is tried again. Upstream waits
/// `APICallRetryInterval` (500 ms) before its first attempt and between attempts (`wait.Poll`); the
/// first attempt is made at once here and the next ones every 100 ms: nothing is printed per attempt,
/// and a Node the kubelet registers late is seen sooner.
pub const PATCH_NODE_RETRY_INTERVAL: Duration = Duration::from_millis(100);

/// A shared client is a client too, so that a test can keep a handle on the fake it gives away.
impl<C: Cluster + ?Sized> Cluster for std::sync::Arc<C> {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        (**self).get(resource, namespace, name)
    }
    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        (**self).list(resource, namespace, options)
    }
    fn list_object(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Value, ClusterError> {
        (**self).list_object(resource, namespace, options)
    }
    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        (**self).create(resource, object)
    }
    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        (**self).update(resource, object)
    }
    fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value, ClusterError> {
        (**self).patch(resource, namespace, name, patch_type, patch)
    }
    fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<(), ClusterError> {
        (**self).delete(resource, namespace, name, propagation)
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        (**self).healthy()
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        (**self).failing_readyz_checks()
    }
    fn pause(&self, duration: Duration) {
        (**self).pause(duration);
    }
    fn wait_for_api(&self, timeout: Duration) -> Result<Duration, ClusterError> {
        (**self).wait_for_api(timeout)
    }
}

/// Access to the API server. Implementations: the kube-rs client (kubeadm-host), [`DryRunCluster`]
/// and kubeadm-testkit's `FakeCluster`. The provided methods are upstream's policies, built only on
/// the required calls; implementations override none of them but `pause` and `wait_for_api` (the `Arc`
/// forwarding above relies on that).
pub trait Cluster: Send + Sync {
    /// GET one object.
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError>;
    /// LIST objects (all namespaces when `namespace` is empty); returns the items.
    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError>;
    /// LIST, the whole list object as the server sent it (`kind`, `apiVersion`, `metadata`,
    /// `items`), for the dry runs that print what they read. Default: the items of [`Cluster::list`]
    /// in a bare list.
    fn list_object(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Value, ClusterError> {
        Ok(serde_json::json!({ "items": self.list(resource, namespace, options)? }))
    }
    /// CREATE an object; its namespace and name come from its `metadata`.
    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError>;
    /// UPDATE (replace) an object; its namespace and name come from its `metadata`.
    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError>;
    /// PATCH an object.
    fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value, ClusterError>;
    /// DELETE an object.
    fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<(), ClusterError>;
    /// One probe of the API server's health endpoint (`/healthz`): `Ok(true)` when it answers 200.
    fn healthy(&self) -> Result<bool, ClusterError>;
    /// One probe of the API server's readiness checks (`/readyz?verbose`): the checks that fail, each
    /// as the API server words it (`etcd failed: reason withheld`); empty when it is ready. Beyond
    /// upstream, for the diagnosis of a failed wait.
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError>;

    /// Waits `duration` between attempts. Fakes override it to return at once.
    fn pause(&self, duration: Duration) {
        std::thread::sleep(duration);
    }

    /// Upstream's `CreateOrUpdate<Kind>`: CREATE; on AlreadyExists, UPDATE. Errors are wrapped as
    /// upstream wraps them (`unable to create ConfigMap: ...`).
    fn create_or_update(&self, resource: &Resource, object: &Value) -> Result<(), ClusterError> {
        policy::create_or_update(self, resource, object)
    }

    /// Upstream's `CreateOrUpdateRole`/`RoleBinding`: create-or-update retried every 500ms for up
    /// to 40s; the last error when it never succeeds.
    fn create_or_update_with_retry(&self, resource: &Resource, object: &Value) -> Result<(), ClusterError> {
        let poll = Poll::immediate(API_CALL_RETRY_INTERVAL, API_CALL_WITH_WRITE_TIMEOUT);
        poll.run(self, || policy::create_or_update(self, resource, object).into())
    }

    /// Upstream's `CreateOrUpdateServiceAccount`: CREATE; an existing object is left as it is.
    fn create_or_keep(&self, resource: &Resource, object: &Value) -> Result<(), ClusterError> {
        match self.create(resource, object) {
            Err(e) if !e.is_already_exists() => {
                Err(e.context(format!("unable to create {}", resource.noun())))
            }
            _ => Ok(()),
        }
    }

    /// Upstream's `CreateOrRetain<Kind>`: GET; only when NotFound, CREATE (AlreadyExists is fine).
    /// As upstream, a GET that fails otherwise counts as "exists" and nothing is written.
    fn create_or_retain(&self, resource: &Resource, object: &Value) -> Result<(), ClusterError> {
        policy::create_or_retain(self, resource, object)
    }

    /// Upstream's `CreateOrMutateConfigMap`: CREATE; on AlreadyExists, GET the existing ConfigMap,
    /// apply `mutate` and UPDATE it (other keys kept). Retried every 500ms for up to 40s.
    fn create_or_mutate_config_map(
        &self,
        object: &Value,
        mutate: &mut dyn FnMut(&mut Value),
    ) -> Result<(), ClusterError> {
        policy::create_or_mutate_config_map(self, object, mutate)
    }

    /// Upstream's `MutateConfigMap`: GET, `mutate`, UPDATE, retried every 500ms for up to 40s.
    fn mutate_config_map(
        &self,
        namespace: &str,
        name: &str,
        mutate: &mut dyn FnMut(&mut Value),
    ) -> Result<(), ClusterError> {
        policy::mutate_config_map(self, namespace, name, mutate)
    }

    /// Upstream's `PatchNode`: every 500ms (first try after 500ms) for up to 2 minutes, GET the Node,
    /// wait for its `kubernetes.io/hostname` label, build a strategic merge patch with `make_patch`
    /// from the Node as read, and PATCH; Conflict and Timeout are retried, other PATCH errors fail.
    fn patch_node(
        &self,
        name: &str,
        make_patch: &mut dyn FnMut(&Value) -> Value,
    ) -> Result<(), ClusterError> {
        policy::patch_node(self, name, make_patch)
    }

    /// Upstream's `GetConfigMapWithRetry`: up to 4 GETs with exponential backoff (10ms × 5ⁿ).
    fn get_config_map_with_retry(&self, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        Backoff::DEFAULT.run(self, || {
            self.get(&Resource::config_maps(), namespace, name).map(Some)
        })
    }

    /// Upstream's `UpdateOrCreateTokens` for one token Secret: GET it first; when it exists and
    /// `fail_if_exists`, fail with `a token with id "<id>" already exists`; then create-or-update
    /// with upstream's `TryRunCommand` backoff (5 tries, 5s doubling).
    fn create_or_update_token_secret(
        &self,
        token_id: &str,
        secret: &Value,
        fail_if_exists: bool,
    ) -> Result<(), ClusterError> {
        policy::create_or_update_token_secret(self, token_id, secret, fail_if_exists)
    }

    /// Upstream's `WaitForAPI`: probe the health endpoint until it answers 200 or `timeout` passes.
    /// Probes start 50ms apart and back off to upstream's 500ms interval. Returns the time waited.
    fn wait_for_api(&self, timeout: Duration) -> Result<Duration, ClusterError> {
        policy::wait_for_api(self, timeout)
    }
}
