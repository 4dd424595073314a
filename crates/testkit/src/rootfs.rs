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

/// Another process holding an `fcntl` write lock on `path` (the lock kubeadm takes on
/// `/etc/passwd` and `/etc/group`), taken with Python's `lockf`; once it holds the lock it runs
/// the Python statements `then` (`f` is the open file), then exits. Returns when the lock is held.
pub fn hold_fcntl_lock(path: &Path, then: &str) -> std::process::Child {
    let script = format!(
        "import fcntl,os,sys,time\nf=open(sys.argv[1],'r+')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('locked',flush=True)\n{then}\n"
    );
    let mut holder = Command::new("python3")
        .args(["-c", &script])
        .arg(path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    let mut line = String::new();
    let out = holder.stdout.take().expect("stdout");
    std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).expect("read");
    assert_eq!(line.trim(), "locked", "the lock holder did not start");
    holder
}
