//! User-supplied kubelet and kube-proxy configs: decoded and defaulted by us, compared with what
//! upstream's `init --dry-run` would write (`/var/lib/kubelet/config.yaml` and the `config.conf` of
//! the kube-proxy ConfigMap).

use kubeadm_api::componentconfig::{kube_proxy_yaml, kubelet_yaml};
use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::load_init_config;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

/// The two texts upstream's dry run prints, de-indented.
fn upstream(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.yaml"), text).expect("write");
    // Upstream's dry run still writes under /etc/kubernetes/tmp: chroot it into the temporary
    // directory with its global --rootfs flag (needs root), so the host is never touched.
    let root = dir.path().to_string_lossy().into_owned();
    let args = [
        "--rootfs",
        &root,
        "init",
        "--dry-run",
        "--config",
        "/config.yaml",
        "--skip-phases=preflight",
        "--ignore-preflight-errors=all",
    ];
    let r = run(&upstream_kubeadm(), &args, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let block = |start: &str, indent: &str, end: &str| -> String {
        let mut lines = r.stdout.lines().skip_while(|l| *l != start).skip(1);
        let mut out = String::new();
        for l in lines.by_ref() {
            if l.starts_with(end) {
                break;
            }
            match l.strip_prefix(indent) {
                Some(rest) => {
                    out.push_str(rest);
                    out.push('\n');
                }
                None => break,
            }
        }
        out
    };
    let kubelet = block(
        "[dryrun] Would write file \"/var/lib/kubelet/config.yaml\" with content:",
        "\t",
        "[",
    );
    let proxy = block("\t  config.conf: |-", "\t    ", "\t  kubeconfig.conf");
    // `|-` strips the final newline; ours ends with one.
    (kubelet, proxy)
}

fn ours(text: &str) -> (String, String) {
    let host = HostFacts::default();
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let cfg = load_init_config("config.yaml", text, &mut inputs).expect("loads");
    let cc = cfg.component_configs;
    (
        kubelet_yaml(cc.kubelet.as_ref().expect("kubelet")),
        kube_proxy_yaml(cc.kube_proxy.as_ref().expect("kube-proxy")),
    )
}

const BASE: &str = "apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.3
networking:
  serviceSubnet: 10.100.0.0/16
  podSubnet: 10.244.0.0/16
  dnsDomain: example.local
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint: {advertiseAddress: 10.0.0.5}
nodeRegistration: {name: n1, criSocket: 'unix:///x.sock'}
";

#[test]
fn component_configs_match_upstream() {
    let cases = [
        ("none given", String::new()),
        (
            "kubelet and kube-proxy given",
            "---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
maxPods: 50
evictionHard:
  memory.available: 100Mi
systemReserved:
  cpu: 500m
featureGates:
  GracefulNodeShutdown: true
shutdownGracePeriod: 30s
memoryThrottlingFactor: 0.8
logging:
  format: json
  flushFrequency: 5000000000
reservedMemory:
- numaNode: 0
  limits:
    memory: 1Gi
healthzPort: 10249
clusterDNS: [10.100.0.53]
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
clusterCIDR: 10.245.0.0/16
clientConnection:
  qps: 5
  burst: 10
ipvs:
  strictARP: true
  excludeCIDRs: [10.0.0.0/8]
conntrack:
  maxPerCore: 0
nodePortAddresses: []
"
            .to_string(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, extra) in &cases {
        let text = format!("{BASE}{extra}");
        let (want_kubelet, want_proxy) = upstream(&text);
        let (got_kubelet, got_proxy) = ours(&text);
        assert!(
            want_kubelet.contains("kind: KubeletConfiguration")
                && want_proxy.contains("kind: KubeProxyConfiguration"),
            "{name}: upstream output not found"
        );
        if !extra.is_empty() {
            assert!(
                want_kubelet.contains("maxPods: 50") && want_proxy.contains("mode: ipvs"),
                "{name}"
            );
        }
        if want_kubelet != got_kubelet {
            failures.push(format!("{name} kubelet:\n{}", diff(&want_kubelet, &got_kubelet)));
        }
        if want_proxy != got_proxy {
            failures.push(format!("{name} kube-proxy:\n{}", diff(&want_proxy, &got_proxy)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
