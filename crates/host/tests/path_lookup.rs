//! A `systemctl` or `kubelet` in the current directory is never found nor run, whatever `PATH`
//! says: with `PATH=":/nonexistent"` (an empty entry means the current directory to `execvp`), the
//! init system, the host probe and the preflight helpers find nothing and run nothing. Go's
//! `exec.LookPath` refuses such a program too.
//!
//! `PATH` and the current directory belong to the whole process, so the checks run in a child: this
//! test binary run again on this one test, with its own `PATH` and working directory.

use std::os::unix::fs::PermissionsExt;

use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::init_system::InitSystem;
use kubeadm_host::host_probe::RealHostProbe;
use kubeadm_host::init_system::HostInitSystem;

const CHILD: &str = "KUBEADM_RS_PATH_LOOKUP_CHILD";
const TEST: &str = "programs_in_the_current_directory_are_never_found_nor_run";
const PLANTED: [&str; 4] = ["systemctl", "openrc", "kubelet", "gzip"];

#[test]
fn programs_in_the_current_directory_are_never_found_nor_run() {
    if std::env::var_os(CHILD).is_some() {
        in_the_child();
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    for name in PLANTED {
        let p = dir.path().join(name);
        // Builtins only: the child's PATH has no directory with programs in it.
        let script = format!("#!/bin/sh\n: > ran-{name}\necho 'Kubernetes v1.25.16'\n");
        std::fs::write(&p, script).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("PATH", ":/nonexistent")
        .current_dir(dir.path())
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "the child's checks failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child ran no test: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    for name in PLANTED {
        assert!(
            !dir.path().join(format!("ran-{name}")).exists(),
            "the planted {name} was run"
        );
    }
}

fn in_the_child() {
    assert_eq!(std::env::var("PATH").as_deref(), Ok(":/nonexistent"));
    assert!(
        std::path::Path::new("systemctl").exists(),
        "not in the planted directory"
    );
    assert_eq!(HostInitSystem::detect().kind(), None, "init system detected");
    assert_eq!(
        kubeadm_host::probe::init_system_error().as_deref(),
        Some("no supported init system detected, skipping checking for services")
    );
    let probe = RealHostProbe;
    for name in PLANTED {
        assert_eq!(probe.look_path(name), None, "{name} found");
        assert!(
            kubeadm_host::path_lookup::command(name).is_err(),
            "{name} would run"
        );
    }
    let version = probe.kubelet_version_output();
    assert!(version.is_err(), "kubelet ran: {version:?}");
    assert!(!kubeadm_host::probe::systemd_resolved_active());
}
