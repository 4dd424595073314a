use std::collections::BTreeMap;
use std::path::Path;

use kubeadm_effects::cri::{CriCall, CriError, Image, PodSandbox, RuntimeStatus, RuntimeVersion};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::host_probe::ServiceState;
use kubeadm_testkit::fakes::{FakeCluster, FakeHost};

use super::*;

/// A runtime that answers `Status` with containerd's verbose `config`, lists `containers` and has
/// `images`.
#[derive(Debug, Default)]
struct Containerd {
    config: Option<String>,
    containers: Vec<Container>,
    images: Vec<String>,
}

impl Runtime for Containerd {
    fn endpoint(&self) -> &str {
        "unix:///run/containerd/containerd.sock"
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        Err(CriError::Rpc {
            endpoint: self.endpoint().to_string(),
            call: CriCall::Version,
            code: "Unimplemented".to_string(),
            message: "unused".to_string(),
        })
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        let mut status = RuntimeStatus::default();
        if let Some(c) = &self.config {
            status.info.insert("config".to_string(), c.clone());
        }
        Ok(status)
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        Ok(Vec::new())
    }
    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
        Ok(self.images.iter().any(|i| i == image).then(Image::default))
    }
    fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
        Ok(image.to_string())
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        Ok(Vec::new())
    }
    fn stop_pod_sandbox(&self, _id: &str) -> Result<(), CriError> {
        Ok(())
    }
    fn remove_pod_sandbox(&self, _id: &str) -> Result<(), CriError> {
        Ok(())
    }
    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        Ok(self.containers.clone())
    }
}

/// containerd 1.6's CRI config as `Status` reports it (trimmed to what is read).
fn containerd_config(systemd_cgroup: Option<bool>) -> String {
    let options = systemd_cgroup.map_or_else(
        || serde_json::json!({}),
        |b| serde_json::json!({"SystemdCgroup": b}),
    );
    serde_json::json!({
        "containerd": {
            "snapshotter": "overlayfs",
            "defaultRuntimeName": "runc",
            "runtimes": {"runc": {"runtimeType": "io.containerd.runc.v2", "options": options}},
        },
        "systemdCgroup": false,
    })
    .to_string()
}

/// An in-memory file system holding `files`.
fn files(files: &[(&str, &str)]) -> DryRunFs<Empty> {
    let fs = DryRunFs::new(Empty);
    for (path, content) in files {
        fs.write(Path::new(path), content.as_bytes(), 0o644)
            .expect("write");
    }
    fs
}

#[derive(Debug)]
struct Empty;

