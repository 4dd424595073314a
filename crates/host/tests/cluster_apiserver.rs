//! The kube-rs client and upstream's write policies against a real kube-apiserver v1.25.16 (with
//! etcd), started on 127.0.0.1 by `kubeadm_testkit::apiserver`. Needs the upstream binaries
//! (`testbed/upstream/build.sh etcd kube-apiserver`); without them the tests fail, saying so.

use std::sync::Mutex;

use std::time::Duration;

use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString, Taint};
use kubeadm_core::cluster::{bootstrap_token, node, upload_config};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb};
use kubeadm_host::cluster::KubeCluster;
use kubeadm_testkit::apiserver::ApiServer;
use serde_json::{Value, json};

/// Delegates to a cluster and logs each call's verb and outcome.
struct Recording<'a> {
    inner: &'a dyn Cluster,
    log: Mutex<Vec<String>>,
}

impl<'a> Recording<'a> {
    fn new(inner: &'a dyn Cluster) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().expect("log"))
    }
    fn note<T>(&self, verb: &str, r: &Result<T, ClusterError>) {
        let outcome = match r {
            Ok(_) => "ok".to_string(),
            Err(e) if e.is_already_exists() => "AlreadyExists".to_string(),
            Err(e) if e.is_not_found() => "NotFound".to_string(),
            Err(e) => format!("{e:?}"),
        };
        self.log.lock().expect("log").push(format!("{verb} {outcome}"));
    }
}

impl Cluster for Recording<'_> {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<Value, ClusterError> {
        let res = self.inner.get(r, ns, name);
        self.note("GET", &res);
        res
    }
    fn list(&self, r: &Resource, ns: &str, o: &ListOptions) -> Result<Vec<Value>, ClusterError> {
        let res = self.inner.list(r, ns, o);
        self.note("LIST", &res);
        res
    }
    fn create(&self, r: &Resource, obj: &Value) -> Result<Value, ClusterError> {
        let res = self.inner.create(r, obj);
        self.note("CREATE", &res);
        res
    }
    fn update(&self, r: &Resource, obj: &Value) -> Result<Value, ClusterError> {
        let res = self.inner.update(r, obj);
        self.note("UPDATE", &res);
        res
    }
    fn patch(
        &self,
        r: &Resource,
        ns: &str,
        name: &str,
        t: PatchType,
        p: &Value,
    ) -> Result<Value, ClusterError> {
        let res = self.inner.patch(r, ns, name, t, p);
        self.note("PATCH", &res);
        res
    }
    fn delete(&self, r: &Resource, ns: &str, name: &str, p: Option<Propagation>) -> Result<(), ClusterError> {
        let res = self.inner.delete(r, ns, name, p);
        self.note("DELETE", &res);
        res
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        self.inner.healthy()
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        self.inner.failing_readyz_checks()
    }
    fn pause(&self, _: Duration) {}
}

fn config_map(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"creationTimestamp": null, "name": name, "namespace": "kube-system"},
        "data": data,
    })
}

fn token(id_secret: &str) -> BootstrapToken {
    BootstrapToken {
        token: Some(BootstrapTokenString::parse(id_secret).expect("token")),
        ttl: Some(kubeadm_api::duration::Duration::parse("1h").expect("ttl")),
        usages: vec!["signing".into(), "authentication".into()],
        groups: vec!["system:bootstrappers:kubeadm:default-node-token".into()],
        ..BootstrapToken::default()
    }
}

fn connect(server: &ApiServer) -> KubeCluster {
    KubeCluster::from_kubeconfig(&server.kubeconfig()).expect("client from admin.conf")
}

