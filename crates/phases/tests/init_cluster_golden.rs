//! The cluster phases of `kubeadm init`, run through the workflow on the dry-run client, print
//! exactly what upstream kubeadm v1.25.16 printed for `init --dry-run` (golden files made from the
//! upstream binary, `crates/core/tests/golden/cluster/`): every phase message, `[dryrun]` API
//! line, object and patch from `[upload-config]` to the last addon. Upstream's run-time inputs (its
//! clock and CA) are read back from its output; the admin.conf the phases read is rebuilt with them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use kubeadm_api::timestamp::Time;
use kubeadm_effects::cluster::{
    Cluster, ClusterError, DryRunCluster, ListOptions, PatchType, Propagation, Resource, Verb,
};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::report::Reporter;
use kubeadm_phases::ClusterAccess;
use kubeadm_testkit::oracle::diff;

mod common;
use common::{Captured, admin_conf, context, golden, load_config};
use serde_json::json;

#[test]
fn cluster_phases_print_as_upstream_dry_run() {
    let text = std::fs::read_to_string(golden("default.dryrun.txt")).expect("golden");
    let yaml = std::fs::read_to_string(golden("default.yaml")).expect("config");
    let cfg = load_config(&yaml);

    // Upstream's clock: the token's printed expiration minus its 24h TTL.
    let exp_b64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("expiration: "))
        .expect("expiration");
    let exp = base64::engine::general_purpose::STANDARD
        .decode(exp_b64)
        .expect("base64");
    let now = Time::parse(&String::from_utf8_lossy(&exp))
        .expect("time")
        .unix_seconds()
        - 24 * 3600;
    let ca_b64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .expect("ca");
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("server");

    let fs = DryRunFs::new(kubeadm_host::fs::RealFs);
    let admin = Path::new("/etc/kubernetes/admin.conf");
    fs.write(admin, admin_conf(server, ca_b64).as_bytes(), 0o600)
        .expect("overlay");
    let out = Arc::new(Captured::default());
    let node_name = cfg.init.node_registration.name.clone();
    let node = json!({
        "metadata": {"creationTimestamp": null, "labels": {"kubernetes.io/hostname": node_name}, "name": node_name},
        "spec": {},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}},
    });
    let rep: Arc<dyn Reporter> = out.clone();
    let cluster = ClusterAccess::new(
        admin.to_path_buf(),
        Box::new(move |_| {
            Ok(Box::new(
                DryRunCluster::new(rep.clone(), kubeadm_yaml::to_string)
                    .with_object(&Resource::nodes(), node.clone()),
            ) as Box<dyn Cluster>)
        }),
    );
    let mut data = context(cfg, Box::new(fs), out.clone(), cluster, now, true);
    let wf = kubeadm_phases::init::workflow();
    for phase in [
        "upload-config",
        "upload-certs",
        "mark-control-plane",
        "bootstrap-token",
        "kubelet-finalize",
        "addon",
    ] {
        wf.run(&mut data, &[phase.to_string()], &[])
            .unwrap_or_else(|e| panic!("{phase}: {e}"));
    }
    let start = text.find("[upload-config] Storing").expect("start");
    let end = text
        .find("[addons] Applied essential addon: kube-proxy\n")
        .expect("end")
        + "[addons] Applied essential addon: kube-proxy\n".len();
    let want = &text[start..end];
    let got = out.0.lock().expect("out").clone();
    assert!(
        want == got,
        "phases print differently from upstream:\n{}",
        diff(want, &got)
    );
}

/// An API server that never becomes healthy; waits take no time.
struct NeverHealthy;

impl Cluster for NeverHealthy {
    fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<serde_json::Value, ClusterError> {
        Err(ClusterError::not_found(Verb::Get, r, ns, name))
    }
    fn list(&self, _: &Resource, _: &str, _: &ListOptions) -> Result<Vec<serde_json::Value>, ClusterError> {
        Ok(Vec::new())
    }
    fn create(&self, _: &Resource, o: &serde_json::Value) -> Result<serde_json::Value, ClusterError> {
        Ok(o.clone())
    }
    fn update(&self, _: &Resource, o: &serde_json::Value) -> Result<serde_json::Value, ClusterError> {
        Ok(o.clone())
    }
    fn patch(
        &self,
        _: &Resource,
        _: &str,
        _: &str,
        _: PatchType,
        p: &serde_json::Value,
    ) -> Result<serde_json::Value, ClusterError> {
        Ok(p.clone())
    }
    fn delete(&self, _: &Resource, _: &str, _: &str, _: Option<Propagation>) -> Result<(), ClusterError> {
        Ok(())
    }
    fn healthy(&self) -> Result<bool, ClusterError> {
        Ok(false)
    }
    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        Ok(Vec::new())
    }
    fn pause(&self, _: std::time::Duration) {}
}

/// On timeout: upstream's troubleshooting text (from `waitcontrolplane.go`) with the configured
/// socket, then what we could see, and upstream's error.
#[test]
fn wait_control_plane_times_out_with_a_diagnosis() {
    let yaml = std::fs::read_to_string(golden("default.yaml"))
        .expect("config")
        .replace(
            "kind: ClusterConfiguration",
            "kind: ClusterConfiguration\napiServer:\n  timeoutForControlPlane: 2s",
        );
    let cfg = load_config(&yaml);
    let socket = cfg.init.node_registration.cri_socket.clone();
    let out = Arc::new(Captured::default());
    let cluster = ClusterAccess::new(
        PathBuf::from("/etc/kubernetes/admin.conf"),
        Box::new(|_| Ok(Box::new(NeverHealthy) as Box<dyn Cluster>)),
    );
    let fs = Box::new(DryRunFs::new(kubeadm_host::fs::RealFs));
    let mut data = context(cfg, fs, out.clone(), cluster, 0, false);
    let err = kubeadm_phases::init::workflow()
        .run(&mut data, &["wait-control-plane".to_string()], &[])
        .expect_err("never healthy");
    assert_eq!(
        err.to_string(),
        "error execution phase wait-control-plane: couldn't initialize a Kubernetes cluster"
    );
    let got = out.0.lock().expect("out").clone();
    let expected_start = "[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory \"/etc/kubernetes/manifests\". This can take up to 2s\n\nUnfortunately, an error has occurred:\n\ttimed out waiting for the condition\n";
    assert!(got.starts_with(expected_start), "{got}");
    assert!(
        got.contains(&format!(
            "\t- 'crictl --runtime-endpoint {socket} ps -a | grep kube | grep -v pause'\n"
        )),
        "{got}"
    );
    assert!(got.contains("What kubeadm could see on this host:\n"), "{got}");
    assert!(
        got.contains("the container runtime could not list the containers"),
        "{got}"
    );
    assert!(
        got.contains("\t- the kubelet does not answer on http://localhost:10248/healthz"),
        "{got}"
    );
}
