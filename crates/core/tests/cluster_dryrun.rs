//! Every API object of `kubeadm init` against what upstream's `init --dry-run` printed for the same
//! configuration (golden files from the upstream binary: `tests/gen/dryrun.sh`).
//!
//! The few inputs that upstream draws at run time are read back from its output and passed in:
//! the clock (each token's expiration minus its TTL), the random upload-certs token id and the
//! generated CA (embedded in `cluster-info`). Everything else is ours, compared byte for byte.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use base64::Engine as _;
use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString};
use kubeadm_core::addons::{KubeProxyInputs, coredns, coredns_objects, kube_proxy_objects};
use kubeadm_core::cluster::{bootstrap_token, cluster_info, node, upload_certs, upload_config};
use kubeadm_testkit::oracle::diff;
use serde_json::{Value, json};

/// One API call upstream's dry-run client reported.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    /// CREATE with the object's YAML.
    Create { resource: String, yaml: String },
    /// PATCH with the patch's JSON.
    Patch { patch: String },
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cluster")
}

/// The CREATE and PATCH actions of a dry-run output, in order, plus the `[mark-control-plane]` lines.
fn parse_dryrun(text: &str) -> (Vec<Action>, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut actions = Vec::new();
    let mut marks = Vec::new();
    let mut resource = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("[mark-control-plane]") {
            marks.push(line.to_string());
        }
        if let Some(rest) = line.strip_prefix("[dryrun] Would perform action ") {
            let quoted: Vec<&str> = rest.split('"').collect();
            resource = format!(
                "{} {}",
                quoted.get(1).unwrap_or(&""),
                quoted.get(3).unwrap_or(&"")
            );
        }
        let block = |start: usize| -> (String, usize) {
            let mut j = start;
            let mut body = String::new();
            while j < lines.len() && lines[j].starts_with('\t') {
                body.push_str(&lines[j][1..]);
                body.push('\n');
                j += 1;
            }
            (body, j)
        };
        if line == "[dryrun] Attached object:" {
            let (yaml, j) = block(i + 1);
            actions.push(Action::Create {
                resource: resource.clone(),
                yaml,
            });
            i = j;
            continue;
        }
        if line == "[dryrun] Attached patch:" {
            let (patch, j) = block(i + 1);
            actions.push(Action::Patch {
                patch: patch.trim_end().to_string(),
            });
            i = j;
            continue;
        }
        i += 1;
    }
    (actions, marks)
}

fn load(name: &str) -> InitConfig {
    let path = golden_dir().join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).expect("config");
    let host = HostFacts {
        hostname: "node1".to_string(),
        default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2))),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config(&format!("{name}.yaml"), &text, &mut inputs).expect("valid config")
}

fn yaml(v: &Value) -> String {
    kubeadm_yaml::to_string(v)
}

/// The decoded value of `data.<key>` in a Secret's YAML as upstream printed it.
fn secret_data(upstream_yaml: &str, key: &str) -> Option<String> {
    let prefix = format!("  {key}: ");
    let line = upstream_yaml.lines().find(|l| l.starts_with(&prefix))?;
    let b64 = line[prefix.len()..].trim();
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    String::from_utf8(bytes).ok()
}

/// The clock upstream used for a token: its printed expiration minus the TTL.
fn now_for(upstream_yaml: &str, token: &BootstrapToken) -> Time {
    let ttl = token.ttl.map_or(0, |d| d.as_nanos() / 1_000_000_000);
    match secret_data(upstream_yaml, "expiration") {
        Some(exp) => {
            let t = Time::parse(&exp).expect("rfc3339");
            Time::from_unix_seconds(t.unix_seconds() - ttl).expect("time")
        }
        None => Time::from_unix_seconds(1_700_000_000).expect("time"),
    }
}

fn base_node(name: &str) -> Value {
    json!({
        "metadata": {"creationTimestamp": null, "labels": {"kubernetes.io/hostname": name}, "name": name},
        "spec": {},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}},
    })
}

