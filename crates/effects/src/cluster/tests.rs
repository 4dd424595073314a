//! Upstream's policies on an in-memory cluster with scripted failures: which calls each makes,
//! how often it retries and how long it pauses (upstream's constants: 500ms × 40s for writes,
//! 500ms × 2min for the node patch, 10ms × 5ⁿ for reads, 5s × 2ⁿ for tokens).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::report::{Reporter, Severity};

#[derive(Default)]
struct Fake {
    objects: Mutex<BTreeMap<(String, String, String), Value>>,
    /// Errors to return, per verb, before the real behaviour.
    failures: Mutex<BTreeMap<&'static str, VecDeque<ClusterError>>>,
    /// Errors returned on every call of a verb.
    always: Mutex<BTreeMap<&'static str, ClusterError>>,
    calls: Mutex<Vec<String>>,
    pauses: Mutex<Vec<Duration>>,
    health: Mutex<VecDeque<bool>>,
}

fn key(r: &Resource, ns: &str, name: &str) -> (String, String, String) {
    (r.group_resource(), r.scope(ns).to_string(), name.to_string())
}

impl Fake {
    fn fail(&self, verb: &'static str, e: ClusterError, times: usize) {
        let mut f = self.failures.lock().expect("test");
        for _ in 0..times {
            f.entry(verb).or_default().push_back(e.clone());
        }
    }
    fn scripted(&self, verb: &'static str, detail: String) -> Option<ClusterError> {
        self.calls.lock().expect("test").push(format!("{verb} {detail}"));
        if let Some(e) = self.always.lock().expect("test").get(verb) {
            return Some(e.clone());
        }
        self.failures
            .lock()
            .expect("test")
            .get_mut(verb)
            .and_then(VecDeque::pop_front)
    }
    fn calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().expect("test"))
    }
    fn pauses(&self) -> Vec<Duration> {
        std::mem::take(&mut *self.pauses.lock().expect("test"))
    }
}

impl Cluster for Fake {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<Value, ClusterError> {
        if let Some(e) = self.scripted("GET", name.to_string()) {
            return Err(e);
        }
        self.objects
            .lock()
            .expect("test")
            .get(&key(r, ns, name))
            .cloned()
            .ok_or_else(|| ClusterError::not_found(Verb::Get, r, ns, name))
    }
    fn list(&self, r: &Resource, _: &str, _: &ListOptions) -> Result<Vec<Value>, ClusterError> {
        if let Some(e) = self.scripted("LIST", r.plural.clone()) {
            return Err(e);
        }
        Ok(Vec::new())
    }
    fn create(&self, r: &Resource, obj: &Value) -> Result<Value, ClusterError> {
        let (ns, name) = object_key(obj);
        if let Some(e) = self.scripted("CREATE", name.to_string()) {
            return Err(e);
        }
        let mut objects = self.objects.lock().expect("test");
        if objects.contains_key(&key(r, ns, name)) {
            return Err(ClusterError::already_exists(r, ns, name));
        }
        objects.insert(key(r, ns, name), obj.clone());
        Ok(obj.clone())
    }
    fn update(&self, r: &Resource, obj: &Value) -> Result<Value, ClusterError> {
        let (ns, name) = object_key(obj);
        if let Some(e) = self.scripted("UPDATE", name.to_string()) {
            return Err(e);
        }
        self.objects
            .lock()
            .expect("test")
            .insert(key(r, ns, name), obj.clone());
        Ok(obj.clone())
    }
    fn patch(
        &self,
        _: &Resource,
        _: &str,
        name: &str,
        _: PatchType,
        p: &Value,
    ) -> Result<Value, ClusterError> {
        if let Some(e) = self.scripted("PATCH", format!("{name} {p}")) {
            return Err(e);
        }
        Ok(json!({}))
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, _: Option<Propagation>) -> Result<(), ClusterError> {
        if let Some(e) = self.scripted("DELETE", name.to_string()) {
            return Err(e);
        }
        self.objects.lock().expect("test").remove(&key(r, ns, name));
        Ok(())
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        Ok(self.health.lock().expect("test").pop_front().unwrap_or(false))
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        Ok(Vec::new())
    }
    fn pause(&self, d: Duration) {
        self.pauses.lock().expect("test").push(d);
    }
}