impl Fs for Empty {
    fn read(&self, _path: &Path) -> std::io::Result<Vec<u8>> {
        Err(std::io::ErrorKind::NotFound.into())
    }
    fn write(&self, _path: &Path, _contents: &[u8], _mode: u32) -> std::io::Result<()> {
        Ok(())
    }
    fn exists(&self, _path: &Path) -> bool {
        false
    }
    fn create_dir_all(&self, _path: &Path, _mode: u32) -> std::io::Result<()> {
        Ok(())
    }
    fn remove_file(&self, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
}

fn kubelet_findings(host: &FakeHost, runtime: &Containerd, config: &str) -> Vec<Finding> {
    kubelet_findings_with(host, runtime, config)
}

const SYSTEMD: &str =
    "apiVersion: kubelet.config.k8s.io/v1beta1\ncgroupDriver: systemd\nkind: KubeletConfiguration\n";
const CGROUPFS: &str =
    "apiVersion: kubelet.config.k8s.io/v1beta1\ncgroupDriver: cgroupfs\nkind: KubeletConfiguration\n";

/// The classic mistake: a systemd kubelet on a cgroupfs containerd (and the other way round) is
/// named as the cause, first, with both fixes; matching drivers say nothing about it.
#[test]
fn a_cgroup_driver_mismatch_is_the_cause() {
    let host = FakeHost::default();
    let cgroupfs = Containerd {
        config: Some(containerd_config(Some(false))),
        ..Containerd::default()
    };
    let found = kubelet_findings(&host, &cgroupfs, SYSTEMD);
    let cause: Vec<&Finding> = found.iter().filter(|f| f.certain).collect();
    assert_eq!(cause.len(), 1, "{found:#?}");
    assert!(
        cause[0].text.starts_with(
            "cgroup driver mismatch: the kubelet is configured for \"systemd\" (cgroupDriver in the KubeletConfiguration) but the container runtime's \"runc\" handler uses \"cgroupfs\""
        ),
        "{}",
        cause[0].text
    );
    assert!(
        cause[0].text.contains("SystemdCgroup = true"),
        "{}",
        cause[0].text
    );
    let text = render(&found, &[]);
    let first = text.lines().nth(2).unwrap_or_default();
    assert!(first.starts_with("\t- CAUSE: cgroup driver mismatch"), "{text}");

    // SystemdCgroup unset means cgroupfs too; a systemd runtime against a cgroupfs kubelet.
    let unset = Containerd {
        config: Some(containerd_config(None)),
        ..Containerd::default()
    };
    assert!(kubelet_findings(&host, &unset, SYSTEMD).iter().any(|f| f.certain));
    let systemd = Containerd {
        config: Some(containerd_config(Some(true))),
        ..Containerd::default()
    };
    let found = kubelet_findings(&host, &systemd, CGROUPFS);
    assert!(
        found
            .iter()
            .any(|f| f.certain && f.text.contains("SystemdCgroup = false")),
        "{found:#?}"
    );

    // Agreement, or a runtime that does not say: no cgroup driver finding.
    for (runtime, config) in [
        (&cgroupfs, CGROUPFS),
        (&systemd, SYSTEMD),
        (&Containerd::default(), SYSTEMD),
    ] {
        let found = kubelet_findings(&host, runtime, config);
        assert!(!found.iter().any(|f| f.text.contains("driver")), "{found:#?}");
    }
}

/// The kubelet's endpoint and service, and swap with failSwapOn.
#[test]
fn kubelet_health_service_and_swap() {
    let runtime = Containerd::default();
    let mut host = FakeHost::default();
    let found = kubelet_findings(&host, &runtime, CGROUPFS);
    assert!(found[0].text.starts_with("the kubelet does not answer on http://localhost:10248/healthz (Get \"http://localhost:10248/healthz\": dial tcp 127.0.0.1:10248: connect: connection refused)"), "{found:#?}");
    assert!(
        found
            .iter()
            .any(|f| f.text.starts_with("the kubelet service is not active")),
        "{found:#?}"
    );

    host.services.clear();
    let found = kubelet_findings(&host, &runtime, CGROUPFS);
    assert!(
        found
            .iter()
            .any(|f| f.certain && f.text.starts_with("the kubelet service does not exist")),
        "{found:#?}"
    );

    let host = FakeHost {
        swaps: Some(vec![
            "Filename\tType\tSize\tUsed\tPriority".to_string(),
            "/swapfile  file\t1048572\t0\t-2".to_string(),
        ]),
        ..FakeHost::default()
    };
    let found = kubelet_findings(&host, &runtime, CGROUPFS);
    assert!(
        found
            .iter()
            .any(|f| f.certain && f.text.starts_with("swap is on (/swapfile)")),
        "{found:#?}"
    );
    let found = kubelet_findings(&host, &runtime, &format!("{CGROUPFS}failSwapOn: false\n"));
    assert!(!found.iter().any(|f| f.text.contains("swap")), "{found:#?}");
}

/// A component's newest container: its exit code and restarts, its last log lines.
#[test]
fn a_crashing_container_is_shown_with_its_log() {
    let labels: BTreeMap<String, String> = [(
        "io.kubernetes.pod.namespace".to_string(),
        "kube-system".to_string(),
    )]
    .into();
    let old = Container {
        id: "aaaaaaaaaaaaaaaaaaaa".to_string(),
        name: "kube-apiserver".to_string(),
        attempt: 2,
        state: "CONTAINER_EXITED".to_string(),
        created_at: 1,
        labels: labels.clone(),
        ..Container::default()
    };
    let newest = Container {
        id: "bbbbbbbbbbbbbbbbbbbb".to_string(),
        attempt: 3,
        created_at: 2,
        exit_code: 1,
        reason: "Error".to_string(),
        log_path: "/var/log/pods/x/kube-apiserver/3.log".to_string(),
        ..old.clone()
    };
    let runtime = Containerd {
        containers: vec![old, newest],
        ..Containerd::default()
    };
    let fs = files(&[(
        "/var/log/pods/x/kube-apiserver/3.log",
        "2026-12-02T01:00:00Z stderr F Error: unknown flag: --bogus\n",
    )]);
    let lines = containers(&runtime, &fs, &["kube-apiserver"]);
    assert_eq!(
        lines,
        [
            "the newest kube-apiserver container bbbbbbbbbbbbb (restarted 3 times) exited with code 1 (Error)",
            "its last log lines (/var/log/pods/x/kube-apiserver/3.log):",
            "  Error: unknown flag: --bogus",
        ]
    );
    let text = render(&[], &lines);
    assert!(text.ends_with("\t    Error: unknown flag: --bogus\n"), "{text}");
    assert_eq!(
        containers(&runtime, &fs, &["etcd"]),
        [
            "the container runtime has no etcd container: the kubelet did not start its Pod (is the kubelet running? can it pull the image?)"
        ]
    );
}

/// A containerd whose sandbox image is missing is the cause; present, nothing is said.
#[test]
fn a_missing_sandbox_image_is_the_cause() {
    let config = |image: &str| {
        let mut c: serde_json::Value = serde_json::from_str(&containerd_config(Some(false))).expect("json");
        c["sandboxImage"] = serde_json::json!(image);
        c.to_string()
    };
    let runtime = Containerd {
        config: Some(config("registry.k8s.io/pause:3.6")),
        ..Containerd::default()
    };
    let found = kubelet_findings(&FakeHost::default(), &runtime, CGROUPFS);
    assert!(
        found.iter().any(|f| f.certain
            && f.text.starts_with(
                "the container runtime's sandbox (pause) image \"registry.k8s.io/pause:3.6\" is not present"
            )),
        "{found:#?}"
    );
    let with_image = Containerd {
        images: vec!["registry.k8s.io/pause:3.6".to_string()],
        ..runtime
    };
    let found = kubelet_findings_with(&FakeHost::default(), &with_image, CGROUPFS);
    assert!(!found.iter().any(|f| f.text.contains("sandbox")), "{found:#?}");
}

/// A component with no container whose manifest's image the runtime lacks.
#[test]
fn a_missing_control_plane_image_is_the_cause() {
    let fs = files(&[
        (
            "/etc/kubernetes/manifests/kube-apiserver.yaml",
            "spec:\n  containers:\n  - command:\n    - kube-apiserver\n    image: registry.example/kube-apiserver:v1.25.16\n",
        ),
        (
            "/etc/kubernetes/manifests/etcd.yaml",
            "spec:\n  containers:\n  - image: registry.k8s.io/etcd:3.5.9-0\n",
        ),
    ]);
    let runtime = Containerd {
        images: vec!["registry.k8s.io/etcd:3.5.9-0".to_string()],
        ..Containerd::default()
    };
    let found = missing_images(
        &runtime,
        &fs,
        Path::new("/etc/kubernetes/manifests"),
        &["etcd", "kube-apiserver", "kube-scheduler"],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].certain);
    assert!(
        found[0]
            .text
            .starts_with("kube-apiserver's image \"registry.example/kube-apiserver:v1.25.16\" is not in the container runtime"),
        "{}",
        found[0].text
    );
}

