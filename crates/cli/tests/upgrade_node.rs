//! `kubeadm upgrade node` on a worker (control-plane nodes: `upgrade_apply.rs`), upstream v1.25.16 against ours on one real kube-apiserver
//! (with etcd): the server holds what `kubeadm init` uploads (`init phase upload-config all` by
//! upstream), a worker Node whose CRI socket annotation carries the doubled `unix://` that kubeadm
//! v1.24.0 to v1.24.2 wrote, and each run gets its own root (`--rootfs`) holding the worker's
//! `kubelet.conf` (a client certificate for `system:node:worker`).
//!
//! Both must print the same, exit the same, write the same `/var/lib/kubelet/config.yaml` (nothing
//! in a dry run) and leave the Node's annotation the same.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use kubeadm_testkit::apiserver::{ApiServer, InitConfig};
use kubeadm_testkit::oracle::{Run, diff, expected_code, run, upstream_kubeadm};

/// The worker node.
const WORKER: &str = "worker";
/// The annotation `upgrade node` repairs, and the value older releases left there.
const CRI_ANNOTATION: &str = "kubeadm.alpha.kubernetes.io/cri-socket";
const DOUBLED: &str = "unix://unix:///var/run/containerd/containerd.sock";

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn init_config(port: u16) -> String {
    InitConfig {
        cluster_extra: "imageRepository: k8s.gcr.io
networking:
  serviceSubnet: 10.112.0.0/12
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
maxPods: 42
",
        ..InitConfig::default()
    }
    .render(port)
}

struct Cluster {
    server: ApiServer,
    /// `kubelet.conf` of the worker.
    kubelet_conf: String,
}

fn prepared() -> Cluster {
    let up = upstream_kubeadm();
    let server = ApiServer::start_with(&up);
    std::fs::write(server.root().join("init.yaml"), init_config(server.port())).expect("config");
    // The control-plane Node (upload-config annotates it) and the worker.
    server.create_node("apiserver-test", serde_json::json!({}));
    server.create_node(WORKER, serde_json::json!({CRI_ANNOTATION: DOUBLED}));
    kubeadm_testkit::rootfs::init_phase(&up, &server.root(), &["upload-config", "all"], "/init.yaml");
    let rootfs = server.root().to_string_lossy().into_owned();
    let user = run(
        &up,
        &[
            "--rootfs",
            &rootfs,
            "kubeconfig",
            "user",
            "--config",
            "/init.yaml",
            "--client-name",
            &format!("system:node:{WORKER}"),
            "--org",
            "system:nodes",
        ],
        &server.root(),
        &[],
    );
    assert_eq!(user.code, 0, "{user:?}");
    Cluster {
        server,
        kubelet_conf: user.stdout,
    }
}

impl Cluster {
    fn annotation(&self) -> String {
        self.server.kubectl(&[
            "get",
            "node",
            WORKER,
            "-o",
            "jsonpath={.metadata.annotations.kubeadm\\.alpha\\.kubernetes\\.io/cri-socket}",
        ])
    }

    fn set_annotation(&self, value: &str) {
        self.server.kubectl(&[
            "annotate",
            "--overwrite",
            "node",
            WORKER,
            &format!("{CRI_ANNOTATION}={value}"),
        ]);
    }

    /// A fresh worker root: `kubelet.conf`, and the files `files` names (path, content).
    fn worker_root(&self, files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::Builder::new()
            .prefix("kubeadm-rs-upgrade-node")
            .tempdir()
            .expect("temp dir");
        let mut all = vec![("etc/kubernetes/kubelet.conf", self.kubelet_conf.as_str())];
        all.extend_from_slice(files);
        for (path, content) in all {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("dirs");
            std::fs::write(p, content).expect("write");
        }
        root
    }
}

/// What one run did: its output, the worker's files afterwards, the Node's annotation afterwards.
#[derive(Debug, PartialEq)]
struct Outcome {
    stdout: String,
    errors: Vec<String>,
    code: i32,
    files: Vec<(String, u32, String)>,
    annotation: String,
}

/// A dry run names the file it wrote in `/etc/kubernetes/tmp/kubeadm-upgrade-dryrun<random digits>`
/// (upstream on disk, ours only in its dry-run overlay); the digits are normalised. Upstream's
/// folder is left out of the compared files.
fn normalise(stdout: &str) -> String {
    let marker = "kubeadm-upgrade-dryrun";
    let mut out = String::with_capacity(stdout.len());
    let mut rest = stdout;
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i + marker.len()]);
        rest = rest[i + marker.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("<random>");
    }
    out.push_str(rest);
    out
}

