//! Every preflight check against a scripted host: passing, warning, failing and ignored. The expected
//! texts are upstream's (cmd/kubeadm/app/preflight/checks.go of v1.25.16 and k8s.io/system-validators
//! v1.8.0), written out from its format strings.

mod preflight_fakes;

use kubeadm_effects::host_probe::{Cgroups, DirEntries, FakeHost, InitSystemKind, ProxyEnv, ServiceState};
use kubeadm_phases::preflight::{Check, IgnoreSet, run_checks};
use preflight_fakes::{FakeRuntime, judge};

type Case = (
    &'static str,
    Check,
    fn(&mut FakeHost),
    &'static [&'static str],
    &'static [&'static str],
);

fn no_change(_: &mut FakeHost) {}

#[test]
fn every_check_passes_warns_or_fails_in_upstream_words() {
    let cases: Vec<Case> = vec![
        ("root", Check::IsPrivilegedUser, no_change, &[], &[]),
        (
            "not root",
            Check::IsPrivilegedUser,
            |h| h.uid = 1000,
            &[],
            &["user is not running as root"],
        ),
        ("2 cpus", Check::NumCpu(2), no_change, &[], &[]),
        (
            "1 cpu",
            Check::NumCpu(2),
            |h| h.num_cpu = 1,
            &[],
            &["the number of available CPUs 1 is less than the required 2"],
        ),
        ("mem ok", Check::Mem(1700), no_change, &[], &[]),
        (
            "mem low",
            Check::Mem(1700),
            |h| h.memory_mb = Ok(1024),
            &[],
            &["the system RAM (1024 MB) is less than the minimum 1700 MB"],
        ),
        (
            "mem unknown",
            Check::Mem(1700),
            |h| h.memory_mb = Err("operation not permitted".into()),
            &[],
            &[
                "failed to get system info: operation not permitted",
                "the system RAM (0 MB) is less than the minimum 1700 MB",
            ],
        ),
        ("port free", Check::Port(6443), no_change, &[], &[]),
        (
            "port busy",
            Check::Port(6443),
            |h| {
                h.ports_in_use.insert(6443);
            },
            &[],
            &["Port 6443 is in use"],
        ),
        (
            "manifest absent",
            Check::FileAvailable {
                path: "/etc/kubernetes/manifests/etcd.yaml".into(),
                label: None,
            },
            no_change,
            &[],
            &[],
        ),
        (
            "manifest present",
            Check::FileAvailable {
                path: "/etc/kubernetes/manifests/etcd.yaml".into(),
                label: None,
            },
            |h| {
                h.files
                    .insert("/etc/kubernetes/manifests/etcd.yaml".into(), Vec::new());
            },
            &[],
            &["/etc/kubernetes/manifests/etcd.yaml already exists"],
        ),
        (
            "etcd dir absent",
            Check::DirAvailable("/var/lib/etcd".into()),
            no_change,
            &[],
            &[],
        ),
        (
            "etcd dir empty",
            Check::DirAvailable("/var/lib/etcd".into()),
            |h| {
                h.dirs.insert("/var/lib/etcd".into(), DirEntries::Empty);
            },
            &[],
            &[],
        ),
        (
            "etcd dir full",
            Check::DirAvailable("/var/lib/etcd".into()),
            |h| {
                h.dirs.insert("/var/lib/etcd".into(), DirEntries::NotEmpty);
            },
            &[],
            &["/var/lib/etcd is not empty"],
        ),
        (
            "etcd dir unreadable",
            Check::DirAvailable("/var/lib/etcd".into()),
            |h| {
                h.broken_paths.insert(
                    "/var/lib/etcd".into(),
                    "stat /var/lib/etcd: permission denied".into(),
                );
            },
            &[],
            &["unable to check if /var/lib/etcd is empty: stat /var/lib/etcd: permission denied"],
        ),
        (
            "cert present",
            Check::FileExisting {
                path: "/etc/etcd/ca.crt".into(),
                label: Some("ExternalEtcdClientCertificates".into()),
            },
            |h| {
                h.files.insert("/etc/etcd/ca.crt".into(), Vec::new());
            },
            &[],
            &[],
        ),
        (
            "cert missing",
            Check::FileExisting {
                path: "/etc/etcd/ca.crt".into(),
                label: Some("ExternalEtcdClientCertificates".into()),
            },
            no_change,
            &[],
            &["/etc/etcd/ca.crt doesn't exist"],
        ),
        (
            "ip_forward 1",
            Check::FileContent {
                path: "/proc/sys/net/ipv4/ip_forward".into(),
                content: b"1".to_vec(),
            },
            no_change,
            &[],
            &[],
        ),
        (
            "ip_forward 0",
            Check::FileContent {
                path: "/proc/sys/net/ipv4/ip_forward".into(),
                content: b"1".to_vec(),
            },
            |h| {
                h.files
                    .insert("/proc/sys/net/ipv4/ip_forward".into(), b"0\n".to_vec());
            },
            &[],
            &["/proc/sys/net/ipv4/ip_forward contents are not set to 1"],
        ),
        (
            "bridge missing",
            Check::FileContent {
                path: "/proc/sys/net/bridge/bridge-nf-call-iptables".into(),
                content: b"1".to_vec(),
            },
            |h| {
                h.files.remove("/proc/sys/net/bridge/bridge-nf-call-iptables");
            },
            &[],
            &["/proc/sys/net/bridge/bridge-nf-call-iptables does not exist"],
        ),
        (
            "conntrack there",
            Check::InPath {
                exe: "conntrack".into(),
                mandatory: true,
            },
            no_change,
            &[],
            &[],
        ),
        (
            "conntrack missing",
            Check::InPath {
                exe: "conntrack".into(),
                mandatory: true,
            },
            |h| {
                h.binaries.remove("conntrack");
            },
            &[],
            &["conntrack not found in system path"],
        ),
        (
            "socat missing",
            Check::InPath {
                exe: "socat".into(),
                mandatory: false,
            },
            |h| {
                h.binaries.remove("socat");
            },
            &["socat not found in system path"],
            &[],
        ),
        (
            "crictl missing: not needed",
            Check::Crictl,
            |h| {
                h.binaries.remove("crictl");
            },
            &[],
            &[],
        ),
        ("swap off", Check::Swap, no_change, &[], &[]),
        ("no /proc/swaps", Check::Swap, |h| h.swaps = None, &[], &[]),
        (
            "swap on",
            Check::Swap,
            |h| h.swaps = Some(vec!["Filename".into(), "/swap.img file 1 0 -2".into()]),
            &[
                "swap is enabled; production deployments should disable swap unless testing the NodeSwap feature gate of the kubelet",
            ],
            &[],
        ),
        (
            "hostname resolves",
            Check::Hostname("node1".into()),
            no_change,
            &[],
            &[],
        ),
        (
            "hostname unknown",
            Check::Hostname("node2".into()),
            no_change,
            &[
                "hostname \"node2\" could not be reached",
                "hostname \"node2\": lookup node2 on 127.0.0.53:53: no such host",
            ],
            &[],
        ),
        (
            "hostname malformed",
            Check::Hostname("-x".into()),
            |h| {
                h.hosts.insert("-x".into(), vec!["10.0.0.9".into()]);
            },
            &[
                "invalid node name format \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
            &[],
        ),
        (
            "kubelet ok",
            Check::KubeletVersion("v1.25.16".into()),
            no_change,
            &[],
            &[],
        ),
        (
            "kubelet absent",
            Check::KubeletVersion("v1.25.16".into()),
            |h| h.kubelet_version_output = Err("executable file not found in $PATH".into()),
            &[],
            &[
                "couldn't get kubelet version: cannot execute 'kubelet --version': executable file not found in $PATH",
            ],
        ),
        (
            "kubelet too old",
            Check::KubeletVersion("v1.25.16".into()),
            |h| h.kubelet_version_output = Ok("Kubernetes v1.23.17\n".into()),
            &[],
            &["Kubelet version \"1.23.17\" is lower than kubeadm can support. Please upgrade kubelet"],
        ),
        (
            "kubelet too new",
            Check::KubeletVersion("v1.25.16".into()),
            |h| h.kubelet_version_output = Ok("Kubernetes v1.26.1\n".into()),
            &[],
            &[
                "the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: \"1.26.1\" Control plane version: \"1.25.16\"",
            ],
        ),
        (
            "kubelet garbage",
            Check::KubeletVersion(String::new()),
            |h| h.kubelet_version_output = Ok("v1.25\n".into()),
            &[],
            &["couldn't get kubelet version: Unable to parse output from Kubelet: \"v1.25\""],
        ),
        (
            "kubelet for join",
            Check::KubeletVersion(String::new()),
            |h| h.kubelet_version_output = Ok("Kubernetes v1.26.1\n".into()),
            &[],
            &[],
        ),
        (
            "k8s same minor",
            Check::KubernetesVersion {
                kubeadm_version: "v1.25.16".into(),
                kubernetes_version: "v1.25.0".into(),
            },
            no_change,
            &[],
            &[],
        ),
        (
            "k8s newer",
            Check::KubernetesVersion {
                kubeadm_version: "v1.25.16".into(),
                kubernetes_version: "v1.26.0-alpha.0".into(),
            },
            no_change,
            &[
                "Kubernetes version is greater than kubeadm version. Please consider to upgrade kubeadm. Kubernetes version: 1.26.0-alpha.0. Kubeadm version: 1.25.x",
            ],
            &[],
        ),
        (
            "kubelet enabled",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            no_change,
            &[],
            &[],
        ),
        (
            "kubelet disabled",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            |h| {
                h.services.insert(
                    "kubelet".into(),
                    ServiceState {
                        exists: true,
                        enabled: false,
                        active: false,
                    },
                );
            },
            &["kubelet service is not enabled, please run 'systemctl enable kubelet.service'"],
            &[],
        ),
        (
            "kubelet unknown unit",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            |h| {
                h.services.clear();
            },
            &["kubelet service does not exist"],
            &[],
        ),
        (
            "kubelet inactive, asked",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: true,
            },
            no_change,
            &[],
            &["kubelet service is not active, please run 'systemctl start kubelet.service'"],
        ),
        (
            "openrc",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            |h| {
                h.init_system = Some(InitSystemKind::OpenRc);
                h.services.insert(
                    "kubelet".into(),
                    ServiceState {
                        exists: true,
                        enabled: false,
                        active: true,
                    },
                );
            },
            &["kubelet service is not enabled, please run 'rc-update add kubelet default'"],
            &[],
        ),
        (
            "no init system",
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            |h| h.init_system = None,
            &["no supported init system detected, skipping checking for services"],
            &[],
        ),
        (
            "firewalld absent",
            Check::Firewalld(vec![6443, 10250]),
            no_change,
            &[],
            &[],
        ),
        (
            "firewalld active",
            Check::Firewalld(vec![6443, 10250]),
            |h| {
                h.services.insert(
                    "firewalld".into(),
                    ServiceState {
                        exists: true,
                        enabled: true,
                        active: true,
                    },
                );
            },
            &[
                "firewalld is active, please ensure ports [6443 10250] are open or your cluster may not function correctly",
            ],
            &[],
        ),
        (
            "no proxy",
            Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            no_change,
            &[],
            &[],
        ),
        (
            "proxied",
            Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "proxy.corp:3128".into(),
                    ..ProxyEnv::default()
                }
            },
            &[
                "Connection to \"https://10.0.0.1\" uses proxy \"http://proxy.corp:3128\". If that is not intended, adjust your proxy settings",
            ],
            &[],
        ),
        (
            "proxied v6",
            Check::HttpProxy {
                proto: "https".into(),
                host: "fd00::1".into(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            &[
                "Connection to \"https://[fd00::1]:1234\" uses proxy \"http://p:1\". If that is not intended, adjust your proxy settings",
            ],
            &[],
        ),
        (
            "excluded",
            Check::HttpProxy {
                proto: "https".into(),
                host: "10.0.0.1".into(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    no_proxy: "10.0.0.1".into(),
                    ..ProxyEnv::default()
                }
            },
            &[],
            &[],
        ),
        (
            "cidr excluded",
            Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.96.0.0/12".into(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    no_proxy: "10.96.0.0/12".into(),
                    ..ProxyEnv::default()
                }
            },
            &[],
            &[],
        ),
        (
            "cidr proxied (the release parses https://[10.96.0.1]:1234/)",
            Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.96.0.0/12".into(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            &[
                "connection to \"10.96.0.0/12\" uses proxy \"http://p:1\". This may lead to malfunctional cluster setup. Make sure that Pod and Services IP ranges specified correctly as exceptions in proxy configuration",
            ],
            &[],
        ),
        (
            "cidr empty",
            Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: String::new(),
            },
            |h| {
                h.proxy_env = ProxyEnv {
                    https_proxy: "http://p:1".into(),
                    ..ProxyEnv::default()
                }
            },
            &[],
            &[],
        ),
        (
            "cidr too small",
            Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: "10.0.0.5/32".into(),
            },
            no_change,
            &[],
            &[
                "unable to get first IP address from the given CIDR (10.0.0.5/32): can't generate IP with index 1 from subnet. subnet too small. subnet: \"10.0.0.5/32\"",
            ],
        ),
        ("system ok", Check::SystemVerification, no_change, &[], &[]),
        (
            "cgroup v1 without blkio",
            Check::SystemVerification,
            |h| {
                h.cgroups = Ok(Cgroups::V1(
                    [
                        "cpuset", "cpu", "cpuacct", "memory", "devices", "freezer", "pids", "hugetlb",
                    ]
                    .map(String::from)
                    .to_vec(),
                ))
            },
            &["missing optional cgroups: blkio"],
            &[],
        ),
        (
            "cgroup v2 without pids",
            Check::SystemVerification,
            |h| {
                h.cgroups = Ok(Cgroups::V2(
                    ["cpuset", "cpu", "io", "memory", "hugetlb"]
                        .map(String::from)
                        .to_vec(),
                ))
            },
            &[],
            &["missing required cgroups: pids"],
        ),
        (
            "old kernel",
            Check::SystemVerification,
            |h| h.kernel_release = Ok("3.2.0".into()),
            &[],
            &["unsupported kernel release: 3.2.0"],
        ),
        (
            "kernel config missing options",
            Check::SystemVerification,
            |h| h.kernel_config = Ok("CONFIG_NAMESPACES=y\nCONFIG_NET_NS=n\n".into()),
            &[],
            &[
                "unexpected kernel config: CONFIG_NET_NS CONFIG_PID_NS CONFIG_IPC_NS CONFIG_UTS_NS CONFIG_CGROUPS CONFIG_CGROUP_CPUACCT CONFIG_CGROUP_DEVICE CONFIG_CGROUP_FREEZER CONFIG_CGROUP_PIDS CONFIG_CGROUP_SCHED CONFIG_CPUSETS CONFIG_MEMCG CONFIG_INET CONFIG_EXT4_FS CONFIG_PROC_FS CONFIG_IP_NF_TARGET_REDIRECT CONFIG_NETFILTER_XT_MATCH_COMMENT CONFIG_FAIR_GROUP_SCHED",
            ],
        ),
        (
            "redirect by alias",
            Check::SystemVerification,
            |h| {
                let c = h.kernel_config.clone().unwrap_or_default().replace(
                    "CONFIG_NETFILTER_XT_TARGET_REDIRECT=m",
                    "CONFIG_IP_NF_TARGET_REDIRECT=y",
                );
                h.kernel_config = Ok(c);
            },
            &[],
            &[],
        ),
        (
            "no kernel config",
            Check::SystemVerification,
            |h| h.kernel_config = Err("no config path in [/proc/config.gz] is available".into()),
            &[],
            &["failed to parse kernel config: no config path in [/proc/config.gz] is available"],
        ),
        (
            "not linux",
            Check::SystemVerification,
            |h| h.os_name = Ok("Darwin".into()),
            &[],
            &["unsupported operating system: Darwin"],
        ),
        (
            "external etcd unset",
            Check::ExternalEtcdVersion { endpoints: None },
            no_change,
            &[],
            &[],
        ),
    ];
    let runtime = FakeRuntime::default();
    let mut failures = Vec::new();
    for (what, check, change, warnings, errors) in cases {
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
