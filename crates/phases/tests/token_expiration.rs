//! The Secrets of bootstrap tokens always expire when they have a TTL: a clock so late that
//! `now + ttl` cannot be written makes the `bootstrap-token` and `upload-certs` phases fail before
//! they write anything (upstream would write a token Secret without an expiration, and with it a
//! `kubeadm-certs` Secret that never goes away). And the certificate key `upload-certs` generates is
//! always 32 bytes (AES-256).

use std::sync::Arc;

use kubeadm_testkit::fakes::FakeCluster;

use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_phases::{ClusterAccess, InitData};
use serde_json::{Value, json};

mod common;
use common::{Captured, admin_conf, admin_path, context, golden, load_config};

/// 9999-12-30T21:00:00Z: two hours later (the `upload-certs` token's TTL) is past the last instant a
/// timestamp holds.
const LATE: i64 = 253_402_203_600;
/// 2027-01-15T08:00:00Z.
const NOW: i64 = 1_800_000_000;

fn node() -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}}})
}

fn data(cluster: Arc<FakeCluster>, now: i64, out: Arc<Captured>) -> InitData {
    let cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
    let fs = DryRunFs::new(kubeadm_host::fs::RealFs);
    fs.write(
        admin_path(),
        admin_conf("https://192.0.2.2:6443", "").as_bytes(),
        0o600,
    )
    .expect("overlay");
    let access = ClusterAccess::new(
        admin_path().to_path_buf(),
        Box::new(move |_| Ok(Box::new(cluster.clone()) as Box<dyn Cluster>)),
    );
    let mut data = context(cfg, Box::new(fs), out, access, now, false);
    data.upload_certs = true;
    data
}

fn run(phase: &str, now: i64) -> (Arc<FakeCluster>, Result<(), String>, String) {
    run_with(phase, now, |_| {})
}

fn run_with(
    phase: &str,
    now: i64,
    change: impl FnOnce(&mut InitData),
) -> (Arc<FakeCluster>, Result<(), String>, String) {
    let cluster = Arc::new(FakeCluster::new().with_object(&Resource::nodes(), node()));
    let out = Arc::new(Captured::default());
    let mut d = data(cluster.clone(), now, out.clone());
    change(&mut d);
    let result = kubeadm_phases::init::workflow()
        .run(&mut d, &[phase.to_string()], &[])
        .map_err(|e| format!("{e:#}"));
    let printed = out.0.lock().expect("out").clone();
    (cluster, result, printed)
}

/// The objects a run wrote (the Node was there before).
fn written(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .objects()
        .keys()
        .filter(|(resource, _, _)| resource != "nodes")
        .map(|(resource, ns, name)| format!("{resource} {ns}/{name}"))
        .collect()
}

#[test]
fn a_token_whose_expiration_cannot_be_computed_is_refused_before_anything_is_written() {
    for phase in ["bootstrap-token", "upload-certs"] {
        let (cluster, result, _) = run(phase, LATE);
        let err = result.expect_err(phase);
        assert!(
            err.contains("cannot compute its expiration") && err.contains("out of range"),
            "{phase}: {err}"
        );
        assert_eq!(written(&cluster), Vec::<String>::new(), "{phase}: {err}");
    }
}

/// A token that never expires ahead of the one whose expiration is out of range: neither is
/// written.
#[test]
fn no_token_is_written_when_a_later_one_cannot_be() {
    let (cluster, result, _) = run_with("bootstrap-token", LATE, |d| {
        let mut first = d.cfg.init.bootstrap_tokens[0].clone();
        first.token = Some(
            kubeadm_api::v1beta3::BootstrapTokenString::parse("zzzzzz.0123456789abcdef").expect("token"),
        );
        first.ttl = None;
        d.cfg.init.bootstrap_tokens.insert(0, first);
    });
    let err = result.expect_err("the second token");
    assert!(
        err.contains("bootstrap token 1: cannot compute its expiration"),
        "{err}"
    );
    assert_eq!(written(&cluster), Vec::<String>::new(), "{err}");
}

#[test]
fn upload_certs_generates_a_32_byte_key_and_an_expiring_owner_token() {
    let (cluster, result, printed) = run("upload-certs", NOW);
    result.expect("upload-certs");
    let key = printed
        .split_once("[upload-certs] Using certificate key:\n")
        .map(|(_, rest)| rest.lines().next().unwrap_or_default())
        .expect("the key is printed");
    assert_eq!(
        kubeadm_core::cluster::upload_certs::decode_certificate_key(key)
            .expect("hex")
            .len(),
        32,
        "{key}"
    );
    let token = cluster
        .objects()
        .into_iter()
        .find(|((resource, _, name), _)| resource == "secrets" && name.starts_with("bootstrap-token-"))
        .map(|(_, v)| v)
        .expect("the owner token");
    assert!(
        token.pointer("/data/expiration").is_some(),
        "the token owning kubeadm-certs does not expire: {token}"
    );
}
