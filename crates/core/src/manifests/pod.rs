//! The shape every kubeadm static pod shares (upstream `util/staticpod`): a `v1.Pod` in
//! `kube-system` with the component and tier labels, host network, the `system-node-critical`
//! priority class, the runtime-default seccomp profile, and HTTP probes. Values are built as the
//! JSON Go's `encoding/json` writes for a `v1.Pod`, so `omitempty` rules are applied here.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The priority of `system-node-critical`.
const NODE_CRITICAL_PRIORITY: i64 = 2_000_001_000;

/// A host-path volume and its mount in the component's container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPathMount {
    pub(crate) name: String,
    pub(crate) host_path: String,
    pub(crate) mount_path: String,
    pub(crate) read_only: bool,
    /// `None` leaves the type out; `Some("")` writes `type: ""`, as upstream does for extra
    /// volumes without a `pathType` (it always passes a pointer).
    pub(crate) path_type: Option<String>,
}

impl HostPathMount {
    pub(crate) fn new(
        name: &str,
        host_path: &str,
        mount_path: &str,
        read_only: bool,
        path_type: &str,
    ) -> Self {
        HostPathMount {
            name: name.to_string(),
            host_path: host_path.to_string(),
            mount_path: mount_path.to_string(),
            read_only,
            path_type: Some(path_type.to_string()),
        }
    }

    pub(crate) fn volume(&self) -> Value {
        let mut host_path = Map::new();
        host_path.insert("path".into(), self.host_path.clone().into());
        if let Some(t) = &self.path_type {
            host_path.insert("type".into(), t.clone().into());
        }
        json!({ "name": self.name, "hostPath": host_path })
    }

    pub(crate) fn volume_mount(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone().into());
        if self.read_only {
            m.insert("readOnly".into(), true.into());
        }
        m.insert("mountPath".into(), self.mount_path.clone().into());
        Value::Object(m)
    }
}

/// An HTTP probe (`createHTTPProbe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probe {
    pub(crate) host: String,
    pub(crate) path: String,
    pub(crate) port: i64,
    pub(crate) scheme: &'static str,
    pub(crate) initial_delay: i64,
    pub(crate) timeout: i64,
    pub(crate) failure_threshold: i64,
    pub(crate) period: i64,
}

impl Probe {
    /// Liveness: 10 s initial delay, 15 s timeout, 8 failures, every 10 s.
    pub(crate) fn liveness(host: &str, path: &str, port: i64, scheme: &'static str) -> Self {
        Self::new(host, path, port, scheme, 10, 15, 8, 10)
    }

    /// Readiness: no initial delay, 15 s timeout, 3 failures, every second.
    pub(crate) fn readiness(host: &str, path: &str, port: i64, scheme: &'static str) -> Self {
        Self::new(host, path, port, scheme, 0, 15, 3, 1)
    }

    /// Startup: as many 10 s periods as fit (rounded up) in the control-plane timeout.
    pub(crate) fn startup(
        host: &str,
        path: &str,
        port: i64,
        scheme: &'static str,
        timeout_nanos: i64,
    ) -> Self {
        let period = 10;
        let secs = timeout_nanos as f64 / 1e9;
        // Go converts the float64 ceiling to int32: out-of-range values saturate here instead.
        let failures = (secs / period as f64).ceil() as i64;
        Self::new(host, path, port, scheme, period, 15, failures, period)
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        host: &str,
        path: &str,
        port: i64,
        scheme: &'static str,
        initial_delay: i64,
        timeout: i64,
        failure_threshold: i64,
        period: i64,
    ) -> Self {
        Probe {
            host: host.to_string(),
            path: path.to_string(),
            port,
            scheme,
            initial_delay,
            timeout,
            failure_threshold,
            period,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut http = Map::new();
        http.insert("path".into(), self.path.clone().into());
        http.insert("port".into(), self.port.into());
        if !self.host.is_empty() {
            http.insert("host".into(), self.host.clone().into());
        }
        http.insert("scheme".into(), self.scheme.into());
        let mut p = Map::new();
        p.insert("httpGet".into(), Value::Object(http));
        for (k, v) in [
            ("initialDelaySeconds", self.initial_delay),
            ("timeoutSeconds", self.timeout),
            ("periodSeconds", self.period),
            ("failureThreshold", self.failure_threshold),
        ] {
            if v != 0 {
                p.insert(k.into(), v.into());
            }
        }
        Value::Object(p)
    }
}

/// The container of a component pod.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) command: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// Resource requests, e.g. `cpu: 250m`.
    pub(crate) requests: Vec<(&'static str, &'static str)>,
    pub(crate) mounts: Vec<Value>,
    pub(crate) liveness: Option<Probe>,
    pub(crate) readiness: Option<Probe>,
    pub(crate) startup: Option<Probe>,
}

