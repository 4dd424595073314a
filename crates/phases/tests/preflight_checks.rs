//! The preflight runner and plan: names, the runtime checks, the ignore set, the init list and its
//! order, and what the init phase prints. Expected texts are upstream's (v1.25.16), written out from its
//! format strings.

mod preflight_fakes;

use kubeadm_testkit::fakes::FakeHost;

use kubeadm_api::internal::InitConfig;
use kubeadm_phases::preflight::{
    Check, IgnoreSet, Stream, common_checks, init_node_checks, run_checks, run_init_preflight,
};
use preflight_fakes::{FakeRuntime, judge, load};

#[test]
fn names_follow_upstream_rules() {
    for (check, name) in [
        (Check::Port(6443), "Port-6443"),
        (
            Check::FileAvailable {
                path: "/etc/kubernetes/manifests/kube-apiserver.yaml".into(),
                label: None,
            },
            "FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml",
        ),
        (
            Check::DirAvailable("/var/lib/etcd".into()),
            "DirAvailable--var-lib-etcd",
        ),
        (
            Check::FileContent {
                path: "/proc/sys/net/ipv4/ip_forward".into(),
                content: b"1".to_vec(),
            },
            "FileContent--proc-sys-net-ipv4-ip_forward",
        ),
        (
            Check::InPath {
                exe: "conntrack".into(),
                mandatory: true,
            },
            "FileExisting-conntrack",
        ),
        (Check::Crictl, "FileExisting-crictl"),
        (
            Check::Service {
                name: "kubelet".into(),
                check_if_active: false,
            },
            "Service-Kubelet",
        ),
        (
            Check::FileExisting {
                path: "/x".into(),
                label: Some("ExternalEtcdClientCertificates".into()),
            },
            "ExternalEtcdClientCertificates",
        ),
    ] {
        assert_eq!(check.name(), name);
    }
}

#[test]
fn cri_and_image_pull_use_the_runtime() {
    let host = FakeHost::default();
    let down = FakeRuntime {
        down: true,
        ..FakeRuntime::default()
    };
    let (_, errors) = judge(Check::Cri, &host, &down);
    assert_eq!(
        errors,
        ["Status on unix:///run/fake.sock: rpc error: code = Unknown desc = runtime down"]
    );
    assert_eq!(
        judge(Check::Cri, &host, &FakeRuntime::default()),
        (vec![], vec![])
    );

    let images = vec!["a:1".to_string(), "b:1".to_string()];
    let pull = |policy: &str| Check::ImagePull {
        images: images.clone(),
        policy: policy.into(),
    };
    let rt = FakeRuntime {
        images: vec!["a:1".into()],
        ..FakeRuntime::default()
    };
    assert_eq!(judge(pull("IfNotPresent"), &host, &rt), (vec![], vec![]));
    assert_eq!(*rt.pulls.borrow(), ["b:1"]);
    let rt = FakeRuntime::default();
    judge(pull("Never"), &host, &rt);
    assert!(rt.pulls.borrow().is_empty());
    judge(pull("Always"), &host, &rt);
    assert_eq!(*rt.pulls.borrow(), ["a:1", "b:1"]);
    let failing = FakeRuntime {
        pull_fails: true,
        ..FakeRuntime::default()
    };
    let (_, errors) = judge(pull("IfNotPresent"), &host, &failing);
    assert_eq!(errors.len(), 2);
    assert_eq!(
        errors[0],
        "failed to pull image a:1: PullImage \"a:1\" on unix:///run/fake.sock: rpc error: code = Unknown desc = no network"
    );
    // five attempts per image, as upstream's PullImageRetry
    assert_eq!(failing.pulls.borrow().len(), 10);
    assert_eq!(
        judge(pull("Sometimes"), &host, &rt).1,
        ["unsupported pull policy \"Sometimes\""]
    );
}

#[test]
fn ignored_errors_become_warnings_case_insensitively() {
    let mut host = FakeHost {
        num_cpu: 1,
        ..FakeHost::default()
    };
    host.ports_in_use.insert(10250);
    let checks = [Check::NumCpu(2), Check::Port(10250), Check::Swap];
    let rt = FakeRuntime::default();

    let run = run_checks(&checks, &host, &rt, &IgnoreSet::new(["numcpu"]));
    assert_eq!(
        run.text(Stream::Stderr),
        "\t[WARNING NumCPU]: the number of available CPUs 1 is less than the required 2\n"
    );
    assert!(run.results[0].ignored && !run.results[1].ignored && run.results[2].passed());
    let err = run.error.expect("Port-10250 is fatal");
    assert_eq!(
        err.to_string(),
        "[preflight] Some fatal errors occurred:\n\t[ERROR Port-10250]: Port 10250 is in use\n[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`"
    );

    let run = run_checks(&checks, &host, &rt, &IgnoreSet::new(["ALL"]));
    assert!(run.error.is_none());
    assert_eq!(
        run.text(Stream::Stderr),
        "\t[WARNING NumCPU]: the number of available CPUs 1 is less than the required 2\n\t[WARNING Port-10250]: Port 10250 is in use\n"
    );
}

fn config(address: &str, cluster: &str) -> InitConfig {
    load(&format!(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: {address}\nnodeRegistration:\n  name: node1\n  criSocket: unix:///run/fake.sock\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\n{cluster}"
    ))
}

