//! The cluster side of `kubeadm init` against a real API server (upstream etcd + kube-apiserver
//! v1.25.16 on loopback): our `init phase upload-config all | mark-control-plane | bootstrap-token |
//! addon all`, each run twice, must leave the same objects as upstream kubeadm's phases leave on a
//! second server, read back with upstream `kubectl`; and the objects themselves are checked (node
//! labels and taints, token Secret, cluster-info, RBAC, addons); with kube-apiserver killed, the
//! phases fail clearly and, once it is back, a re-run leaves what one uninterrupted run leaves.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;

use kubeadm_testkit::apiserver::{ApiServer, InitConfig};
use kubeadm_testkit::dryrun::{dry_run_tail, dry_run_whole, mask_random};
use kubeadm_testkit::oracle::{diff, upstream_kubeadm};

/// The node no kubelet registers here; the test creates it as a kubelet would.
const NODE: &str = "apiserver-test";
const TOKEN: &str = "abcdef.0123456789abcdef";

/// The config the phases run with: the test server's endpoint and a fixed token, so a second run
/// updates the token Secret instead of adding one.
fn cluster_config(port: u16) -> String {
    let token = format!("bootstrapTokens:\n- token: {TOKEN}\n");
    InitConfig {
        node: NODE,
        init_extra: &token,
        ..InitConfig::default()
    }
    .render(port)
}

/// Runs `kubeadm --rootfs <root> init phase <phase> --config /init.yaml`.
fn phase(kubeadm: &Path, server: &ApiServer, phase: &[&str]) -> String {
    kubeadm_testkit::rootfs::init_phase(kubeadm, &server.root(), phase, "/init.yaml")
}

const PHASES: [&[&str]; 4] = [
    &["upload-config", "all"],
    &["mark-control-plane"],
    &["bootstrap-token"],
    &["addon", "all"],
];

/// What the phases leave: every object kubeadm creates, by kind and name.
const KINDS: &str = "configmaps,secrets,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings,deployments,daemonsets,services";

/// Starts a server with `kubeadm`'s PKI, runs every phase twice and returns the server and the
/// first run's output.
fn run_all(kubeadm: &Path) -> (ApiServer, String) {
    let server = ApiServer::start_with(kubeadm);
    std::fs::write(server.root().join("init.yaml"), cluster_config(server.port())).expect("config");
    server.create_node(NODE, serde_json::json!({}));
    let mut first = String::new();
    for p in PHASES {
        first.push_str(&phase(kubeadm, &server, p));
    }
    for p in PHASES {
        phase(kubeadm, &server, p);
    }
    (server, first)
}

fn objects(server: &ApiServer) -> String {
    let mut names: Vec<String> = server
        .kubectl(&[
            "get",
            KINDS,
            "-A",
            "-o",
            r#"jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\n"}{end}"#,
        ])
        .lines()
        // Objects the API server makes itself differ in their generated suffixes only.
        .filter(|l| {
            !l.contains("/kube-root-ca.crt") && !l.starts_with("ServiceAccount/")
                || l.contains("coredns")
                || l.contains("kube-proxy")
        })
        .map(str::to_string)
        .collect();
    names.sort();
    names.join("\n")
}

/// The server's port, which differs between the two servers, masked.
fn masked(server: &ApiServer, text: String) -> String {
    text.replace(&format!("127.0.0.1:{}", server.port()), "127.0.0.1:PORT")
}

fn node_view(server: &ApiServer) -> String {
    server.kubectl(&[
        "get",
        "node",
        NODE,
        "-o",
        "jsonpath={.metadata.labels}|{.metadata.annotations}|{.spec.taints}",
    ])
}

