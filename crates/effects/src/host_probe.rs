//! Facts about this host that kubeadm's preflight checks read: who runs the process, how many CPUs
//! and how much memory it has, swap, files and directories, free TCP ports, binaries in `PATH`, the
//! kernel (release, configuration), cgroups, the node name's resolution, init-system services, the
//! kubelet's version and the proxy environment.
//!
//! A small synchronous trait with plain data, so that the checks are pure functions of these facts
//! and table-driven tests can script any host (kubeadm-testkit's `FakeHost`). The real
//! implementation lives in kubeadm-host. Every method only reads: preflight must leave the host as it found it.
//!
//! Depends on nothing but std (and thiserror for [`HostProbeError`]).

use std::fmt;

pub use crate::init_system::InitSystemKind;

/// What a path is, as `stat(2)` (following symlinks) sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKind {
    /// Nothing there (`ENOENT`).
    Missing,
    /// A regular file (or anything that is not a directory: device, socket, …).
    File,
    /// A directory.
    Dir,
    /// `stat` failed for another reason (permissions, a file used as a directory, …); Go's error text.
    Unknown(String),
}

/// Whether a directory holds at least one entry, as Go's `Readdirnames(1)` tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirEntries {
    /// No entry besides `.` and `..`.
    Empty,
    /// At least one entry.
    NotEmpty,
    /// Opening or reading failed; the error text (upstream then reports "unable to check if … is empty").
    Unreadable(String),
}

/// Why a [`HostProbe`] could not read a fact, in the words upstream's Go code uses for the same
/// failure (the preflight checks and the diagnosis print it as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostProbeError {
    /// A file operation failed, as Go's `*fs.PathError` words it: `open /proc/cgroups: permission
    /// denied`.
    #[error("{op} {path}: {reason}")]
    Path {
        /// The operation (`open`, `stat`, `gzip -dc`).
        op: String,
        /// The file.
        path: String,
        /// The error's text (`permission denied`).
        reason: String,
    },
    /// A system call failed (`sysinfo`, `uname`, `statfs`): the errno's text, `operation not
    /// permitted`.
    #[error("{0}")]
    Syscall(String),
    /// A command could not run or failed, in the words of k8s.io/utils/exec (`executable file not
    /// found in $PATH`, `exit status 1`) or with its standard error (`journalctl: …`).
    #[error("{0}")]
    Command(String),
    /// A name did not resolve, as Go's resolver says: `lookup node1 on 10.0.0.53:53: no such host`.
    #[error("lookup {name} on {server}: no such host")]
    NoSuchHost {
        /// The name looked up.
        name: String,
        /// The name server asked (`10.0.0.53:53`).
        server: String,
    },
    /// A plain-HTTP `GET` failed, as Go's HTTP client says: `Get "<url>": dial tcp …`.
    #[error("Get {url:?}: {reason}")]
    Http {
        /// The URL.
        url: String,
        /// Why: the dial, read or protocol error (`dial tcp 127.0.0.1:10248: connect: connection
        /// refused`).
        reason: String,
    },
    /// The host does not have the fact at all: no kernel configuration file, no journal, no log.
    #[error("{0}")]
    Unavailable(String),
    /// One of the above with upstream's words for the step that failed before it (`failed to get
    /// cgroup v2 subsystems: open …`).
    #[error("{context}: {source}")]
    Context {
        /// The step (`cannot statfs the cgroupv2 root`).
        context: String,
        /// Why it failed.
        source: Box<HostProbeError>,
    },
}

impl HostProbeError {
    /// The error with upstream's words for the step that failed put before it.
    pub fn context(self, context: impl Into<String>) -> Self {
        HostProbeError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }
}

/// The cgroup hierarchy mounted at `/sys/fs/cgroup`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cgroups {
    /// cgroup v1: the subsystems `/proc/cgroups` lists as enabled (fourth column not `0`), in its order.
    V1(Vec<String>),
    /// cgroup v2 (`statfs` says `CGROUP2_SUPER_MAGIC`): the controllers in `cgroup.controllers`, in its
    /// order, without the implicit `devices` and `freezer` (the validator adds those).
    V2(Vec<String>),
}

/// The command upstream suggests to enable a service.
pub fn enable_command(init: InitSystemKind, service: &str) -> String {
    match init {
        InitSystemKind::Systemd => format!("systemctl enable {service}.service"),
        InitSystemKind::OpenRc => format!("rc-update add {service} default"),
    }
}

/// A service as the init system reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServiceState {
    /// Known to the init system (systemd: `systemctl status` does not say `Loaded: not-found`).
    pub exists: bool,
    /// Enabled at boot (systemd: `systemctl is-enabled` exits 0).
    pub enabled: bool,
    /// Running or starting (systemd: `systemctl is-active` prints `active` or `activating`).
    pub active: bool,
    /// How often the init system restarted it since it was last started by hand (systemd:
    /// `NRestarts`); `None` where the init system does not count.
    pub restarts: Option<u32>,
}

