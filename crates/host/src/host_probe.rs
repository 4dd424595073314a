//! The real [`HostProbe`]: reads this host the way upstream's preflight checks do (`getuid`, the CPU
//! affinity mask, `sysinfo`, `stat`, a throw-away TCP listener, `PATH`, `uname`, the kernel config
//! files, `/sys/fs/cgroup`, the system resolver, `systemctl`, `kubelet --version`, the environment).
//!
//! Only reads. One deliberate gap: when no kernel config file exists upstream loads the `configs`
//! kernel module (and unloads it afterwards); we do not change the kernel's state and report the
//! missing file instead.

use std::io::{self, Read};
use std::net::{TcpListener, ToSocketAddrs};
use std::time::Duration;

use kubeadm_effects::host_probe::{
    Cgroups, DirEntries, HostProbe, HostProbeError, InitSystemKind, PathKind, ProxyEnv, ServiceState,
};
use kubeadm_effects::init_system::InitSystem;

use crate::init_system::HostInitSystem;
use crate::path_lookup;

/// This host.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealHostProbe;

/// An I/O error as Go words it after the operation and path: `stat /x: permission denied`.
fn go_error(op: &str, path: &str, e: &io::Error) -> HostProbeError {
    HostProbeError::Path {
        op: op.to_string(),
        path: path.to_string(),
        reason: kubeadm_api::gofmt::io_error(e),
    }
}

/// A failed system call's errno text, as Go words it (`operation not permitted`).
fn syscall_error(e: nix::errno::Errno) -> HostProbeError {
    HostProbeError::Syscall(e.desc().to_lowercase())
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
    let out = path_lookup::command(program).ok()?.args(args).output().ok()?;
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

    fn memory_mb(&self) -> Result<u64, HostProbeError> {
        nix::sys::sysinfo::sysinfo()
            .map(|info| info.ram_total() / 1024 / 1024)
            .map_err(syscall_error)
    }

    fn path_kind(&self, path: &str) -> PathKind {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => PathKind::Dir,
            Ok(_) => PathKind::File,
            Err(e) if e.kind() == io::ErrorKind::NotFound => PathKind::Missing,
            Err(e) => PathKind::Unknown(go_error("stat", path, &e).to_string()),
        }
    }

    fn dir_entries(&self, path: &str) -> DirEntries {
        match std::fs::read_dir(path) {
            Ok(mut entries) => match entries.next() {
                None => DirEntries::Empty,
                Some(_) => DirEntries::NotEmpty,
            },
            Err(e) => DirEntries::Unreadable(go_error("open", path, &e).to_string()),
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
        path_lookup::look_path(exe).map(|p| p.display().to_string())
    }

    fn kernel_release(&self) -> Result<String, HostProbeError> {
        nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .map_err(syscall_error)
    }

    fn os_name(&self) -> Result<String, HostProbeError> {
        nix::sys::utsname::uname()
            .map(|u| u.sysname().to_string_lossy().into_owned())
            .map_err(syscall_error)
    }

    fn kernel_config(&self, release: &str) -> Result<String, HostProbeError> {
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
            return Err(HostProbeError::Unavailable(format!(
                "no config path in [{}] is available",
                candidates.join(" ")
            )));
        };
        if path.ends_with(".gz") {
            // gzip is part of every Linux base system; decompressing here keeps a deflate
            // implementation out of the dependency tree for one small file.
            let out = path_lookup::command("gzip")
                .and_then(|mut c| c.args(["-dc", path]).output())
                .map_err(|e| go_error("gzip -dc", path, &e))?;
            if !out.status.success() {
                return Err(HostProbeError::Path {
                    op: "gzip -dc".to_string(),
                    path: path.clone(),
                    reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                });
            }
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        std::fs::read(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| go_error("open", path, &e))
    }

    fn cgroups(&self) -> Result<Cgroups, HostProbeError> {
        const ROOT: &str = "/sys/fs/cgroup";
        let st = nix::sys::statfs::statfs(ROOT)
            .map_err(|e| syscall_error(e).context("cannot statfs the cgroupv2 root"))?;
        if st.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC {
            let path = format!("{ROOT}/cgroup.controllers");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| go_error("open", &path, &e).context("failed to get cgroup v2 subsystems"))?;
            return Ok(Cgroups::V2(text.split_whitespace().map(str::to_string).collect()));
        }
        let text = std::fs::read_to_string("/proc/cgroups").map_err(|e| {
            go_error("open", "/proc/cgroups", &e).context("failed to get cgroup v1 subsystems")
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

    fn lookup_host(&self, name: &str) -> Result<Vec<String>, HostProbeError> {
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
            Err(_) => Err(HostProbeError::NoSuchHost {
                name: name.to_string(),
                server: first_nameserver(),
            }),
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
                restarts: command_stdout("systemctl", &["show", "--property=NRestarts", "--value", name])
                    .and_then(|(ok, out, _)| if ok { out.trim().parse().ok() } else { None }),
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
                    restarts: None,
                }
            }
        }
    }

    fn kubelet_version_output(&self) -> Result<String, HostProbeError> {
        match path_lookup::command("kubelet").and_then(|mut c| c.arg("--version").output()) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(HostProbeError::Command(
                "executable file not found in $PATH".to_string(),
            )),
            Err(e) => Err(HostProbeError::Command(e.to_string())),
            Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
            Ok(out) => Err(HostProbeError::Command(match out.status.code() {
                Some(code) => format!("exit status {code}"),
                None => out.status.to_string(),
            })),
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

    fn local_addresses(&self) -> Result<Vec<std::net::IpAddr>, HostProbeError> {
        crate::probe::interfaces()
            .map(|list| list.into_iter().flat_map(|i| i.addresses).collect())
            .map_err(|e| HostProbeError::Syscall(e.to_string()))
    }

    fn http_get(&self, url: &str) -> Result<u16, HostProbeError> {
        http_get(self, url, false).map(|(code, _)| code)
    }

    fn http_get_text(&self, url: &str) -> Result<(u16, String), HostProbeError> {
        http_get(self, url, true)
    }

    fn service_log(&self, service: &str, lines: usize) -> Result<Vec<String>, HostProbeError> {
        if HostInitSystem::detect().kind() != Some(InitSystemKind::Systemd) {
            return Err(HostProbeError::Unavailable(
                "no systemd journal on this host".to_string(),
            ));
        }
        let n = lines.to_string();
        match command_stdout(
            "journalctl",
            &["-u", service, "-n", &n, "--no-pager", "-o", "cat"],
        ) {
            Some((true, out, _)) => Ok(out.lines().map(str::to_string).collect()),
            Some((false, _, err)) => Err(HostProbeError::Command(format!("journalctl: {}", err.trim()))),
            None => Err(HostProbeError::Command("journalctl could not be run".to_string())),
        }
    }
}