impl Container {
    fn to_json(&self) -> Value {
        let mut c = Map::new();
        c.insert("name".into(), self.name.clone().into());
        c.insert("image".into(), self.image.clone().into());
        c.insert("command".into(), self.command.clone().into());
        if !self.env.is_empty() {
            let env: Vec<Value> = self
                .env
                .iter()
                .map(|(n, v)| json!({ "name": n, "value": v }))
                .collect();
            c.insert("env".into(), env.into());
        }
        let requests: Map<String, Value> = self
            .requests
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect();
        let mut resources = Map::new();
        if !requests.is_empty() {
            resources.insert("requests".into(), Value::Object(requests));
        }
        c.insert("resources".into(), Value::Object(resources));
        if !self.mounts.is_empty() {
            c.insert("volumeMounts".into(), self.mounts.clone().into());
        }
        for (k, p) in [
            ("livenessProbe", &self.liveness),
            ("readinessProbe", &self.readiness),
            ("startupProbe", &self.startup),
        ] {
            if let Some(p) = p {
                c.insert(k.into(), p.to_json());
            }
        }
        c.insert("imagePullPolicy".into(), "IfNotPresent".into());
        Value::Object(c)
    }
}

/// `ComponentPod`: wraps a container into kubeadm's static pod. `volumes` are keyed (and so sorted)
/// by name, as upstream's map-to-slice conversion sorts them.
pub(crate) fn component_pod(
    container: &Container,
    volumes: &BTreeMap<String, Value>,
    annotations: &[(&str, String)],
) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), container.name.clone().into());
    meta.insert("namespace".into(), "kube-system".into());
    meta.insert("creationTimestamp".into(), Value::Null);
    meta.insert(
        "labels".into(),
        json!({ "component": container.name, "tier": "control-plane" }),
    );
    if !annotations.is_empty() {
        let a: Map<String, Value> = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(v.clone())))
            .collect();
        meta.insert("annotations".into(), Value::Object(a));
    }
    let mut spec = Map::new();
    if !volumes.is_empty() {
        spec.insert(
            "volumes".into(),
            volumes.values().cloned().collect::<Vec<_>>().into(),
        );
    }
    spec.insert("containers".into(), vec![container.to_json()].into());
    spec.insert("hostNetwork".into(), true.into());
    spec.insert(
        "securityContext".into(),
        json!({ "seccompProfile": { "type": "RuntimeDefault" } }),
    );
    spec.insert("priorityClassName".into(), "system-node-critical".into());
    spec.insert("priority".into(), NODE_CRITICAL_PRIORITY.into());
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": meta,
        "spec": spec,
        "status": {},
    })
}

/// The environment variables upstream copies into control-plane containers (`GetProxyEnvVars`):
/// those whose name ends in `_proxy` (any case) and whose value is not empty, in environment order.
pub(crate) fn proxy_env(environment: &[(String, String)]) -> Vec<(String, String)> {
    environment
        .iter()
        .filter(|(k, v)| k.to_lowercase().ends_with("_proxy") && !v.is_empty())
        .cloned()
        .collect()
}
