//! Config files loaded by us and by upstream (`kubeadm config images list --config f`, which decodes,
//! defaults and validates the file): the same files must be accepted or refused, with upstream's
//! message inside ours.

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, load_init_config};
use kubeadm_api::load::LoadError;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_testkit::oracle::{run, upstream_kubeadm};

const PREFIX: &str = "could not convert cfg to an internal cfg: ";

/// Upstream's verdict: `Ok(warnings)` or `Err(message)`.
fn upstream(text: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, text).expect("write");
    let path = path.to_string_lossy().into_owned();
    let r = run(
        &upstream_kubeadm(),
        &["config", "images", "list", "--config", &path],
        dir.path(),
        &[],
    );
    if r.code == 0 {
        return Ok(r.stderr);
    }
    let line = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix(PREFIX))
        .unwrap_or_else(|| panic!("unexpected upstream output: {}", r.stderr));
    Err(line.to_string())
}

fn ours(text: &str) -> Result<Vec<String>, ConfigError> {
    let host = HostFacts {
        hostname: "node-a".into(),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config("config.yaml", text, &mut inputs).map(|c| c.warnings)
}

fn cluster(extra: &str) -> String {
    format!(
        r#"{{"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.25.3"{extra}}}"#
    )
}

/// An InitConfiguration with a node name, CRI socket and address set (so that upstream does not
/// look at this host), `patch` merged over it, then a ClusterConfiguration.
fn init(patch: &str) -> String {
    let mut doc = serde_json::json!({
        "apiVersion": "kubeadm.k8s.io/v1beta3",
        "kind": "InitConfiguration",
        "localAPIEndpoint": {"advertiseAddress": "10.0.0.5"},
        "nodeRegistration": {"name": "node-a", "criSocket": "unix:///run/containerd/containerd.sock"},
    });
    let patch: serde_json::Value =
        serde_json::from_str(&format!("{{{}}}", patch.trim_start_matches(','))).expect("patch");
    for (k, v) in patch.as_object().into_iter().flatten() {
        doc[k] = v.clone();
    }
    format!("{doc}\n---\n{}", cluster(""))
}

/// Files that upstream accepts or refuses; the expected verdict is upstream's, read at test time.
fn cases() -> Vec<(&'static str, String)> {
    vec![
        ("minimal cluster", cluster("")),
        ("bad pod subnet", cluster(r#", "networking": {"podSubnet": "10.0.0.0/8x"}"#)),
        ("pod subnet too small for node mask", cluster(r#", "networking": {"podSubnet": "10.0.0.0/25"}"#)),
        ("pod subnet far too big", cluster(r#", "networking": {"podSubnet": "10.0.0.0/7"}"#)),
        ("three pod subnets", cluster(r#", "networking": {"podSubnet": "10.0.0.0/16,10.1.0.0/16,fd00::/56"}"#)),
        ("two v4 service subnets", cluster(r#", "networking": {"serviceSubnet": "10.96.0.0/12,10.97.0.0/16"}"#)),
        ("dual stack", cluster(r#", "networking": {"serviceSubnet": "10.96.0.0/16,fd00::/112", "podSubnet": "10.244.0.0/16,fd01::/56"}"#)),
        ("service subnet too large", cluster(r#", "networking": {"serviceSubnet": "10.0.0.0/8"}"#)),
        ("service subnet too small", cluster(r#", "networking": {"serviceSubnet": "10.0.0.0/30"}"#)),
        ("bad dns domain", cluster(r#", "networking": {"dnsDomain": "Cluster_Local"}"#)),
        ("node mask flag", cluster(r#", "networking": {"podSubnet": "10.0.0.0/16"}, "controllerManager": {"extraArgs": {"node-cidr-mask-size-ipv4": "x"}}"#)),
        ("relative certificatesDir", cluster(r#", "certificatesDir": "pki""#)),
        ("unknown feature gate", cluster(r#", "featureGates": {"Foo": true}"#)),
        ("bad controlPlaneEndpoint", cluster(r#", "controlPlaneEndpoint": "a_b:6443""#)),
        ("bad controlPlaneEndpoint port", cluster(r#", "controlPlaneEndpoint": "cp.example:99999""#)),
        ("bad cert SAN", cluster(r#", "apiServer": {"certSANs": ["ok.example", "*.wild.example", "10.0.0.1", "bad_san"]}"#)),
        ("upper-case SAN is lowered", cluster(r#", "apiServer": {"certSANs": ["CP.Example"]}"#)),
        ("relative etcd dataDir", cluster(r#", "etcd": {"local": {"dataDir": "etcd"}}"#)),
        ("etcd local and external", cluster(r#", "etcd": {"local": {}, "external": {"endpoints": ["https://e:2379"]}}"#)),
        ("external etcd http with certs", cluster(r#", "etcd": {"external": {"endpoints": ["http://e:2379", "e:2379"], "caFile": "/ca", "certFile": "c"}}"#)),
        ("too old version", r#"{"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.23.0"}"#.to_string()),
        ("version label", r#"{"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "ClusterConfiguration", "kubernetesVersion": "foo"}"#.to_string()),
        ("wrong type", cluster(r#", "networking": {"serviceSubnet": 5}"#)),
        ("bad duration", cluster(r#", "apiServer": {"timeoutForControlPlane": "4x"}"#)),
        ("v1beta1", r#"{"apiVersion": "kubeadm.k8s.io/v1beta1", "kind": "ClusterConfiguration"}"#.to_string()),
        ("v1", r#"{"apiVersion": "kubeadm.k8s.io/v1", "kind": "ClusterConfiguration"}"#.to_string()),
        ("missing kind", r#"{"apiVersion": "kubeadm.k8s.io/v1beta3"}"#.to_string()),
        ("missing apiVersion", r#"{"kind": "ClusterConfiguration"}"#.to_string()),
        ("core apiVersion", r#"{"apiVersion": "v1", "kind": "ClusterConfiguration"}"#.to_string()),
        ("unknown kind only", r#"{"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "Foo"}"#.to_string()),
        ("join only", r#"{"apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "JoinConfiguration"}"#.to_string()),
        ("v1beta2 cluster", r#"{"apiVersion": "kubeadm.k8s.io/v1beta2", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.25.3", "useHyperKubeImage": false, "dns": {"type": "CoreDNS"}}"#.to_string()),
        ("init", init("")),
        ("init bad token", init(r#", "bootstrapTokens": [{"token": "abcdef"}]"#)),
        ("init token usages and groups", init(r#", "bootstrapTokens": [{"token": "abcdef.0123456789abcdef", "usages": ["signing", "x", "a"], "groups": ["system:bootstrappers:ok", "bad"]}]"#)),
        ("init token ttl and expires", init(r#", "bootstrapTokens": [{"token": "abcdef.0123456789abcdef", "ttl": "1h", "expires": "2030-01-01T00:00:00Z"}]"#)),
        ("init bad node name", init(r#", "nodeRegistration": {"name": "Node_A", "criSocket": "unix:///x.sock"}"#)),
        ("init cri socket without scheme", init(r#", "nodeRegistration": {"name": "node-a", "criSocket": "/var/run/crio/crio.sock"}"#)),
        ("init cri socket with other scheme", init(r#", "nodeRegistration": {"name": "node-a", "criSocket": "npipe:////./pipe/x"}"#)),
        ("init bad advertise address", init(r#", "localAPIEndpoint": {"advertiseAddress": "1.2.3"}"#)),
        ("init bad bind port", init(r#", "localAPIEndpoint": {"advertiseAddress": "10.0.0.5", "bindPort": 70000}"#)),
        ("yaml 1.1 bool as name", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nnodeRegistration:\n  name: n\n".to_string()),
        ("comment-only document", "# nothing\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n".to_string()),
        ("kind twice", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n".to_string()),
        ("old kubelet config version", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n".to_string()),
        ("kubelet group, other kind", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: Foo\n".to_string()),
        ("kubelet wrong type", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: \"x\"\n".to_string()),
        ("document is a list", "- a\n- b\n".to_string()),
        ("numeric apiVersion", "apiVersion: 5\nkind: ClusterConfiguration\n".to_string()),
        ("bad yaml", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: [ClusterConfiguration\n".to_string()),
        ("init taints", init(r#", "nodeRegistration": {"name": "node-a", "criSocket": "unix:///x.sock", "taints": []}"#)),
    ]
}

#[test]
fn loading_agrees_with_upstream() {
    let mut failures = Vec::new();
    for (name, text) in cases() {
        let want = upstream(&text);
        let got = ours(&text);
        match (&want, &got) {
            (Ok(_), Ok(_)) => {}
            (Err(w), Err(g)) if g.to_string().contains(w.as_str()) => {}
            // Upstream names Go types ("json: cannot unmarshal number into Go struct field
            // Networking.networking.serviceSubnet of type string"); we name the file position and
            // field path instead.
            // Syntax errors are worded by our YAML reader, with a line and column.
            (Err(w), Err(ConfigError::Load(e)))
                if matches!(**e, LoadError::Parse { .. }) && w.contains("yaml: ") => {}
            (Err(w), Err(ConfigError::Load(e)))
                if matches!(**e, LoadError::Field(_))
                    && (w.starts_with("json: cannot unmarshal") || w.contains("time: ")) =>
            {
                if let LoadError::Field(f) = &**e {
                    assert!(w.contains(&f.path), "{name}: {w} vs {f}");
                }
            }
            _ => failures.push(format!("{name}:\n  upstream: {want:?}\n  ours:     {got:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}

#[test]
fn validation_errors_point_at_their_line() {
    let text = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\nnetworking:\n  podSubnet: 10.0.0.0/8x\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\n  bindPort: 70000\nnodeRegistration:\n  name: node-a\n  criSocket: unix:///x.sock\n";
    let Err(ConfigError::Invalid(errs)) = ours(text) else {
        panic!("expected validation errors");
    };
    let located: Vec<(String, String)> = errs
        .0
        .iter()
        .map(|e| {
            (
                e.field.clone(),
                e.location.as_ref().map(ToString::to_string).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        located,
        [
            ("podSubnet".to_string(), "config.yaml:5:3".to_string()),
            (
                "localAPIEndpoint.bindPort".to_string(),
                "config.yaml:11:3".to_string()
            ),
        ]
    );
    // The message itself stays upstream's.
    assert_eq!(
        errs.to_string(),
        "[podSubnet: Invalid value: \"10.0.0.0/8x\": couldn't parse subnet, localAPIEndpoint.bindPort: Invalid value: 70000: port number is not valid]"
    );
}
