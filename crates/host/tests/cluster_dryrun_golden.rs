//! The dry-run decorator's printed output against what upstream kubeadm v1.25.16 printed for
//! `init --dry-run` (golden files in kubeadm-core, `crates/core/tests/golden/cluster/`, made by
//! `tests/gen/dryrun.sh` from the upstream binary).
//!
//! The init phases' API calls are replayed in upstream's order through the [`Cluster`] policies
//! (create-or-mutate, create-or-update with and without retry, create-or-retain, the token GET,
//! the node patch loop, the CoreDNS LIST…) on a [`DryRunCluster`] with the control-plane Node
//! seeded, as upstream's `InitDryRunGetter` fakes it. Objects come from the core builders; the
//! inputs upstream draws at run time (clock, upload-certs token, CA) are read back from its output.
//! Every `[dryrun]` line and every tab-indented object line after the first API call must match
//! byte for byte: the verbs each policy issues, resource and group names, `Resource name:` lines,
//! the YAML of objects and the JSON of patches.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString};
use kubeadm_core::addons::{KubeProxyInputs, coredns, coredns_objects, kube_proxy_objects};
use kubeadm_core::cluster::{bootstrap_token, cluster_info, node, upload_certs, upload_config};
use kubeadm_effects::cluster::{Cluster, DryRunCluster, ListOptions, Resource};
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_testkit::oracle::diff;
use serde_json::{Value, json};

/// Collects stdout.
#[derive(Debug, Default)]
struct Captured(Mutex<String>);

