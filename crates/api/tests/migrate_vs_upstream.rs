//! `kubeadm config migrate --old-config f`: our output against upstream's, byte for byte.

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::migrate::migrate;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

fn upstream(text: &str) -> kubeadm_testkit::oracle::Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.yaml");
    std::fs::write(&path, text).expect("write");
    let path = path.to_string_lossy().into_owned();
    run(
        &upstream_kubeadm(),
        &["config", "migrate", "--old-config", &path],
        dir.path(),
        &[],
    )
}

fn ours(text: &str) -> Result<String, String> {
    // Every case names its node, address and CRI socket, so upstream's host lookups do not matter.
    let host = HostFacts::default();
    let mut new_token = || BootstrapTokenString::parse("zzzzzz.zzzzzzzzzzzzzzzz").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    migrate("old.yaml", text, &mut inputs, &|_| false)
        .map(|m| m.text)
        .map_err(|e| e.to_string())
}

const INIT_V1BETA2: &str = "apiVersion: kubeadm.k8s.io/v1beta2
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
  description: first
  ttl: 1h30m
- token: bcdefa.0123456789abcdef
  ttl: null
  usages: [signing, authentication]
  groups: [system:bootstrappers:extra]
localAPIEndpoint:
  advertiseAddress: 10.0.0.5
  bindPort: 7443
nodeRegistration:
  name: Node-A
  criSocket: /run/containerd/containerd.sock
  taints: []
  kubeletExtraArgs:
    v: \"4\"
  ignorePreflightErrors: [Swap]
certificateKey: abc
";

const CLUSTER_V1BETA2: &str = "apiVersion: kubeadm.k8s.io/v1beta2
kind: ClusterConfiguration
kubernetesVersion: 1.25.3
controlPlaneEndpoint: cp.example
useHyperKubeImage: false
dns:
  type: CoreDNS
  imageTag: v1.9.3
networking:
  podSubnet: 10.244.0.0/16
apiServer:
  certSANs: [A.example, 10.0.0.9]
  extraArgs:
    audit-log-maxage: \"2\"
  extraVolumes:
  - name: audit
    hostPath: /var/log/audit
    mountPath: /var/log/audit
    readOnly: true
    pathType: DirectoryOrCreate
  timeoutForControlPlane: 90s
controllerManager:
  extraArgs:
    bind-address: 0.0.0.0
etcd:
  local:
    dataDir: /data/etcd
    serverCertSANs: [etcd.example]
    extraArgs:
      listen-metrics-urls: http://0.0.0.0:2381
featureGates:
  PublicKeysECDSA: true
";

const JOIN_V1BETA2: &str = "apiVersion: kubeadm.k8s.io/v1beta2
kind: JoinConfiguration
nodeRegistration:
  name: node-b
  criSocket: unix:///x.sock
discovery:
  bootstrapToken:
    token: abcdef.0123456789abcdef
    apiServerEndpoint: 10.0.0.5:6443
    caCertHashes: [sha256:aaaa]
  timeout: 2m
controlPlane:
  localAPIEndpoint:
    advertiseAddress: 10.0.0.6
  certificateKey: abc
";

const EXTERNAL_ETCD_V1BETA3: &str = "apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
etcd:
  external:
    endpoints: [https://e1:2379]
    caFile: /ca.crt
    certFile: /c.crt
    keyFile: /c.key
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
bootstrapTokens: [{token: abcdef.0123456789abcdef}]
localAPIEndpoint: {advertiseAddress: 10.0.0.5}
nodeRegistration: {name: n1, criSocket: 'unix:///x.sock'}
skipPhases: [addon/kube-proxy]
patches: {directory: /patches}
";

#[test]
fn migrate_matches_upstream() {
    let cases = [
        ("init + cluster", format!("{INIT_V1BETA2}---\n{CLUSTER_V1BETA2}")),
        (
            "cluster only needs node facts",
            format!("{CLUSTER_V1BETA2}---\n{INIT_V1BETA2}"),
        ),
        ("join", JOIN_V1BETA2.to_string()),
        (
            "all three",
            format!("{INIT_V1BETA2}---\n{CLUSTER_V1BETA2}---\n{JOIN_V1BETA2}"),
        ),
        ("external etcd, v1beta3 fields", EXTERNAL_ETCD_V1BETA3.to_string()),
        // Upstream defaults the TTL even when `expires` is set, so this always fails validation.
        (
            "expires",
            INIT_V1BETA2.replace(
                "  description: first\n",
                "  expires: 2030-01-02T03:04:05Z\n  ttl: null\n",
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text) in &cases {
        let want = upstream(text);
        let got = ours(text);
        match got {
            Ok(got) if want.code == 0 && got == want.stdout => {}
            Ok(got) if want.code == 0 => failures.push(format!("{name}:\n{}", diff(&want.stdout, &got))),
            // Validation errors print exactly as upstream's, which exits 3 for them.
            Err(e) if want.code == 3 && want.stderr.lines().any(|l| l == e) => {}
            other => failures.push(format!(
                "{name}: upstream {} {:?}, ours {other:?}",
                want.code, want.stderr
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
