//! A cluster as `kubeadm init` leaves it, on a real API server (upstream etcd and kube-apiserver
//! v1.25.16 on loopback), for the `upgrade` tests: the config ConfigMaps, the control-plane Node
//! (Ready, with its kubelet version), the addons and mirror Pods, the static Pod manifests and
//! kubelet.conf under a temp root both binaries chroot into (`--rootfs`); a stand-in for the Job
//! controller the health check needs; and the klog-line helpers the comparisons use.
#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kubeadm_testkit::apiserver::{ApiServer, InitConfig, upstream_bin};
use kubeadm_testkit::oracle::{Run, diff, expected_code, upstream_kubeadm};

/// The node no kubelet registers here; the test creates it as a kubelet would.
pub const NODE: &str = "apiserver-test";

pub fn init_config(port: u16, version: &str) -> String {
    InitConfig {
        node: NODE,
        version,
        ..InitConfig::default()
    }
    .render(port)
}

/// Writes `json` under the root and `kubectl <verb> -f`s it.
pub fn apply_json(server: &ApiServer, name: &str, json: &str, verb: &str) {
    let path = server.root().join(name);
    std::fs::write(&path, json).expect("write object");
    server.kubectl(&[verb, "-f", &path.to_string_lossy()]);
}

/// A control-plane mirror Pod as the kubelet creates it for a static Pod.
pub fn mirror_pod(server: &ApiServer, component: &str, image: &str, extra_annotations: &str) {
    let json = format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{component}-{NODE}","namespace":"kube-system",
"labels":{{"component":"{component}","tier":"control-plane"}},
"annotations":{{"kubernetes.io/config.mirror":"0123456789abcdef","kubernetes.io/config.source":"file"{extra_annotations}}}}},
"spec":{{"nodeName":"{NODE}","containers":[{{"name":"{component}","image":"{image}"}}]}}}}"#
    );
    apply_json(server, &format!("{component}-pod.json"), &json, "create");
}

