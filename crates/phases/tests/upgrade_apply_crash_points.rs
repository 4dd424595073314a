//! `kubeadm upgrade apply`'s steps on the cluster, after its static pods: the removal of the legacy
//! `node-role.kubernetes.io/master` taint and upstream's post-upgrade tasks (the `kubeadm-config`
//! and `kubelet-config` uploads, the node's kubelet configuration on disk, its CRI socket
//! annotation, the bootstrap-token and cluster-info RBAC rules, the CoreDNS and kube-proxy
//! addons), stopped dead at every API call and file change in turn, then run again.
//!
//! The cluster is what `kubeadm init` leaves (made on fakes, as in `init_crash_points.rs`), aged
//! to look like a v1.25.15 cluster of before 1.25: node1 has the legacy taint, the stored
//! configuration and kube-proxy are v1.25.15, CoreDNS is v1.8.6. A run is killed at its k-th
//! operation (that operation and everything after it fail); the tasks after it then fail too, as
//! the process would be gone. Run again on what was left, it must succeed and leave what an
//! uninterrupted run leaves: the same API objects and the same files.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_phases::upgrade::postupgrade::{PostUpgrade, remove_old_control_plane_taint};
use kubeadm_testkit::fakes::FakeCluster;
use serde_json::Value;

mod common;
mod crash;
use common::{Captured, Shared, golden, load_config};
use crash::{
    CrashCluster, CrashFs, CrashPoint, Node, comparable, file_problems, object_problems, objects, try_each,
};

/// The node and cluster `kubeadm init` left, aged to a v1.25.15 cluster made before 1.25.
fn aged() -> Node {
    let node = Node::new();
    node.init(&CrashPoint::new(None))
        .unwrap_or_else(|e| panic!("init: {e}"));
    let cluster = FakeCluster::new();
    for ((group_resource, _namespace, _name), object) in node.cluster.objects() {
        let (plural, group) = group_resource
            .split_once('.')
            .unwrap_or((group_resource.as_str(), ""));
        let text = serde_json::to_string(&object)
            .expect("json")
            .replace("kubernetesVersion: v1.25.16", "kubernetesVersion: v1.25.15")
            .replace("kube-proxy:v1.25.16", "kube-proxy:v1.25.15")
            .replace("coredns:v1.9.3", "coredns:v1.8.6");
        let mut object: Value = serde_json::from_str(&text).expect("json");
        if plural == "nodes" {
            let taints = object["spec"]["taints"].as_array_mut().expect("node1's taints");
            taints.push(serde_json::json!({"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}));
        }
        cluster
            .create(&Resource::new(group, "v1", plural), &object)
            .expect("stored");
    }
    Node {
        overlay: crash::node_with_files(&node.files()).overlay,
        cluster: Arc::new(cluster),
    }
}

/// A copy of `node`: its files and its API server's objects.
fn copy(node: &Node) -> Node {
    let fresh = crash::node_with_files(&node.files());
    Node {
        overlay: fresh.overlay,
        cluster: Arc::new(node.cluster.copy()),
    }
}

/// The taint removal and the post-upgrade tasks of `upgrade apply v1.25.16` on `node`, until
/// `crash` kills them, if it does.
fn apply(node: &Node, crash: &Arc<CrashPoint>) -> Result<(), String> {
    let mut cfg = load_config(&std::fs::read_to_string(golden("default.yaml")).expect("config"));
    let _ = kubeadm_core::manifests::record_authorization_mode(&mut cfg.cluster);
    let cluster = CrashCluster(node.cluster.clone(), crash.clone());
    let fs = CrashFs(node.overlay.clone(), crash.clone());
    let out = Captured::default();
    remove_old_control_plane_taint(&cluster)?;
    PostUpgrade {
        cfg: &cfg,
        cluster: &cluster,
        fs: &fs,
        kubelet_dir: Path::new("/nonexistent/kubelet"),
        kubelet_run_dir: Path::new("/nonexistent/kubelet"),
        patches: None,
        dry_run: false,
        environment: &[],
        reporter: &Shared(Arc::new(out)),
    }
    .run()
}

#[test]
fn upgrade_applys_cluster_steps_killed_at_any_point_finish_when_run_again() {
    let start = aged();
    let reference = copy(&start);
    let whole = CrashPoint::new(None);
    apply(&reference, &whole).unwrap_or_else(|e| panic!("uninterrupted run: {e}"));
    let points = whole.count.load(Ordering::SeqCst);
    let want_objects = objects(&reference.cluster);
    let want_files = comparable(&reference.files());

    // The run changed what an upgrade changes.
    let before = objects(&start.cluster);
    let changed: Vec<&String> = want_objects
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    let node1 = reference
        .cluster
        .object(&Resource::nodes(), "", "node1")
        .expect("node1");
    assert_eq!(
        node1["spec"]["taints"],
        serde_json::json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
        "the legacy taint removed, the control-plane taint kept"
    );
    for what in [
        "\"nodes\"",
        "kubeadm-config",
        "\"deployments.apps\"",
        "\"daemonsets.apps\"",
    ] {
        assert!(
            changed.iter().any(|k| k.contains(what)),
            "{what} not changed by the run: {changed:#?}"
        );
    }

    let failures = try_each(
        "upgrade apply's cluster steps (API calls, file changes)",
        points,
        |k| {
            let node = copy(&start);
            let mut problems = Vec::new();
            let crash = CrashPoint::new(Some(k));
            let _ = apply(&node, &crash);
            if !crash.dead() {
                problems.push("the killed run was not killed".to_string());
            }
            node.cluster.restart();
            if let Err(e) = apply(&node, &CrashPoint::new(None)) {
                problems.push(format!("the run after it failed: {e}"));
                return problems;
            }
            problems.extend(object_problems(&want_objects, &objects(&node.cluster)));
            problems.extend(file_problems(&want_files, &comparable(&node.files())));
            problems
        },
    );
    assert!(points > 20, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
