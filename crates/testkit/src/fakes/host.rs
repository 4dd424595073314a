//! A scripted host for the preflight checks and every phase that reads host facts.

use std::collections::{BTreeMap, BTreeSet};

use kubeadm_effects::host_probe::{
    Cgroups, DirEntries, HostProbe, HostProbeError, InitSystemKind, PathKind, ProxyEnv, ServiceState,
};

/// A scripted host for tests and for callers that want to evaluate checks against given facts.
///
/// Starts as a healthy node: root, 2 CPUs, 4 GiB, no swap, the sysctls set to `1`, every port free,
/// every listed binary present, kernel 5.15 with every required option, cgroup v2 with every required
/// controller, the node name resolving, systemd with kubelet enabled, kubelet v1.25.16, no proxy.
/// Tests change the field they are about.
#[derive(Debug, Clone)]
pub struct FakeHost {
    /// See [`HostProbe::uid`].
    pub uid: u32,
    /// See [`HostProbe::num_cpu`].
    pub num_cpu: usize,
    /// See [`HostProbe::memory_mb`].
    pub memory_mb: Result<u64, HostProbeError>,
    /// Regular files and their content.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Directories and whether they have entries.
    pub dirs: BTreeMap<String, DirEntries>,
    /// Paths whose `stat` fails with this text.
    pub broken_paths: BTreeMap<String, String>,
    /// See [`HostProbe::swaps`].
    pub swaps: Option<Vec<String>>,
    /// Ports something listens on.
    pub ports_in_use: BTreeSet<u16>,
    /// Binaries found in `PATH`.
    pub binaries: BTreeSet<String>,
    /// See [`HostProbe::kernel_release`].
    pub kernel_release: Result<String, HostProbeError>,
    /// See [`HostProbe::os_name`].
    pub os_name: Result<String, HostProbeError>,
    /// See [`HostProbe::kernel_config`].
    pub kernel_config: Result<String, HostProbeError>,
    /// See [`HostProbe::cgroups`].
    pub cgroups: Result<Cgroups, HostProbeError>,
    /// Names that resolve, and to what; any other name fails with Go's "no such host" text.
    pub hosts: BTreeMap<String, Vec<String>>,
    /// See [`HostProbe::init_system`].
    pub init_system: Option<InitSystemKind>,
    /// Services by name; a missing one does not exist.
    pub services: BTreeMap<String, ServiceState>,
    /// See [`HostProbe::kubelet_version_output`].
    pub kubelet_version_output: Result<String, HostProbeError>,
    /// See [`HostProbe::proxy_env`].
    pub proxy_env: ProxyEnv,
    /// What a `GET` of each URL answers (a status code or Go's error text); a URL not listed is
    /// refused, as a port nothing listens on.
    pub http: BTreeMap<String, Result<u16, HostProbeError>>,
    /// The body each URL of `http` answers with (none: empty).
    pub http_bodies: BTreeMap<String, String>,
    /// Each service's log lines, oldest first; a service not listed has no log.
    pub service_logs: BTreeMap<String, Vec<String>>,
    /// See [`HostProbe::local_addresses`].
    pub addresses: Vec<std::net::IpAddr>,
}

/// The kernel options upstream's validator requires or recommends, all built in; for [`FakeHost`].
const FAKE_KERNEL_CONFIG: &str = "CONFIG_NAMESPACES=y\nCONFIG_NET_NS=y\nCONFIG_PID_NS=y\n\
CONFIG_IPC_NS=y\nCONFIG_UTS_NS=y\nCONFIG_CGROUPS=y\nCONFIG_CGROUP_CPUACCT=y\nCONFIG_CGROUP_DEVICE=y\n\
CONFIG_CGROUP_FREEZER=y\nCONFIG_CGROUP_PIDS=y\nCONFIG_CGROUP_SCHED=y\nCONFIG_CPUSETS=y\nCONFIG_MEMCG=y\n\
CONFIG_INET=y\nCONFIG_EXT4_FS=y\nCONFIG_PROC_FS=y\nCONFIG_NETFILTER_XT_TARGET_REDIRECT=m\n\
CONFIG_NETFILTER_XT_MATCH_COMMENT=m\nCONFIG_FAIR_GROUP_SCHED=y\nCONFIG_OVERLAY_FS=m\nCONFIG_AUFS_FS=m\n\
CONFIG_BLK_DEV_DM=y\nCONFIG_CFS_BANDWIDTH=y\nCONFIG_CGROUP_HUGETLB=y\nCONFIG_SECCOMP=y\n\
CONFIG_SECCOMP_FILTER=y\n";

