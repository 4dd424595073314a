//! `kubeadm config print init-defaults` / `join-defaults`, compared with upstream's output.

use kubeadm_api::dynamic::HostFacts;
use kubeadm_api::print::{print_init_defaults, print_join_defaults};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

fn upstream(args: &[&str]) -> kubeadm_testkit::oracle::Run {
    let dir = tempfile::tempdir().expect("tempdir");
    run(&upstream_kubeadm(), args, dir.path(), &[])
}

fn this_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn init_defaults_match_upstream() {
    let cases: &[&[&str]] = &[
        &[],
        &["KubeletConfiguration"],
        &["KubeProxyConfiguration"],
        &["KubeletConfiguration", "KubeProxyConfiguration"],
    ];
    for kinds in cases {
        let mut args = vec!["config", "print", "init-defaults"];
        let joined = kinds.join(",");
        if !kinds.is_empty() {
            args.extend(["--component-configs", &joined]);
        }
        let want = upstream(&args);
        assert_eq!(want.code, 0, "{}", want.stderr);
        let got = print_init_defaults(&host(), kinds).expect("prints");
        assert_eq!(want.stdout, got, "{args:?}\n{}", diff(&want.stdout, &got));
    }
}

#[test]
fn join_defaults_match_upstream() {
    // Upstream puts this host's name in nodeRegistration.name.
    let host = HostFacts {
        hostname: this_hostname(),
        ..HostFacts::default()
    };
    for kinds in [&[][..], &["KubeProxyConfiguration", "KubeletConfiguration"][..]] {
        let joined = kinds.join(",");
        let mut args = vec!["config", "print", "join-defaults"];
        if !kinds.is_empty() {
            args.extend(["--component-configs", &joined]);
        }
        let want = upstream(&args);
        assert_eq!(want.code, 0, "{}", want.stderr);
        let got = print_join_defaults(&host, kinds).expect("prints");
        assert_eq!(want.stdout, got, "{args:?}\n{}", diff(&want.stdout, &got));
    }
}

#[test]
fn unknown_component_config_is_rejected_like_upstream() {
    let want = upstream(&["config", "print", "init-defaults", "--component-configs", "Foo"]);
    assert_ne!(want.code, 0);
    let err = print_init_defaults(&host(), &["Foo"])
        .expect_err("rejects")
        .to_string();
    assert!(
        want.stderr.contains(&err),
        "upstream said {:?}, we said {err:?}",
        want.stderr
    );
}

/// The facts upstream reads from this host for `config print`.
fn host() -> HostFacts {
    let resolved = std::process::Command::new("systemctl")
        .args(["is-active", "--quiet", "systemd-resolved"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    HostFacts {
        hostname: this_hostname(),
        systemd_resolved_active: resolved,
        ..HostFacts::default()
    }
}