#[test]
fn cluster_phases_leave_what_upstream_leaves() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let (ours_server, ours_out) = run_all(&ours);
    let (theirs_server, theirs_out) = run_all(&upstream_kubeadm());

    // The printed lines are upstream's.
    assert!(
        ours_out == theirs_out,
        "output differs:\n{}",
        diff(&theirs_out, &ours_out)
    );

    // The same objects, after each phase ran twice (no duplicates: the token is fixed).
    let (want, got) = (objects(&theirs_server), objects(&ours_server));
    assert!(want == got, "objects differ:\n{}", diff(&want, &got));
    for name in [
        "ConfigMap/kube-system/kubeadm-config",
        "ConfigMap/kube-system/kubelet-config",
        "ConfigMap/kube-public/cluster-info",
        "Secret/kube-system/bootstrap-token-abcdef",
        "ClusterRoleBinding//kubeadm:node-autoapprove-certificate-rotation",
        "Deployment/kube-system/coredns",
        "DaemonSet/kube-system/kube-proxy",
    ] {
        assert!(got.lines().any(|l| l == name), "{name} missing from:\n{got}");
    }

    // The node: control-plane labels, one control-plane taint (no master taint), the CRI socket.
    let node = node_view(&ours_server);
    assert_eq!(node, node_view(&theirs_server));
    assert!(
        node.contains(r#""node-role.kubernetes.io/control-plane":"""#),
        "{node}"
    );
    assert!(
        node.contains(r#""node.kubernetes.io/exclude-from-external-load-balancers":"""#),
        "{node}"
    );
    assert!(
        node.contains(
            r#""kubeadm.alpha.kubernetes.io/cri-socket":"unix:///var/run/containerd/containerd.sock""#
        ),
        "{node}"
    );
    // (The API server's admission adds `node.kubernetes.io/not-ready` to a Node created without status.)
    let taint = r#"{"effect":"NoSchedule","key":"node-role.kubernetes.io/control-plane"}"#;
    assert_eq!(node.matches(taint).count(), 1, "{node}");
    assert!(!node.contains("node-role.kubernetes.io/master"), "{node}");

    // Object contents that hold configuration: equal on both servers.
    for (kind, ns, name, path) in [
        (
            "cm",
            "kube-system",
            "kubeadm-config",
            "{.data.ClusterConfiguration}",
        ),
        ("cm", "kube-system", "kubelet-config", "{.data.kubelet}"),
        (
            "secret",
            "kube-system",
            "bootstrap-token-abcdef",
            "{.type} {.data.usage-bootstrap-authentication} {.data.auth-extra-groups}",
        ),
        ("cm", "kube-system", "coredns", "{.data.Corefile}"),
        (
            "deploy",
            "kube-system",
            "coredns",
            "{.spec.replicas} {.spec.template.spec.containers[0].image}",
        ),
        ("cm", "kube-system", "kube-proxy", "{.data.kubeconfig\\.conf}"),
        (
            "ds",
            "kube-system",
            "kube-proxy",
            "{.spec.template.spec.containers[0].command}",
        ),
        (
            "clusterrolebinding",
            "",
            "kubeadm:get-nodes",
            "{.roleRef} {.subjects}",
        ),
        (
            "role",
            "kube-public",
            "kubeadm:bootstrap-signer-clusterinfo",
            "{.rules}",
        ),
    ] {
        let mut args = vec!["get", kind, name, "-o"];
        let jp = format!("jsonpath={path}");
        args.push(&jp);
        if !ns.is_empty() {
            args.extend_from_slice(&["-n", ns]);
        }
        let (w, g) = (
            masked(&theirs_server, theirs_server.kubectl(&args)),
            masked(&ours_server, ours_server.kubectl(&args)),
        );
        assert!(w == g, "{kind} {ns}/{name} differs:\n{}", diff(&w, &g));
    }

    // cluster-info names this server with our CA (its kubeconfig differs only as the CAs do).
    let info = ours_server.kubectl(&[
        "get",
        "cm",
        "-n",
        "kube-public",
        "cluster-info",
        "-o",
        "jsonpath={.data.kubeconfig}",
    ]);
    assert!(
        info.contains(&format!("server: https://127.0.0.1:{}", ours_server.port())),
        "{info}"
    );

    // upload-certs: the same Secret keys as upstream, owned by a bootstrap token, and our sealed
    // CA opens with the key to the CA on disk.
    let key = "ab".repeat(32);
    for (kubeadm, server) in [(&ours, &ours_server), (&upstream_kubeadm(), &theirs_server)] {
        let with_key = cluster_config(server.port()).replace(
            "bootstrapTokens:",
            &format!("certificateKey: {key}\nbootstrapTokens:"),
        );
        std::fs::write(server.root().join("certs.yaml"), with_key).expect("config");
        let rootfs = server.root().to_string_lossy().into_owned();
        let out = Command::new(kubeadm)
            .args([
                "--rootfs",
                &rootfs,
                "init",
                "phase",
                "upload-certs",
                "--upload-certs",
                "--config",
                "/certs.yaml",
            ])
            .env_clear()
            .output()
            .expect("run kubeadm");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.ends_with(&format!("[upload-certs] Using certificate key:\n{key}\n")),
            "{stdout}"
        );
    }
    let certs_view = |server: &ApiServer| {
        server.kubectl(&[
                "get",
                "secret",
                "-n",
                "kube-system",
                "kubeadm-certs",
                "-o",
                r#"go-template={{range $k, $v := .data}}{{$k}} {{end}}|{{(index .metadata.ownerReferences 0).kind}}|{{(index .metadata.ownerReferences 0).controller}}"#,
            ],
        )
    };
    let (want, got) = (certs_view(&theirs_server), certs_view(&ours_server));
    assert_eq!(want, got);
    assert!(
        got.starts_with("ca.crt ca.key etcd-ca.crt etcd-ca.key front-proxy-ca.crt"),
        "{got}"
    );
    let sealed = ours_server.kubectl(&[
        "get",
        "secret",
        "-n",
        "kube-system",
        "kubeadm-certs",
        "-o",
        r#"jsonpath={.data.ca\.crt}"#,
    ]);
    let sealed = base64::engine::general_purpose::STANDARD
        .decode(sealed.trim())
        .expect("base64");
    let opened =
        kubeadm_core::cluster::upload_certs::decrypt_bytes(&sealed, &hex::decode(&key).expect("hex"))
            .expect("our sealed CA opens with the key");
    let ca = std::fs::read(ours_server.root().join("etc/kubernetes/pki/ca.crt")).expect("ca");
    assert!(opened == ca, "the sealed CA is not the CA");
}