/// How long a connection may take to open, and an answer to come: Go's old transport defaults
/// (30 s to dial) and a bound of our own on the answer, which upstream does not set.
const HTTP_DIAL_TIMEOUT: Duration = Duration::from_secs(30);
const HTTP_ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The most of an answer's body [`http_get`] reads.
const HTTP_BODY_LIMIT: u64 = 64 * 1024;

/// A plain-HTTP `GET` with Go's client's steps and error words: the host resolved (the first
/// address, as Go's dialer tries it first), `dial tcp <addr>: connect: <errno text>`, then the
/// status line of the answer, and its body (up to [`HTTP_BODY_LIMIT`]) when `body` is asked for.
/// Loopback is never proxied, in Go as here; other hosts are not asked.
fn http_get(probe: &RealHostProbe, url: &str, body: bool) -> Result<(u16, String), HostProbeError> {
    use std::io::Write as _;
    use std::net::{IpAddr, SocketAddr, TcpStream};

    // Go's client puts the URL before every reason: `Get "<url>": <reason>`.
    let fail = |reason: String| HostProbeError::Http {
        url: url.to_string(),
        reason,
    };
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| fail("unsupported protocol scheme".to_string()))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
            h,
            p.parse::<u16>()
                .map_err(|_| fail(format!("invalid port {p:?}")))?,
        ),
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = match host.parse() {
        Ok(ip) => ip,
        Err(_) => {
            let addrs = probe
                .lookup_host(host)
                .map_err(|e| fail(format!("dial tcp: {e}")))?;
            addrs
                .first()
                .and_then(|a| a.parse().ok())
                .ok_or_else(|| fail(format!("dial tcp: lookup {host}: no such host")))?
        }
    };
    let addr = SocketAddr::new(ip, port);
    let mut conn = TcpStream::connect_timeout(&addr, HTTP_DIAL_TIMEOUT).map_err(|e| {
        fail(if e.kind() == io::ErrorKind::TimedOut {
            format!("dial tcp {addr}: i/o timeout")
        } else {
            format!("dial tcp {addr}: connect: {}", kubeadm_api::gofmt::io_error(&e))
        })
    })?;
    let io_err = |e: io::Error| fail(format!("read tcp {addr}: {}", kubeadm_api::gofmt::io_error(&e)));
    conn.set_read_timeout(Some(HTTP_ANSWER_TIMEOUT)).map_err(io_err)?;
    conn.set_write_timeout(Some(HTTP_ANSWER_TIMEOUT))
        .map_err(io_err)?;
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )
    .map_err(io_err)?;
    // The status line is all we need: "HTTP/1.1 200 OK".
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while head.len() < 256 && !head.ends_with(b"\n") {
        match conn.read(&mut byte).map_err(io_err)? {
            0 => break,
            _ => head.push(byte[0]),
        }
    }
    let line = String::from_utf8_lossy(&head);
    let code = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .filter(|_| line.starts_with("HTTP/"))
        .ok_or_else(|| {
            fail(if head.is_empty() {
                "EOF".to_string()
            } else {
                format!("malformed HTTP response {:?}", line.trim_end())
            })
        })?;
    if !body {
        return Ok((code, String::new()));
    }
    // The request said `Connection: close`: the answer ends where the connection does.
    let mut rest = Vec::new();
    (&mut conn)
        .take(HTTP_BODY_LIMIT)
        .read_to_end(&mut rest)
        .map_err(io_err)?;
    let rest = String::from_utf8_lossy(&rest);
    let (headers, text) = rest.split_once("\r\n\r\n").unwrap_or((&rest, ""));
    let chunked = headers.lines().any(|h| {
        h.split_once(':').is_some_and(|(k, v)| {
            k.eq_ignore_ascii_case("transfer-encoding") && v.trim().eq_ignore_ascii_case("chunked")
        })
    });
    Ok((code, if chunked { dechunk(text) } else { text.to_string() }))
}