/// The kubelet's CSR as the bootstrap token sees it: none, pending, denied, approved but not
/// issued; CSRs of other users or signers are not this kubelet's.
#[test]
fn the_tls_bootstrap_csr_is_named() {
    use kubeadm_effects::cluster::Resource;
    let resource = Resource::new("certificates.k8s.io", "v1", "certificatesigningrequests");
    let csr = |name: &str, user: &str, signer: &str, status: serde_json::Value| {
        serde_json::json!({
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name, "creationTimestamp": format!("2026-12-02T01:00:0{}Z", name.len() % 10)},
            "spec": {"signerName": signer, "username": user},
            "status": status,
        })
    };
    let user = "system:bootstrap:abcdef";
    let kubelet = "kubernetes.io/kube-apiserver-client-kubelet";
    let none = FakeCluster::new().with_object(
        &resource,
        csr("other", "system:bootstrap:zzzzzz", kubelet, serde_json::json!({})),
    );
    let found = tls_bootstrap(&none, Some(user));
    assert!(
        found[0]
            .text
            .starts_with("no certificate signing request from system:bootstrap:abcdef"),
        "{found:#?}"
    );

    let pending = FakeCluster::new()
        .with_object(&resource, csr("csr-1", user, kubelet, serde_json::json!({})))
        .with_object(
            &resource,
            csr(
                "csr-serving",
                user,
                "kubernetes.io/kubelet-serving",
                serde_json::json!({}),
            ),
        );
    let found = tls_bootstrap(&pending, Some(user));
    assert!(
        found[0].certain
            && found[0]
                .text
                .starts_with("the kubelet's certificate signing request csr-1 is pending"),
        "{found:#?}"
    );

    let denied = FakeCluster::new().with_object(
        &resource,
        csr(
            "csr-2",
            user,
            kubelet,
            serde_json::json!({"conditions": [{"type": "Denied", "message": "not on my watch"}]}),
        ),
    );
    let found = tls_bootstrap(&denied, Some(user));
    assert_eq!(
        found[0].text,
        "the kubelet's certificate signing request csr-2 was denied: not on my watch"
    );

    let unissued = FakeCluster::new().with_object(
        &resource,
        csr(
            "csr-3",
            user,
            kubelet,
            serde_json::json!({"conditions": [{"type": "Approved"}]}),
        ),
    );
    let found = tls_bootstrap(&unissued, Some(user));
    assert!(
        found[0]
            .text
            .contains("is approved but no certificate was issued"),
        "{found:#?}"
    );
}