impl Default for FakeHost {
    fn default() -> Self {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        FakeHost {
            uid: 0,
            num_cpu: 2,
            memory_mb: Ok(4096),
            files: [
                ("/proc/sys/net/bridge/bridge-nf-call-iptables", b"1\n".to_vec()),
                ("/proc/sys/net/ipv4/ip_forward", b"1\n".to_vec()),
                ("/proc/sys/net/bridge/bridge-nf-call-ip6tables", b"1\n".to_vec()),
                ("/proc/sys/net/ipv6/conf/default/forwarding", b"1\n".to_vec()),
            ]
            .into_iter()
            .map(|(p, c)| (p.to_string(), c))
            .collect(),
            dirs: BTreeMap::new(),
            broken_paths: BTreeMap::new(),
            swaps: Some(vec!["Filename\tType\tSize\tUsed\tPriority".to_string()]),
            ports_in_use: BTreeSet::new(),
            binaries: strings(&[
                "crictl",
                "conntrack",
                "ip",
                "iptables",
                "mount",
                "nsenter",
                "ebtables",
                "ethtool",
                "socat",
                "tc",
                "touch",
                "kubelet",
                "systemctl",
            ]),
            kernel_release: Ok("5.15.0-91-generic".to_string()),
            os_name: Ok("Linux".to_string()),
            kernel_config: Ok(FAKE_KERNEL_CONFIG.to_string()),
            cgroups: Ok(Cgroups::V2(
                ["cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            )),
            hosts: [("node1".to_string(), vec!["10.0.0.1".to_string()])].into(),
            init_system: Some(InitSystemKind::Systemd),
            services: [(
                "kubelet".to_string(),
                ServiceState {
                    exists: true,
                    enabled: true,
                    active: false,
                    restarts: None,
                },
            )]
            .into(),
            kubelet_version_output: Ok("Kubernetes v1.25.16\n".to_string()),
            proxy_env: ProxyEnv::default(),
            http: BTreeMap::new(),
            http_bodies: BTreeMap::new(),
            service_logs: BTreeMap::new(),
            addresses: ["127.0.0.1", "10.0.0.1", "::1"]
                .iter()
                .map(|a| a.parse().expect("address"))
                .collect(),
        }
    }
}

impl HostProbe for FakeHost {
    fn uid(&self) -> u32 {
        self.uid
    }
    fn num_cpu(&self) -> usize {
        self.num_cpu
    }
    fn memory_mb(&self) -> Result<u64, HostProbeError> {
        self.memory_mb.clone()
    }
    fn path_kind(&self, path: &str) -> PathKind {
        if let Some(e) = self.broken_paths.get(path) {
            PathKind::Unknown(e.clone())
        } else if self.files.contains_key(path) {
            PathKind::File
        } else if self.dirs.contains_key(path) {
            PathKind::Dir
        } else {
            PathKind::Missing
        }
    }
    fn dir_entries(&self, path: &str) -> DirEntries {
        match self.dirs.get(path) {
            Some(d) => d.clone(),
            None => DirEntries::Unreadable(format!("open {path}: no such file or directory")),
        }
    }
    fn read_prefix(&self, path: &str, limit: usize) -> Option<Vec<u8>> {
        self.files.get(path).map(|c| c[..limit.min(c.len())].to_vec())
    }
    fn swaps(&self) -> Option<Vec<String>> {
        self.swaps.clone()
    }
    fn port_free(&self, port: u16) -> bool {
        !self.ports_in_use.contains(&port)
    }
    fn look_path(&self, exe: &str) -> Option<String> {
        self.binaries.contains(exe).then(|| format!("/usr/bin/{exe}"))
    }
    fn kernel_release(&self) -> Result<String, HostProbeError> {
        self.kernel_release.clone()
    }
    fn os_name(&self) -> Result<String, HostProbeError> {
        self.os_name.clone()
    }
    fn kernel_config(&self, _release: &str) -> Result<String, HostProbeError> {
        self.kernel_config.clone()
    }
    fn cgroups(&self) -> Result<Cgroups, HostProbeError> {
        self.cgroups.clone()
    }
    fn lookup_host(&self, name: &str) -> Result<Vec<String>, HostProbeError> {
        self.hosts
            .get(name)
            .cloned()
            .ok_or_else(|| HostProbeError::NoSuchHost {
                name: name.to_string(),
                server: "127.0.0.53:53".to_string(),
            })
    }
    fn init_system(&self) -> Option<InitSystemKind> {
        self.init_system
    }
    fn service(&self, _init: InitSystemKind, name: &str) -> ServiceState {
        self.services.get(name).copied().unwrap_or_default()
    }
    fn kubelet_version_output(&self) -> Result<String, HostProbeError> {
        self.kubelet_version_output.clone()
    }
    fn proxy_env(&self) -> ProxyEnv {
        self.proxy_env.clone()
    }
    fn service_log(&self, service: &str, lines: usize) -> Result<Vec<String>, HostProbeError> {
        let log = self
            .service_logs
            .get(service)
            .ok_or_else(|| HostProbeError::Unavailable(format!("no log of {service}")))?;
        Ok(log[log.len().saturating_sub(lines)..].to_vec())
    }
    fn local_addresses(&self) -> Result<Vec<std::net::IpAddr>, HostProbeError> {
        Ok(self.addresses.clone())
    }
    fn http_get_text(&self, url: &str) -> Result<(u16, String), HostProbeError> {
        let code = self.http_get(url)?;
        Ok((code, self.http_bodies.get(url).cloned().unwrap_or_default()))
    }
    fn http_get(&self, url: &str) -> Result<u16, HostProbeError> {
        self.http.get(url).cloned().unwrap_or_else(|| {
            let port = url
                .rsplit_once(':')
                .map_or("80", |(_, p)| p.split('/').next().unwrap_or("80"));
            Err(HostProbeError::Http {
                url: url.to_string(),
                reason: format!("dial tcp 127.0.0.1:{port}: connect: connection refused"),
            })
        })
    }
}
