//! An in-memory API server for tests: objects kept by resource, namespace and name with the API
//! server's create/update/patch/delete rules (AlreadyExists, NotFound, resourceVersion), every call
//! recorded in order, and an outage that can be switched on at a chosen call, as if kube-apiserver
//! had been killed there, and switched off again. Pauses only add to a virtual clock, so that
//! the policies' retries run out their deadlines at once.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use kubeadm_effects::cluster::{
    Call, Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb, object_key,
};

/// The key of a stored object: `group/resource`, namespace (empty when cluster-scoped), name.
pub type ObjectKey = (String, String, String);

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<ObjectKey, Value>,
    calls: Vec<Call>,
    /// The API server goes down at this call (counting from 0), if set.
    down_at: Option<usize>,
    down: bool,
    /// What `/readyz?verbose` reports failing while up.
    failing_readyz: Vec<String>,
    version: u64,
    paused: Duration,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct FakeCluster {
    state: Mutex<State>,
}

fn key(resource: &Resource, namespace: &str, name: &str) -> ObjectKey {
    (
        resource.group_resource(),
        resource.scope(namespace).to_string(),
        name.to_string(),
    )
}

/// RFC 7386 JSON merge patch, which is also what a strategic merge patch of maps and of lists
/// without a merge key does.
fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

impl FakeCluster {
    /// An empty cluster, up.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores an object as if it had been created before the test.
    pub fn with_object(self, resource: &Resource, object: Value) -> Self {
        let (namespace, name) = object_key(&object);
        let k = key(resource, namespace, name);
        self.lock().objects.insert(k, object);
        self
    }

    /// Another API server holding the same objects (and none of the calls), up.
    pub fn copy(&self) -> FakeCluster {
        let s = self.lock();
        FakeCluster {
            state: Mutex::new(State {
                objects: s.objects.clone(),
                version: s.version,
                ..State::default()
            }),
        }
    }

    /// The API server goes down at call number `n` (0 is the next call) and stays down until
    /// [`FakeCluster::restart`].
    pub fn go_down_at_call(&self, n: usize) {
        let mut s = self.lock();
        let at = s.calls.len() + n;
        s.down_at = Some(at);
    }

    /// The API server is back, with everything written before the outage.
    pub fn restart(&self) {
        let mut s = self.lock();
        s.down = false;
        s.down_at = None;
    }

    /// The API server answers, but these `/readyz` checks fail (`etcd failed: reason withheld`).
    pub fn with_failing_readyz(self, checks: &[&str]) -> Self {
        self.lock().failing_readyz = checks.iter().map(|c| c.to_string()).collect();
        self
    }

    /// The calls made so far, in order (calls refused during an outage included).
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// Every stored object, without the fields the fake server sets (`resourceVersion`).
    pub fn objects(&self) -> BTreeMap<ObjectKey, Value> {
        self.lock()
            .objects
            .iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("resourceVersion");
                }
                (k.clone(), v)
            })
            .collect()
    }

    /// One stored object.
    pub fn object(&self, resource: &Resource, namespace: &str, name: &str) -> Option<Value> {
        self.lock().objects.get(&key(resource, namespace, name)).cloned()
    }

    /// Records the call; the error when the server is down.
    fn enter(
        &self,
        verb: Verb,
        resource: &Resource,
        namespace: &str,
        name: &str,
    ) -> Result<MutexGuard<'_, State>, ClusterError> {
        let mut s = self.lock();
        let call = Call::new(verb, resource, resource.scope(namespace), name);
        if s.down_at == Some(s.calls.len()) {
            s.down = true;
        }
        s.calls.push(call.clone());
        if s.down {
            return Err(ClusterError::Unavailable {
                call: Box::new(call),
                message: "connection refused".to_string(),
            });
        }
        Ok(s)
    }

    fn stamp(s: &mut State, object: &mut Value) {
        s.version += 1;
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(s.version.to_string()));
        }
    }
}

impl Cluster for FakeCluster {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        let s = self.enter(Verb::Get, resource, namespace, name)?;
        s.objects
            .get(&key(resource, namespace, name))
            .cloned()
            .ok_or_else(|| ClusterError::not_found(Verb::Get, resource, namespace, name))
    }

    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        let s = self.enter(Verb::List, resource, namespace, "")?;
        let (group, scope) = (resource.group_resource(), resource.scope(namespace).to_string());
        let field = options.field_selector.split_once('=');
        Ok(s.objects
            .iter()
            .filter(|((g, ns, _), _)| *g == group && (scope.is_empty() || *ns == scope))
            .filter(|(_, o)| {
                field.is_none_or(|(path, want)| {
                    let pointer = format!("/{}", path.replace('.', "/"));
                    o.pointer(&pointer).and_then(Value::as_str) == Some(want)
                })
            })
            .filter(|(_, o)| {
                options
                    .label_selector
                    .split(',')
                    .filter(|t| !t.is_empty())
                    .all(|term| {
                        let (k, v) = term.split_once('=').unwrap_or((term, ""));
                        o.pointer("/metadata/labels")
                            .and_then(|l| l.get(k))
                            .and_then(Value::as_str)
                            .is_some_and(|have| v.is_empty() || have == v)
                    })
            })
            .map(|(_, o)| o.clone())
            .collect())
    }

    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let (namespace, name) = object_key(object);
        let mut s = self.enter(Verb::Create, resource, namespace, name)?;
        let k = key(resource, namespace, name);
        if s.objects.contains_key(&k) {
            return Err(ClusterError::already_exists(resource, namespace, name));
        }
        let mut stored = object.clone();
        Self::stamp(&mut s, &mut stored);
        s.objects.insert(k, stored.clone());
        Ok(stored)
    }

    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let (namespace, name) = object_key(object);
        let mut s = self.enter(Verb::Update, resource, namespace, name)?;
        let k = key(resource, namespace, name);
        if !s.objects.contains_key(&k) {
            return Err(ClusterError::not_found(Verb::Update, resource, namespace, name));
        }
        let mut stored = object.clone();
        Self::stamp(&mut s, &mut stored);
        s.objects.insert(k, stored.clone());
        Ok(stored)
    }

    fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        _patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value, ClusterError> {
        let mut s = self.enter(Verb::Patch, resource, namespace, name)?;
        let k = key(resource, namespace, name);
        let mut stored = s
            .objects
            .get(&k)
            .cloned()
            .ok_or_else(|| ClusterError::not_found(Verb::Patch, resource, namespace, name))?;
        merge_patch(&mut stored, patch);
        Self::stamp(&mut s, &mut stored);
        s.objects.insert(k, stored.clone());
        Ok(stored)
    }

    fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        _propagation: Option<Propagation>,
    ) -> Result<(), ClusterError> {
        let mut s = self.enter(Verb::Delete, resource, namespace, name)?;
        s.objects
            .remove(&key(resource, namespace, name))
            .map(|_| ())
            .ok_or_else(|| ClusterError::not_found(Verb::Delete, resource, namespace, name))
    }

    fn healthy(&self) -> Result<bool, ClusterError> {
        let s = self.lock();
        Ok(!s.down && s.failing_readyz.is_empty())
    }

    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        let s = self.lock();
        if s.down {
            return Err(ClusterError::Unavailable {
                call: Box::new(Call::new(Verb::Get, &Resource::new("", "", "readyz"), "", "")),
                message: "connection refused".to_string(),
            });
        }
        Ok(s.failing_readyz.clone())
    }

    fn pause(&self, duration: Duration) {
        self.lock().paused += duration;
    }
}