fn kubelet_findings_with(host: &FakeHost, runtime: &dyn Runtime, config: &str) -> Vec<Finding> {
    let fs = files(&[("/var/lib/kubelet/config.yaml", config)]);
    kubelet(&KubeletHost {
        probe: host,
        runtime,
        fs: &fs,
        kubelet_dir: Path::new("/var/lib/kubelet"),
    })
}

/// An API server that refuses the bootstrap token (401: expired or deleted) or forbids it the CSRs
/// (403: a token without kubeadm's default group): the cause.
#[test]
fn a_refused_bootstrap_token_is_the_cause() {
    use kubeadm_effects::cluster::PatchType;
    use kubeadm_effects::cluster::{Call, Cluster, ClusterError, ListOptions, Propagation, Resource, Verb};
    struct Refusing(u16);
    impl Cluster for Refusing {
        fn get(&self, r: &Resource, ns: &str, name: &str) -> Result<serde_json::Value, ClusterError> {
            Err(refused(self.0, Call::new(Verb::Get, r, ns, name)))
        }
        fn list(
            &self,
            r: &Resource,
            ns: &str,
            _: &ListOptions,
        ) -> Result<Vec<serde_json::Value>, ClusterError> {
            Err(refused(self.0, Call::new(Verb::List, r, ns, "")))
        }
        fn create(&self, r: &Resource, _: &serde_json::Value) -> Result<serde_json::Value, ClusterError> {
            Err(refused(self.0, Call::new(Verb::Create, r, "", "")))
        }
        fn update(&self, r: &Resource, _: &serde_json::Value) -> Result<serde_json::Value, ClusterError> {
            Err(refused(self.0, Call::new(Verb::Update, r, "", "")))
        }
        fn patch(
            &self,
            r: &Resource,
            ns: &str,
            name: &str,
            _: PatchType,
            _: &serde_json::Value,
        ) -> Result<serde_json::Value, ClusterError> {
            Err(refused(self.0, Call::new(Verb::Patch, r, ns, name)))
        }
        fn delete(
            &self,
            r: &Resource,
            ns: &str,
            name: &str,
            _: Option<Propagation>,
        ) -> Result<(), ClusterError> {
            Err(refused(self.0, Call::new(Verb::Delete, r, ns, name)))
        }
        fn healthy(&self) -> Result<bool, ClusterError> {
            Ok(true)
        }
        fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
            Ok(Vec::new())
        }
    }
    fn refused(code: u16, call: Call) -> ClusterError {
        if code == 403 {
            return ClusterError::Forbidden {
                call: Box::new(call),
                message: "certificatesigningrequests.certificates.k8s.io is forbidden".to_string(),
            };
        }
        ClusterError::Api {
            call: Box::new(call),
            code,
            reason: "Unauthorized".to_string(),
            message: "Unauthorized".to_string(),
        }
    }
    let found = tls_bootstrap(&Refusing(403), Some("system:bootstrap:abcdef"));
    assert!(
        found[0].certain
            && found[0].text.starts_with("the bootstrap credentials may not handle certificate signing requests (certificatesigningrequests.certificates.k8s.io is forbidden): a token needs the group system:bootstrappers:kubeadm:default-node-token"),
        "{found:#?}"
    );
    let found = tls_bootstrap(&Refusing(401), Some("system:bootstrap:abcdef"));
    assert!(
        found[0].certain
            && found[0]
                .text
                .starts_with("the API server does not accept the bootstrap credentials (Unauthorized): the token has expired"),
        "{found:#?}"
    );
}

