//! The dry-run decorator: writes are recorded and printed as upstream's dry-run client prints them
//! (`apiclient/dryrunclient.go`), never sent; reads are answered from objects the caller seeded
//! (upstream's `InitDryRunGetter` fakes the control-plane Node and the `kubernetes` Service), then
//! from a real cluster when there is one (upstream's `ClientBackedDryRunGetter`), else NotFound.
//!
//! Every action, reads included, is announced:
//!
//! ```text
//! [dryrun] Would perform action CREATE on resource "configmaps" in API group "core/v1"
//! [dryrun] Attached object:
//! <TAB>apiVersion: v1
//! ```
//!
//! GET, PATCH and DELETE also name the object (`[dryrun] Resource name: "node1"`), PATCH prints its
//! body (`[dryrun] Attached patch:`), CREATE and UPDATE the object as YAML through the
//! [`MarshalFn`] given (upstream's `MarshalFunc`; the YAML codec lives outside this crate). As
//! upstream's fake clientset does, bootstrap token Secrets created in `kube-system` are kept and
//! answer later reads.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use super::{Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb, object_key};
use crate::report::Reporter;

/// Renders an object as the YAML the dry-run prints (Go: JSON, then `sigs.k8s.io/yaml`).
pub type MarshalFn = fn(&Value) -> String;

/// A write the dry run would have made.
#[derive(Debug, Clone, PartialEq)]
pub enum DryRunAction {
    /// CREATE of this object.
    Create {
        /// Resource.
        resource: Resource,
        /// Object.
        object: Value,
    },
    /// UPDATE to this object.
    Update {
        /// Resource.
        resource: Resource,
        /// Object.
        object: Value,
    },
    /// PATCH of an object.
    Patch {
        /// Resource.
        resource: Resource,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// How it applies.
        patch_type: PatchType,
        /// The body.
        patch: Value,
    },
    /// DELETE of an object.
    Delete {
        /// Resource.
        resource: Resource,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
}

type Key = (Resource, String, String);

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<Key, Value>,
    actions: Vec<DryRunAction>,
}

/// The dry-run decorator; see the module doc.
pub struct DryRunCluster {
    backend: Option<Box<dyn Cluster>>,
    print_reads: bool,
    reporter: Arc<dyn Reporter>,
    marshal: MarshalFn,
    state: Mutex<State>,
}

impl fmt::Debug for DryRunCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DryRunCluster")
            .field("backend", &self.backend.is_some())
            .field("state", &self.state)
            .finish()
    }
}

impl DryRunCluster {
    /// A dry run with no cluster behind it: reads of objects not seeded answer NotFound.
    pub fn new(reporter: Arc<dyn Reporter>, marshal: MarshalFn) -> Self {
        Self {
            backend: None,
            print_reads: false,
            reporter,
            marshal,
            state: Mutex::new(State::default()),
        }
    }

