//! `HTTPProxy` and `HTTPProxyCIDR` against upstream kubeadm v1.25.16: upstream runs `init phase
//! preflight --ignore-preflight-errors=all` with proxy variables in its environment; we evaluate the
//! same checks of the same configuration with those variables in a scripted host, and both must print
//! the same `[WARNING HTTPProxy…]` lines.
//!
//! Upstream's preflight only reads the host; its configuration here points at harmless paths (a temp
//! etcd dir, a missing CRI socket, `imagePullPolicy: Never`, node name `localhost`).
//!
//! IPv4 CIDRs are left out of the `HTTPProxyCIDR` comparison: the oracle binary is built with a Go
//! whose url.Parse rejects the `https://[10.96.0.1]:1234/` upstream builds, while the released binary
//! (and kubeadm-rs) accept it; the table-driven tests cover that case.

mod preflight_fakes;

use kubeadm_testkit::fakes::FakeHost;

use kubeadm_effects::host_probe::ProxyEnv;
use kubeadm_phases::preflight::{Check, IgnoreSet, Stream, init_node_checks, run_checks};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};
use preflight_fakes::{FakeRuntime, load};

/// The `\t[WARNING HTTPProxy…]` lines of a text, in order.
fn proxy_lines(text: &str, with_cidr: bool) -> Vec<String> {
    text.lines()
        .filter(|l| {
            l.starts_with("\t[WARNING HTTPProxy]:")
                || (with_cidr && l.starts_with("\t[WARNING HTTPProxyCIDR]:"))
        })
        .map(str::to_string)
        .collect()
}

/// (advertise address, service subnet, pod subnet, environment)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[test]
fn proxy_warnings_match_upstream() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: &[Case] = &[
        ("10.0.0.1", "10.96.0.0/12", "", &[]),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("HTTPS_PROXY", "http://proxy.corp:3128")],
        ),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("https_proxy", "proxy.corp:3128")],
        ),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "10.0.0.1")],
        ),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "10.0.0.0/8")],
        ),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[
                ("HTTPS_PROXY", "http://p:1"),
                ("no_proxy", "example.com, 10.0.0.1:443"),
            ],
        ),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "10.0.0.1:6443")],
        ),
        ("10.0.0.1", "10.96.0.0/12", "", &[("HTTP_PROXY", "http://p:1")]),
        ("127.0.0.1", "10.96.0.0/12", "", &[("HTTPS_PROXY", "http://p:1")]),
        (
            "10.0.0.1",
            "10.96.0.0/12",
            "",
            &[("HTTPS_PROXY", "http://user:pw@p:1/")],
        ),
        (
            "fd00::1",
            "fd00:10::/108",
            "fd00:20::/64",
            &[("HTTPS_PROXY", "http://p:1")],
        ),
        (
            "fd00::1",
            "fd00:10::/108",
            "fd00:20::/64",
            &[
                ("HTTPS_PROXY", "http://p:1"),
                ("NO_PROXY", "fd00:10::/108,fd00::1"),
            ],
        ),
        (
            "fd00::1",
            "fd00:10::/108",
            "fd00:20::/64",
            &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "fd00::/16")],
        ),
        (
            "fd00::1",
            "fd00:10::/108",
            "",
            &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "[fd00::1]:1234")],
        ),
    ];
    let mut failures = Vec::new();
    let mut compared = 0;
    for (i, (address, service, pod, env)) in cases.iter().enumerate() {
        let pod_line = if pod.is_empty() {
            String::new()
        } else {
            format!("  podSubnet: {pod}\n")
        };
        let config = format!(
            "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: {address}
nodeRegistration:
  name: localhost
  criSocket: unix://{dir}/none.sock
  imagePullPolicy: Never
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
etcd:
  local:
    dataDir: {dir}/etcd
networking:
  serviceSubnet: {service}
{pod_line}",
            dir = dir.path().display()
        );
        let path = dir.path().join(format!("cfg{i}.yaml"));
        std::fs::write(&path, &config).expect("config");
        let up = run(
            &upstream_kubeadm(),
            &[
                "init",
                "phase",
                "preflight",
                "--config",
                &path.display().to_string(),
                "--ignore-preflight-errors=all",
            ],
            dir.path(),
            env,
        );

        let cfg = load(&config);
        let get = |names: &[&str]| {
            names
                .iter()
                .filter_map(|n| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.to_string()))
                .find(|v| !v.is_empty())
                .unwrap_or_default()
        };
        let host = FakeHost {
            proxy_env: ProxyEnv {
                http_proxy: get(&["HTTP_PROXY", "http_proxy"]),
                https_proxy: get(&["HTTPS_PROXY", "https_proxy"]),
                no_proxy: get(&["NO_PROXY", "no_proxy"]),
                cgi: false,
            },
            ..FakeHost::default()
        };
        let checks: Vec<Check> = init_node_checks(&cfg)
            .into_iter()
            .filter(|c| matches!(c, Check::HttpProxy { .. } | Check::HttpProxyCidr { .. }))
            .collect();
        let ours = run_checks(&checks, &host, &FakeRuntime::default(), &IgnoreSet::new(["all"]));
        let with_cidr = address.contains(':');
        let want = proxy_lines(&up.stderr, with_cidr);
        let got = proxy_lines(&ours.text(Stream::Stderr), with_cidr);
        compared += want.len();
        if want != got {
            failures.push(format!(
                "case {i} {address} {env:?}:\n{}\nupstream stderr:\n{}",
                diff(&want.join("\n"), &got.join("\n")),
                up.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Most cases go through a proxy: a comparison of empty lists would prove nothing.
    assert!(compared >= 9, "only {compared} warnings compared");
}