#[test]
fn init_checks_are_upstreams_list_in_upstreams_order() {
    let cfg = config("10.0.0.1", "networking:\n  podSubnet: 10.244.0.0/16\n");
    let names: Vec<String> = init_node_checks(&cfg).iter().map(Check::name).collect();
    // RunInitNodeChecks of v1.25.16 with local etcd and an IPv4 advertise address.
    let want = "NumCPU Mem KubernetesVersion Firewalld Port-6443 Port-10259 Port-10257 \
        FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml \
        FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml \
        FileAvailable--etc-kubernetes-manifests-kube-scheduler.yaml \
        FileAvailable--etc-kubernetes-manifests-etcd.yaml HTTPProxy HTTPProxyCIDR HTTPProxyCIDR \
        CRI FileContent--proc-sys-net-bridge-bridge-nf-call-iptables FileContent--proc-sys-net-ipv4-ip_forward \
        Swap FileExisting-crictl FileExisting-conntrack FileExisting-ip FileExisting-iptables FileExisting-mount \
        FileExisting-nsenter FileExisting-ebtables FileExisting-ethtool FileExisting-socat FileExisting-tc \
        FileExisting-touch SystemVerification Hostname KubeletVersion Service-Kubelet Port-10250 \
        Port-2379 Port-2380 DirAvailable--var-lib-etcd";
    assert_eq!(
        names.join(" "),
        want.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    assert_eq!(common_checks("", "n").len(), 20);

    let v6 = config(
        "fd00::1",
        "networking:\n  serviceSubnet: fd00:10::/108\netcd:\n  external:\n    endpoints: [https://10.0.0.9:2379]\n    caFile: /e/ca.crt\n    certFile: /e/c.crt\n    keyFile: /e/c.key\n",
    );
    let names: Vec<String> = init_node_checks(&v6).iter().map(Check::name).collect();
    let tail = &names[names.len() - 6..];
    assert_eq!(
        tail,
        [
            "FileContent--proc-sys-net-bridge-bridge-nf-call-ip6tables",
            "FileContent--proc-sys-net-ipv6-conf-default-forwarding",
            "ExternalEtcdVersion",
            "ExternalEtcdClientCertificates",
            "ExternalEtcdClientCertificates",
            "ExternalEtcdClientCertificates",
        ]
    );
    assert!(!names.iter().any(|n| n == "Port-2379"));
}

#[test]
fn the_init_phase_prints_as_upstream() {
    let cfg = config("10.0.0.1", "");
    let rt = FakeRuntime::default();

    // Not root: the root check runs alone and stops the phase.
    let host = FakeHost {
        uid: 1000,
        num_cpu: 1,
        ..FakeHost::default()
    };
    let run = run_init_preflight(&cfg, &IgnoreSet::default(), &host, &rt, false);
    assert_eq!(run.results.len(), 1);
    assert_eq!(
        run.text(Stream::Stdout),
        "[preflight] Running pre-flight checks\n"
    );
    assert!(
        run.error
            .expect("fatal")
            .lines
            .contains("[ERROR IsPrivilegedUser]: user is not running as root")
    );

    // A healthy host: the images are pulled, with upstream's three lines first.
    let host = FakeHost::default();
    let run = run_init_preflight(&cfg, &IgnoreSet::default(), &host, &rt, false);
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(
        run.text(Stream::Stdout),
        "[preflight] Running pre-flight checks\n\
         [preflight] Pulling images required for setting up a Kubernetes cluster\n\
         [preflight] This might take a minute or two, depending on the speed of your internet connection\n\
         [preflight] You can also perform this action in beforehand using 'kubeadm config images pull'\n"
    );
    assert_eq!(run.text(Stream::Stderr), "");
    assert_eq!(
        *rt.pulls.borrow(),
        [
            "registry.k8s.io/kube-apiserver:v1.25.16",
            "registry.k8s.io/kube-controller-manager:v1.25.16",
            "registry.k8s.io/kube-scheduler:v1.25.16",
            "registry.k8s.io/kube-proxy:v1.25.16",
            "registry.k8s.io/pause:3.8",
            "registry.k8s.io/etcd:3.5.9-0",
            "registry.k8s.io/coredns/coredns:v1.9.3",
        ]
    );

    // Dry run: no pull, one line instead.
    let rt = FakeRuntime::default();
    let run = run_init_preflight(&cfg, &IgnoreSet::default(), &host, &rt, true);
    assert!(
        run.text(Stream::Stdout)
            .ends_with("[preflight] Would pull the required images (like 'kubeadm config images pull')\n")
    );
    assert!(rt.pulls.borrow().is_empty());

    // A failing system verification prints its report on stdout before the errors.
    let mut host = FakeHost {
        kernel_release: Ok("2.6.32".into()),
        ..FakeHost::default()
    };
    host.broken_paths.insert("/var/lib/etcd".into(), "x".into());
    let run = run_init_preflight(&cfg, &IgnoreSet::default(), &host, &rt, true);
    let stdout = run.text(Stream::Stdout);
    assert!(
        stdout.contains("[preflight] The system verification failed. Printing the output from the verification:\n\x1b[0;37mKERNEL_VERSION\x1b[0m: \x1b[0;31m2.6.32\x1b[0m\n"),
        "{stdout:?}"
    );
    let err = run.error.expect("fatal").to_string();
    assert!(
        err.contains("\t[ERROR SystemVerification]: unsupported kernel release: 2.6.32\n"),
        "{err}"
    );
    assert!(
        err.contains("\t[ERROR DirAvailable--var-lib-etcd]: unable to check if /var/lib/etcd is empty: x\n"),
        "{err}"
    );
}