#[test]
fn policies_against_a_real_api_server() {
    let server = ApiServer::start();
    eprintln!("etcd + kube-apiserver ready in {:?}", server.startup());
    let kube = connect(&server);
    assert!(kube.healthy().expect("healthz"), "healthz after readyz");
    assert!(kube.wait_for_api(Duration::from_secs(5)).expect("wait") < Duration::from_secs(5));
    let rec = Recording::new(&kube);
    let cms = Resource::config_maps();

    // create-or-update twice: one object, the second call is an update of it.
    rec.create_or_update(&cms, &config_map("twice", json!({"k": "v1"})))
        .expect("first");
    assert_eq!(rec.take(), ["CREATE ok"]);
    let first = kube.get(&cms, "kube-system", "twice").expect("get");
    rec.create_or_update(&cms, &config_map("twice", json!({"k": "v2"})))
        .expect("second");
    assert_eq!(rec.take(), ["CREATE AlreadyExists", "UPDATE ok"]);
    let second = kube.get(&cms, "kube-system", "twice").expect("get");
    assert_eq!(second["data"], json!({"k": "v2"}));
    assert_eq!(
        second["metadata"]["uid"], first["metadata"]["uid"],
        "same object, updated"
    );
    assert_ne!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let named = ListOptions {
        field_selector: "metadata.name=twice".into(),
        ..ListOptions::default()
    };
    assert_eq!(kube.list(&cms, "kube-system", &named).expect("list").len(), 1);

    // create-or-mutate: only the mutated key changes, the others stay.
    kube.create(
        &cms,
        &config_map(
            "kubeadm-config",
            json!({"ClusterConfiguration": "old", "ClusterStatus": "kept"}),
        ),
    )
    .expect("seed");
    let replacement = config_map("kubeadm-config", json!({"ClusterConfiguration": "new"}));
    rec.create_or_mutate_config_map(&replacement, &mut |cm: &mut Value| {
        cm["data"]["ClusterConfiguration"] = json!("new");
    })
    .expect("mutate");
    assert_eq!(rec.take(), ["CREATE AlreadyExists", "GET ok", "UPDATE ok"]);
    let mutated = kube.get(&cms, "kube-system", "kubeadm-config").expect("get");
    assert_eq!(
        mutated["data"],
        json!({"ClusterConfiguration": "new", "ClusterStatus": "kept"})
    );

    // create-or-retain: an existing object is left alone.
    rec.create_or_retain(&cms, &config_map("twice", json!({"k": "v3"})))
        .expect("retain");
    assert_eq!(rec.take(), ["GET ok"]);
    assert_eq!(
        kube.get(&cms, "kube-system", "twice").expect("get")["data"],
        json!({"k": "v2"})
    );

    // A bootstrap token Secret that already exists: upstream's init error.
    let now = Time::from_unix_seconds(1_700_000_000).expect("time");
    let secret = bootstrap_token::token_secret(&token("abcdef.0123456789abcdef"), 0, now).expect("secret");
    kube.create_or_update_token_secret("abcdef", &secret, true)
        .expect("first token");
    let err = kube
        .create_or_update_token_secret("abcdef", &secret, true)
        .expect_err("token exists");
    assert_eq!(err.to_string(), "a token with id \"abcdef\" already exists");
    // Without fail-if-exists (upload-certs, `token create`), the Secret is updated.
    kube.create_or_update_token_secret("abcdef", &secret, false)
        .expect("update token");

    // Listing Secrets by type.
    kube.create(
        &Resource::secrets(),
        &json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "not-a-token", "namespace": "kube-system"}, "data": {"a": "Yg=="}}),
    )
    .expect("opaque secret");
    let tokens = kube
        .list(
            &Resource::secrets(),
            "kube-system",
            &ListOptions {
                field_selector: "type=bootstrap.kubernetes.io/token".into(),
                ..ListOptions::default()
            },
        )
        .expect("list tokens");
    let names: Vec<&str> = tokens
        .iter()
        .filter_map(|s| s["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["bootstrap-token-abcdef"]);
    assert_eq!(tokens[0]["data"]["token-id"], json!("YWJjZGVm"));

    // RBAC: the kubeadm-config Role and RoleBinding, created then updated in place.
    for obj in upload_config::kubeadm_config_rbac()
        .iter()
        .chain(bootstrap_token::allow_get_nodes().iter())
    {
        let api = kubeadm_core::cluster::meta::api_resource(obj).expect("known kind");
        let res = Resource::from_group_version(api.group_version, api.resource);
        rec.create_or_update_with_retry(&res, obj).expect("rbac create");
        rec.create_or_update_with_retry(&res, obj).expect("rbac update");
        assert_eq!(
            rec.take(),
            ["CREATE ok", "CREATE AlreadyExists", "UPDATE ok"],
            "{}",
            api.resource
        );
        let ns = obj["metadata"]["namespace"].as_str().unwrap_or("");
        let name = obj["metadata"]["name"].as_str().expect("name");
        let stored = kube.get(&res, ns, name).expect("get rbac");
        for field in ["rules", "roleRef"] {
            assert_eq!(stored.get(field), obj.get(field), "{name} {field}");
        }
        // The API server fills in each subject's apiGroup; kind and name are ours.
        let subjects = |o: &Value| -> Vec<(Value, Value)> {
            o["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| (s["kind"].clone(), s["name"].clone()))
                .collect()
        };
        assert_eq!(subjects(&stored), subjects(obj), "{name} subjects");
    }
    let missing = Resource::new("rbac.authorization.k8s.io", "v1", "clusterroles");
    let err = kube.get(&missing, "", "no-such-role").expect_err("missing");
    assert_eq!(
        err.to_string(),
        "clusterroles.rbac.authorization.k8s.io \"no-such-role\" not found"
    );

    // A Node (created directly: there is no kubelet) labelled and tainted as mark-control-plane does.
    let nodes = Resource::nodes();
    kube.create(
        &nodes,
        &json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1", "keep": "me"}}}),
    )
    .expect("node");
    let taints = vec![Taint {
        key: "node-role.kubernetes.io/control-plane".into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    }];
    let mut patches = Vec::new();
    rec.patch_node("node1", &mut |current: &Value| {
        let mut marked = current.clone();
        node::mark_control_plane(&mut marked, &taints);
        node::annotate_cri_socket(&mut marked, "unix:///run/containerd/containerd.sock");
        let patch = node::two_way_merge_patch(current, &marked);
        patches.push(patch.clone());
        patch
    })
    .expect("patch node");
    assert_eq!(rec.take(), ["GET ok", "PATCH ok"]);
    let marked = kube.get(&nodes, "", "node1").expect("node");
    let labels = &marked["metadata"]["labels"];
    assert_eq!(labels["node-role.kubernetes.io/control-plane"], json!(""));
    assert_eq!(
        labels["node.kubernetes.io/exclude-from-external-load-balancers"],
        json!("")
    );
    assert_eq!(labels["keep"], json!("me"));
    // The API server's admission adds the not-ready taint to a new Node; ours comes on top.
    let taint_keys: Vec<&str> = marked["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["key"].as_str())
        .collect();
    assert_eq!(
        taint_keys,
        [
            "node-role.kubernetes.io/control-plane",
            "node.kubernetes.io/not-ready"
        ]
    );
    assert_eq!(
        marked["metadata"]["annotations"]["kubeadm.alpha.kubernetes.io/cri-socket"],
        json!("unix:///run/containerd/containerd.sock")
    );
    // Merge and JSON patches too.
    kube.patch(
        &nodes,
        "",
        "node1",
        PatchType::Merge,
        &json!({"metadata": {"labels": {"keep": null}}}),
    )
    .expect("merge patch");
    kube.patch(
        &nodes,
        "",
        "node1",
        PatchType::Json,
        &json!([{"op": "add", "path": "/metadata/labels/added", "value": "yes"}]),
    )
    .expect("json patch");
    let patched = kube.get(&nodes, "", "node1").expect("node");
    assert_eq!(patched["metadata"]["labels"].get("keep"), None);
    assert_eq!(patched["metadata"]["labels"]["added"], json!("yes"));
    let err = kube
        .patch(
            &nodes,
            "",
            "node1",
            PatchType::Json,
            &json!([{"op": "test", "path": "/metadata/name", "value": "x"}]),
        )
        .expect_err("failed test op");
    assert!(
        matches!(err, ClusterError::Invalid { .. } | ClusterError::Api { .. }),
        "{err:?}"
    );

    // Invalid objects are reported with the server's message.
    let err = kube
        .create(&cms, &config_map("Not_Valid", json!({})))
        .expect_err("invalid name");
    assert!(matches!(err, ClusterError::Invalid { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("ConfigMap \"Not_Valid\" is invalid"),
        "{err}"
    );

    // Deleting.
    kube.delete(&cms, "kube-system", "twice", None).expect("delete");
    let err = kube.get(&cms, "kube-system", "twice").expect_err("deleted");
    assert!(err.is_not_found());
    assert_eq!(err.to_string(), "configmaps \"twice\" not found");
    let call = err.call().expect("call");
    assert_eq!(
        (call.verb, call.namespace.as_str(), call.name.as_str()),
        (Verb::Get, "kube-system", "twice")
    );
    let err = kube.delete(&cms, "kube-system", "twice", None).expect_err("gone");
    assert!(err.is_not_found(), "{err:?}");
    // Foreground propagation reaches the server: with no garbage collector running here, the
    // object waits on the foregroundDeletion finalizer.
    kube.delete(
        &cms,
        "kube-system",
        "kubeadm-config",
        Some(Propagation::Foreground),
    )
    .expect("foreground delete");
    let pending = kube
        .get(&cms, "kube-system", "kubeadm-config")
        .expect("pending deletion");
    assert_eq!(pending["metadata"]["finalizers"], json!(["foregroundDeletion"]));
}

#[test]
fn a_killed_api_server_gives_unavailable_naming_the_call() {
    let mut server = ApiServer::start();
    let kube = connect(&server);
    kube.get(&Resource::core("namespaces"), "", "kube-system")
        .expect("up");

    // TLS verification is on: the same kubeconfig trusting another CA gets no answer.
    let wrong = server.untrusting_kubeconfig();
    let dir = tempfile::tempdir().expect("temp dir");
    let wrong_path = dir.path().join("wrong-ca.conf");
    std::fs::write(&wrong_path, wrong).expect("write kubeconfig");
    let untrusting = KubeCluster::from_kubeconfig(&wrong_path).expect("client");
    let err = untrusting
        .get(&Resource::core("namespaces"), "", "kube-system")
        .expect_err("server certificate not trusted");
    assert!(err.is_untrusted() && !err.is_unavailable(), "{err:?}");
    // Said as what it is, in the words of upstream's client: not "unavailable".
    assert_eq!(
        err.to_string(),
        format!(
            "GET namespaces \"kube-system\": the API server's certificate was refused: {}/api/v1/namespaces/kube-system: tls: failed to verify certificate: x509: certificate signed by unknown authority",
            server.url()
        )
    );

    // Ready: no /readyz check fails. Without etcd, the API server still answers, naming the
    // check that fails (as its verbose answer words it) and no longer healthy.
    assert_eq!(
        kube.failing_readyz_checks().expect("readyz"),
        Vec::<String>::new()
    );
    assert!(kube.healthy().expect("healthz"));
    server.kill_etcd();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let failing = loop {
        let failing = kube
            .failing_readyz_checks()
            .expect("the API server answers without etcd");
        if !failing.is_empty() || std::time::Instant::now() > deadline {
            break failing;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!("without etcd: {failing:?}");
    assert!(
        failing.iter().any(|c| c.starts_with("etcd failed")),
        "{failing:?}"
    );
    assert!(failing.iter().all(|c| !c.starts_with("[")), "{failing:?}");
    assert!(!kube.healthy().expect("healthz answers"));

    server.kill_apiserver();
    let err = kube.failing_readyz_checks().expect_err("down");
    assert!(err.is_unavailable(), "{err:?}");

    let err = kube
        .get(&Resource::config_maps(), "kube-system", "kubeadm-config")
        .expect_err("down");
    assert!(err.is_unavailable(), "{err:?}");
    let text = err.to_string();
    eprintln!("{text}");
    let url = format!(
        "{}/api/v1/namespaces/kube-system/configmaps/kubeadm-config",
        server.url()
    );
    assert!(
        text.starts_with(
            "GET configmaps \"kubeadm-config\" in namespace \"kube-system\": the API server is unavailable: "
        ),
        "{text}"
    );
    assert!(text.contains(&url), "{text}");

    // Writes name theirs, through the policies' context.
    let err = kube
        .create_or_update(&Resource::config_maps(), &config_map("x", json!({})))
        .expect_err("down");
    assert!(err.is_unavailable());
    assert!(
        err.to_string()
            .starts_with("unable to create ConfigMap: CREATE configmaps \"x\" in namespace \"kube-system\""),
        "{err}"
    );

    // Health polling gives up at its deadline, with the last error kept.
    let started = std::time::Instant::now();
    let err = kube.wait_for_api(Duration::from_millis(700)).expect_err("down");
    assert!(started.elapsed() < Duration::from_secs(5));
    match err {
        ClusterError::WaitTimeout { last: Some(last) } => assert!(last.is_unavailable(), "{last:?}"),
        other => panic!("{other:?}"),
    }
}
