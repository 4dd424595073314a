//! `kubeadm init phase addon {coredns,kube-proxy} --print-manifest`: ours against upstream's output,
//! byte for byte, over flag combinations.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, defaulted_init_config};
use kubeadm_api::v1beta3::{BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_core::addons::{Addon, KubeProxyInputs, coredns_manifest, kube_proxy_manifest, print_manifest};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

/// The flag sets compared; `--kubernetes-version` is always given so nothing is fetched.
const CASES: &[&[&str]] = &[
    &["--apiserver-advertise-address=10.0.0.1"],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--kubernetes-version=v1.25.3",
    ],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--image-repository=my.registry.io/k8s",
        "--service-cidr=10.200.0.0/16",
        "--service-dns-domain=corp.example",
        "--pod-network-cidr=10.244.0.0/16",
    ],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--control-plane-endpoint=cp.example.com",
    ],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--control-plane-endpoint=cp.example.com:8443",
        "--apiserver-bind-port=7443",
    ],
    &[
        "--apiserver-advertise-address=fd00::1",
        "--service-cidr=fd02::/112",
        "--pod-network-cidr=fd01::/48",
    ],
    &[
        "--apiserver-advertise-address=fd00::1",
        "--service-cidr=10.96.0.0/16,fd02::/112",
        "--pod-network-cidr=10.244.0.0/16,fd01::/48",
        "--control-plane-endpoint=[fd00::10]:6443",
    ],
    &[
        "--apiserver-advertise-address=192.168.1.10",
        "--feature-gates=PublicKeysECDSA=true,RootlessControlPlane=true",
        "--image-repository=registry.k8s.io",
    ],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--kubernetes-version=v1.25.0-rc.1+abc",
    ],
    &[
        "--apiserver-advertise-address=10.0.0.1",
        "--control-plane-endpoint=10.0.0.100",
    ],
];

/// Builds the configuration upstream builds from these flags.
fn config_from_flags(flags: &[&str]) -> InitConfig {
    let mut init = InitConfiguration::default();
    let mut cluster = ClusterConfiguration {
        kubernetes_version: "v1.25.16".to_string(),
        ..ClusterConfiguration::default()
    };
    for flag in flags {
        let (name, value) = flag
            .trim_start_matches("--")
            .split_once('=')
            .expect("--flag=value");
        let value = value.to_string();
        match name {
            "apiserver-advertise-address" => init.local_api_endpoint.advertise_address = value,
            "apiserver-bind-port" => init.local_api_endpoint.bind_port = value.parse().expect("port"),
            "kubernetes-version" => cluster.kubernetes_version = value,
            "image-repository" => cluster.image_repository = value,
            "service-cidr" => cluster.networking.service_subnet = value,
            "service-dns-domain" => cluster.networking.dns_domain = value,
            "pod-network-cidr" => cluster.networking.pod_subnet = value,
            "control-plane-endpoint" => cluster.control_plane_endpoint = value,
            "feature-gates" => {
                cluster.feature_gates = value
                    .split(',')
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').expect("gate=bool");
                        (k.to_string(), v == "true")
                    })
                    .collect::<BTreeMap<_, _>>();
            }
            other => panic!("unhandled flag {other}"),
        }
    }
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
    defaulted_init_config(init, cluster, &mut inputs).expect("valid flags")
}

/// The flags each addon phase accepts (upstream rejects the others).
fn accepted(addon: &str, flags: &[&'static str]) -> Vec<&'static str> {
    let names: &[&str] = match addon {
        "coredns" => &[
            "feature-gates",
            "image-repository",
            "kubernetes-version",
            "service-cidr",
            "service-dns-domain",
        ],
        _ => &[
            "apiserver-advertise-address",
            "apiserver-bind-port",
            "control-plane-endpoint",
            "image-repository",
            "kubernetes-version",
            "pod-network-cidr",
        ],
    };
    flags
        .iter()
        .copied()
        .filter(|f| names.iter().any(|n| f.starts_with(&format!("--{n}="))))
        .collect()
}

/// Upstream's standard output, and the messages of the klog warnings on its standard error.
fn upstream(addon: &str, flags: &[&str]) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["init", "phase", "addon", addon, "--print-manifest"];
    if !flags.iter().any(|f| f.starts_with("--kubernetes-version")) {
        args.push("--kubernetes-version=v1.25.16");
    }
    args.extend_from_slice(flags);
    let out = run(&upstream_kubeadm(), &args, dir.path(), &[]);
    assert_eq!(out.code, 0, "upstream {args:?} failed: {}", out.stderr);
    let warnings = out
        .stderr
        .lines()
        .filter(|l| l.starts_with('W'))
        .filter_map(|l| l.split_once("] ").map(|(_, m)| m.to_string()))
        .collect();
    (out.stdout, warnings)
}

#[test]
fn coredns_manifest_matches_upstream() {
    for flags in CASES {
        let flags = &accepted("coredns", flags);
        let (want, warnings) = upstream("coredns", flags);
        let cfg = config_from_flags(flags);
        let got = coredns_manifest(&cfg.cluster, &cfg.resolved).expect("manifest");
        assert!(want == got, "coredns {flags:?}:\n{}", diff(&want, &got));
        let printed = print_manifest(Addon::CoreDns, &cfg).expect("print");
        assert_eq!((printed.text, printed.warnings), (want, warnings), "{flags:?}");
    }
}

#[test]
fn kube_proxy_manifest_matches_upstream() {
    for flags in CASES {
        let flags = &accepted("kube-proxy", flags);
        let (want, warnings) = upstream("kube-proxy", flags);
        let cfg = config_from_flags(flags);
        let inputs = KubeProxyInputs {
            cluster: &cfg.cluster,
            resolved: &cfg.resolved,
            local_api_endpoint: &cfg.init.local_api_endpoint,
            config: cfg
                .component_configs
                .kube_proxy
                .as_ref()
                .expect("kube-proxy config"),
        };
        let got = kube_proxy_manifest(&inputs).expect("manifest");
        assert!(want == got, "kube-proxy {flags:?}:\n{}", diff(&want, &got));
        let printed = print_manifest(Addon::KubeProxy, &cfg).expect("print");
        assert_eq!((printed.text, printed.warnings), (want, warnings), "{flags:?}");
    }
}

#[test]
fn print_manifest_refuses_config_upstream() {
    // Upstream rejects --config with --print-manifest; a caller must not offer a config-file path
    // to these builders either. This pins the upstream behaviour the CLI has to reproduce.
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n",
    )
    .expect("write");
    let cfg = cfg.to_string_lossy().into_owned();
    let out = run(
        &upstream_kubeadm(),
        &[
            "init",
            "phase",
            "addon",
            "coredns",
            "--print-manifest",
            "--config",
            &cfg,
        ],
        dir.path(),
        &[],
    );
    assert_ne!(out.code, 0, "upstream accepted --config with --print-manifest");
}