fn error_lines(stderr: &str) -> Vec<String> {
    let klog = |l: &str| {
        let b = l.as_bytes();
        b.len() > 5 && matches!(b[0], b'I' | b'W' | b'E') && b[1..5].iter().all(u8::is_ascii_digit)
    };
    stderr.lines().filter(|l| !klog(l)).map(str::to_string).collect()
}

fn upgrade(bin: &Path, cluster: &Cluster, args: &[&str], files: &[(&str, &str)]) -> Outcome {
    cluster.set_annotation(DOUBLED);
    let root = cluster.worker_root(files);
    let rootfs = root.path().to_string_lossy().into_owned();
    let mut all = vec!["--rootfs", rootfs.as_str(), "upgrade", "node"];
    all.extend_from_slice(args);
    let r: Run = run(bin, &all, root.path(), &[]);
    let files = kubeadm_testkit::rootfs::tree(root.path(), &["etc", "var"])
        .into_iter()
        .filter(|(p, _)| !p.starts_with("etc/kubernetes/tmp"))
        .map(|(p, (mode, bytes))| (p, mode, String::from_utf8_lossy(&bytes).into_owned()))
        .collect();
    Outcome {
        stdout: normalise(&r.stdout),
        errors: error_lines(&r.stderr),
        code: if bin == upstream_kubeadm() {
            expected_code(&r)
        } else {
            r.code
        },
        files,
        annotation: cluster.annotation(),
    }
}

/// A case: its label, the arguments after `upgrade node`, the files in the worker's root.
type Case = (&'static str, Vec<&'static str>, Vec<(&'static str, &'static str)>);

#[test]
fn upgrade_node_on_a_worker_matches_upstream() {
    let cluster = prepared();
    let patch = (
        "patches/kubeletconfiguration+merge.yaml",
        "maxPods: 77\nclusterDomain: patched.local\n",
    );
    let cases: Vec<Case> = vec![
        ("whole", vec![], vec![]),
        ("dry run", vec!["--dry-run"], vec![]),
        ("patches", vec!["--patches", "/patches"], vec![patch]),
        (
            "phase kubelet-config with patches, dry run",
            vec!["phase", "kubelet-config", "--patches", "/patches", "--dry-run"],
            vec![patch],
        ),
        ("phase preflight", vec!["phase", "preflight"], vec![]),
        ("phase control-plane", vec!["phase", "control-plane"], vec![]),
        (
            "skip kubelet-config",
            vec!["--skip-phases", "kubelet-config"],
            vec![],
        ),
        (
            "ignored preflight errors",
            vec!["--ignore-preflight-errors", "IsPrivilegedUser"],
            vec![],
        ),
        (
            "all with others",
            vec!["--ignore-preflight-errors", "all,Swap"],
            vec![],
        ),
        (
            "kubeconfig missing",
            vec!["--kubeconfig", "/etc/kubernetes/none.conf"],
            vec![],
        ),
        ("unknown phase", vec!["--skip-phases", "bogus"], vec![]),
        (
            "bad patch",
            vec!["--patches", "/patches"],
            vec![("patches/kubeletconfiguration.yaml", "maxPods: [")],
        ),
    ];
    let mut failures = Vec::new();
    let mut fixed = 0;
    for (label, args, files) in &cases {
        let mut up = upgrade(&upstream_kubeadm(), &cluster, args, files);
        let mut us = upgrade(&ours(), &cluster, args, files);
        if *label == "bad patch" {
            // After upstream's first line, our YAML reader words the syntax error its own way and
            // names the patch file.
            up.errors.truncate(1);
            us.errors.truncate(1);
        }
        if up.annotation == "unix:///var/run/containerd/containerd.sock" {
            fixed += 1;
        }
        if up != us {
            failures.push(format!(
                "{label}: exit {} vs {}\nstdout:\n{}errors: {:?} vs {:?}\nfiles: {:?} vs {:?}\nannotation: {:?} vs {:?}",
                up.code,
                us.code,
                diff(&up.stdout, &us.stdout),
                up.errors,
                us.errors,
                up.files,
                us.files,
                up.annotation,
                us.annotation
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The cases must exercise the repair, or they prove little.
    assert!(fixed >= 3, "upstream repaired the annotation in {fixed} cases");
}