    /// Reads not answered by seeded objects go to `backend`.
    pub fn with_backend(mut self, backend: Box<dyn Cluster>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Also prints what each GET returns (upstream's `PrintGETAndLIST`, which the dry runs of
    /// `upgrade` set): `[dryrun] Returning faked GET response:` and the object as YAML.
    pub fn print_reads(mut self) -> Self {
        self.print_reads = true;
        self
    }

    fn print_read(&self, object: &Value) {
        if self.print_reads {
            let mut text = String::from("[dryrun] Returning faked GET response:\n");
            for line in (self.marshal)(object).lines() {
                text.push('\t');
                text.push_str(line);
                text.push('\n');
            }
            self.reporter.out(&text);
        }
    }

    /// Upstream's `[dryrun] Returning faked LIST response:`: the list as its dynamic client holds
    /// it, each item carrying the list's `apiVersion` and its kind.
    fn print_list(&self, list: &Value) {
        let mut shown = list.clone();
        let api_version = list.get("apiVersion").cloned().unwrap_or(Value::Null);
        let kind = list
            .get("kind")
            .and_then(Value::as_str)
            .and_then(|k| k.strip_suffix("List"))
            .map(|k| Value::String(k.to_string()))
            .unwrap_or(Value::Null);
        if let Some(Value::Array(items)) = shown.get_mut("items") {
            for item in items.iter_mut().filter_map(Value::as_object_mut) {
                item.insert("apiVersion".into(), api_version.clone());
                item.insert("kind".into(), kind.clone());
            }
        }
        let mut text = String::from("[dryrun] Returning faked LIST response:\n");
        for line in (self.marshal)(&shown).lines() {
            text.push('\t');
            text.push_str(line);
            text.push('\n');
        }
        self.reporter.out(&text);
    }

    /// Seeds an object that GETs of its namespace and name answer with.
    pub fn with_object(self, resource: &Resource, object: Value) -> Self {
        let (namespace, name) = object_key(&object);
        let key = (resource.clone(), namespace.to_string(), name.to_string());
        self.lock().objects.insert(key, object);
        self
    }

    /// The writes recorded so far, in order.
    pub fn actions(&self) -> Vec<DryRunAction> {
        self.lock().actions.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation is a single insert or push, so a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn announce(&self, verb: Verb, resource: &Resource, name: Option<&str>) -> String {
        let mut text = format!(
            "[dryrun] Would perform action {verb} on resource {:?} in API group \"{}\"\n",
            resource.plural,
            resource.group_version_label()
        );
        if let Some(name) = name {
            text.push_str(&format!("[dryrun] Resource name: {name:?}\n"));
        }
        text
    }

    fn attach_object(&self, text: &mut String, object: &Value) {
        text.push_str("[dryrun] Attached object:\n");
        for line in (self.marshal)(object).lines() {
            text.push('\t');
            text.push_str(line);
            text.push('\n');
        }
    }

    fn record(&self, action: DryRunAction) {
        self.lock().actions.push(action);
    }
}

/// JSON with object keys sorted, as Go marshals the maps a patch is built from.
fn go_json(value: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

fn is_bootstrap_token_secret(resource: &Resource, namespace: &str, name: &str) -> bool {
    *resource == Resource::secrets() && namespace == "kube-system" && name.starts_with("bootstrap-token-")
}

impl Cluster for DryRunCluster {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        self.reporter.out(&self.announce(Verb::Get, resource, Some(name)));
        let key = (resource.clone(), namespace.to_string(), name.to_string());
        let seeded = self.lock().objects.get(&key).cloned();
        if let Some(object) = seeded {
            self.print_read(&object);
            return Ok(object);
        }
        match &self.backend {
            Some(backend) => {
                let result = backend.get(resource, namespace, name);
                match &result {
                    Ok(object) => self.print_read(object),
                    Err(e) if e.is_not_found() => self.reporter.out(
                        "[dryrun] The GET request didn't yield any result, the API Server returned a NotFound error.\n",
                    ),
                    Err(_) => {}
                }
                result
            }
            None => Err(ClusterError::not_found(Verb::Get, resource, namespace, name)),
        }
    }

    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        self.reporter.out(&self.announce(Verb::List, resource, None));
        if let Some(backend) = &self.backend {
            if !self.print_reads {
                return backend.list(resource, namespace, options);
            }
            let list = backend.list_object(resource, namespace, options)?;
            self.print_list(&list);
            return Ok(match list.get("items") {
                Some(Value::Array(items)) => items.clone(),
                _ => Vec::new(),
            });
        }
        let state = self.lock();
        Ok(state
            .objects
            .iter()
            .filter(|((r, ns, _), _)| r == resource && (namespace.is_empty() || ns == namespace))
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let mut text = self.announce(Verb::Create, resource, None);
        self.attach_object(&mut text, object);
        self.reporter.out(&text);
        let (namespace, name) = object_key(object);
        if is_bootstrap_token_secret(resource, namespace, name) {
            let key = (resource.clone(), namespace.to_string(), name.to_string());
            let mut state = self.lock();
            if state.objects.contains_key(&key) {
                return Err(ClusterError::already_exists(resource, namespace, name));
            }
            state.objects.insert(key, object.clone());
        }
        self.record(DryRunAction::Create {
            resource: resource.clone(),
            object: object.clone(),
        });
        Ok(object.clone())
    }

    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let mut text = self.announce(Verb::Update, resource, None);
        self.attach_object(&mut text, object);
        self.reporter.out(&text);
        self.record(DryRunAction::Update {
            resource: resource.clone(),
            object: object.clone(),
        });
        Ok(object.clone())
    }

    fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value, ClusterError> {
        let mut text = self.announce(Verb::Patch, resource, Some(name));
        // Upstream replaces every \" with " when printing the patch.
        text.push_str(&format!(
            "[dryrun] Attached patch:\n\t{}\n",
            go_json(patch).replace("\\\"", "\"")
        ));
        self.reporter.out(&text);
        self.record(DryRunAction::Patch {
            resource: resource.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            patch_type,
            patch: patch.clone(),
        });
        // The fake clientset answers a PATCH with an empty object.
        Ok(Value::Object(Default::default()))
    }

    fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        _propagation: Option<Propagation>,
    ) -> Result<(), ClusterError> {
        self.reporter
            .out(&self.announce(Verb::Delete, resource, Some(name)));
        self.record(DryRunAction::Delete {
            resource: resource.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
        Ok(())
    }

    fn healthy(&self) -> Result<bool, ClusterError> {
        Ok(true)
    }

    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        Ok(Vec::new())
    }

    fn wait_for_api(&self, _timeout: Duration) -> Result<Duration, ClusterError> {
        self.reporter
            .out("[dryrun] Would wait for the API Server's /healthz endpoint to return 'ok'\n");
        Ok(Duration::ZERO)
    }
}
