//! The etcd side of a control-plane `kubeadm join` on the fakes: `check-etcd` and
//! `control-plane-join/etcd` with a local etcd (the member added through the etcd Pods' endpoint,
//! the manifest's `--initial-cluster`, the wait), a member left by an earlier failed attempt reused,
//! another node's stale member refused with a message that names it, a dry run that contacts no
//! etcd, and an external etcd (nothing added, upstream's line). The real etcd and API server runs
//! are the testbed's `ha` scenario and the cli's join tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kubeadm_api::v1beta3::{ApiEndpoint, JoinConfiguration, JoinControlPlane};
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, Resource};
use kubeadm_effects::etcd::Etcd;
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_phases::{ClusterAccess, JoinData};
use kubeadm_testkit::fakes::{FakeCluster, FakeEtcd, announced_member, started_member};
use serde_json::json;

mod common;
use common::{Captured, Shared, context, effects, golden, load_config};

const NODE: &str = "node2";
const ADDRESS: &str = "192.0.2.3";

/// The API server as the first control plane left it: its etcd Pod, mirrored with its client URL.
fn cluster() -> Arc<FakeCluster> {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "etcd-node1", "namespace": "kube-system",
            "labels": {"component": "etcd", "tier": "control-plane"},
            "annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://192.0.2.2:2379"},
        },
    });
    Arc::new(FakeCluster::new().with_object(&Resource::core("pods"), pod))
}

struct Run {
    data: JoinData,
    out: Arc<Captured>,
    fs: Arc<DryRunFs<kubeadm_host::fs::RealFs>>,
}

/// A joining control plane's context with the cluster configuration of `config` (a golden file)
/// already fetched; `etcd` is what the connector hands out (`None`: connecting fails the test).
fn join(config: &str, etcd: Option<Arc<FakeEtcd>>, dry_run: bool) -> Run {
    let mut cfg = load_config(&std::fs::read_to_string(golden(config)).expect("config"));
    cfg.init.node_registration.name = NODE.into();
    cfg.init.local_api_endpoint = ApiEndpoint {
        advertise_address: ADDRESS.into(),
        bind_port: 6443,
    };
    let out = Arc::new(Captured::default());
    let fs = Arc::new(DryRunFs::new(kubeadm_host::fs::RealFs));
    let api = cluster();
    let access = ClusterAccess::new(
        PathBuf::from("/etc/kubernetes/admin.conf"),
        Box::new(move |_| Ok(Box::new(api.clone()) as Box<dyn Cluster>)),
    );
    let mut control_plane = context(
        cfg.clone(),
        Box::new(fs.clone()),
        out.clone(),
        access,
        1_800_000_000,
        dry_run,
    );
    control_plane.dry_run = dry_run;
    let join_cfg = JoinConfiguration {
        control_plane: Some(JoinControlPlane {
            local_api_endpoint: cfg.init.local_api_endpoint.clone(),
            certificate_key: String::new(),
        }),
        ..JoinConfiguration::default()
    };
    let data = JoinData {
        cfg: join_cfg,
        dry_run,
        ignore_preflight_errors: Default::default(),
        kubeconfig_dir: "/etc/kubernetes".into(),
        kubelet_dir: "/var/lib/kubelet".into(),
        hostname: NODE.into(),
        host: Default::default(),
        patches: None,
        runtime: Box::new(kubeadm_host::cri::CriClient::new("unix:///nonexistent.sock").expect("client")),
        connect: Box::new(|_| Err("no bootstrap client in this test".into())),
        fetch_url: Box::new(|_, _| Err("no fetch in this test".into())),
        tls_bootstrap: None,
        tls_bootstrap_timeout: kubeadm_phases::join::kubelet_start::TLS_BOOTSTRAP_TIMEOUT,
        init_cfg: Some(cfg),
        control_plane_context: Box::new(|_| Err("the context is made by the test".into())),
        control_plane: Some(control_plane),
        effects: Effects {
            init_system: Arc::new(kubeadm_host::init_system::HostInitSystem::detect()),
            etcd: Arc::new(move |endpoints, tls| {
                assert_eq!(endpoints, ["https://192.0.2.2:2379"]);
                assert!(tls.cert.ends_with("etcd/healthcheck-client.crt"), "{tls:?}");
                let etcd = etcd.clone().expect("this run must not connect to etcd");
                Ok(Box::new(etcd) as Box<dyn Etcd>)
            }),
            ..effects(fs.clone(), Arc::new(Shared(out.clone())), 1_800_000_000)
        },
    };
    Run { data, out, fs }
}

fn run(r: &mut Run, phase: &str) -> Result<(), String> {
    kubeadm_phases::join::workflow()
        .run(&mut r.data, &[phase.to_string()], &[])
        .map_err(|e| e.to_string())
}

fn manifest(r: &Run) -> String {
    String::from_utf8(
        r.fs.read(Path::new("/etc/kubernetes/manifests/etcd.yaml"))
            .expect("manifest"),
    )
    .expect("utf-8")
}

fn output(r: &Run) -> String {
    r.out.0.lock().expect("out").clone()
}