/// The kubelet's ports held while it does not answer.
#[test]
fn the_kubelets_ports_taken_are_named() {
    let host = FakeHost {
        ports_in_use: [10250].into(),
        ..FakeHost::default()
    };
    let found = kubelet_findings(&host, &Containerd::default(), CGROUPFS);
    assert!(
        found.iter().any(|f| f
            .text
            .starts_with("port 10250 (the kubelet's) is in use although the kubelet does not answer")),
        "{found:#?}"
    );
    let found = kubelet_findings(&FakeHost::default(), &Containerd::default(), CGROUPFS);
    assert!(!found.iter().any(|f| f.text.starts_with("port ")), "{found:#?}");
}

/// On a systemd host the journal's line that says why the kubelet stopped is quoted.
#[test]
fn the_kubelets_fatal_log_line_is_quoted() {
    let host = FakeHost {
        service_logs: [(
            "kubelet".to_string(),
            vec![
                "I1202 01:18:06.814656   25124 server.go:413] \"Kubelet version\" kubeletVersion=\"v1.25.16\"".to_string(),
                "E1202 01:18:06.825556   25124 run.go:74] \"command failed\" err=\"failed to run Kubelet: misconfiguration: kubelet cgroup driver: \\\"systemd\\\" is different from docker cgroup driver: \\\"cgroupfs\\\"\"".to_string(),
                "kubelet.service: Main process exited, code=exited, status=1/FAILURE".to_string(),
            ],
        )]
        .into(),
        ..FakeHost::default()
    };
    let found = kubelet_findings(&host, &Containerd::default(), CGROUPFS);
    assert!(
        found.iter().any(|f| f.text.starts_with("the kubelet's log says: E1202 01:18:06.825556   25124 run.go:74] \"command failed\" err=\"failed to run Kubelet: misconfiguration")),
        "{found:#?}"
    );
    // No journal, or a healthy kubelet: nothing quoted.
    let found = kubelet_findings(&FakeHost::default(), &Containerd::default(), CGROUPFS);
    assert!(!found.iter().any(|f| f.text.contains("log says")), "{found:#?}");
    let mut healthy = host;
    healthy.http.insert(HEALTHZ_URL.to_string(), Ok(200));
    let found = kubelet_findings(&healthy, &Containerd::default(), CGROUPFS);
    assert!(!found.iter().any(|f| f.text.contains("log says")), "{found:#?}");
}

fn findings_with_files(host: &FakeHost, file_list: &[(&str, &str)]) -> Vec<String> {
    let fs = files(file_list);
    kubelet(&KubeletHost {
        probe: host,
        runtime: &Containerd::default(),
        fs: &fs,
        kubelet_dir: Path::new("/var/lib/kubelet"),
    })
    .into_iter()
    .map(|f| f.text)
    .collect()
}