fn cm(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"}, "data": data})
}

fn role(name: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name, "namespace": "kube-system"}})
}

fn roles() -> Resource {
    Resource::new("rbac.authorization.k8s.io", "v1", "roles")
}

fn unavailable(verb: Verb, r: &Resource, name: &str) -> ClusterError {
    ClusterError::Unavailable {
        call: Box::new(Call::new(verb, r, "kube-system", name)),
        message: "connection refused".into(),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn create_or_update_updates_what_exists() {
    let f = Fake::default();
    f.create_or_update(&Resource::config_maps(), &cm("a", json!({"k": "1"})))
        .expect("test");
    f.create_or_update(&Resource::config_maps(), &cm("a", json!({"k": "2"})))
        .expect("test");
    assert_eq!(f.calls(), ["CREATE a", "CREATE a", "UPDATE a"]);
    assert_eq!(
        f.get(&Resource::config_maps(), "kube-system", "a").expect("test")["data"]["k"],
        "2"
    );
    assert!(f.pauses().is_empty());
}

#[test]
fn create_or_update_wraps_errors_as_upstream() {
    let f = Fake::default();
    let r = Resource::config_maps();
    f.fail("CREATE", unavailable(Verb::Create, &r, "a"), 1);
    let e = f.create_or_update(&r, &cm("a", json!({}))).expect_err("test");
    assert!(
        e.to_string()
            .starts_with("unable to create ConfigMap: CREATE configmaps \"a\""),
        "{e}"
    );
    f.create(&r, &cm("a", json!({}))).expect("test");
    f.fail("UPDATE", unavailable(Verb::Update, &r, "a"), 1);
    let e = f.create_or_update(&r, &cm("a", json!({}))).expect_err("test");
    assert!(e.to_string().starts_with("unable to update ConfigMap: "), "{e}");
    let e = f
        .create_or_update(&roles(), &role("r"))
        .map(|_| ())
        .and_then(|_| {
            f.fail("CREATE", unavailable(Verb::Create, &roles(), "q"), 1);
            f.create_or_update(&roles(), &role("q"))
        });
    assert!(
        e.expect_err("test")
            .to_string()
            .starts_with("unable to create RBAC role: ")
    );
}

#[test]
fn role_writes_retry_every_500ms_for_40s() {
    let f = Fake::default();
    f.fail("CREATE", unavailable(Verb::Create, &roles(), "r"), 3);
    f.create_or_update_with_retry(&roles(), &role("r")).expect("test");
    assert_eq!(f.calls().len(), 4);
    assert_eq!(f.pauses(), [ms(500); 3]);

    f.always
        .lock()
        .expect("test")
        .insert("CREATE", unavailable(Verb::Create, &roles(), "s"));
    let e = f
        .create_or_update_with_retry(&roles(), &role("s"))
        .expect_err("test");
    assert_eq!(
        f.calls().len(),
        81,
        "an attempt at 0s and one every 500ms up to 40s"
    );
    assert_eq!(f.pauses().iter().sum::<Duration>(), Duration::from_secs(40));
    assert!(
        e.is_unavailable() && e.to_string().starts_with("unable to create RBAC role: "),
        "{e}"
    );
}

#[test]
fn create_or_mutate_keeps_other_keys() {
    let f = Fake::default();
    let r = Resource::config_maps();
    f.create(
        &r,
        &cm(
            "kubeadm-config",
            json!({"ClusterConfiguration": "old", "ClusterStatus": "s"}),
        ),
    )
    .expect("test");
    f.calls();
    f.create_or_mutate_config_map(
        &cm("kubeadm-config", json!({"ClusterConfiguration": "new"})),
        &mut |c| {
            c["data"]["ClusterConfiguration"] = json!("new");
        },
    )
    .expect("test");
    assert_eq!(
        f.calls(),
        [
            "CREATE kubeadm-config",
            "GET kubeadm-config",
            "UPDATE kubeadm-config"
        ]
    );
    let got = f.get(&r, "kube-system", "kubeadm-config").expect("test");
    assert_eq!(
        got["data"],
        json!({"ClusterConfiguration": "new", "ClusterStatus": "s"})
    );
}

#[test]
fn create_or_retain_writes_only_when_not_found() {
    let f = Fake::default();
    let r = Resource::config_maps();
    f.create_or_retain(&r, &cm("coredns", json!({"Corefile": "a"})))
        .expect("test");
    assert_eq!(f.calls(), ["GET coredns", "CREATE coredns"]);
    f.create_or_retain(&r, &cm("coredns", json!({"Corefile": "b"})))
        .expect("test");
    assert_eq!(f.calls(), ["GET coredns"]);
    // As upstream: a failed GET other than NotFound counts as present.
    f.fail("GET", unavailable(Verb::Get, &r, "other"), 1);
    f.create_or_retain(&r, &cm("other", json!({}))).expect("test");
    assert_eq!(f.calls(), ["GET other"]);
}

#[test]
fn config_map_reads_back_off_exponentially() {
    let f = Fake::default();
    let e = f
        .get_config_map_with_retry("kube-system", "missing")
        .expect_err("test");
    assert!(e.is_not_found());
    assert_eq!(f.calls().len(), 4);
    assert_eq!(f.pauses(), [ms(10), ms(50), ms(250)]);
}

#[test]
fn token_secrets_fail_if_they_exist_and_retry_with_upstream_backoff() {
    let f = Fake::default();
    let r = Resource::secrets();
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"}});
    f.create_or_update_token_secret("abcdef", &secret, true)
        .expect("test");
    assert_eq!(
        f.calls(),
        ["GET bootstrap-token-abcdef", "CREATE bootstrap-token-abcdef"]
    );
    let e = f
        .create_or_update_token_secret("abcdef", &secret, true)
        .expect_err("test");
    assert_eq!(e.to_string(), "a token with id \"abcdef\" already exists");
    f.create_or_update_token_secret("abcdef", &secret, false)
        .expect("test");
    f.calls();

    f.always
        .lock()
        .expect("test")
        .insert("UPDATE", unavailable(Verb::Update, &r, "bootstrap-token-abcdef"));
    let e = f
        .create_or_update_token_secret("abcdef", &secret, false)
        .expect_err("test");
    // Upstream's text, then the last attempt's error, which upstream drops.
    assert_eq!(
        e.to_string(),
        format!(
            "timed out waiting for the condition (last attempt: failed to create or update bootstrap token with name bootstrap-token-abcdef: unable to update secret: {})",
            unavailable(Verb::Update, &r, "bootstrap-token-abcdef")
        )
    );
    let secs = |n| Duration::from_secs(n);
    assert_eq!(f.pauses(), [secs(5), secs(10), secs(20), secs(40)]);
    let source = std::error::Error::source(&e)
        .expect("last error kept")
        .to_string();
    assert!(source.starts_with("failed to create or update bootstrap token with name bootstrap-token-abcdef: unable to update secret: "), "{source}");
}

#[test]
fn node_patch_waits_for_the_hostname_label_and_retries_conflicts_only() {
    let f = Fake::default();
    let nodes = Resource::nodes();
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n"}}});
    f.create(&nodes, &node).expect("test");
    f.calls();
    let conflict =
        ClusterError::from_status(Call::new(Verb::Patch, &nodes, "", "n"), 409, "Conflict", "stale");
    f.fail("PATCH", conflict, 1);
    f.patch_node("n", &mut |_| json!({"metadata": {"labels": {"x": ""}}}))
        .expect("test");
    assert_eq!(f.calls().len(), 4, "GET, PATCH (conflict), GET, PATCH");
    assert_eq!(
        f.pauses(),
        [ms(100)],
        "the first attempt at once (upstream's wait.Poll pauses 500ms before it), retries every 100ms"
    );

    let forbidden =
        ClusterError::from_status(Call::new(Verb::Patch, &nodes, "", "n"), 403, "Forbidden", "no");
    f.fail("PATCH", forbidden, 1);
    let e = f.patch_node("n", &mut |_| json!({})).expect_err("test");
    assert_eq!(e.to_string(), "error patching node \"n\" through apiserver: no");
    f.calls();
    f.pauses();

    // A Node without the label is waited for until the timeout, which upstream then ignores.
    f.create(&nodes, &json!({"metadata": {"name": "bare"}}))
        .expect("test");
    f.calls();
    f.patch_node("bare", &mut |_| json!({})).expect("test");
    assert_eq!(
        f.calls().len(),
        1201,
        "one GET at once, then one every 100ms for 120s"
    );
    assert_eq!(f.pauses().iter().sum::<Duration>(), Duration::from_secs(120));
}

#[test]
fn api_waits_back_off_from_50ms_to_500ms() {
    let f = Fake::default();
    f.health
        .lock()
        .expect("test")
        .extend([false, false, false, false, false, true]);
    f.wait_for_api(Duration::from_secs(4)).expect("test");
    assert_eq!(f.pauses(), [ms(50), ms(100), ms(200), ms(400), ms(500)]);
    let e = f.wait_for_api(Duration::from_secs(2)).expect_err("test");
    assert_eq!(e.to_string(), "timed out waiting for the condition");
    assert_eq!(f.pauses().iter().sum::<Duration>(), Duration::from_secs(2));
}

#[derive(Default)]
struct Out(Mutex<String>);
impl Reporter for Out {
    fn out(&self, text: &str) {
        self.0.lock().expect("test").push_str(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

fn json_lines(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("test")
}

#[test]
fn dry_run_reads_from_the_backend_and_never_writes_to_it() {
    let out = Arc::new(Out::default());
    let backend = Fake::default();
    backend
        .create(&Resource::config_maps(), &cm("there", json!({})))
        .expect("test");
    let dry = DryRunCluster::new(out.clone(), json_lines).with_backend(Box::new(backend));
    assert!(dry.get(&Resource::config_maps(), "kube-system", "there").is_ok());
    assert!(
        dry.get(&Resource::config_maps(), "kube-system", "absent")
            .expect_err("test")
            .is_not_found()
    );
    dry.create_or_update(&Resource::config_maps(), &cm("there", json!({"k": "v"})))
        .expect("test");
    dry.delete(&Resource::config_maps(), "kube-system", "there", None)
        .expect("test");
    assert!(
        dry.get(&Resource::config_maps(), "kube-system", "there").is_ok(),
        "still there"
    );
    assert_eq!(dry.actions().len(), 2);
    let text = out.0.lock().expect("test").clone();
    let want = "[dryrun] Would perform action GET on resource \"configmaps\" in API group \"core/v1\"
[dryrun] Resource name: \"there\"
[dryrun] Would perform action GET on resource \"configmaps\" in API group \"core/v1\"
[dryrun] Resource name: \"absent\"
[dryrun] The GET request didn't yield any result, the API Server returned a NotFound error.
[dryrun] Would perform action CREATE on resource \"configmaps\" in API group \"core/v1\"
[dryrun] Attached object:
\t{
";
    assert!(text.starts_with(want), "{text}");
    assert!(text.contains("[dryrun] Would perform action DELETE on resource \"configmaps\" in API group \"core/v1\"\n[dryrun] Resource name: \"there\"\n"));
}

#[test]
fn dry_run_without_a_cluster_keeps_token_secrets_only() {
    let out = Arc::new(Out::default());
    let dry = DryRunCluster::new(out.clone(), json_lines);
    let secrets = Resource::secrets();
    let e = dry
        .get(&secrets, "kube-system", "bootstrap-token-abcdef")
        .expect_err("test");
    assert_eq!(e.to_string(), "secrets \"bootstrap-token-abcdef\" not found");
    let token = json!({"metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"}});
    dry.create(&secrets, &token).expect("test");
    assert_eq!(
        dry.get(&secrets, "kube-system", "bootstrap-token-abcdef")
            .expect("test"),
        token
    );
    dry.create(&Resource::config_maps(), &cm("c", json!({})))
        .expect("test");
    assert!(
        dry.get(&Resource::config_maps(), "kube-system", "c")
            .expect_err("test")
            .is_not_found()
    );
    let crb = Resource::new("rbac.authorization.k8s.io", "v1", "clusterrolebindings");
    assert_eq!(
        dry.get(&crb, "", "x").expect_err("test").to_string(),
        "clusterrolebindings.rbac.authorization.k8s.io \"x\" not found"
    );
    assert!(dry.wait_for_api(Duration::from_secs(1)).is_ok());
    assert!(
        out.0
            .lock()
            .expect("test")
            .ends_with("[dryrun] Would wait for the API Server's /healthz endpoint to return 'ok'\n")
    );
}
