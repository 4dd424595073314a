//! Reading facts about this host that defaulting and preflight need: its name, its route tables, its
//! network interfaces, which runtime sockets exist. Only reads; the decisions are made elsewhere.

use std::io;
use std::net::IpAddr;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// A network interface as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceInfo {
    /// Name, e.g. `eth0`.
    pub name: String,
    /// Kernel interface index (Go lists interfaces in this order).
    pub index: u32,
    /// `IFF_*` flags from `/sys/class/net/<name>/flags`.
    pub flags: u32,
    /// Addresses, IPv4 first then IPv6, in the kernel's order within each family.
    pub addresses: Vec<IpAddr>,
}

impl InterfaceInfo {
    /// `IFF_UP`.
    pub fn up(&self) -> bool {
        self.flags & 0x1 != 0
    }
    /// `IFF_LOOPBACK`.
    pub fn loopback(&self) -> bool {
        self.flags & 0x8 != 0
    }
    /// `IFF_POINTOPOINT`.
    pub fn point_to_point(&self) -> bool {
        self.flags & 0x10 != 0
    }
}

/// The host name as Go's `os.Hostname` reads it.
pub fn hostname() -> io::Result<String> {
    match std::fs::read_to_string("/proc/sys/kernel/hostname") {
        Ok(raw) => Ok(raw.trim_end_matches('\n').to_string()),
        // Without /proc (e.g. under --rootfs), Go falls back to uname(2).
        Err(_) => nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .map_err(io::Error::from),
    }
}

/// The text of `/proc/net/route` (`None` when the file does not exist) and of `/proc/net/ipv6_route`
/// (empty when unreadable, as upstream ignores it then).
pub fn route_tables() -> io::Result<(Option<String>, String)> {
    let v4 = match std::fs::read_to_string("/proc/net/route") {
        Ok(s) => Some(s),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let v6 = std::fs::read_to_string("/proc/net/ipv6_route").unwrap_or_default();
    Ok((v4, v6))
}

/// Every network interface that has an address, with its flags and addresses, in index order.
///
/// Addresses come from getifaddrs(3) (netlink, which also works under `--rootfs` where `/sys` may be
/// missing); flags from `/sys/class/net/<name>/flags` when readable, else derived from what getifaddrs
/// reports.
pub fn interfaces() -> io::Result<Vec<InterfaceInfo>> {
    let mut addrs = if_addrs::get_if_addrs()?;
    // IPv4 before IPv6, as Go's netlink listing returns them.
    addrs.sort_by_key(|a| a.ip().is_ipv6());
    let mut list: Vec<InterfaceInfo> = Vec::new();
    for a in addrs {
        if let Some(i) = list.iter_mut().find(|i| i.name == a.name) {
            i.addresses.push(a.ip());
            continue;
        }
        let sys = |file: &str| std::fs::read_to_string(format!("/sys/class/net/{}/{file}", a.name));
        // A /sys mounted from another network namespace describes that namespace's interfaces: its
        // flags count only when its index for the name is the kernel's here.
        let same_namespace =
            a.index.is_some() && sys("ifindex").ok().and_then(|s| s.trim().parse::<u32>().ok()) == a.index;
        let sys_flags = sys("flags")
            .ok()
            .filter(|_| same_namespace)
            .and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok());
        let flags = sys_flags.unwrap_or_else(|| {
            let up = a.oper_status != if_addrs::IfOperStatus::Down;
            u32::from(up) | if a.is_loopback() { 0x8 } else { 0 } | if a.is_p2p() { 0x10 } else { 0 }
        });
        list.push(InterfaceInfo {
            index: a.index.unwrap_or(u32::MAX),
            flags,
            name: a.name.clone(),
            addresses: vec![a.ip()],
        });
    }
    list.sort_by_key(|i| i.index);
    Ok(list)
}

/// Whether `path` exists and is a Unix socket.
pub fn is_socket(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.file_type().is_socket())
        .unwrap_or(false)
}

/// Upstream's `GetInitSystem` test: `systemctl`, else `openrc`, found on the PATH (as Go's
/// `exec.LookPath`: an executable file in an absolute PATH entry); the error text when neither is.
pub fn init_system_error() -> Option<String> {
    let on_path = |name: &str| crate::path_lookup::look_path(name).is_some();
    if on_path("systemctl") || on_path("openrc") {
        None
    } else {
        Some("no supported init system detected, skipping checking for services".to_string())
    }
}

/// Whether systemd runs this host and its `systemd-resolved` unit is active (upstream asks the init
/// system; without systemd the answer is no).
pub fn systemd_resolved_active() -> bool {
    Path::new("/run/systemd/system").is_dir()
        && crate::path_lookup::command("systemctl")
            .and_then(|mut c| c.args(["is-active", "--quiet", "systemd-resolved"]).status())
            .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_interface_is_listed_with_its_address() {
        let ifs = interfaces().expect("interfaces");
        let lo = ifs.iter().find(|i| i.name == "lo").expect("lo");
        assert!(lo.loopback());
        assert!(lo.addresses.contains(&"127.0.0.1".parse().expect("ip")));
    }

    #[test]
    fn a_regular_file_is_not_a_socket() {
        assert!(!is_socket(Path::new("/proc/self/status")));
        assert!(!is_socket(Path::new("/nonexistent/socket")));
    }
}
