//! The `RootlessControlPlane` feature gate compared with upstream kubeadm v1.25.16: upstream
//! creates the kubeadm users in the root's `/etc/passwd` and `/etc/group`, rewrites the pods and
//! changes the owners of key files; ours is given the same IDs and must give the same manifests and
//! the same ownership changes.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

mod manifests_support;

use std::os::unix::fs::MetadataExt;

use kubeadm_core::manifests::rootless::{self, NonRootIds};
use kubeadm_core::manifests::{self, ManifestHostFacts};
use manifests_support::{Root, assert_same, load, require_root};
use serde_json::json;

/// The ID of `name` in a passwd or group file.
fn id(file: &str, name: &str) -> i64 {
    file.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name)).then(|| f[2].parse().expect("numeric id"))
        })
        .unwrap_or_else(|| panic!("{name} not created by upstream"))
}

#[test]
fn rootless_control_plane_matches_upstream() {
    require_root();
    let docs = vec![
        json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "InitConfiguration",
            "localAPIEndpoint": { "advertiseAddress": "10.0.0.5" },
            "nodeRegistration": { "name": "node-a" },
        }),
        json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "ClusterConfiguration",
            "kubernetesVersion": "v1.25.16",
            "featureGates": { "RootlessControlPlane": true },
        }),
    ];
    let root = Root::new(&docs);
    root.write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
    root.write("etc/group", "root:x:0:\n");
    for phase in ["certs", "kubeconfig", "control-plane", "etcd"] {
        let sub = if phase == "etcd" { "local" } else { "all" };
        let run = root.upstream(&["init", "phase", phase, sub, "--config", "/cfg.yaml"], &[]);
        assert_eq!(run.code, 0, "upstream {phase} failed: {}", run.stderr);
    }
    let passwd = root.read("etc/passwd");
    let group = root.read("etc/group");
    let readers = id(&group, "kubeadm-sa-key-readers");
    let ids = |user: &str| NonRootIds {
        user: id(&passwd, user),
        group: id(&group, user),
        sa_key_readers_group: readers,
    };

    let loaded = load(&docs);
    assert!(rootless::enabled(&loaded.cluster));
    let endpoint = &loaded.init.local_api_endpoint;
    let mut pods = manifests::control_plane_pods(
        &loaded.cluster,
        endpoint,
        &loaded.resolved,
        &ManifestHostFacts::default(),
    );
    pods.push(manifests::etcd_pod(&loaded.cluster, endpoint, "node-a", &[], &loaded.resolved).expect("etcd"));
    let mut changes = Vec::new();
    for pod in &mut pods {
        let user = match pod.name.as_str() {
            "kube-apiserver" => "kubeadm-kas",
            "kube-controller-manager" => "kubeadm-kcm",
            "kube-scheduler" => "kubeadm-ks",
            _ => "kubeadm-etcd",
        };
        changes.extend(rootless::run_as_non_root(pod, ids(user), &loaded.cluster, false));
        let file = format!("etc/kubernetes/manifests/{}.yaml", pod.name);
        assert_same("rootless", &file, &root.read(&file), &pod.to_yaml());
    }
    assert!(changes.len() >= 12, "{changes:?}");
    // The last change of each path is what the file looks like now.
    for c in &changes {
        let last = changes.iter().rev().find(|d| d.path == c.path).expect("present");
        let meta = std::fs::metadata(root.path().join(c.path.trim_start_matches('/'))).expect("stat");
        assert_eq!(
            (i64::from(meta.uid()), i64::from(meta.gid())),
            (last.uid, last.gid),
            "owner of {}",
            c.path
        );
        if let Some(mode) = last.mode {
            assert_eq!(meta.mode() & 0o777, mode, "mode of {}", c.path);
        }
    }
}