/// kube-apiserver killed: `upload-config` and `bootstrap-token` fail, after upstream's retry
/// deadlines, with an error that names the phase, the call and that the API server is unavailable.
/// Once it is back, running the phases again leaves exactly what one uninterrupted run leaves.
#[test]
fn phases_fail_clearly_without_api_server_and_rerun_cleanly() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let (reference, _) = run_all(&ours);

    let mut server = ApiServer::start_with(&ours);
    std::fs::write(server.root().join("init.yaml"), cluster_config(server.port())).expect("config");
    server.create_node(NODE, serde_json::json!({}));
    // The first phase lands, then the server dies.
    phase(&ours, &server, PHASES[0]);
    server.kill_apiserver();
    let rootfs = server.root().to_string_lossy().into_owned();
    let failures: Vec<(String, std::process::Output)> = std::thread::scope(|scope| {
        let handles: Vec<_> = [&["upload-config", "all"][..], &["bootstrap-token"]]
            .into_iter()
            .map(|p| {
                let (ours, rootfs) = (&ours, &rootfs);
                scope.spawn(move || {
                    let mut args = vec!["--rootfs", rootfs.as_str(), "init", "phase"];
                    args.extend_from_slice(p);
                    args.extend_from_slice(&["--config", "/init.yaml"]);
                    let out = Command::new(ours)
                        .args(&args)
                        .env_clear()
                        .output()
                        .expect("run kubeadm");
                    (p.join("/"), out)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    for (p, out) in &failures {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{p}: {stderr}");
        // Warnings (klog lines) may come first; the error is the first line that is not one.
        let first = stderr
            .lines()
            .find(|l| l.starts_with("error execution phase "))
            .unwrap_or_default();
        assert!(
            first.starts_with("error execution phase ")
                && first.contains("the API server is unavailable")
                && first.contains(&format!("127.0.0.1:{}", server.port())),
            "{p}: unclear error: {stderr}"
        );
    }

    server.restart();
    for p in PHASES {
        phase(&ours, &server, p);
    }
    let (want, got) = (objects(&reference), objects(&server));
    assert!(
        want == got,
        "objects after the outage differ:\n{}",
        diff(&want, &got)
    );
    assert_eq!(node_view(&reference), node_view(&server));
}

/// Runs `kubeadm --rootfs <root> init phase wait-control-plane` (a phase without flags: the
/// default admin.conf and timeout); returns the exit status, stdout and stderr.
fn wait_phase(kubeadm: &Path, server: &ApiServer) -> (bool, String, String) {
    let rootfs = server.root().to_string_lossy().into_owned();
    let out = Command::new(kubeadm)
        .args(["--rootfs", &rootfs, "init", "phase", "wait-control-plane"])
        .env_clear()
        .output()
        .expect("run kubeadm");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The seconds of `[apiclient] ... healthy after 0.012345 seconds`, masked.
fn mask_seconds(text: &str) -> String {
    text.lines()
        .map(
            |l| match l.strip_prefix("[apiclient] All control plane components are healthy after ") {
                Some(rest) if rest.ends_with(" seconds") => {
                    "[apiclient] All control plane components are healthy after N seconds".to_string()
                }
                _ => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn wait_control_plane_prints_as_upstream() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let server = ApiServer::start_with(&ours);
    let (ok_ours, out_ours, err_ours) = wait_phase(&ours, &server);
    let (ok_up, out_up, err_up) = wait_phase(&upstream_kubeadm(), &server);
    assert_eq!(
        ok_ours, ok_up,
        "ours: {out_ours}{err_ours}\nupstream: {out_up}{err_up}"
    );
    assert!(ok_ours, "ours: {out_ours}{err_ours}");
    assert_eq!(mask_seconds(&out_ours), mask_seconds(&out_up));
}

/// Runs `kubeadm` with `args` and an empty environment; its standard output, after checking that
/// it succeeded.
fn run_ok(kubeadm: &Path, args: &[&str]) -> String {
    let out = Command::new(kubeadm)
        .args(args)
        .env_clear()
        .output()
        .expect("run kubeadm");
    assert!(
        out.status.success(),
        "{}: {}",
        kubeadm.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn init_dry_run_prints_as_upstream_and_writes_nothing() {
    let cfg = "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
localAPIEndpoint:
  advertiseAddress: 10.0.0.1
nodeRegistration:
  name: node1
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
controlPlaneEndpoint: cp.example:6443
";
    let run = |kubeadm: &Path, extra: &[&str]| {
        let root = tempfile::tempdir().expect("root");
        // `--certificate-key` cannot go with `--config`: with `--upload-certs`, the key is in the file.
        let text = if extra.is_empty() {
            cfg.to_string()
        } else {
            cfg.replace(
                "bootstrapTokens:",
                &format!("certificateKey: {}\nbootstrapTokens:", "ab".repeat(32)),
            )
        };
        std::fs::write(root.path().join("cfg.yaml"), text).expect("config");
        let rootfs = root.path().to_string_lossy().into_owned();
        let mut args = vec![
            "--rootfs",
            &rootfs,
            "init",
            "--dry-run",
            "--config",
            "/cfg.yaml",
            "--ignore-preflight-errors=all",
        ];
        args.extend_from_slice(extra);
        let stdout = run_ok(kubeadm, &args);
        let mut left: Vec<String> = walk(root.path());
        left.sort();
        (stdout, left)
    };
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    for extra in [&[][..], &["--upload-certs"]] {
        let (theirs, _) = run(&upstream_kubeadm(), extra);
        let (mine, left) = run(&ours, extra);
        let (want, got) = (dry_run_tail(&theirs), dry_run_tail(&mine));
        assert!(want.lines().count() > 1000, "too little compared:\n{want}");
        // The upload-certs token is random.
        let (want, got) = (mask_random(&want), mask_random(&got));
        assert!(want == got, "dry-run output differs:\n{}", diff(&want, &got));
        if !extra.is_empty() {
            assert!(mine.contains("--control-plane --certificate-key abab"), "{mine}");
        }
        assert_eq!(left, ["cfg.yaml"], "the dry run left files behind");
    }
}

/// `kubeadm init --dry-run` driven by flags alone, as most people run it, on 29 sets of flags
/// (every flag of `init` that changes what it writes or creates), compared with upstream's whole
/// output: the certificates' names, the files, every API object, the join text. Upstream's flag
/// defaults differ from its config defaults in places (the bootstrap token's description), so a
/// config-file comparison does not cover this.
#[test]
fn init_dry_run_from_flags_prints_as_upstream() {
    const SETS: &[&str] = &[
        "",
        "--pod-network-cidr=10.244.0.0/16 --service-cidr=10.112.0.0/12 --service-dns-domain=k8s.example",
        "--control-plane-endpoint=lb.example:8443 --upload-certs --certificate-key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "--control-plane-endpoint=10.0.0.100 --upload-certs",
        "--upload-certs --skip-certificate-key-print",
        "--apiserver-advertise-address=10.1.2.3 --apiserver-bind-port=7443",
        "--apiserver-cert-extra-sans=api.example,10.9.9.9,*.wild.example",
        "--node-name=Master-1.example --cri-socket=unix:///run/crio/crio.sock",
        "--cri-socket=/run/containerd/containerd.sock",
        "--cri-socket=unix:run/containerd/containerd.sock",
        "--token=abcdef.0123456789abcdef --token-ttl=0",
        "--token-ttl=72h30m",
        "--skip-token-print",
        "--image-repository=registry.example/k8s",
        "--image-repository=k8s.gcr.io",
        "--kubernetes-version=v1.25.15",
        "--kubernetes-version=1.25.3",
        "--kubernetes-version=stable-1.25",
        "--kubernetes-version=ci/latest-1.25 --image-repository=registry.example/ci",
        "--feature-gates=PublicKeysECDSA=true",
        "--feature-gates=UnversionedKubeletConfigMap=false",
        "--skip-phases=addon/kube-proxy",
        "--skip-phases=addon/coredns,mark-control-plane,bootstrap-token",
        "--cert-dir=/srv/pki",
        "--pod-network-cidr=10.244.0.0/16,fd00:10:244::/56 --service-cidr=10.96.0.0/16,fd00:10:96::/112 --apiserver-advertise-address=10.1.2.3",
        "--apiserver-advertise-address=fd00::10 --service-cidr=fd00:10:96::/112 --pod-network-cidr=fd00:10:244::/56",
        // Upstream does not check the advertise address's family against the ranges': neither do we.
        "--apiserver-advertise-address=2001:db8::10 --service-cidr=10.96.0.0/12",
        "--apiserver-advertise-address=10.1.2.3 --service-cidr=fd00:10:96::/112 --pod-network-cidr=fd00:10:244::/56",
        "--token=abcdef.0123456789abcdef --token-ttl=2h --apiserver-advertise-address=10.0.0.1 --node-name=node1 \
         --cri-socket=unix:///var/run/containerd/containerd.sock --kubernetes-version=v1.25.16 \
         --control-plane-endpoint=cp.example:6443 --pod-network-cidr=10.244.0.0/16 --service-cidr=10.96.0.0/16 \
         --service-dns-domain=cluster.example --upload-certs --skip-phases=addon/kube-proxy \
         --feature-gates=PublicKeysECDSA=true --image-repository=registry.example \
         --apiserver-cert-extra-sans=cp.example",
    ];
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let upstream = upstream_kubeadm();
    let run = |kubeadm: &Path, set: &str| {
        let root = tempfile::tempdir().expect("root");
        let rootfs = root.path().to_string_lossy().into_owned();
        let mut args = vec![
            "--rootfs",
            &rootfs,
            "init",
            "--dry-run",
            "--ignore-preflight-errors=all",
        ];
        if !set.contains("--kubernetes-version") {
            args.push("--kubernetes-version=v1.25.16");
        }
        args.extend(set.split_whitespace());
        let stdout = run_ok(kubeadm, &args);
        // Upstream's dry run leaves its temporary folder behind; ours writes nothing.
        if kubeadm == ours {
            let left = walk(root.path());
            assert!(left.is_empty(), "flags {set:?}: the dry run left {left:?}");
        }
        stdout
    };
    // Each set on both binaries at once: key generation makes a run take seconds.
    let outcomes: Vec<(String, String)> = SETS
        .iter()
        .map(|set| {
            std::thread::scope(|s| {
                let theirs = s.spawn(|| run(&upstream, set));
                let mine = run(&ours, set);
                (theirs.join().expect("upstream run"), mine)
            })
        })
        .collect();
    let mut failures = Vec::new();
    for (set, (theirs, mine)) in SETS.iter().zip(&outcomes) {
        let (want, got) = (dry_run_whole(theirs), dry_run_whole(mine));
        assert!(
            want.lines().count() > 300,
            "too little compared for {set:?}:\n{want}"
        );
        if want != got {
            failures.push(format!("flags {set:?}:\n{}", diff(&want, &got)));
        }
    }
    // base64 of "The default bootstrap token generated by 'kubeadm init'.", upstream's flag default.
    assert!(
        outcomes[0].0.contains(
            "description: VGhlIGRlZmF1bHQgYm9vdHN0cmFwIHRva2VuIGdlbmVyYXRlZCBieSAna3ViZWFkbSBpbml0Jy4="
        ),
        "upstream's token Secret changed:\n{}",
        outcomes[0].0
    );
    assert!(
        failures.is_empty(),
        "{} of {} flag sets differ:\n{}",
        failures.len(),
        SETS.len(),
        failures.join("\n")
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(
                walk(&p)
                    .into_iter()
                    .map(|s| format!("{}/{s}", e.file_name().to_string_lossy())),
            );
            out.push(format!("{}/", e.file_name().to_string_lossy()));
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// `kubelet-finalize all` once the kubelet has rotated its certificate: the same kubelet.conf
/// (byte for byte) and output as upstream, from the same kubelet.conf; without the rotated
/// certificate nothing happens; without kubelet.conf, upstream's error.
#[test]
fn kubelet_finalize_rewrites_kubelet_conf_as_upstream() {
    let cfg = "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.1
nodeRegistration:
  name: node1
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
";
    let upstream = upstream_kubeadm();
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let run = |kubeadm: &Path, root: &Path, args: &[&str]| {
        let rootfs = root.to_string_lossy().into_owned();
        let out = Command::new(kubeadm)
            .args(["--rootfs", &rootfs, "init", "phase"])
            .args(args)
            .args(["--config", "/cfg.yaml"])
            .env_clear()
            .output()
            .expect("run kubeadm");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            // Upstream's klog warnings about the host are not this phase's.
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| !l.starts_with('W'))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    };
    let setup = |with_conf: bool, with_pem: bool| {
        let root = tempfile::tempdir().expect("root");
        std::fs::write(root.path().join("cfg.yaml"), cfg).expect("config");
        if with_pem {
            let pki = root.path().join("var/lib/kubelet/pki");
            std::fs::create_dir_all(&pki).expect("pki");
            std::fs::write(pki.join("kubelet-client-current.pem"), "pem").expect("pem");
        }
        if with_conf {
            for phase in [&["certs", "ca"][..], &["kubeconfig", "kubelet"]] {
                let (code, _, err) = run(&upstream, root.path(), phase);
                assert_eq!(code, Some(0), "{err}");
            }
        }
        root
    };
    for (with_conf, with_pem) in [(true, true), (true, false), (false, true)] {
        let theirs = setup(with_conf, with_pem);
        let mine = tempfile::tempdir().expect("root");
        // The same starting files for both.
        let copy = Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", theirs.path().display()))
            .arg(mine.path())
            .status()
            .expect("cp");
        assert!(copy.success());
        let want = run(&upstream, theirs.path(), &["kubelet-finalize", "all"]);
        let got = run(&ours, mine.path(), &["kubelet-finalize", "all"]);
        assert_eq!(want, got, "conf {with_conf}, pem {with_pem}");
        let conf = |root: &Path| std::fs::read(root.join("etc/kubernetes/kubelet.conf")).ok();
        assert!(conf(theirs.path()) == conf(mine.path()), "kubelet.conf differs");
        let rotated = conf(mine.path()).is_some_and(|c| {
            String::from_utf8_lossy(&c)
                .contains("client-key: /var/lib/kubelet/pki/kubelet-client-current.pem")
        });
        assert_eq!(rotated, with_conf && with_pem);
    }
}
