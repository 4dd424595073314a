//! `kubelet-start` against a scripted cluster, in a temp directory: the refusal of a Ready Node of
//! the same name (upstream's message), the removal of `bootstrap-kubelet.conf` whatever happens,
//! the cluster's kubelet configuration written, the CRI socket annotation.

use std::sync::{Arc, Mutex};

use kubeadm_testkit::fakes::FakeCluster;

use kubeadm_api::v1beta3::JoinConfiguration;
use serde_json::json;

use super::*;
use crate::join::discovery::tests::{Captured, data_with, signed_cluster_info};

const TOKEN: &str = "123456.abcdef1234567890";

fn config_maps() -> Vec<Value> {
    let cm = |name: &str, data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "kube-system"}, "data": data})
    };
    vec![
        cm(
            "kubeadm-config",
            json!({"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\nclusterName: mycluster\n"}),
        ),
        cm(
            "kubelet-config",
            json!({"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\n"}),
        ),
    ]
}

fn node(ready: bool) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker", "labels": {"kubernetes.io/hostname": "worker"}},
        "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}})
}

fn setup(ready: bool) -> (tempfile::TempDir, JoinData, Arc<FakeCluster>, Captured) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut fake = FakeCluster::new()
        .with_object(&Resource::config_maps(), signed_cluster_info(TOKEN))
        .with_object(&Resource::nodes(), node(ready));
    for cm in config_maps() {
        fake = fake.with_object(&Resource::config_maps(), cm);
    }
    let fake = Arc::new(fake);
    let mut cfg = JoinConfiguration::default();
    cfg.discovery.bootstrap_token = Some(kubeadm_api::v1beta3::BootstrapTokenDiscovery {
        token: TOKEN.into(),
        api_server_endpoint: "127.0.0.1:6443".into(),
        ca_cert_hashes: vec![],
        unsafe_skip_ca_verification: true,
    });
    cfg.discovery.tls_bootstrap_token = TOKEN.into();
    cfg.node_registration.name = "worker".into();
    cfg.node_registration.cri_socket = "unix:///var/run/containerd/containerd.sock".into();
    cfg.ca_cert_path = dir.path().join("pki/ca.crt").display().to_string();
    let out = Captured::default();
    let mut data = data_with(cfg, fake.clone(), Arc::new(Mutex::new(Vec::new())), out.clone());
    data.kubeconfig_dir = dir.path().join("etc");
    data.kubelet_dir = dir.path().join("kubelet");
    data.hostname = "worker".into();
    data.host.hostname = "worker".into();
    // The kubelet has bootstrapped already: its kubeconfig is there.
    std::fs::create_dir_all(&data.kubeconfig_dir).expect("dir");
    std::fs::write(data.kubeconfig_dir.join("kubelet.conf"), "kubelet").expect("kubelet.conf");
    (dir, data, fake, out)
}

#[test]
fn a_ready_node_of_the_same_name_stops_the_join() {
    let (_dir, mut data, _fake, _out) = setup(true);
    let err = run_kubelet_start(&mut data).expect_err("a Ready node exists");
    assert_eq!(
        err.to_string(),
        "a Node with name \"worker\" and status \"Ready\" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node"
    );
    assert!(
        !data.kubeconfig_dir.join("bootstrap-kubelet.conf").exists(),
        "removed even on failure"
    );
    assert!(
        !data.kubelet_dir.join("config.yaml").exists(),
        "nothing written for the kubelet"
    );
}

#[test]
fn kubelet_start_writes_the_clusters_kubelet_config_and_annotates_the_node() {
    let (_dir, mut data, fake, out) = setup(false);
    run_kubelet_start(&mut data).expect("kubelet-start");
    assert!(!data.kubeconfig_dir.join("bootstrap-kubelet.conf").exists());
    // The CA from cluster-info.
    let ca = std::fs::read_to_string(&data.cfg.ca_cert_path).expect("ca.crt");
    assert_eq!(ca, crate::join::discovery::tests::CA_CERT);
    // The cluster's kubelet configuration, defaulted by kubeadm (e.g. the CA path, rotation).
    let config = std::fs::read_to_string(data.kubelet_dir.join("config.yaml")).expect("config.yaml");
    assert!(
        config.contains("clientCAFile: /etc/kubernetes/pki/ca.crt"),
        "{config}"
    );
    assert!(config.contains("rotateCertificates: true"), "{config}");
    let flags = std::fs::read_to_string(data.kubelet_dir.join("kubeadm-flags.env")).expect("flags");
    assert_eq!(
        flags,
        "KUBELET_KUBEADM_ARGS=\"--container-runtime=remote --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.8\"\n"
    );
    let node = fake.object(&Resource::nodes(), "", "worker").expect("node");
    assert_eq!(
        node["metadata"]["annotations"]["kubeadm.alpha.kubernetes.io/cri-socket"],
        "unix:///var/run/containerd/containerd.sock",
        "the socket as given, no doubled unix://"
    );
    // The bootstrap kubeconfig's cluster is renamed to the cluster's name, as upstream does.
    let tls = data.tls_bootstrap.as_ref().expect("tls");
    assert_eq!(tls["clusters"][0]["name"], "mycluster");
    assert_eq!(tls["contexts"][0]["context"]["cluster"], "mycluster");
    let text = out.text();
    let order: Vec<&str> = text.lines().filter(|l| l.starts_with("[")).collect();
    assert_eq!(
        order[..2],
        [
            "[preflight] Reading configuration from the cluster...",
            "[preflight] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'"
        ]
    );
    let kubelet: Vec<&&str> = order
        .iter()
        .filter(|l| l.starts_with("[kubelet-start]") && l.contains("Writing"))
        .collect();
    assert!(
        kubelet[0].contains("config.yaml") && kubelet[1].contains("kubeadm-flags.env"),
        "join writes the config first: {kubelet:?}"
    );
}

/// No kubelet.conf ever comes: upstream's kubelet check gives up first (the fake host's kubelet
/// does not answer), with its lines and its error; then what the host and the cluster show: here
/// the kubelet's certificate signing request, pending.
#[test]
fn a_tls_bootstrap_that_never_ends_is_diagnosed() {
    let (_dir, mut data, fake, out) = setup(false);
    std::fs::remove_file(data.kubeconfig_dir.join("kubelet.conf")).expect("no kubelet.conf");
    fake.create(
        &Resource::new("certificates.k8s.io", "v1", "certificatesigningrequests"),
        &json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "csr-abcde", "creationTimestamp": "2026-12-02T01:00:00Z"},
            "spec": {"signerName": "kubernetes.io/kube-apiserver-client-kubelet", "username": "system:bootstrap:123456"}}),
    )
    .expect("csr");
    let err = run_kubelet_start(&mut data).expect_err("never bootstraps");
    assert_eq!(err.to_string(), "timed out waiting for the condition");
    let text = out.text();
    assert!(text.contains("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap...\n[kubelet-check] Initial timeout of 40s passed.\n[kubelet-check] It seems like the kubelet isn't running or healthy.\n"), "{text}");
    assert_eq!(text.matches("[kubelet-check] It seems like").count(), 5, "{text}");
    assert!(
        text.contains("\nUnfortunately, an error has occurred:\n\ttimed out waiting for the condition\n"),
        "{text}"
    );
    let diagnosis = text
        .split("What kubeadm could see on this host:\n")
        .nth(1)
        .expect("a diagnosis");
    assert!(
        diagnosis.starts_with(
            "\t- CAUSE: the kubelet's certificate signing request csr-abcde is pending: nothing approved it"
        ),
        "{diagnosis}"
    );
}