/// The proxy settings of the environment, resolved as Go's `httpproxy.FromEnvironment` does: the upper
/// case variable wins when set and not empty, then the lower case one; empty means unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTP_PROXY` / `http_proxy`.
    pub http_proxy: String,
    /// `HTTPS_PROXY` / `https_proxy`.
    pub https_proxy: String,
    /// `NO_PROXY` / `no_proxy`.
    pub no_proxy: String,
    /// `REQUEST_METHOD` is set: a CGI environment, where Go ignores `HTTP_PROXY`.
    pub cgi: bool,
}

/// Reads facts about this host. Implementations must not change the host.
pub trait HostProbe: fmt::Debug + Send + Sync {
    /// The real user id (upstream's `IsPrivilegedUser` uses `os.Getuid`).
    fn uid(&self) -> u32;

    /// CPUs this process may run on (Go's `runtime.NumCPU`: the affinity mask, not cgroup quotas).
    fn num_cpu(&self) -> usize;

    /// Total usable RAM in MiB (`sysinfo(2)`: `totalram * mem_unit / 1024 / 1024`), or why not.
    fn memory_mb(&self) -> Result<u64, HostProbeError>;

    /// What is at `path`.
    fn path_kind(&self, path: &str) -> PathKind;

    /// Whether the directory at `path` has entries.
    fn dir_entries(&self, path: &str) -> DirEntries;

    /// At most `limit` bytes from the start of the file at `path`; `None` when it cannot be opened.
    fn read_prefix(&self, path: &str, limit: usize) -> Option<Vec<u8>>;

    /// The lines of `/proc/swaps`; `None` when it cannot be opened.
    fn swaps(&self) -> Option<Vec<String>>;

    /// Whether a TCP listener can be opened on `port` on every address (Go's `net.Listen("tcp", ":port")`).
    /// The listener is closed at once.
    fn port_free(&self, port: u16) -> bool;

    /// Where `exe` is found in `PATH` (Go's `exec.LookPath`), if anywhere.
    fn look_path(&self, exe: &str) -> Option<String>;

    /// `uname -r`, or why not.
    fn kernel_release(&self) -> Result<String, HostProbeError>;

    /// `uname` (the operating system name, `Linux`), or why not.
    fn os_name(&self) -> Result<String, HostProbeError>;

    /// The kernel build configuration (`CONFIG_…=y|m|n` lines) from the first of upstream's candidate
    /// paths that exists (`/proc/config.gz`, `/boot/config-<release>`, …), decompressed; or the error
    /// text.
    fn kernel_config(&self, release: &str) -> Result<String, HostProbeError>;

    /// The cgroup hierarchy, or why not (upstream's wording, e.g. `cannot statfs the cgroupv2
    /// root: …`).
    fn cgroups(&self) -> Result<Cgroups, HostProbeError>;

    /// Resolves `name` through the local resolver (Go's `net.LookupHost`): the addresses, or the error
    /// text in Go's form (`lookup node1 on 10.0.0.53:53: no such host`).
    fn lookup_host(&self, name: &str) -> Result<Vec<String>, HostProbeError>;

    /// The init system, if a supported one is found.
    fn init_system(&self) -> Option<InitSystemKind>;

    /// The state of a service under `init`.
    fn service(&self, init: InitSystemKind, name: &str) -> ServiceState;

    /// Standard output of `kubelet --version`, or the error in the words of k8s.io/utils/exec
    /// (`executable file not found in $PATH`, `exit status 1`).
    fn kubelet_version_output(&self) -> Result<String, HostProbeError>;

    /// The proxy environment.
    fn proxy_env(&self) -> ProxyEnv;

    /// The status code of a plain-HTTP `GET` of `url` (`http://host:port/path`, the kubelet's
    /// healthz endpoint), or the error in the words of Go's HTTP client (`Get "<url>": dial tcp
    /// 127.0.0.1:10248: connect: connection refused`).
    fn http_get(&self, url: &str) -> Result<u16, HostProbeError>;

    /// As [`HostProbe::http_get`], with the answer's body (the first 64 KiB, as text): etcd's
    /// `/health` says why it is unhealthy there.
    fn http_get_text(&self, url: &str) -> Result<(u16, String), HostProbeError>;

    /// The last `lines` lines the init system keeps of a service's log (systemd's journal:
    /// `journalctl -u <service> -n <lines>`), oldest first; an error when there is none.
    fn service_log(&self, service: &str, lines: usize) -> Result<Vec<String>, HostProbeError>;

    /// The addresses of this host's network interfaces (an error when they cannot be read).
    fn local_addresses(&self) -> Result<Vec<std::net::IpAddr>, HostProbeError>;
}
