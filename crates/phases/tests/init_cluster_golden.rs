//! The cluster phases of `kubeadm init`, run through the workflow on the dry-run client, print
//! exactly what upstream kubeadm v1.25.16 printed for `init --dry-run` (golden files made from the
//! upstream binary, `crates/core/tests/golden/cluster/`): every phase message, `[dryrun]` API
//! line, object and patch from `[upload-config]` to the last addon. Upstream's run-time inputs (its
//! clock and CA) are read back from its output; the admin.conf the phases read is rebuilt with them.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::load_init_config;
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_effects::cluster::{
    Cluster, ClusterError, DryRunCluster, ListOptions, PatchType, Propagation, Resource, Verb,
};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_phases::{ClusterAccess, InitData};
use kubeadm_testkit::oracle::diff;
use serde_json::json;

#[derive(Debug, Default)]
struct Captured(Mutex<String>);

impl Reporter for Captured {
    fn out(&self, text: &str) {
        self.0.lock().expect("out").push_str(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

/// Forwards to the shared capture (InitData owns a boxed reporter, the dry-run client an Arc).
struct Shared(Arc<Captured>);

impl Reporter for Shared {
    fn out(&self, text: &str) {
        self.0.out(text);
    }
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../core/tests/golden/cluster/{name}"))
}

/// An admin.conf naming `server` with the CA upstream generated.
fn admin_conf(server: &str, ca_b64: &str) -> String {
    format!(
        "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca_b64}
    server: {server}
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubernetes-admin
  name: kubernetes-admin@kubernetes
current-context: kubernetes-admin@kubernetes
kind: Config
users:
- name: kubernetes-admin
  user: {{}}
"
    )
}

#[test]
fn cluster_phases_print_as_upstream_dry_run() {
    let text = std::fs::read_to_string(golden("default.dryrun.txt")).expect("golden");
    let yaml = std::fs::read_to_string(golden("default.yaml")).expect("config");
    let host = HostFacts {
        hostname: "node1".to_string(),
        default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2))),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let cfg = load_init_config("default.yaml", &yaml, &mut inputs).expect("config");

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
    let wf = kubeadm_phases::init_workflow();
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

/// The init context the cluster phases run with: no kubelet files, no CRI, the given client.
fn context(
    cfg: kubeadm_api::internal::InitConfig,
    fs: Box<dyn Fs>,
    out: Arc<Captured>,
    cluster: ClusterAccess,
    now: i64,
    dry_run: bool,
) -> InitData {
    InitData {
        cfg,
        dry_run,
        ignore_preflight_errors: Default::default(),
        upload_certs: false,
        skip_token_print: false,
        skip_certificate_key_print: false,
        manifest_dir: PathBuf::from("/etc/kubernetes/manifests"),
        kubelet_dir: PathBuf::from("/nonexistent/kubelet"),
        hostname: "node1".into(),
        init_system: Box::new(kubeadm_effects::init_system::DryRunInitSystem::new(
            kubeadm_host::init_system::HostInitSystem::detect(),
        )),
        host_probe: Box::new(kubeadm_effects::host_probe::FakeHost::default()),
        runtime: Box::new(
            kubeadm_host::cri::CriClient::new("unix:///nonexistent/cri.sock").expect("endpoint"),
        ),
        kubeconfig_dir: PathBuf::from("/etc/kubernetes"),
        patches: None,
        manifest_facts: Default::default(),
        fs,
        reporter: Box::new(Shared(out)),
        keygen: Box::new(kubeadm_host::keygen::AwsLcKeyGen),
        keys: Default::default(),
        now,
        random: || 42,
        // The control-plane phase ran earlier in upstream's run: its authorization modes are uploaded.
        planned: ["control-plane/apiserver".to_string()].into_iter().collect(),
        external_ca: false,
        period_checked: Default::default(),
        cluster,
    }
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
    let host = HostFacts {
        hostname: "node1".to_string(),
        default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2))),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let cfg = load_init_config("default.yaml", &yaml, &mut inputs).expect("config");
    let socket = cfg.init.node_registration.cri_socket.clone();
    let out = Arc::new(Captured::default());
    let cluster = ClusterAccess::new(
        PathBuf::from("/etc/kubernetes/admin.conf"),
        Box::new(|_| Ok(Box::new(NeverHealthy) as Box<dyn Cluster>)),
    );
    let fs = Box::new(DryRunFs::new(kubeadm_host::fs::RealFs));
    let mut data = context(cfg, fs, out.clone(), cluster, 0, false);
    let err = kubeadm_phases::init_workflow()
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
    assert!(got.contains("could not be asked for pods"), "{got}");
}