/// An HTTP/1.1 chunked body's data (`<hex size>\r\n<data>\r\n` … `0\r\n\r\n`), as far as it is whole.
fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let size = size.split(';').next().unwrap_or_default().trim();
        let Ok(n) = usize::from_str_radix(size, 16) else {
            break;
        };
        if n == 0 || rest.len() < n || !rest.is_char_boundary(n) {
            break;
        }
        out.push_str(&rest[..n]);
        text = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;

    use super::*;

    /// A server on a free loopback port that answers one request with `answer`; joining it gives
    /// the request's head as received.
    fn serve_once(answer: &'static str) -> (u16, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().expect("accept");
            // The request may come in several writes: read up to the end of its head.
            let mut request = Vec::new();
            let mut chunk = [0u8; 512];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = conn.read(&mut chunk).expect("read");
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&chunk[..n]);
            }
            conn.write_all(answer.as_bytes()).expect("write");
            String::from_utf8_lossy(&request).into_owned()
        });
        (port, server)
    }

    /// The status code of a real answer, the request line sent, and a refused port in Go's words.
    #[test]
    fn http_get_reads_the_status_and_words_refusals_as_go() {
        let (port, server) = serve_once("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
        let url = format!("http://127.0.0.1:{port}/healthz");
        assert_eq!(RealHostProbe.http_get(&url), Ok(503));
        let request = server.join().expect("server");
        assert!(
            request.starts_with("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:"),
            "{request}"
        );

        // With the body: as sent, and a chunked one put together.
        for (answer, body) in [
            (
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 44\r\n\r\n{\"health\":\"false\",\"reason\":\"RAFT NO LEADER\"}",
                "{\"health\":\"false\",\"reason\":\"RAFT NO LEADER\"}",
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"he\r\nd;x=1\r\nalth\":\"true\"}\r\n0\r\n\r\n",
                "{\"health\":\"true\"}",
            ),
        ] {
            let (port, server) = serve_once(answer);
            let url = format!("http://127.0.0.1:{port}/health");
            let code: u16 = answer[9..12].parse().expect("code");
            assert_eq!(RealHostProbe.http_get_text(&url), Ok((code, body.to_string())));
            server.join().expect("server");
        }

        // Nothing listens on the port once the listener is gone.
        assert_eq!(
            RealHostProbe.http_get(&url).map_err(|e| e.to_string()),
            Err(format!(
                "Get \"{url}\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            ))
        );
    }
}
