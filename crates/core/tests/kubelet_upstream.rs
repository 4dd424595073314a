//! `/var/lib/kubelet/kubeadm-flags.env` and `/var/lib/kubelet/config.yaml` compared byte for byte
//! with upstream kubeadm v1.25.16's `init phase kubelet-start`, over a table of configurations.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

mod manifests_support;

use kubeadm_core::kubelet::{self, KubeletFlagsInputs};
use manifests_support::{Root, assert_same, hostname, load, require_root};
use serde_json::{Value, json};

fn init(node_registration: Value) -> Value {
    json!({
        "apiVersion": "kubeadm.k8s.io/v1beta3",
        "kind": "InitConfiguration",
        "localAPIEndpoint": { "advertiseAddress": "10.0.0.5" },
        "nodeRegistration": node_registration,
    })
}

fn cluster(extra: Value) -> Value {
    let mut c = json!({
        "apiVersion": "kubeadm.k8s.io/v1beta3",
        "kind": "ClusterConfiguration",
        "kubernetesVersion": "v1.25.16",
    });
    if let (Some(m), Value::Object(e)) = (c.as_object_mut(), extra) {
        m.extend(e);
    }
    c
}

fn kubelet_cfg(fields: Value) -> Value {
    let mut c = json!({ "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration" });
    if let (Some(m), Value::Object(e)) = (c.as_object_mut(), fields) {
        m.extend(e);
    }
    c
}

fn cases() -> Vec<(&'static str, Vec<Value>)> {
    let host = hostname();
    vec![
        (
            "defaults",
            vec![init(json!({ "name": "node-a" })), cluster(json!({}))],
        ),
        (
            "node name is the hostname",
            vec![init(json!({ "name": host })), cluster(json!({}))],
        ),
        (
            "extra args with node-ip and hostname-override",
            vec![
                init(
                    json!({ "name": "node-a", "kubeletExtraArgs": { "node-ip": "10.0.0.5", "hostname-override": "other", "v": "4", "container-runtime": "remote" } }),
                ),
                cluster(json!({})),
            ],
        ),
        (
            "hostname-override back to the hostname",
            vec![
                init(json!({ "name": "node-a", "kubeletExtraArgs": { "hostname-override": host } })),
                cluster(json!({})),
            ],
        ),
        (
            "cri socket without scheme and taints",
            vec![
                init(
                    json!({ "name": "node-a", "criSocket": "/run/crio/crio.sock", "taints": [ { "key": "a", "value": "b", "effect": "NoSchedule" } ] }),
                ),
                cluster(json!({})),
            ],
        ),
        (
            "custom image repository",
            vec![
                init(json!({ "name": "node-a" })),
                cluster(json!({ "imageRepository": "registry.example.test/k8s" })),
            ],
        ),
        (
            "ci version",
            vec![
                init(json!({ "name": "node-a" })),
                cluster(json!({ "kubernetesVersion": "ci/v1.25.17-rc.0.5+abcdef0123456789" })),
            ],
        ),
        (
            "networking and certificates dir",
            vec![
                init(json!({ "name": "node-a" })),
                cluster(
                    json!({ "networking": { "serviceSubnet": "fd00:10:96::/112", "dnsDomain": "corp.test" }, "certificatesDir": "/srv/pki" }),
                ),
            ],
        ),
        (
            "kubelet overrides",
            vec![
                init(json!({ "name": "node-a" })),
                cluster(json!({})),
                kubelet_cfg(json!({
                    "cgroupDriver": "cgroupfs",
                    "featureGates": { "RotateKubeletServerCertificate": true, "NodeSwap": false },
                    "evictionHard": { "memory.available": "200Mi", "nodefs.available": "10%" },
                    "maxPods": 250,
                    "serverTLSBootstrap": true,
                    "systemReserved": { "cpu": "500m", "memory": "1Gi" },
                    "failSwapOn": false,
                    "tlsCipherSuites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
                    "shutdownGracePeriod": "30s",
                    "resolvConf": "/etc/resolv.kubelet.conf",
                    "clusterDNS": ["10.96.0.53"],
                    "logging": { "format": "json", "verbosity": 3 }
                })),
            ],
        ),
    ]
}

#[test]
fn kubelet_files_match_upstream() {
    require_root();
    let host = hostname();
    for (name, docs) in cases() {
        let root = Root::new(&docs);
        let run = root.upstream(&["init", "phase", "kubelet-start", "--config", "/cfg.yaml"], &[]);
        assert_eq!(run.code, 0, "{name}: upstream failed: {}", run.stderr);
        let loaded = load(&docs);
        let flags = kubelet::flags_env(&KubeletFlagsInputs {
            cluster: &loaded.cluster,
            resolved: &loaded.resolved,
            node_registration: &loaded.init.node_registration,
            hostname: &host,
            register_taints_using_flags: false,
        });
        let file = "var/lib/kubelet/kubeadm-flags.env";
        assert_same(name, file, &root.read(file), &flags);
        let file = "var/lib/kubelet/config.yaml";
        assert_same(
            name,
            file,
            &root.read(file),
            &kubelet::config_yaml(&loaded.kubelet),
        );
    }
}
