//! Tests that run kubeadm chrooted into a temporary root (the global `--rootfs` flag, which needs
//! root): running a phase there, and reading back what it wrote.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Whether this process runs as root (the `--rootfs` chroot needs it).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// Every file and directory under `root/<dir>` for each of `dirs` (e.g. `etc/kubernetes`), keyed by
/// its path relative to `root`: mode and content (empty for directories).
pub fn tree(root: &Path, dirs: &[&str]) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut pending: Vec<_> = dirs.iter().map(|d| root.join(d)).collect();
    while let Some(d) = pending.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let meta = std::fs::metadata(&p).expect("meta");
            let rel = p.strip_prefix(root).expect("under root").display().to_string();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                out.insert(rel, (mode, Vec::new()));
                pending.push(p);
            } else {
                out.insert(rel, (mode, std::fs::read(&p).expect("read")));
            }
        }
    }
    out
}

/// Runs `kubeadm --rootfs <root> init phase <phase…> --config <config>` with an empty environment,
/// panics with its output unless it succeeds, and returns its standard output.
pub fn init_phase(kubeadm: &Path, root: &Path, phase: &[&str], config: &str) -> String {
    let rootfs = root.to_string_lossy().into_owned();
    let mut args = vec!["--rootfs", &rootfs, "init", "phase"];
    args.extend_from_slice(phase);
    args.extend_from_slice(&["--config", config]);
    let out = Command::new(kubeadm)
        .args(&args)
        .env_clear()
        .output()
        .expect("run kubeadm");
    assert!(
        out.status.success(),
        "{} {}: {}{}",
        kubeadm.display(),
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
