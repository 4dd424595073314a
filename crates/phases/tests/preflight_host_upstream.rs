//! The real host probe and kubeadm-core's preflight against upstream kubeadm v1.25.16 on this very
//! host: both run `init phase preflight` with the same configuration (harmless paths: a temp etcd data
//! dir, a missing CRI socket, `imagePullPolicy: Never`, the node name `localhost` so that resolution
//! stays in /etc/hosts, the API server port held by this test so `Port-<n>` fails for both) and must
//! report the same checks with the same messages, in the same order.
//!
//! Known, intended differences, left out of the comparison and asserted separately:
//! - `CRI`: upstream runs it only when `crictl` is in PATH and words it with crictl's output; kubeadm-rs
//!   always asks the runtime over gRPC.
//! - `FileExisting-crictl`: kubeadm-rs does not need crictl, so it never warns.
//! - `HTTPProxyCIDR` with an IPv4 CIDR: the oracle is built with a Go whose url.Parse rejects
//!   `https://[10.96.0.1]:1234/` (`invalid IP-literal`); the released v1.25.16 accepts it and passes.
//!
//! Upstream's preflight only reads: the test also checks that neither run writes to the paths it looks
//! at.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::load_init_config;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_host::cri::CriClient;
use kubeadm_host::host_probe::RealHostProbe;
use kubeadm_phases::preflight::{IgnoreSet, Stream, run_init_preflight};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

/// (check name, message) in the order printed.
type Lines = Vec<(String, String)>;

/// The `\t[WARNING Name]: msg` and `\t[ERROR Name]: msg` entries of a text; a message continues on the
/// following lines until the next entry or a line that is clearly something else.
fn entries(text: &str, kind: &str) -> Lines {
    let mut out: Lines = Vec::new();
    let mut current: Option<usize> = None;
    let prefix = format!("\t[{kind} ");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(&prefix)
            && let Some((name, msg)) = rest.split_once("]: ")
        {
            out.push((name.to_string(), msg.to_string()));
            current = Some(out.len() - 1);
            continue;
        }
        let other = line.starts_with('\t')
            || line.starts_with('[')
            || line.starts_with("error execution")
            || line.starts_with("To see the stack trace")
            || (line.len() > 5
                && line.starts_with(['W', 'I', 'E'])
                && line[1..5].bytes().all(|b| b.is_ascii_digit()));
        match current {
            Some(i) if !other => {
                out[i].1.push('\n');
                out[i].1.push_str(line);
            }
            _ => current = None,
        }
    }
    out
}

fn comparable(lines: &Lines) -> Lines {
    lines
        .iter()
        .filter(|(name, msg)| {
            name != "CRI"
                && name != "FileExisting-crictl"
                && !(name == "HTTPProxyCIDR" && msg.contains("invalid IP-literal"))
        })
        .cloned()
        .collect()
}

/// Path → (is dir, length, modification time) below each root, to see that nothing was written.
fn snapshot(roots: &[&Path]) -> BTreeMap<String, (bool, u64, Option<std::time::SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<std::path::PathBuf> = roots.iter().map(|p| p.to_path_buf()).collect();
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        out.insert(p.display().to_string(), (m.is_dir(), m.len(), m.modified().ok()));
        if m.is_dir()
            && let Ok(rd) = std::fs::read_dir(&p)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    out
}

/// The proxy and PATH settings of this process, handed to upstream so both read the same environment.
fn shared_env() -> Vec<(String, String)> {
    [
        "PATH",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "NO_PROXY",
        "no_proxy",
    ]
    .iter()
    .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
    .collect()
}