#[test]
fn a_member_is_added_and_its_manifest_names_the_cluster() {
    let etcd = Arc::new(
        FakeEtcd::new(
            &["https://192.0.2.2:2379"],
            vec![started_member(1, "node1", "192.0.2.2")],
        )
        .starting_new_members(),
    );
    let mut r = join("default.yaml", Some(etcd.clone()), false);
    run(&mut r, "check-etcd").expect("check-etcd");
    run(&mut r, "control-plane-join/etcd").expect("etcd");
    let m = manifest(&r);
    assert!(
        m.contains("- --initial-cluster=node1=https://192.0.2.2:2380,node2=https://192.0.2.3:2380\n"),
        "{m}"
    );
    assert!(m.contains("- --initial-cluster-state=existing\n"), "{m}");
    assert!(
        m.contains("- --advertise-client-urls=https://192.0.2.3:2379\n"),
        "{m}"
    );
    assert_eq!(
        etcd.calls(),
        [
            "status https://192.0.2.2:2379",
            "list",
            "add https://192.0.2.3:2380",
            "status https://192.0.2.2:2379",
            "status https://192.0.2.3:2379",
        ]
    );
    assert_eq!(
        output(&r),
        "[check-etcd] Checking that the etcd cluster is healthy
[etcd] Announced new etcd member joining to the existing etcd cluster
[etcd] Creating static Pod manifest for \"etcd\"
[etcd] Waiting for the new etcd member to join the cluster. This can take up to 40s
"
    );
}

/// An earlier attempt announced this node's member and failed before etcd started: the re-run
/// reuses it (adding it again fails etcd's quorum check, which blocks upstream's re-run), and the
/// wait gives up with what to look at once the deadline passes.
#[test]
fn a_rerun_reuses_the_member_its_failed_attempt_announced_member() {
    let etcd = Arc::new(FakeEtcd::new(
        &["https://192.0.2.2:2379"],
        vec![
            started_member(1, "node1", "192.0.2.2"),
            started_member(2, "node3", "192.0.2.4"),
            announced_member(3, ADDRESS),
        ],
    ));
    let mut r = join("default.yaml", Some(etcd.clone()), false);
    let err = run(&mut r, "control-plane-join/etcd").expect_err("never starts");
    assert!(
        err.contains("timeout waiting for etcd cluster to be available"),
        "{err}"
    );
    assert!(err.contains("/etc/kubernetes/manifests/etcd.yaml"), "{err}");
    // Beyond upstream: what the host shows, before the error.
    let out = output(&r);
    assert!(
        out.contains("\nWhat kubeadm could see on this host:\n\t- the kubelet does not answer on http://localhost:10248/healthz"),
        "{out}"
    );
    assert!(
        out.contains("\t- the container runtime could not list the containers: "),
        "{out}"
    );
    assert!(
        !etcd.calls().iter().any(|c| c.starts_with("add")),
        "{:?}",
        etcd.calls()
    );
    let m = manifest(&r);
    assert!(
        m.contains(
            "- --initial-cluster=node1=https://192.0.2.2:2380,node3=https://192.0.2.4:2380,node2=https://192.0.2.3:2380\n"
        ),
        "{m}"
    );
    assert_eq!(etcd.member_list().len(), 3);
}

#[test]
fn another_nodes_stale_member_is_named_and_nothing_is_written() {
    let etcd = Arc::new(FakeEtcd::new(
        &["https://192.0.2.2:2379"],
        vec![
            started_member(1, "node1", "192.0.2.2"),
            started_member(2, "node3", "192.0.2.4"),
            announced_member(0x2a, "192.0.2.9"),
        ],
    ));
    let mut r = join("default.yaml", Some(etcd), false);
    let err = run(&mut r, "control-plane-join/etcd").expect_err("refused");
    assert!(err.contains("2a (https://192.0.2.9:2380)"), "{err}");
    assert!(err.contains("etcdctl member remove"), "{err}");
    assert!(
        r.fs.read(Path::new("/etc/kubernetes/manifests/etcd.yaml"))
            .is_err()
    );
}

#[test]
fn a_dry_run_contacts_no_etcd() {
    let mut r = join("default.yaml", None, true);
    run(&mut r, "check-etcd").expect("check-etcd");
    run(&mut r, "control-plane-join/etcd").expect("etcd");
    assert!(manifest(&r).contains("- --initial-cluster=node2=https://192.0.2.3:2380\n"));
    assert_eq!(
        output(&r),
        "[check-etcd] Checking that the etcd cluster is healthy
[control-plane-join] Would ensure that \"/var/lib/etcd\" directory is present
[etcd] Would add etcd member: https://192.0.2.3:2380
[etcd] Creating static Pod manifest for \"etcd\"
[etcd] Would wait for the new etcd member to join the cluster
"
    );
}

#[test]
fn an_external_etcd_gets_no_member() {
    let mut r = join("external.yaml", None, false);
    run(&mut r, "check-etcd").expect("check-etcd");
    run(&mut r, "control-plane-join/etcd").expect("etcd");
    assert_eq!(
        output(&r),
        "[check-etcd] Skipping etcd check in external mode
[control-plane-join] Using external etcd - no local stacked instance added
"
    );
    assert!(
        r.fs.read(Path::new("/etc/kubernetes/manifests/etcd.yaml"))
            .is_err()
    );
}

/// With the `RootlessControlPlane` gate, a dry run says what it would do for etcd's user (upstream's
/// `prepareAndWriteEtcdStaticPod` lines) and writes the manifest as root would run it.
#[test]
fn a_rootless_dry_run_says_it_would_make_the_etcd_user() {
    let mut r = join("default.yaml", None, true);
    if let Some(cp) = r.data.control_plane.as_mut() {
        cp.cfg
            .cluster
            .feature_gates
            .insert("RootlessControlPlane".to_string(), true);
    }
    run(&mut r, "control-plane-join/etcd").expect("etcd");
    assert!(!manifest(&r).contains("runAsUser"));
    assert_eq!(
        output(&r),
        "[control-plane-join] Would ensure that \"/var/lib/etcd\" directory is present
[etcd] Would add etcd member: https://192.0.2.3:2380
[etcd] Creating static Pod manifest for \"etcd\"
[etcd] Would create users and groups for \"etcd\" to run as non-root
[etcd] Would update static pod manifest for \"etcd\" to run run as non-root
[etcd] Would wait for the new etcd member to join the cluster
"
    );
}