/// Checks one golden file: our objects, in upstream's order, against every CREATE and PATCH.
/// `proxy_env` is the `*_proxy` environment `tests/gen/dryrun.sh` ran upstream with.
fn check(name: &str, proxy_env: &[(&str, &str)]) {
    let text = std::fs::read_to_string(golden_dir().join(format!("{name}.dryrun.txt"))).expect("golden");
    let (actions, marks) = parse_dryrun(&text);
    let mut cfg = load(name);
    let mut upstream = actions.into_iter();
    let mut count = 0;
    let mut expect_create = |ours: &Value, upstream: &mut dyn Iterator<Item = Action>| -> String {
        count += 1;
        match upstream.next() {
            Some(Action::Create { resource, yaml: want }) => {
                let api = kubeadm_core::cluster::meta::api_resource(ours).expect("known kind");
                assert_eq!(
                    format!("{} {}", api.resource, api.group_version),
                    resource,
                    "{name}: object {count}"
                );
                let got = yaml(ours);
                assert!(
                    want == got,
                    "{name}: object {count} ({resource}) differs:\n{}",
                    diff(&want, &got)
                );
                want
            }
            other => panic!("{name}: expected a CREATE for object {count}, upstream has {other:?}"),
        }
    };
    let expect_patch = |ours: &Value, upstream: &mut dyn Iterator<Item = Action>| match upstream.next() {
        Some(Action::Patch { patch }) => assert_eq!(patch, node::patch_json(ours), "{name}: node patch"),
        other => panic!("{name}: expected a PATCH, upstream has {other:?}"),
    };

    // upload-config, after the control-plane phase recorded the authorization modes.
    kubeadm_core::manifests::record_authorization_mode(&mut cfg.cluster);
    expect_create(
        &upload_config::kubeadm_config_map(&cfg.cluster, &cfg.resolved),
        &mut upstream,
    );
    for obj in upload_config::kubeadm_config_rbac() {
        expect_create(&obj, &mut upstream);
    }
    let kubelet = cfg.component_configs.kubelet.as_ref().expect("kubelet config");
    expect_create(
        &upload_config::kubelet_config_map(kubelet, cfg.user_supplied.0),
        &mut upstream,
    );
    for obj in upload_config::kubelet_config_rbac() {
        expect_create(&obj, &mut upstream);
    }
    let node_name = cfg.init.node_registration.name.clone();
    let old = base_node(&node_name);
    let mut annotated = old.clone();
    node::annotate_cri_socket(&mut annotated, &cfg.init.node_registration.cri_socket);
    expect_patch(&node::two_way_merge_patch(&old, &annotated), &mut upstream);

    // upload-certs (only the cases run with --upload-certs have a certificate key).
    if !cfg.init.certificate_key.is_empty() {
        let Some(Action::Create { yaml: token_yaml, .. }) = upstream.clone().next() else {
            panic!("{name}: no upload-certs token");
        };
        let id = secret_data(&token_yaml, "token-id").expect("token id");
        let secret = secret_data(&token_yaml, "token-secret").expect("token secret");
        let token = upload_certs::upload_certs_token(
            BootstrapTokenString::parse(&format!("{id}.{secret}")).expect("token"),
        );
        let now = now_for(&token_yaml, &token);
        expect_create(
            &bootstrap_token::token_secret(&token, 0, now).expect("secret"),
            &mut upstream,
        );
        // The dry-run reads the real /etc/kubernetes/pki, which does not exist: every file is
        // missing, so every value is null; the owner's UID is empty in a dry-run.
        let sealed = upload_certs::certs_to_transfer(&cfg.cluster)
            .into_iter()
            .map(|f| (f.secret_key, None))
            .collect();
        expect_create(
            &upload_certs::kubeadm_certs_secret(&sealed, &id, ""),
            &mut upstream,
        );
        for obj in upload_certs::kubeadm_certs_rbac() {
            expect_create(&obj, &mut upstream);
        }
    }

    // mark-control-plane.
    let taints = cfg.init.node_registration.taints.clone().unwrap_or_default();
    assert_eq!(
        marks,
        node::mark_control_plane_messages(&node_name, &taints),
        "{name}: messages"
    );
    let mut marked = old.clone();
    node::mark_control_plane(&mut marked, &taints);
    expect_patch(&node::two_way_merge_patch(&old, &marked), &mut upstream);

    // bootstrap-token.
    for (i, token) in cfg.init.bootstrap_tokens.iter().enumerate() {
        let Some(Action::Create { yaml: want, .. }) = upstream.clone().next() else {
            panic!("{name}: no token secret {i}");
        };
        let now = now_for(&want, token);
        expect_create(
            &bootstrap_token::token_secret(token, i, now).expect("secret"),
            &mut upstream,
        );
    }
    for obj in bootstrap_token::allow_get_nodes() {
        expect_create(&obj, &mut upstream);
    }
    expect_create(&bootstrap_token::allow_post_csrs(), &mut upstream);
    expect_create(
        &bootstrap_token::auto_approve_node_bootstrap_tokens(),
        &mut upstream,
    );
    expect_create(
        &bootstrap_token::auto_approve_node_certificate_rotation(),
        &mut upstream,
    );

    // cluster-info: the CA is generated at run time, so it is taken from upstream's output; the
    // server URL is ours.
    let Some(Action::Create { yaml: info_yaml, .. }) = upstream.clone().next() else {
        panic!("{name}: no cluster-info");
    };
    let ca_b64 = info_yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .expect("ca data");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca_b64)
        .expect("base64");
    let server =
        kubeadm_core::addons::kube_proxy::control_plane_url(&cfg.cluster, &cfg.init.local_api_endpoint)
            .expect("endpoint");
    expect_create(
        &cluster_info::cluster_info_config_map(&ca, &server),
        &mut upstream,
    );
    for obj in cluster_info::cluster_info_rbac() {
        expect_create(&obj, &mut upstream);
    }

    // addons.
    for obj in coredns_objects(&cfg.cluster, &cfg.resolved, coredns::DEFAULT_REPLICAS).expect("coredns") {
        expect_create(&obj, &mut upstream);
    }
    let inputs = KubeProxyInputs {
        cluster: &cfg.cluster,
        resolved: &cfg.resolved,
        local_api_endpoint: &cfg.init.local_api_endpoint,
        config: cfg
            .component_configs
            .kube_proxy
            .as_ref()
            .expect("kube-proxy config"),
    };
    let proxy_env: Vec<(String, String)> = proxy_env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for obj in kube_proxy_objects(&inputs, cfg.user_supplied.1, &proxy_env).expect("kube-proxy") {
        expect_create(&obj, &mut upstream);
    }
    let rest: Vec<Action> = upstream.collect();
    assert!(rest.is_empty(), "{name}: upstream created more: {rest:?}");
}

#[test]
fn default_config_objects_match_upstream_dry_run() {
    check("default", &[]);
}

#[test]
fn custom_config_objects_match_upstream_dry_run() {
    check("custom", &[]);
}

#[test]
fn external_etcd_objects_match_upstream_dry_run() {
    check(
        "external",
        &[
            ("HTTPS_PROXY", "http://proxy.example:3128"),
            ("no_proxy", "localhost,10.0.0.0/8"),
        ],
    );
}