#[test]
fn preflight_on_this_host_reports_what_upstream_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let etcd = dir.path().join("etcd");
    std::fs::create_dir(&etcd).expect("etcd dir");
    std::fs::write(etcd.join("member"), "x").expect("etcd dir not empty");
    // Held for the whole test: the API server port is busy for both runs.
    let busy = TcpListener::bind(("::", 0))
        .or_else(|_| TcpListener::bind(("0.0.0.0", 0)))
        .expect("listener");
    let port = busy.local_addr().expect("addr").port();
    let socket = format!("unix://{}/none.sock", dir.path().display());
    let config = format!(
        "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.1
  bindPort: {port}
nodeRegistration:
  name: localhost
  criSocket: {socket}
  imagePullPolicy: Never
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
etcd:
  local:
    dataDir: {}
",
        etcd.display()
    );
    let cfg_path = dir.path().join("cfg.yaml");
    std::fs::write(&cfg_path, &config).expect("config");

    let watched = [
        Path::new("/etc/kubernetes"),
        Path::new("/var/lib/kubelet"),
        Path::new("/var/lib/etcd"),
        dir.path(),
    ];
    let before = snapshot(&watched);

    let host = HostFacts::default();
    let mut token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let cfg = load_init_config("cfg.yaml", &config, &mut inputs).expect("valid config");
    let runtime = CriClient::new(&socket).expect("endpoint");
    let env = shared_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let cfg_arg = cfg_path.display().to_string();

    for ignore in [None, Some("all")] {
        let mut args = vec!["init", "phase", "preflight", "--config", cfg_arg.as_str()];
        let flag;
        if let Some(i) = ignore {
            flag = format!("--ignore-preflight-errors={i}");
            args.push(&flag);
        }
        let up = run(&upstream_kubeadm(), &args, dir.path(), &env);
        let ours = run_init_preflight(&cfg, &IgnoreSet::new(ignore), &RealHostProbe, &runtime, false);
        let our_stderr = ours.text(Stream::Stderr);
        let our_errors = ours.error.as_ref().map(|e| e.to_string()).unwrap_or_default();

        let up_warnings = entries(&up.stderr, "WARNING");
        let our_warnings = entries(&our_stderr, "WARNING");
        let render = |l: &Lines| l.iter().map(|(n, m)| format!("{n}: {m}\n")).collect::<String>();
        assert_eq!(
            comparable(&up_warnings),
            comparable(&our_warnings),
            "warnings with ignore {ignore:?}:\n{}\nupstream stderr:\n{}",
            diff(
                &render(&comparable(&up_warnings)),
                &render(&comparable(&our_warnings))
            ),
            up.stderr
        );
        let up_errors = entries(&up.stderr, "ERROR");
        let ours_errors = entries(&our_errors, "ERROR");
        assert_eq!(
            comparable(&up_errors),
            comparable(&ours_errors),
            "errors with ignore {ignore:?}:\n{}\nupstream stderr:\n{}",
            diff(
                &render(&comparable(&up_errors)),
                &render(&comparable(&ours_errors))
            ),
            up.stderr
        );
        // The checks this test arranges to fail must be among them, or it compares nothing.
        let all: Lines = [up_warnings, up_errors].concat();
        if nix_is_root() {
            assert!(
                all.iter().any(|(n, _)| *n == format!("Port-{port}")),
                "{}",
                up.stderr
            );
            assert!(
                all.iter()
                    .any(|(n, _)| n == "DirAvailable--var-lib-etcd" || n.starts_with("DirAvailable-")),
                "{}",
                up.stderr
            );
        }
        // kubeadm-rs always asks the runtime; the socket does not exist.
        let cri = ours.results.iter().find(|r| r.name == "CRI").expect("CRI check");
        assert!(!cri.passed(), "{cri:?}");
        assert!(
            ours.results
                .iter()
                .any(|r| r.name == "FileExisting-crictl" && r.passed())
        );
        // Both print the same progress lines on stdout (the image lines only when all is ignored).
        assert_eq!(
            up.stdout,
            ours.text(Stream::Stdout),
            "stdout with ignore {ignore:?}"
        );
    }
    drop(busy);
    assert_eq!(before, snapshot(&watched), "preflight wrote to the host");
}

fn nix_is_root() -> bool {
    use kubeadm_effects::host_probe::HostProbe;
    RealHostProbe.uid() == 0
}