/// systemd's restart count says the kubelet exits at start, running or given up on.
#[test]
fn the_kubelets_restarts_are_counted() {
    let mut host = FakeHost::default();
    let state = |active, restarts| ServiceState {
        exists: true,
        enabled: true,
        active,
        restarts,
    };
    host.services.insert("kubelet".into(), state(true, Some(7)));
    let found = findings_with_files(&host, &[]);
    assert!(
        found
            .iter()
            .any(|f| f.contains("it was restarted 7 times, so it exits soon after it starts")),
        "{found:#?}"
    );
    host.services.insert("kubelet".into(), state(false, Some(3)));
    let found = findings_with_files(&host, &[]);
    assert!(
        found.iter().any(|f| f.starts_with("the kubelet service is not active (restarted 3 times before it stopped)")),
        "{found:#?}"
    );
    // No count (OpenRC), or none yet: nothing said of restarts.
    for restarts in [None, Some(0)] {
        host.services.insert("kubelet".into(), state(true, restarts));
        let found = findings_with_files(&host, &[]);
        assert!(!found.iter().any(|f| f.contains("restarted")), "{found:#?}");
        assert!(
            found.iter().any(|f| f.contains("it may be restarting in a loop")),
            "{found:#?}"
        );
    }
}

/// A `--node-ip` that is not an address of this host is named, with the host's own; one that is
/// (or the unspecified address) says nothing.
#[test]
fn a_node_ip_this_host_does_not_have_is_named() {
    let host = FakeHost::default();
    let flags = |ips: &str| {
        format!(
            "KUBELET_KUBEADM_ARGS=\"--container-runtime=remote --node-ip={ips} --pod-infra-container-image=registry.k8s.io/pause:3.8\"\n"
        )
    };
    let about = |ips: &str| -> Vec<String> {
        findings_with_files(&host, &[("/var/lib/kubelet/kubeadm-flags.env", &flags(ips))])
            .into_iter()
            .filter(|f| f.contains("--node-ip"))
            .collect()
    };
    assert_eq!(
        about("192.0.2.7"),
        [
            "the kubelet's --node-ip 192.0.2.7 (kubeadm-flags.env, from nodeRegistration.kubeletExtraArgs) is not an address of this host (it has 10.0.0.1): the kubelet cannot set the node's addresses; name one this host has"
        ]
    );
    // Dual stack: only the foreign one.
    let dual = about("10.0.0.1,fd00::9");
    assert!(
        dual.len() == 1 && dual[0].starts_with("the kubelet's --node-ip fd00::9 "),
        "{dual:#?}"
    );
    for fine in ["10.0.0.1", "0.0.0.0", "10.0.0.1,::1"] {
        assert!(about(fine).is_empty(), "{fine}: {:#?}", about(fine));
    }
    // No flags file, no flag: nothing.
    assert!(
        !findings_with_files(&host, &[])
            .iter()
            .any(|f| f.contains("--node-ip"))
    );
}

/// The API server answering with `/readyz` checks failing is the cause, named by check (etcd's
/// pointing at etcd); one that is ready, or does not answer, is a fact.
#[test]
fn an_api_server_failing_readyz_checks_is_named() {
    let ready = api_server(&FakeCluster::new());
    assert_eq!(
        ready,
        Finding::fact("the API server answers and all its /readyz checks pass".to_string())
    );
    let no_etcd = FakeCluster::new().with_failing_readyz(&[
        "etcd failed: reason withheld",
        "etcd-readiness failed: reason withheld",
    ]);
    assert_eq!(
        api_server(&no_etcd),
        Finding::cause(
            "the API server answers but is not ready: its /readyz checks etcd, etcd-readiness fail (it cannot use etcd: see etcd's health and log)".to_string()
        )
    );
    let hook =
        FakeCluster::new().with_failing_readyz(&["poststarthook/rbac/bootstrap-roles failed: not finished"]);
    let found = api_server(&hook);
    assert!(
        found.certain
            && found.text.starts_with(
                "the API server answers but is not ready: its /readyz checks poststarthook/rbac/bootstrap-roles (not finished) fail (its log says why"
            ),
        "{found:?}"
    );
    let down = FakeCluster::new();
    down.go_down_at_call(0);
    let _ = down.get(&kubeadm_effects::cluster::Resource::nodes(), "", "x");
    let found = api_server(&down);
    assert!(
        !found.certain && found.text.starts_with("the API server does not answer: "),
        "{found:?}"
    );
}

