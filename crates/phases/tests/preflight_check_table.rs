//! Every preflight check against a scripted host: passing, warning, failing and ignored. The expected
//! texts are upstream's (cmd/kubeadm/app/preflight/checks.go of v1.25.16 and k8s.io/system-validators
//! v1.8.0), written out from its format strings.

mod preflight_fakes;

use kubeadm_testkit::fakes::FakeHost;

use kubeadm_effects::host_probe::{
    Cgroups, DirEntries, HostProbeError, InitSystemKind, ProxyEnv, ServiceState,
};
use kubeadm_phases::preflight::{Check, IgnoreSet, run_checks};
use preflight_fakes::{FakeRuntime, judge};

/// One row of the table: a check judged on a host changed from the default fake.
struct Case {
    /// What the row is about, for the failure message.
    name: &'static str,
    /// The check under test.
    check: Check,
    /// How the host differs from `FakeHost::default()`.
    host: fn(&mut FakeHost),
    /// The warnings upstream gives, in its words.
    warnings: &'static [&'static str],
    /// The errors upstream gives, in its words.
    errors: &'static [&'static str],
}

fn no_change(_: &mut FakeHost) {}

#[test]
fn every_check_passes_warns_or_fails_in_upstream_words() {
    let cases: Vec<Case> = vec![
        Case {
            name: "root",
            check: Check::IsPrivilegedUser,
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "not root",
            check: Check::IsPrivilegedUser,
            host: |h| h.uid = 1000,
            warnings: &[],
            errors: &["user is not running as root"],
        },
        Case {
            name: "2 cpus",
            check: Check::NumCpu(2),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "1 cpu",
            check: Check::NumCpu(2),
            host: |h| h.num_cpu = 1,
            warnings: &[],
            errors: &["the number of available CPUs 1 is less than the required 2"],
        },
        Case {
            name: "mem ok",
            check: Check::Mem(1700),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "mem low",
            check: Check::Mem(1700),
            host: |h| h.memory_mb = Ok(1024),
            warnings: &[],
            errors: &["the system RAM (1024 MB) is less than the minimum 1700 MB"],
        },
        Case {
            name: "mem unknown",
            check: Check::Mem(1700),
            host: |h| h.memory_mb = Err(HostProbeError::Syscall("operation not permitted".into())),
            warnings: &[],
            errors: &[
                "failed to get system info: operation not permitted",
                "the system RAM (0 MB) is less than the minimum 1700 MB",
            ],
        },
        Case {
            name: "port free",
            check: Check::Port(6443),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "port busy",
            check: Check::Port(6443),
            host: |h| {
                h.ports_in_use.insert(6443);
            },
            warnings: &[],
            errors: &["Port 6443 is in use"],
        },
        Case {
            name: "manifest absent",
            check: Check::FileAvailable {
                path: "/etc/kubernetes/manifests/etcd.yaml".into(),
                label: None,
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "manifest present",
            check: Check::FileAvailable {
                path: "/etc/kubernetes/manifests/etcd.yaml".into(),
                label: None,
            },
            host: |h| {
                h.files
                    .insert("/etc/kubernetes/manifests/etcd.yaml".into(), Vec::new());
            },
            warnings: &[],
            errors: &["/etc/kubernetes/manifests/etcd.yaml already exists"],
        },
        Case {
            name: "etcd dir absent",
            check: Check::DirAvailable("/var/lib/etcd".into()),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "etcd dir empty",
            check: Check::DirAvailable("/var/lib/etcd".into()),
            host: |h| {
                h.dirs.insert("/var/lib/etcd".into(), DirEntries::Empty);
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "etcd dir full",
            check: Check::DirAvailable("/var/lib/etcd".into()),
            host: |h| {
                h.dirs.insert("/var/lib/etcd".into(), DirEntries::NotEmpty);
            },
            warnings: &[],
            errors: &["/var/lib/etcd is not empty"],
        },
        Case {
            name: "etcd dir unreadable",
            check: Check::DirAvailable("/var/lib/etcd".into()),
            host: |h| {
                h.broken_paths.insert(
                    "/var/lib/etcd".into(),
                    "stat /var/lib/etcd: permission denied".into(),
                );
            },
            warnings: &[],
            errors: &["unable to check if /var/lib/etcd is empty: stat /var/lib/etcd: permission denied"],
        },
        Case {
            name: "cert present",
            check: Check::FileExisting {
                path: "/etc/etcd/ca.crt".into(),
                label: Some("ExternalEtcdClientCertificates".into()),
            },
            host: |h| {
                h.files.insert("/etc/etcd/ca.crt".into(), Vec::new());
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "cert missing",
            check: Check::FileExisting {
                path: "/etc/etcd/ca.crt".into(),
                label: Some("ExternalEtcdClientCertificates".into()),
            },
            host: no_change,
            warnings: &[],
            errors: &["/etc/etcd/ca.crt doesn't exist"],
        },
        Case {
            name: "ip_forward 1",
            check: Check::FileContent {
                path: "/proc/sys/net/ipv4/ip_forward".into(),
                content: b"1".to_vec(),
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "ip_forward 0",
            check: Check::FileContent {
                path: "/proc/sys/net/ipv4/ip_forward".into(),
                content: b"1".to_vec(),
            },
            host: |h| {
                h.files
                    .insert("/proc/sys/net/ipv4/ip_forward".into(), b"0\n".to_vec());
            },
            warnings: &[],
            errors: &["/proc/sys/net/ipv4/ip_forward contents are not set to 1"],
        },
        Case {
            name: "bridge missing",
            check: Check::FileContent {
                path: "/proc/sys/net/bridge/bridge-nf-call-iptables".into(),
                content: b"1".to_vec(),
            },
            host: |h| {
                h.files.remove("/proc/sys/net/bridge/bridge-nf-call-iptables");
            },
            warnings: &[],
            errors: &["/proc/sys/net/bridge/bridge-nf-call-iptables does not exist"],
        },
        Case {
            name: "conntrack there",
            check: Check::InPath {
                exe: "conntrack".into(),
                mandatory: true,
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "conntrack missing",
            check: Check::InPath {
                exe: "conntrack".into(),
                mandatory: true,
            },
            host: |h| {
                h.binaries.remove("conntrack");
            },
            warnings: &[],
            errors: &["conntrack not found in system path"],
        },
        Case {
            name: "socat missing",
            check: Check::InPath {
                exe: "socat".into(),
                mandatory: false,
            },
            host: |h| {
                h.binaries.remove("socat");
            },
            warnings: &["socat not found in system path"],
            errors: &[],
        },
        Case {
            name: "crictl missing: not needed",
            check: Check::Crictl,
            host: |h| {
                h.binaries.remove("crictl");
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "swap off",
            check: Check::Swap,
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "no /proc/swaps",
            check: Check::Swap,
            host: |h| h.swaps = None,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "swap on",
            check: Check::Swap,
            host: |h| h.swaps = Some(vec!["Filename".into(), "/swap.img file 1 0 -2".into()]),
            warnings: &[
                "swap is enabled; production deployments should disable swap unless testing the NodeSwap feature gate of the kubelet",
            ],
            errors: &[],
        },
        Case {
            name: "hostname resolves",
            check: Check::Hostname("node1".into()),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "hostname unknown",
            check: Check::Hostname("node2".into()),
            host: no_change,
            warnings: &[
                "hostname \"node2\" could not be reached",
                "hostname \"node2\": lookup node2 on 127.0.0.53:53: no such host",
            ],
            errors: &[],
        },
        Case {
            name: "hostname malformed",
            check: Check::Hostname("-x".into()),
            host: |h| {
                h.hosts.insert("-x".into(), vec!["10.0.0.9".into()]);
            },
            warnings: &[
                "invalid node name format \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
            errors: &[],
        },
        Case {
            name: "kubelet ok",
            check: Check::KubeletVersion("v1.25.16".into()),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "kubelet absent",
            check: Check::KubeletVersion("v1.25.16".into()),
            host: |h| {
                h.kubelet_version_output = Err(HostProbeError::Command(
                    "executable file not found in $PATH".into(),
                ))
            },
            warnings: &[],
            errors: &[
                "couldn't get kubelet version: cannot execute 'kubelet --version': executable file not found in $PATH",
            ],
        },
        Case {
            name: "kubelet too old",
            check: Check::KubeletVersion("v1.25.16".into()),
            host: |h| h.kubelet_version_output = Ok("Kubernetes v1.23.17\n".into()),
            warnings: &[],
            errors: &[
                "Kubelet version \"1.23.17\" is lower than kubeadm can support. Please upgrade kubelet",
            ],
        },
        Case {
            name: "kubelet too new",
            check: Check::KubeletVersion("v1.25.16".into()),
            host: |h| h.kubelet_version_output = Ok("Kubernetes v1.26.1\n".into()),
            warnings: &[],
            errors: &[
                "the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: \"1.26.1\" Control plane version: \"1.25.16\"",
            ],
        },
        Case {
            name: "kubelet garbage",
            check: Check::KubeletVersion(String::new()),
            host: |h| h.kubelet_version_output = Ok("v1.25\n".into()),
            warnings: &[],
            errors: &["couldn't get kubelet version: Unable to parse output from Kubelet: \"v1.25\""],
        },
        Case {
            name: "kubelet for join",
            check: Check::KubeletVersion(String::new()),
            host: |h| h.kubelet_version_output = Ok("Kubernetes v1.26.1\n".into()),
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "k8s same minor",
            check: Check::KubernetesVersion {
                kubeadm_version: "v1.25.16".into(),
                kubernetes_version: "v1.25.0".into(),
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "k8s newer",
            check: Check::KubernetesVersion {
                kubeadm_version: "v1.25.16".into(),
                kubernetes_version: "v1.26.0-alpha.0".into(),
            },
            host: no_change,
            warnings: &[
                "Kubernetes version is greater than kubeadm version. Please consider to upgrade kubeadm. Kubernetes version: 1.26.0-alpha.0. Kubeadm version: 1.25.x",
            ],
            errors: &[],
        },
        Case {
            name: "kubelet enabled",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "kubelet disabled",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            host: |h| {
                h.services.insert(
                    "kubelet".into(),
                    ServiceState {
                        exists: true,
                        enabled: false,
                        active: false,
                        restarts: None,
                    },
                );
            },
            warnings: &["kubelet service is not enabled, please run 'systemctl enable kubelet.service'"],
            errors: &[],
        },
        Case {
            name: "kubelet unknown unit",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            host: |h| {
                h.services.clear();
            },
            warnings: &["kubelet service does not exist"],
            errors: &[],
        },
        Case {
            name: "kubelet inactive, asked",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: true,
            },
            host: no_change,
            warnings: &[],
            errors: &["kubelet service is not active, please run 'systemctl start kubelet.service'"],
        },
        Case {
            name: "openrc",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            host: |h| {
                h.init_system = Some(InitSystemKind::OpenRc);
                h.services.insert(
                    "kubelet".into(),
                    ServiceState {
                        exists: true,
                        enabled: false,
                        active: true,
                        restarts: None,
                    },
                );
            },
            warnings: &["kubelet service is not enabled, please run 'rc-update add kubelet default'"],
            errors: &[],
        },
        Case {
            name: "no init system",
            check: Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            host: |h| h.init_system = None,
            warnings: &["no supported init system detected, skipping checking for services"],
            errors: &[],
        },
        Case {
            name: "firewalld absent",
            check: Check::Firewalld(vec![6443, 10250]),
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "firewalld active",
            check: Check::Firewalld(vec![6443, 10250]),
            host: |h| {
                h.services.insert(
                    "firewalld".into(),
                    ServiceState {
                        exists: true,
                        enabled: true,
                        active: true,
                        restarts: None,
                    },
                );
            },
            warnings: &[
                "firewalld is active, please ensure ports [6443 10250] are open or your cluster may not function correctly",
            ],
            errors: &[],
        },
        Case {
            name: "no proxy",
            check: Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "proxied",
            check: Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "proxy.corp:3128".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[
                "Connection to \"https://10.0.0.1\" uses proxy \"http://proxy.corp:3128\". If that is not intended, adjust your proxy settings",
            ],
            errors: &[],
        },
        Case {
            name: "proxied v6",
            check: Check::HttpProxy {
                proto: "https".into(),
                host: "fd00::1".into(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[
                "Connection to \"https://[fd00::1]:1234\" uses proxy \"http://p:1\". If that is not intended, adjust your proxy settings",
            ],
            errors: &[],
        },
        Case {
            name: "excluded",
            check: Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    no_proxy: "10.0.0.1".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "cidr excluded",
            check: Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.96.0.0/12".into(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    no_proxy: "10.96.0.0/12".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "cidr proxied (the release parses https://[10.96.0.1]:1234/)",
            check: Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.96.0.0/12".into(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[
                "connection to \"10.96.0.0/12\" uses proxy \"http://p:1\". This may lead to malfunctional cluster setup. Make sure that Pod and Services IP ranges specified correctly as exceptions in proxy configuration",
            ],
            errors: &[],
        },
        Case {
            name: "cidr empty",
            check: Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: String::new(),
            },
            host: |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "cidr too small",
            check: Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.0.0.5/32".into(),
            },
            host: no_change,
            warnings: &[],
            errors: &[
                "unable to get first IP address from the given CIDR (10.0.0.5/32): can't generate IP with index 1 from subnet. subnet too small. subnet: \"10.0.0.5/32\"",
            ],
        },
        Case {
            name: "system ok",
            check: Check::SystemVerification,
            host: no_change,
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "cgroup v1 without blkio",
            check: Check::SystemVerification,
            host: |h| {
                h.cgroups = Ok(Cgroups::V1(
                    [
                        "cpuset", "cpu", "cpuacct", "memory", "devices", "freezer", "pids", "hugetlb",
                    ]
                    .map(String::from)
                    .to_vec(),
                ))
            },
            warnings: &["missing optional cgroups: blkio"],
            errors: &[],
        },
        Case {
            name: "cgroup v2 without pids",
            check: Check::SystemVerification,
            host: |h| {
                h.cgroups = Ok(Cgroups::V2(
                    ["cpuset", "cpu", "io", "memory", "hugetlb"]
                        .map(String::from)
                        .to_vec(),
                ))
            },
            warnings: &[],
            errors: &["missing required cgroups: pids"],
        },
        Case {
            name: "old kernel",
            check: Check::SystemVerification,
            host: |h| h.kernel_release = Ok("3.2.0".into()),
            warnings: &[],
            errors: &["unsupported kernel release: 3.2.0"],
        },
        Case {
            name: "kernel config missing options",
            check: Check::SystemVerification,
            host: |h| h.kernel_config = Ok("CONFIG_NAMESPACES=y\nCONFIG_NET_NS=n\n".into()),
            warnings: &[],
            errors: &[
                "unexpected kernel config: CONFIG_NET_NS CONFIG_PID_NS CONFIG_IPC_NS CONFIG_UTS_NS CONFIG_CGROUPS CONFIG_CGROUP_CPUACCT CONFIG_CGROUP_DEVICE CONFIG_CGROUP_FREEZER CONFIG_CGROUP_PIDS CONFIG_CGROUP_SCHED CONFIG_CPUSETS CONFIG_MEMCG CONFIG_INET CONFIG_EXT4_FS CONFIG_PROC_FS CONFIG_IP_NF_TARGET_REDIRECT CONFIG_NETFILTER_XT_MATCH_COMMENT CONFIG_FAIR_GROUP_SCHED",
            ],
        },
        Case {
            name: "redirect by alias",
            check: Check::SystemVerification,
            host: |h| {
                let c = h.kernel_config.clone().unwrap_or_default().replace(
                    "CONFIG_NETFILTER_XT_TARGET_REDIRECT=m",
                    "CONFIG_IP_NF_TARGET_REDIRECT=y",
                );
                h.kernel_config = Ok(c);
            },
            warnings: &[],
            errors: &[],
        },
        Case {
            name: "no kernel config",
            check: Check::SystemVerification,
            host: |h| {
                h.kernel_config = Err(HostProbeError::Unavailable(
                    "no config path in [/proc/config.gz] is available".into(),
                ))
            },
            warnings: &[],
            errors: &["failed to parse kernel config: no config path in [/proc/config.gz] is available"],
        },
        Case {
            name: "not linux",
            check: Check::SystemVerification,
            host: |h| h.os_name = Ok("Darwin".into()),
            warnings: &[],
            errors: &["unsupported operating system: Darwin"],
        },
        Case {
            name: "external etcd unset",
            check: Check::ExternalEtcdVersion { endpoints: None },
            host: no_change,
            warnings: &[],
            errors: &[],
        },
    ];
    let runtime = FakeRuntime::default();
    let mut failures = Vec::new();
    for Case {
        name: what,
        check,
        host: change,
        warnings,
        errors,
    } in cases
    {
        let mut host = FakeHost::default();
        change(&mut host);
        let got = judge(check.clone(), &host, &runtime);
        let want = (
            warnings.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            errors.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        );
        if got != want {
            failures.push(format!("{what} ({check}):\n  want {want:?}\n  got  {got:?}"));
        }
        // Ignored (by its name in any case): the same messages, all as warnings, errors last.
        let ignore = IgnoreSet::new([check.name().to_uppercase()]);
        let run = run_checks(std::slice::from_ref(&check), &host, &runtime, &ignore);
        let ignored = (run.results[0].warnings.clone(), run.results[0].errors.clone());
        let want_ignored = ([want.0, want.1].concat(), Vec::new());
        if ignored != want_ignored || run.error.is_some() {
            failures.push(format!(
                "{what} ({check}) ignored:\n  want {want_ignored:?}\n  got  {ignored:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