impl Reporter for Captured {
    fn out(&self, text: &str) {
        self.0.lock().expect("out").push_str(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/tests/golden/cluster")
}

fn load(name: &str) -> InitConfig {
    let text = std::fs::read_to_string(golden_dir().join(format!("{name}.yaml"))).expect("config");
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

/// Upstream's API-call lines: from the first `Would perform action` up to the last addon, only
/// the `[dryrun]` lines and the tab-indented bodies (phase messages are not the decorator's).
fn upstream_api_lines(text: &str) -> String {
    let mut out = String::new();
    let mut started = false;
    for line in text.lines() {
        started |= line.starts_with("[dryrun] Would perform action");
        if started && (line.starts_with("[dryrun] ") || line.starts_with('\t')) {
            out.push_str(line);
            out.push('\n');
        }
        if line == "[addons] Applied essential addon: kube-proxy" {
            break;
        }
    }
    out
}

/// The Secret YAML that follows the `n`th `Resource name: "<name>"` line, decoded `data.<key>`.
fn created_secret_data(text: &str, name: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("[dryrun] Resource name: {name:?}"))?;
    let prefix = format!("\t  {key}: ");
    let line = text[at..].lines().find(|l| l.starts_with(&prefix))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(line[prefix.len()..].trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The clock upstream used for a token: its printed expiration minus the TTL.
fn now_for(text: &str, token: &BootstrapToken) -> Time {
    let id = &token.token.as_ref().expect("token").id;
    let name = bootstrap_token::token_secret_name(id);
    let ttl = token.ttl.map_or(0, |d| d.as_nanos() / 1_000_000_000);
    match created_secret_data(text, &name, "expiration") {
        Some(exp) => {
            let t = Time::parse(&exp).expect("rfc3339");
            Time::from_unix_seconds(t.unix_seconds() - ttl).expect("time")
        }
        // A token that never expires: the clock does not show.
        None => Time::from_unix_seconds(1_700_000_000).expect("time"),
    }
}

fn resource_of(obj: &Value) -> Resource {
    let api = kubeadm_core::cluster::meta::api_resource(obj).expect("known kind");
    Resource::from_group_version(api.group_version, api.resource)
}

/// Upstream's `InitDryRunGetter` Node, as Go marshals it.
fn fake_node(name: &str) -> Value {
    json!({
        "metadata": {"creationTimestamp": null, "labels": {"kubernetes.io/hostname": name}, "name": name},
        "spec": {},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}},
    })
}

fn replay(name: &str, proxy_env: &[(&str, &str)]) {
    let golden = std::fs::read_to_string(golden_dir().join(format!("{name}.dryrun.txt"))).expect("golden");
    let mut cfg = load(name);
    let node_name = cfg.init.node_registration.name.clone();
    let out = Arc::new(Captured::default());
    let dry = DryRunCluster::new(out.clone(), kubeadm_yaml::to_string)
        .with_object(&Resource::nodes(), fake_node(&node_name));
    let c: &dyn Cluster = &dry;
    let with_retry = |objs: &[Value]| {
        for obj in objs {
            c.create_or_update_with_retry(&resource_of(obj), obj)
                .expect("rbac");
        }
    };

    // upload-config/kubeadm and upload-config/kubelet.
    kubeadm_core::manifests::record_authorization_mode(&mut cfg.cluster);
    let kubeadm_config = upload_config::kubeadm_config_map(&cfg.cluster, &cfg.resolved);
    let new_cluster_config = kubeadm_config["data"]["ClusterConfiguration"].clone();
    c.create_or_mutate_config_map(&kubeadm_config, &mut |cm| {
        cm["data"]["ClusterConfiguration"] = new_cluster_config.clone();
        Ok(())
    })
    .expect("kubeadm-config");
    with_retry(&upload_config::kubeadm_config_rbac());
    let kubelet = cfg.component_configs.kubelet.as_ref().expect("kubelet config");
    let kubelet_cm = upload_config::kubelet_config_map(kubelet, cfg.user_supplied.0);
    c.create_or_update(&Resource::config_maps(), &kubelet_cm)
        .expect("kubelet-config");
    with_retry(&upload_config::kubelet_config_rbac());
    let cri_socket = cfg.init.node_registration.cri_socket.clone();
    c.patch_node(&node_name, &mut |current| {
        let mut annotated = current.clone();
        node::annotate_cri_socket(&mut annotated, &cri_socket);
        node::two_way_merge_patch(current, &annotated)
    })
    .expect("annotate");

    // upload-certs, in the runs made with --upload-certs.
    if !cfg.init.certificate_key.is_empty() {
        let at = golden.find("[upload-certs] Storing").expect("upload-certs");
        let token_line = golden[at..]
            .lines()
            .find_map(|l| l.strip_prefix("[dryrun] Resource name: \"bootstrap-token-"))
            .expect("upload-certs token");
        let id = token_line.trim_end_matches('"');
        let name = bootstrap_token::token_secret_name(id);
        let secret = created_secret_data(&golden, &name, "token-secret").expect("token secret");
        let token = upload_certs::upload_certs_token(
            BootstrapTokenString::parse(&format!("{id}.{secret}")).expect("token"),
        );
        let secret_obj = bootstrap_token::token_secret(&token, 0, now_for(&golden, &token)).expect("secret");
        c.create_or_update_token_secret(id, &secret_obj, false)
            .expect("upload-certs token");
        // The owner reference: the token Secret read back (the dry run kept it; its UID is empty).
        let owner = c
            .get(&Resource::secrets(), "kube-system", &name)
            .expect("token secret kept");
        let uid = owner["metadata"]["uid"].as_str().unwrap_or("");
        let sealed = upload_certs::certs_to_transfer(&cfg.cluster)
            .into_iter()
            .map(|f| (f.secret_key, None))
            .collect();
        let certs = upload_certs::kubeadm_certs_secret(&sealed, id, uid);
        c.create_or_update(&Resource::secrets(), &certs)
            .expect("kubeadm-certs");
        with_retry(&upload_certs::kubeadm_certs_rbac());
    }

    // mark-control-plane.
    let taints = cfg.init.node_registration.taints.clone().unwrap_or_default();
    c.patch_node(&node_name, &mut |current| {
        let mut marked = current.clone();
        node::mark_control_plane(&mut marked, &taints);
        node::two_way_merge_patch(current, &marked)
    })
    .expect("mark");

    // bootstrap-token.
    for (i, token) in cfg.init.bootstrap_tokens.iter().enumerate() {
        let id = &token.token.as_ref().expect("token").id;
        let secret = bootstrap_token::token_secret(token, i, now_for(&golden, token)).expect("secret");
        c.create_or_update_token_secret(id, &secret, true).expect("token");
    }
    let cluster_wide = bootstrap_token::allow_get_nodes().into_iter().chain([
        bootstrap_token::allow_post_csrs(),
        bootstrap_token::auto_approve_node_bootstrap_tokens(),
        bootstrap_token::auto_approve_node_certificate_rotation(),
    ]);
    for obj in cluster_wide {
        c.create_or_update(&resource_of(&obj), &obj)
            .expect("bootstrap rbac");
    }
    let ca_b64 = golden
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .expect("ca data");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca_b64)
        .expect("base64");
    let server =
        kubeadm_core::addons::kube_proxy::control_plane_url(&cfg.cluster, &cfg.init.local_api_endpoint)
            .expect("endpoint");
    let info = cluster_info::cluster_info_config_map(&ca, &server);
    c.create_or_update(&Resource::config_maps(), &info)
        .expect("cluster-info");
    with_retry(&cluster_info::cluster_info_rbac());

    // addons: CoreDNS looks for a deployed CoreDNS first; its Corefile is created only if absent.
    let dns = ListOptions {
        label_selector: "k8s-app=kube-dns".into(),
        ..ListOptions::default()
    };
    let deployments = Resource::new("apps", "v1", "deployments");
    assert!(
        c.list(&deployments, "kube-system", &dns)
            .expect("list")
            .is_empty()
    );
    let proxy_env: Vec<(String, String)> = proxy_env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
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
    let dns_objects =
        coredns_objects(&cfg.cluster, &cfg.resolved, coredns::DEFAULT_REPLICAS).expect("coredns");
    let proxy_objects = kube_proxy_objects(&inputs, cfg.user_supplied.1, &proxy_env).expect("kube-proxy");
    for (addon, obj) in dns_objects
        .iter()
        .map(|o| ("coredns", o))
        .chain(proxy_objects.iter().map(|o| ("kube-proxy", o)))
    {
        let res = resource_of(obj);
        match (addon, res.plural.as_str()) {
            ("coredns", "configmaps") => c.create_or_retain(&res, obj),
            (_, "serviceaccounts") => c.create_or_keep(&res, obj),
            (_, "roles" | "rolebindings") => c.create_or_update_with_retry(&res, obj),
            _ => c.create_or_update(&res, obj),
        }
        .expect("addon object");
    }

    let want = upstream_api_lines(&golden);
    let got = out.0.lock().expect("out").clone();
    assert!(
        want == got,
        "{name}: dry-run output differs from upstream:\n{}",
        diff(&want, &got)
    );
}

#[test]
fn default_config_dry_run_prints_as_upstream() {
    replay("default", &[]);
}

#[test]
fn custom_config_dry_run_prints_as_upstream() {
    replay("custom", &[]);
}

#[test]
fn external_etcd_dry_run_prints_as_upstream() {
    replay(
        "external",
        &[
            ("HTTPS_PROXY", "http://proxy.example:3128"),
            ("no_proxy", "localhost,10.0.0.0/8"),
        ],
    );
}
