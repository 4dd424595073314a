//! The `RootlessControlPlane` feature gate (upstream `util/staticpod/utils_linux.go`): each
//! control-plane pod runs as its own user and group with all capabilities dropped, and the key and
//! kubeconfig files it reads change owner (and mode) to match. The user and group IDs come in as
//! values (the caller creates the users); the ownership changes go out as values.

use kubeadm_api::v1beta3::ClusterConfiguration;
use serde_json::{Value, json};

use super::StaticPod;
use super::args::join;

/// The kubeadm feature gate that turns this on.
pub const FEATURE_GATE: &str = "RootlessControlPlane";

/// The IDs a component runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonRootIds {
    /// `runAsUser`.
    pub user: i64,
    /// `runAsGroup`.
    pub group: i64,
    /// The group allowed to read the service-account key (`kubeadm-sa-key-readers`); used by
    /// kube-apiserver and kube-controller-manager.
    pub sa_key_readers_group: i64,
}

/// A file or directory whose owner (and, when `mode` is set, permissions) must change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnershipChange {
    /// The path on the host.
    pub path: String,
    /// New owner.
    pub uid: i64,
    /// New group.
    pub gid: i64,
    /// New permissions; `None` changes only the owner (upstream's `UpdatePathOwner`, which walks a
    /// directory).
    pub mode: Option<u32>,
}

/// Whether the cluster enables the feature gate.
pub fn enabled(cfg: &ClusterConfiguration) -> bool {
    cfg.feature_gates.get(FEATURE_GATE).copied().unwrap_or(false)
}

/// Rewrites `pod` to run as non-root and returns the ownership changes upstream makes, in its
/// order. `external_ca`: the CA key is absent, so kube-controller-manager is not given it.
pub fn run_as_non_root(
    pod: &mut StaticPod,
    ids: NonRootIds,
    cfg: &ClusterConfiguration,
    external_ca: bool,
) -> Vec<OwnershipChange> {
    let certs = cfg.certificates_dir.as_str();
    let pki = |name: &str| join(certs, name);
    let own = |path: String, mode: Option<u32>| OwnershipChange {
        path,
        uid: ids.user,
        gid: ids.group,
        mode,
    };
    let sa_key = OwnershipChange {
        path: pki("sa.key"),
        uid: 0,
        gid: ids.sa_key_readers_group,
        mode: Some(0o640),
    };
    let drop_all = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    let (changes, container_ctx, supplemental) = match pod.name.as_str() {
        "kube-apiserver" => {
            let mut c = vec![own(pki("sa.pub"), Some(0o600)), sa_key];
            for key in [
                "apiserver.key",
                "apiserver-kubelet-client.key",
                "front-proxy-client.key",
            ] {
                c.push(own(pki(key), Some(0o600)));
            }
            if cfg.etcd.external.is_none() {
                c.push(own(pki("apiserver-etcd-client.key"), Some(0o600)));
            }
            // The kube-apiserver binary carries the cap_net_bind_service file capability, so the
            // capability must be granted even though the default port does not need it.
            let ctx = json!({ "capabilities": { "add": ["NET_BIND_SERVICE"], "drop": ["ALL"] } });
            (c, ctx, true)
        }
        "kube-controller-manager" => {
            let mut c = vec![
                own(join("/etc/kubernetes", "controller-manager.conf"), Some(0o600)),
                sa_key,
            ];
            if !external_ca {
                c.push(own(pki("ca.key"), Some(0o600)));
            }
            (c, drop_all, true)
        }
        "kube-scheduler" => (
            vec![own(join("/etc/kubernetes", "scheduler.conf"), Some(0o600))],
            drop_all,
            false,
        ),
        _ => {
            let data_dir = cfg
                .etcd
                .local
                .as_ref()
                .map(|l| l.data_dir.clone())
                .unwrap_or_default();
            let c = vec![
                own(data_dir, None),
                own(pki("etcd/server.key"), Some(0o600)),
                own(pki("etcd/peer.key"), Some(0o600)),
            ];
            (c, drop_all, false)
        }
    };
    if let Some(spec) = pod.pod.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(container) = spec
            .get_mut("containers")
            .and_then(Value::as_array_mut)
            .and_then(|c| c.first_mut())
            .and_then(Value::as_object_mut)
        {
            container.insert("securityContext".into(), container_ctx);
        }
        let ctx = spec.entry("securityContext").or_insert_with(|| json!({}));
        if let Some(ctx) = ctx.as_object_mut() {
            ctx.insert("runAsUser".into(), ids.user.into());
            ctx.insert("runAsGroup".into(), ids.group.into());
            if supplemental {
                ctx.insert("supplementalGroups".into(), json!([ids.sa_key_readers_group]));
            }
        }
    }
    changes
}
