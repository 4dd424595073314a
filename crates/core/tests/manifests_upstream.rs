//! Static pod manifests compared byte for byte with upstream kubeadm v1.25.16's
//! `init phase control-plane all` and `init phase etcd local`, over a table of configurations.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

mod manifests_support;

use kubeadm_core::manifests::{self, CA_CERTS_EXTRA_PATHS, ManifestHostFacts};
use manifests_support::{Root, assert_same, load, require_root};
use serde_json::{Value, json};

struct Case {
    name: &'static str,
    init: Value,
    cluster: Value,
    /// Directories created in the root before running (CA bundle directories are mounted when present).
    dirs: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    /// Put a CA certificate without its key in the root (an external CA).
    external_ca: bool,
}

fn init(addr: &str) -> Value {
    json!({
        "apiVersion": "kubeadm.k8s.io/v1beta3",
        "kind": "InitConfiguration",
        "localAPIEndpoint": { "advertiseAddress": addr },
        "nodeRegistration": { "name": "node-a" },
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

fn case(name: &'static str, init: Value, cluster: Value) -> Case {
    Case {
        name,
        init,
        cluster,
        dirs: &[],
        env: &[],
        external_ca: false,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("defaults", init("10.0.0.5"), cluster(json!({}))),
        case(
            "apiserver extra args and volumes",
            init("10.0.0.5"),
            cluster(json!({ "apiServer": {
                "extraArgs": { "audit-log-path": "/var/log/audit.log", "authorization-mode": "Node,RBAC,Webhook", "secure-port": "7443", "enable-admission-plugins": "NodeRestriction,AlwaysPullImages" },
                "extraVolumes": [
                    { "name": "audit", "hostPath": "/var/log/k8s", "mountPath": "/var/log", "pathType": "DirectoryOrCreate" },
                    { "name": "policy", "hostPath": "/etc/k8s/policy.yaml", "mountPath": "/etc/k8s/policy.yaml", "readOnly": true, "pathType": "File" },
                    { "name": "ca-certs", "hostPath": "/opt/certs", "mountPath": "/etc/ssl/certs", "readOnly": true }
                ],
                "timeoutForControlPlane": "2m35s"
            } })),
        ),
        case(
            "unknown authorization modes",
            init("10.0.0.5"),
            cluster(json!({ "apiServer": { "extraArgs": { "authorization-mode": "Foo,Bar" } } })),
        ),
        case(
            "controller-manager extra args and volumes",
            init("10.0.0.5"),
            cluster(json!({ "controllerManager": {
                "extraArgs": { "bind-address": "0.0.0.0", "flex-volume-plugin-dir": "/opt/flex", "node-cidr-mask-size": "25" },
                "extraVolumes": [ { "name": "cloud", "hostPath": "/etc/cloud.conf", "mountPath": "/etc/cloud.conf", "readOnly": true, "pathType": "FileOrCreate" } ]
            }, "networking": { "podSubnet": "192.168.0.0/16" } })),
        ),
        case(
            "scheduler extra args and volumes",
            init("10.0.0.5"),
            cluster(json!({ "scheduler": {
                "extraArgs": { "bind-address": "10.0.0.5", "config": "/etc/sched/config.yaml" },
                "extraVolumes": [ { "name": "sched", "hostPath": "/etc/sched", "mountPath": "/etc/sched" } ]
            } })),
        ),
        case(
            "external etcd with certificates",
            init("10.0.0.5"),
            cluster(json!({ "etcd": { "external": {
                "endpoints": ["https://10.0.0.10:2379", "https://10.0.0.11:2379"],
                "caFile": "/etc/etcd/pki/ca.crt", "certFile": "/etc/etcd/pki/client/client.crt", "keyFile": "/srv/keys/client.key"
            } } })),
        ),
        case(
            "external etcd with certificates under known paths",
            init("10.0.0.5"),
            cluster(json!({ "etcd": { "external": {
                "endpoints": ["https://10.0.0.10:2379"],
                "caFile": "/etc/kubernetes/pki/etcd/ca.crt", "certFile": "/etc/ssl/certs/etcd.crt", "keyFile": "/etc/pki/etcd.key"
            } } })),
        ),
        case(
            "external etcd without certificates",
            init("10.0.0.5"),
            cluster(json!({ "etcd": { "external": { "endpoints": ["http://10.0.0.10:2379"] } } })),
        ),
        case(
            "ipv6",
            init("fd00::5"),
            cluster(
                json!({ "networking": { "serviceSubnet": "fd00:10:96::/112", "podSubnet": "fd00:10:244::/56" } }),
            ),
        ),
        case(
            "dual-stack",
            init("10.0.0.5"),
            cluster(
                json!({ "networking": { "serviceSubnet": "10.96.0.0/16,fd00:10:96::/112", "podSubnet": "10.244.0.0/16,fd00:10:244::/56" } }),
            ),
        ),
        case(
            "custom image repository and etcd image",
            init("10.0.0.5"),
            cluster(
                json!({ "imageRepository": "registry.example.test/k8s", "etcd": { "local": { "imageRepository": "quay.example.test/coreos", "imageTag": "3.5.4-0" } } }),
            ),
        ),
        case(
            "ci version",
            init("10.0.0.5"),
            cluster(json!({ "kubernetesVersion": "ci/v1.25.17-rc.0.5+abcdef0123456789" })),
        ),
        case(
            "feature gates and cluster name",
            init("10.0.0.5"),
            cluster(
                json!({ "featureGates": { "PublicKeysECDSA": true, "UnversionedKubeletConfigMap": false }, "clusterName": "prod-east", "certificatesDir": "/srv/pki/", "networking": { "dnsDomain": "corp.test" } }),
            ),
        ),
        case(
            "etcd extra args and data dir",
            init("10.0.0.5"),
            cluster(
                json!({ "etcd": { "local": { "dataDir": "/srv/etcd", "extraArgs": {
                "listen-metrics-urls": "https://[::1]:2391,http://127.0.0.1:2381", "advertise-client-urls": "https://10.0.0.5:2379,https://etcd.example.test:2379", "snapshot-count": "5000", "election-timeout": "2000"
            } } } }),
            ),
        ),
        case(
            "etcd metrics on a wildcard host",
            init("10.0.0.5"),
            cluster(
                json!({ "etcd": { "local": { "extraArgs": { "listen-metrics-urls": "http://0.0.0.0" } } } }),
            ),
        ),
        case(
            "control plane endpoint and port",
            json!({ "apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "InitConfiguration",
                    "localAPIEndpoint": { "advertiseAddress": "192.168.1.20", "bindPort": 8443 }, "nodeRegistration": { "name": "Node-B" } }),
            cluster(json!({ "controlPlaneEndpoint": "lb.example.test" })),
        ),
        case(
            "wildcard bind addresses",
            init("10.0.0.5"),
            cluster(
                json!({ "apiServer": { "extraArgs": { "bind-address": "0.0.0.0" } }, "scheduler": { "extraArgs": { "bind-address": "::" } } }),
            ),
        ),
        Case {
            name: "ca bundle directories and proxy environment",
            init: init("10.0.0.5"),
            cluster: cluster(json!({})),
            dirs: &["etc/pki", "usr/share/ca-certificates", "etc/ca-certificates"],
            env: &[
                ("HTTPS_PROXY", "http://proxy.test:3128"),
                ("no_proxy", "10.0.0.0/8,localhost"),
                ("http_proxy", ""),
            ],
            external_ca: false,
        },
        Case {
            name: "external CA (certificate without key)",
            init: init("10.0.0.5"),
            cluster: cluster(json!({})),
            dirs: &[],
            env: &[],
            external_ca: true,
        },
    ]
}

#[test]
fn manifests_match_upstream() {
    require_root();
    let mut checked = 0;
    for case in cases() {
        let docs = [case.init.clone(), case.cluster.clone()];
        let root = Root::new(&docs);
        for d in case.dirs {
            root.mkdir(d);
        }
        if case.external_ca {
            // Let upstream make the certificates and kubeconfigs, then take the CA key away.
            for phase in ["certs", "kubeconfig"] {
                let run = root.upstream(&["init", "phase", phase, "all", "--config", "/cfg.yaml"], &[]);
                assert_eq!(
                    run.code, 0,
                    "{}: upstream {phase} failed: {}",
                    case.name, run.stderr
                );
            }
            std::fs::remove_file(root.path().join("etc/kubernetes/pki/ca.key")).expect("remove ca.key");
        }
        let external = case.cluster["etcd"].get("external").is_some();
        let run = root.upstream(
            &["init", "phase", "control-plane", "all", "--config", "/cfg.yaml"],
            case.env,
        );
        assert_eq!(run.code, 0, "{}: upstream failed: {}", case.name, run.stderr);
        let control_plane_stderr = run.stderr;
        if !external {
            let run = root.upstream(
                &["init", "phase", "etcd", "local", "--config", "/cfg.yaml"],
                case.env,
            );
            assert_eq!(run.code, 0, "{}: upstream etcd failed: {}", case.name, run.stderr);
        }

        let loaded = load(&docs);
        // Rust's Command passes its environment sorted by name; upstream sees it in that order.
        let mut environment: Vec<(String, String)> = vec![
            ("HOME".into(), root.path().display().to_string()),
            ("PATH".into(), "/usr/sbin:/usr/bin:/sbin:/bin".into()),
        ];
        environment.extend(case.env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        environment.sort();
        let host = ManifestHostFacts {
            existing_ca_cert_dirs: CA_CERTS_EXTRA_PATHS
                .iter()
                .filter(|p| case.dirs.contains(&&p[1..]))
                .map(|p| p.to_string())
                .collect(),
            environment,
            external_ca: case.external_ca,
        };
        let endpoint = &loaded.init.local_api_endpoint;
        for pod in manifests::control_plane_pods(&loaded.cluster, endpoint, &loaded.resolved, &host) {
            let file = format!("etc/kubernetes/manifests/{}.yaml", pod.name);
            assert_same(case.name, &file, &root.read(&file), &pod.to_yaml());
            for w in &pod.warnings {
                assert!(
                    control_plane_stderr.contains(w.as_str()),
                    "{}: upstream did not warn {w:?}",
                    case.name
                );
            }
            checked += 1;
        }
        if !external {
            let pod = manifests::etcd_pod(
                &loaded.cluster,
                endpoint,
                &loaded.init.node_registration.name,
                &[],
                &loaded.resolved,
            )
            .expect("local etcd");
            let file = "etc/kubernetes/manifests/etcd.yaml";
            assert_same(case.name, file, &root.read(file), &pod.to_yaml());
            checked += 1;
        } else {
            assert!(manifests::etcd_pod(&loaded.cluster, endpoint, "n", &[], &loaded.resolved).is_err());
        }
    }
    assert!(checked >= 60, "only {checked} manifests compared");
}
