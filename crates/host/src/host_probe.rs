//! The real [`HostProbe`]: reads this host the way upstream's preflight checks do (`getuid`, the CPU
//! affinity mask, `sysinfo`, `stat`, a throw-away TCP listener, `PATH`, `uname`, the kernel config
//! files, `/sys/fs/cgroup`, the system resolver, `systemctl`, `kubelet --version`, the environment).
//!
//! Only reads. One deliberate gap: when no kernel config file exists upstream loads the `configs`
//! kernel module (and unloads it afterwards); we do not change the kernel's state and report the
//! missing file instead.

use std::io::{self, Read};
use std::net::{TcpListener, ToSocketAddrs};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use kubeadm_effects::host_probe::{
    Cgroups, DirEntries, HostProbe, InitSystemKind, PathKind, ProxyEnv, ServiceState,
};
use kubeadm_effects::init_system::InitSystem;

use crate::init_system::HostInitSystem;

/// This host.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealHostProbe;

/// An I/O error as Go words it after the operation and path: `stat /x: permission denied`.
fn go_error(op: &str, path: &str, e: &io::Error) -> String {
    format!("{op} {path}: {}", kubeadm_api::gofmt::io_error(e))
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_dir() && m.permissions().mode() & 0o111 != 0)
}

/// The first nameserver of `/etc/resolv.conf`, as Go names it in a failed lookup.
fn first_nameserver() -> String {
    let conf = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    conf.lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map(|ns| {
            if ns.contains(':') {
                format!("[{ns}]:53")
            } else {
                format!("{ns}:53")
            }
        })
        .unwrap_or_else(|| "127.0.0.1:53".to_string())
}

