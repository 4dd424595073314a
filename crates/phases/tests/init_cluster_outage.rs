//! The API server going away in the middle of a cluster phase of `kubeadm init`, at every call the
//! phase makes in turn: the phase fails with an error that names the call and says the API server
//! is unavailable, and once the server is back, running the phase again leaves exactly the objects
//! an uninterrupted run leaves (no duplicates, nothing missing, nothing half-done).

use std::collections::BTreeMap;
use std::sync::Arc;

use kubeadm_testkit::fakes::{FakeCluster, ObjectKey};

use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_phases::{ClusterAccess, InitData};
use serde_json::{Value, json};

mod common;
use common::{Captured, admin_conf, admin_path, context, golden, load_config};

/// The node a kubelet registered, as the phases that patch it expect.
fn node() -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}}})
}

/// The init context with `cluster` behind it and an admin.conf in a dry-run overlay.
fn data(cluster: Arc<FakeCluster>) -> InitData {
    let cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
    let fs = DryRunFs::new(kubeadm_host::fs::RealFs);
    // Any CA does: the phases only copy it into cluster-info.
    let ca = base64_ca();
    fs.write(
        admin_path(),
        admin_conf("https://192.0.2.2:6443", &ca).as_bytes(),
        0o600,
    )
    .expect("overlay");
    let access = ClusterAccess::new(
        admin_path().to_path_buf(),
        Box::new(move |_| Ok(Box::new(cluster.clone()) as Box<dyn Cluster>)),
    );
    context(
        cfg,
        Box::new(fs),
        Arc::new(Captured::default()),
        access,
        1_800_000_000,
        false,
    )
}

/// The CA certificate of the golden upstream run, base64 as kubeconfig files carry it.
fn base64_ca() -> String {
    let text = std::fs::read_to_string(golden("default.dryrun.txt")).expect("golden");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .expect("ca")
        .to_string()
}

fn fresh() -> Arc<FakeCluster> {
    Arc::new(FakeCluster::new().with_object(&Resource::nodes(), node()))
}

fn run(data: &mut InitData, phase: &str) -> Result<(), String> {
    kubeadm_phases::init::workflow()
        .run(data, &[phase.to_string()], &[])
        .map_err(|e| format!("{e:#}"))
}

/// For each phase: an uninterrupted run gives the reference objects and the number of calls; then
/// for every call k, a fresh cluster that goes down at call k.
fn check_phase(phase: &str) -> usize {
    let reference = fresh();
    run(&mut data(reference.clone()), phase).unwrap_or_else(|e| panic!("{phase}: {e}"));
    let want: BTreeMap<ObjectKey, Value> = reference.objects();
    let calls = reference.calls().len();
    assert!(calls > 0, "{phase} made no API call");
    for k in 0..calls {
        let cluster = fresh();
        let mut d = data(cluster.clone());
        cluster.go_down_at_call(k);
        let err = run(&mut d, phase).expect_err("the API server is down");
        // The error names a call the server refused (retries may have moved on to another).
        let refused: Vec<String> = cluster.calls()[k..].iter().map(ToString::to_string).collect();
        let failed_call = refused[0].clone();
        assert!(
            err.contains("the API server is unavailable") && refused.iter().any(|c| err.contains(c.as_str())),
            "{phase}, down at call {k} ({failed_call}): unclear error: {err}"
        );
        assert!(
            err.starts_with(&format!("error execution phase {phase}")),
            "{phase}: the error does not name the phase: {err}"
        );
        cluster.restart();
        run(&mut data(cluster.clone()), phase)
            .unwrap_or_else(|e| panic!("{phase}, re-run after an outage at call {k}: {e}"));
        let got = cluster.objects();
        assert!(
            got == want,
            "{phase}, re-run after an outage at call {k} ({failed_call}) left other objects:\nonly after the outage: {:?}\nmissing or different: {:?}",
            got.iter()
                .filter(|(k, v)| want.get(*k) != Some(v))
                .map(|(k, _)| k)
                .collect::<Vec<_>>(),
            want.iter()
                .filter(|(k, v)| got.get(*k) != Some(v))
                .map(|(k, _)| k)
                .collect::<Vec<_>>(),
        );
    }
    calls
}

#[test]
fn upload_config_survives_an_outage_at_every_call() {
    let calls = check_phase("upload-config");
    // kubeadm-config and kubelet-config with their Roles and RoleBindings, each looked up first.
    assert!(calls >= 6, "{calls}");
}

#[test]
fn bootstrap_token_survives_an_outage_at_every_call() {
    let calls = check_phase("bootstrap-token");
    assert!(calls >= 8, "{calls}");
}

#[test]
fn mark_control_plane_and_addons_survive_an_outage_at_every_call() {
    check_phase("mark-control-plane");
    check_phase("addon");
}