/// An etcd static Pod manifest whose liveness probe looks at `host`.
fn etcd_manifest(host: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - command:\n    - etcd\n    image: registry.k8s.io/etcd:3.5.6-0\n    livenessProbe:\n      failureThreshold: 8\n      httpGet:\n        host: {host}\n        path: /health?exclude=NOSPACE&serializable=true\n        port: 2381\n        scheme: HTTP\n    name: etcd\n    startupProbe:\n      failureThreshold: 24\n      httpGet:\n        host: {host}\n        path: /health?serializable=false\n        port: 2381\n        scheme: HTTP\n"
    )
}

/// etcd's health where its startup probe looks (the check that wants a leader): unhealthy with
/// etcd's reason is the cause; healthy or not answering is a fact; no manifest (external etcd)
/// says nothing.
#[test]
fn etcd_unhealthy_is_named_with_its_reason() {
    let url = "http://127.0.0.1:2381/health?serializable=false";
    let fs = files(&[("/etc/kubernetes/manifests/etcd.yaml", &etcd_manifest("127.0.0.1"))]);
    let dir = Path::new("/etc/kubernetes/manifests");
    let mut host = FakeHost::default();
    host.http.insert(url.to_string(), Ok(503));
    host.http_bodies.insert(
        url.to_string(),
        "{\"health\":\"false\",\"reason\":\"RAFT NO LEADER\"}".to_string(),
    );
    assert_eq!(
        etcd(&host, &fs, dir),
        Some(Finding::cause(format!(
            "etcd is not healthy: {url} answers HTTP 503, RAFT NO LEADER: its members cannot elect a leader (a quorum of the members in --initial-cluster must run and reach each other on their peer URLs)"
        )))
    );
    host.http_bodies.insert(
        url.to_string(),
        "{\"health\":\"false\",\"reason\":\"ALARM CORRUPT\"}".to_string(),
    );
    let found = etcd(&host, &fs, dir).expect("a finding");
    assert!(
        found.certain && found.text.contains("ALARM CORRUPT: an alarm is raised"),
        "{found:?}"
    );
    host.http.insert(url.to_string(), Ok(200));
    assert_eq!(
        etcd(&host, &fs, dir),
        Some(Finding::fact(format!("etcd is healthy ({url} answers 200)")))
    );
    let found = etcd(&FakeHost::default(), &fs, dir).expect("a finding");
    assert!(
        !found.certain
            && found
                .text
                .starts_with("etcd does not answer where its probes look (Get ")
            && found.text.contains("connection refused"),
        "{found:?}"
    );
    // IPv6: the host in brackets.
    let fs6 = files(&[("/etc/kubernetes/manifests/etcd.yaml", &etcd_manifest("::1"))]);
    let found = etcd(&FakeHost::default(), &fs6, dir).expect("a finding");
    assert!(found.text.contains("http://[::1]:2381/health"), "{found:?}");
    // A manifest without a startup probe: where the liveness probe looks.
    let liveness_only = etcd_manifest("127.0.0.1");
    let liveness_only = &liveness_only[..liveness_only.find("    startupProbe:").expect("probe")];
    let found = etcd(
        &FakeHost::default(),
        &files(&[("/etc/kubernetes/manifests/etcd.yaml", liveness_only)]),
        dir,
    )
    .expect("a finding");
    assert!(
        found
            .text
            .contains("http://127.0.0.1:2381/health?exclude=NOSPACE&serializable=true"),
        "{found:?}"
    );
    // External etcd: no manifest, nothing to say.
    assert_eq!(etcd(&host, &files(&[]), dir), None);
}