fn env_any(names: &[&str]) -> String {
    names
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

fn command_stdout(program: &str, args: &[&str]) -> Option<(bool, String, String)> {
    let out = Command::new(program).args(args).output().ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

impl HostProbe for RealHostProbe {
    fn uid(&self) -> u32 {
        nix::unistd::getuid().as_raw()
    }

    fn num_cpu(&self) -> usize {
        match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
            Ok(set) => (0..nix::sched::CpuSet::count())
                .filter(|&i| set.is_set(i).unwrap_or(false))
                .count(),
            Err(_) => std::thread::available_parallelism().map_or(1, usize::from),
        }
    }

    fn memory_mb(&self) -> Result<u64, String> {
        nix::sys::sysinfo::sysinfo()
            .map(|info| info.ram_total() / 1024 / 1024)
            .map_err(|e| e.desc().to_lowercase())
    }

    fn path_kind(&self, path: &str) -> PathKind {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => PathKind::Dir,
            Ok(_) => PathKind::File,
            Err(e) if e.kind() == io::ErrorKind::NotFound => PathKind::Missing,
            Err(e) => PathKind::Unknown(go_error("stat", path, &e)),
        }
    }

    fn dir_entries(&self, path: &str) -> DirEntries {
        match std::fs::read_dir(path) {
            Ok(mut entries) => match entries.next() {
                None => DirEntries::Empty,
                Some(_) => DirEntries::NotEmpty,
            },
            Err(e) => DirEntries::Unreadable(go_error("open", path, &e)),
        }
    }

    fn read_prefix(&self, path: &str, limit: usize) -> Option<Vec<u8>> {
        let file = std::fs::File::open(path).ok()?;
        let mut buf = Vec::with_capacity(limit);
        // A read error (a directory, say) leaves the buffer empty: the content check then fails.
        let _ = file.take(limit as u64).read_to_end(&mut buf);
        Some(buf)
    }

    fn swaps(&self) -> Option<Vec<String>> {
        let text = std::fs::read_to_string("/proc/swaps").ok()?;
        Some(text.lines().map(str::to_string).collect())
    }

    fn port_free(&self, port: u16) -> bool {
        // Go's `net.Listen("tcp", ":port")` listens on the IPv6 wildcard (dual stack) when the host has
        // IPv6, else on the IPv4 one. The listener is dropped (closed) at once.
        match TcpListener::bind(("::", port)) {
            Ok(_) => true,
            Err(e) if matches!(e.raw_os_error(), Some(97 | 99)) => {
                // EAFNOSUPPORT / EADDRNOTAVAIL: no IPv6 here.
                TcpListener::bind(("0.0.0.0", port)).is_ok()
            }
            Err(_) => false,
        }
    }

    fn look_path(&self, exe: &str) -> Option<String> {
        if exe.contains('/') {
            return is_executable_file(Path::new(exe)).then(|| exe.to_string());
        }
        let paths = std::env::var_os("PATH")?;
        std::env::split_paths(&paths)
            .map(|dir| {
                if dir.as_os_str().is_empty() {
                    Path::new(".").join(exe)
                } else {
                    dir.join(exe)
                }
            })
            .find(|p| is_executable_file(p))
            .map(|p| p.display().to_string())
    }

    fn kernel_release(&self) -> Result<String, String> {
        nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .map_err(|e| e.desc().to_lowercase())
    }

    fn os_name(&self) -> Result<String, String> {
        nix::sys::utsname::uname()
            .map(|u| u.sysname().to_string_lossy().into_owned())
            .map_err(|e| e.desc().to_lowercase())
    }

    fn kernel_config(&self, release: &str) -> Result<String, String> {
        let candidates = [
            "/proc/config.gz".to_string(),
            format!("/boot/config-{release}"),
            format!("/usr/src/linux-{release}/.config"),
            "/usr/src/linux/.config".to_string(),
            format!("/usr/lib/modules/{release}/config"),
            format!("/usr/lib/ostree-boot/config-{release}"),
            format!("/usr/lib/kernel/config-{release}"),
            format!("/usr/src/linux-headers-{release}/.config"),
            format!("/lib/modules/{release}/build/.config"),
        ];
        let Some(path) = candidates.iter().find(|p| std::fs::metadata(p).is_ok()) else {
            return Err(format!(
                "no config path in [{}] is available",
                candidates.join(" ")
            ));
        };
        if path.ends_with(".gz") {
            // gzip is part of every Linux base system; decompressing here keeps a deflate
            // implementation out of the dependency tree for one small file.
            let out = Command::new("gzip")
                .args(["-dc", path])
                .output()
                .map_err(|e| go_error("gzip -dc", path, &e))?;
            if !out.status.success() {
                return Err(format!(
                    "gzip -dc {path}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        std::fs::read(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| go_error("open", path, &e))
    }

    fn cgroups(&self) -> Result<Cgroups, String> {
        const ROOT: &str = "/sys/fs/cgroup";
        let st = nix::sys::statfs::statfs(ROOT)
            .map_err(|e| format!("cannot statfs the cgroupv2 root: {}", e.desc().to_lowercase()))?;
        if st.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC {
            let path = format!("{ROOT}/cgroup.controllers");
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "failed to get cgroup v2 subsystems: {}",
                    go_error("open", &path, &e)
                )
            })?;
            return Ok(Cgroups::V2(text.split_whitespace().map(str::to_string).collect()));
        }
        let text = std::fs::read_to_string("/proc/cgroups").map_err(|e| {
            format!(
                "failed to get cgroup v1 subsystems: {}",
                go_error("open", "/proc/cgroups", &e)
            )
        })?;
        let subsystems = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let fields: Vec<&str> = l.split_whitespace().collect();
                (fields.len() >= 4 && fields[3] != "0").then(|| fields[0].to_string())
            })
            .collect();
        Ok(Cgroups::V1(subsystems))
    }

    fn lookup_host(&self, name: &str) -> Result<Vec<String>, String> {
        // getaddrinfo through the system's configuration (/etc/hosts first on a standard nsswitch).
        match (name, 0u16).to_socket_addrs() {
            Ok(addrs) => {
                let mut out: Vec<String> = Vec::new();
                for a in addrs {
                    let ip = a.ip().to_string();
                    if !out.contains(&ip) {
                        out.push(ip);
                    }
                }
                Ok(out)
            }
            Err(_) => Err(format!("lookup {name} on {}: no such host", first_nameserver())),
        }
    }

    fn init_system(&self) -> Option<InitSystemKind> {
        HostInitSystem::detect().kind()
    }

    fn service(&self, init: InitSystemKind, name: &str) -> ServiceState {
        let exists = HostInitSystem::detect().service_exists(name);
        match init {
            InitSystemKind::Systemd => ServiceState {
                exists,
                enabled: command_stdout("systemctl", &["is-enabled", name]).is_some_and(|(ok, _, _)| ok),
                active: command_stdout("systemctl", &["is-active", name])
                    .is_some_and(|(_, out, _)| matches!(out.trim(), "active" | "activating")),
            },
            InitSystemKind::OpenRc => {
                let status = command_stdout("rc-service", &[name, "status"])
                    .map(|(_, out, err)| out + &err)
                    .unwrap_or_default();
                ServiceState {
                    exists,
                    enabled: command_stdout("rc-update", &["show", "default"])
                        .is_some_and(|(_, out, _)| out.contains(name)),
                    active: !status.contains("stopped") && !status.contains("does not exist"),
                }
            }
        }
    }

    fn kubelet_version_output(&self) -> Result<String, String> {
        match Command::new("kubelet").arg("--version").output() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err("executable file not found in $PATH".to_string())
            }
            Err(e) => Err(e.to_string()),
            Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
            Ok(out) => Err(match out.status.code() {
                Some(code) => format!("exit status {code}"),
                None => out.status.to_string(),
            }),
        }
    }

    fn proxy_env(&self) -> ProxyEnv {
        ProxyEnv {
            http_proxy: env_any(&["HTTP_PROXY", "http_proxy"]),
            https_proxy: env_any(&["HTTPS_PROXY", "https_proxy"]),
            no_proxy: env_any(&["NO_PROXY", "no_proxy"]),
            cgi: std::env::var_os("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
        }
    }
}