/// Marks the Node Ready with `kubelet_version`, as the kubelet's status updates do.
pub fn node_status(server: &ApiServer, kubelet_version: &str, ready: bool) {
    let status = if ready { "True" } else { "False" };
    let patch = format!(
        r#"{{"status":{{"conditions":[{{"type":"Ready","status":"{status}","reason":"KubeletReady","message":"kubelet is posting ready status"}}],"nodeInfo":{{"kubeletVersion":"{kubelet_version}","machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeProxyVersion":"{kubelet_version}","operatingSystem":"linux","architecture":"amd64"}}}}}}"#
    );
    server.kubectl(&[
        "patch",
        "node",
        NODE,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
}

/// A cluster as `kubeadm init` of `version` leaves it, for kubelets of `kubelet_version`.
pub fn cluster(version: &str, kubelet_version: &str) -> ApiServer {
    let upstream = upstream_kubeadm();
    let server = ApiServer::start_with(&upstream);
    let root = server.root();
    std::fs::write(root.join("init.yaml"), init_config(server.port(), version)).expect("config");
    for phase in [
        &["control-plane", "all"][..],
        &["etcd", "local"],
        &["kubeconfig", "kubelet"],
    ] {
        kubeadm_testkit::rootfs::init_phase(&upstream, &root, phase, "/init.yaml");
    }
    server.create_node(NODE, serde_json::json!({}));
    node_status(&server, kubelet_version, true);
    for phase in [
        &["upload-config", "all"][..],
        &["mark-control-plane"],
        &["addon", "all"],
    ] {
        kubeadm_testkit::rootfs::init_phase(&upstream, &root, phase, "/init.yaml");
    }
    let endpoint = format!(
        r#","kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint":"10.254.254.254:{}""#,
        server.port()
    );
    for (component, extra) in [
        ("kube-apiserver", endpoint.as_str()),
        ("kube-controller-manager", ""),
        ("kube-scheduler", ""),
    ] {
        mirror_pod(
            &server,
            component,
            &format!("registry.k8s.io/{component}:{version}"),
            extra,
        );
    }
    mirror_pod(&server, "etcd", "registry.k8s.io/etcd:3.5.6-0", "");
    server
}

/// Plays the Job controller for the `upgrade-health-check` Job both binaries create: marks it
/// Complete, and lets its foreground deletion finish (no garbage collector runs here).
pub struct JobController {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl JobController {
    pub fn start(server: &ApiServer) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let kubeconfig = server.kubeconfig();
        let home = server.root();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let kubectl = |args: &[&str]| {
                Command::new(upstream_bin("kubectl"))
                    .arg("--kubeconfig")
                    .arg(&kubeconfig)
                    .args(["-n", "kube-system"])
                    .args(args)
                    .env_clear()
                    .env("HOME", &home)
                    .output()
                    .expect("run kubectl")
            };
            while !flag.load(Ordering::Relaxed) {
                let out = kubectl(&["get", "job", "upgrade-health-check", "-o", "json"]);
                if out.status.success() {
                    let job: serde_json::Value = serde_json::from_slice(&out.stdout).expect("job json");
                    if job.pointer("/metadata/deletionTimestamp").is_some() {
                        kubectl(&[
                            "patch",
                            "job",
                            "upgrade-health-check",
                            "--type=merge",
                            "-p",
                            r#"{"metadata":{"finalizers":null}}"#,
                        ]);
                    } else if job.pointer("/status/conditions").is_none() {
                        kubectl(&[
                            "patch",
                            "job",
                            "upgrade-health-check",
                            "--subresource=status",
                            "--type=merge",
                            "-p",
                            r#"{"status":{"conditions":[{"type":"Complete","status":"True"}],"succeeded":1}}"#,
                        ]);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for JobController {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A klog line: `W1130 12:00:00.000000   123 file.go:42] message`.
pub fn is_klog(line: &str) -> bool {
    line.len() > 5
        && matches!(line.as_bytes()[0], b'W' | b'I' | b'E')
        && line.as_bytes()[1..5].iter().all(u8::is_ascii_digit)
        && line.contains("] ")
}

/// The message of each klog line, without the header.
pub fn klog_messages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| is_klog(l))
        .filter_map(|l| l.split_once("] ").map(|(_, m)| m.to_string()))
        .collect()
}

/// Waits until the health-check Job of the last run is gone, so that no run finds it half-deleted.
pub fn wait_job_gone(server: &ApiServer) {
    for _ in 0..100 {
        let out = server.kubectl(&["-n", "kube-system", "get", "jobs", "-o", "name"]);
        if !out.contains("upgrade-health-check") {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the upgrade-health-check Job is still there after 10s");
}

/// What a run printed and how it ended: stdout, the lines of stderr that are not klog's, the code.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub stdout: String,
    pub error_lines: String,
    pub code: i32,
}

/// The outcome of a finished process (`normalise` applied to its stdout), and its whole stderr.
pub fn outcome(out: &std::process::Output, normalise: fn(&str) -> String) -> (Outcome, String) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let outcome = Outcome {
        stdout: normalise(&String::from_utf8_lossy(&out.stdout)),
        error_lines: stderr
            .lines()
            .filter(|l| !is_klog(l))
            .map(|l| format!("{l}\n"))
            .collect(),
        code: out.status.code().unwrap_or(-1),
    };
    (outcome, stderr)
}

/// Asserts that ours ended as upstream did: the exit code (3 where upstream refuses bad input with
/// 1), stdout, the error lines and klog's warnings (but for the "could not fetch … from the
/// internet" ones upstream logs when its label fetch fails; ours never fetches). With `probe` set in
/// the environment, prints both runs instead and returns false.
pub fn assert_same(what: &str, probe: &str, theirs: (&Outcome, &str), mine: (&Outcome, &str)) -> bool {
    let ((theirs, theirs_err), (mine, mine_err)) = (theirs, mine);
    if std::env::var_os(probe).is_some() {
        eprintln!(
            "=== {what}\n--- upstream stdout\n{}--- upstream stderr\n{theirs_err}--- code {}",
            theirs.stdout, theirs.code
        );
        eprintln!(
            "--- ours stdout\n{}--- ours stderr\n{mine_err}--- code {}",
            mine.stdout, mine.code
        );
        return false;
    }
    let upstream = Run {
        stdout: theirs.stdout.clone(),
        stderr: theirs_err.to_string(),
        code: theirs.code,
    };
    assert_eq!(
        expected_code(&upstream),
        mine.code,
        "exit code of {what}\nupstream stderr:\n{theirs_err}\nours:\n{mine_err}"
    );
    assert!(
        theirs.stdout == mine.stdout,
        "stdout of {what}:\n{}",
        diff(&theirs.stdout, &mine.stdout)
    );
    assert!(
        theirs.error_lines == mine.error_lines,
        "stderr of {what}:\n{}",
        diff(&theirs.error_lines, &mine.error_lines)
    );
    let warnings = |s: &str| -> Vec<String> {
        klog_messages(s)
            .into_iter()
            .filter(|m| !m.starts_with("could not fetch a Kubernetes version from the internet"))
            .collect()
    };
    assert_eq!(
        warnings(theirs_err),
        warnings(mine_err),
        "klog warnings of {what}"
    );
    true
}