/// An etcd member of this node's name with another peer URL is the cause of a control-plane
/// join's etcd wait failing; this node's own member, or other names, say nothing.
#[test]
fn an_etcd_member_of_this_name_elsewhere_is_the_cause() {
    let members = |list: &[(&str, &str)]| -> Vec<kubeadm_effects::etcd::Member> {
        list.iter()
            .zip(1..)
            .map(|((n, u), id)| kubeadm_effects::etcd::Member {
                id,
                name: n.to_string(),
                peer_urls: vec![u.to_string()],
                client_urls: Vec::new(),
            })
            .collect()
    };
    let found = etcd_name_taken(
        &members(&[
            ("cp1", "https://10.0.0.1:2380"),
            ("cp2", "https://10.0.0.9:2380"),
            ("", "https://10.0.0.2:2380"),
        ]),
        "cp2",
        "https://10.0.0.2:2380",
    )
    .expect("named");
    assert!(
        found.certain
            && found.text.starts_with(
                "etcd already has a member named \"cp2\" with the peer URL https://10.0.0.9:2380 (this node's is https://10.0.0.2:2380)"
            ),
        "{found:?}"
    );
    assert_eq!(
        etcd_name_taken(
            &members(&[("cp1", "https://10.0.0.1:2380"), ("cp2", "https://10.0.0.2:2380")]),
            "cp2",
            "https://10.0.0.2:2380"
        ),
        None
    );
}

/// A Node of this name registered by another machine: Ready is the cause, not Ready a fact; a
/// Node with one of this host's addresses, or none, says nothing.
#[test]
fn a_node_of_this_name_elsewhere_is_named() {
    let node = |ip: &str, ready: &str| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "worker"},
            "status": {
                "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": "worker"}],
                "conditions": [{"type": "Ready", "status": ready}],
            },
        })
    };
    let local: Vec<std::net::IpAddr> = FakeHost::default().addresses;
    let nodes = kubeadm_effects::cluster::Resource::nodes();
    let cluster = FakeCluster::new().with_object(&nodes, node("192.0.2.10", "True"));
    let found = node_name_taken(&cluster, "worker", &local).expect("named");
    assert!(
        found.certain
            && found.text.starts_with(
                "a Node named \"worker\" is already registered with the address 192.0.2.10 (none of this host's), and it is Ready: another machine has this name"
            ),
        "{found:?}"
    );
    let cluster = FakeCluster::new().with_object(&nodes, node("192.0.2.10", "Unknown"));
    let found = node_name_taken(&cluster, "worker", &local).expect("named");
    assert!(
        !found.certain && found.text.contains(", not Ready: "),
        "{found:?}"
    );
    let cluster = FakeCluster::new().with_object(&nodes, node("10.0.0.1", "True"));
    assert_eq!(node_name_taken(&cluster, "worker", &local), None);
    assert_eq!(node_name_taken(&FakeCluster::new(), "worker", &local), None);
}

/// The host's cgroup version, when the kubelet is not healthy: a fact with the controllers it
/// needs, the cause without one of them; nothing while the kubelet is healthy.
#[test]
fn the_cgroup_version_and_missing_controllers_are_named() {
    use kubeadm_effects::host_probe::Cgroups;
    let cgroup_lines = |host: &FakeHost| -> Vec<Finding> {
        kubelet_findings(host, &Containerd::default(), CGROUPFS)
            .into_iter()
            .filter(|f| f.text.contains("cgroup v"))
            .collect()
    };
    assert_eq!(
        cgroup_lines(&FakeHost::default()),
        [Finding::fact(
            "this host uses cgroup v2 (the unified hierarchy), with the controllers the kubelet needs"
                .to_string()
        )]
    );
    let mut host = FakeHost {
        cgroups: Ok(Cgroups::V2(vec!["cpu".into(), "io".into(), "memory".into()])),
        ..FakeHost::default()
    };
    assert_eq!(
        cgroup_lines(&host),
        [Finding::cause(
            "this host uses cgroup v2 (the unified hierarchy) without the cpuset, pids controllers the kubelet needs: enable them (kernel command line, or the cgroup.subtree_control of the parent cgroup)".to_string()
        )]
    );
    host.cgroups = Ok(Cgroups::V1(
        ["cpuset", "cpu", "cpuacct", "memory", "devices", "freezer", "pids"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    ));
    let found = cgroup_lines(&host);
    assert!(
        found.len() == 1 && !found[0].certain && found[0].text.starts_with("this host uses cgroup v1,"),
        "{found:#?}"
    );
    host.http
        .insert("http://localhost:10248/healthz".to_string(), Ok(200));
    assert!(cgroup_lines(&host).is_empty());
}
