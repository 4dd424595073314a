//! The real host probe against independent sources on this machine: coreutils (`id`, `nproc`,
//! `uname`), `/proc/meminfo`, files made in a temp dir, a listener held by the test.

use std::net::TcpListener;
use std::process::Command;

use kubeadm_effects::host_probe::{DirEntries, HostProbe, PathKind};
use kubeadm_host::host_probe::RealHostProbe;

fn stdout(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().expect("coreutils");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn process_and_machine_facts_agree_with_coreutils_and_proc() {
    let p = RealHostProbe;
    assert_eq!(p.uid().to_string(), stdout("id", &["-ru"]));
    assert_eq!(p.num_cpu().to_string(), stdout("nproc", &[]));
    assert_eq!(
        p.kernel_release().as_deref(),
        Ok(stdout("uname", &["-r"]).as_str())
    );
    assert_eq!(p.os_name().as_deref(), Ok(stdout("uname", &[]).as_str()));
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("meminfo");
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemTotal");
    assert_eq!(p.memory_mb(), Ok(kb / 1024));
}

#[test]
fn files_and_directories() {
    let p = RealHostProbe;
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().display().to_string();
    let file = format!("{d}/f");
    std::fs::write(&file, "1\n").expect("file");
    assert_eq!(p.path_kind(&d), PathKind::Dir);
    assert_eq!(p.path_kind(&file), PathKind::File);
    assert_eq!(p.path_kind(&format!("{d}/missing")), PathKind::Missing);
    assert_eq!(
        p.path_kind(&format!("{file}/x")),
        PathKind::Unknown(format!("stat {file}/x: not a directory"))
    );
    assert_eq!(p.dir_entries(&d), DirEntries::NotEmpty);
    std::fs::create_dir(format!("{d}/empty")).expect("dir");
    assert_eq!(p.dir_entries(&format!("{d}/empty")), DirEntries::Empty);
    assert_eq!(p.read_prefix(&file, 1), Some(b"1".to_vec()));
    assert_eq!(p.read_prefix(&format!("{d}/missing"), 1), None);
    // Not executable: LookPath skips it.
    assert_eq!(p.look_path(&file), None);
    assert!(p.look_path("sh").is_some());
    assert_eq!(p.look_path("no-such-binary-for-kubeadm-rs"), None);
}

#[test]
fn a_held_port_is_busy() {
    let p = RealHostProbe;
    let l = TcpListener::bind(("::", 0))
        .or_else(|_| TcpListener::bind(("0.0.0.0", 0)))
        .expect("listener");
    let port = l.local_addr().expect("addr").port();
    assert!(!p.port_free(port));
    drop(l);
    assert!(p.port_free(port));
}

#[test]
fn local_resolution_kernel_config_and_cgroups() {
    let p = RealHostProbe;
    // /etc/hosts answers for localhost: no query leaves the machine.
    assert!(!p.lookup_host("localhost").expect("localhost resolves").is_empty());
    let release = p.kernel_release().expect("release");
    if std::path::Path::new("/proc/config.gz").exists() {
        let config = p.kernel_config(&release).expect("kernel config");
        assert!(config.lines().any(|l| l.starts_with("CONFIG_")), "{config:.200}");
    }
    assert!(p.cgroups().is_ok(), "{:?}", p.cgroups());
    if p.look_path("kubelet").is_none() {
        assert_eq!(
            p.kubelet_version_output().map_err(|e| e.to_string()),
            Err("executable file not found in $PATH".to_string())
        );
    }
}
