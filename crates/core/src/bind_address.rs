//! Choosing the host's address when none is configured, as Kubernetes' `ChooseHostInterface` does.
//!
//! Upstream reads the default routes (`/proc/net/route`, `/proc/net/ipv6_route`), prefers IPv4, and takes
//! the first global unicast address of the first up interface a default route transits, falling back to
//! a global address on the loopback interface; with no route table at all it scans every interface.
//! The host crate reads the files and lists interfaces; the choice, made here, is pure.

use std::net::{IpAddr, Ipv4Addr};

/// A default route: the interface it leaves through, and its family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultRoute {
    /// Interface name.
    pub interface: String,
    /// True for IPv6.
    pub ipv6: bool,
}

/// A network interface and its addresses, in the kernel's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Interface name.
    pub name: String,
    /// `IFF_UP`.
    pub up: bool,
    /// `IFF_LOOPBACK`.
    pub loopback: bool,
    /// `IFF_POINTOPOINT`.
    pub point_to_point: bool,
    /// Addresses on the interface.
    pub addresses: Vec<IpAddr>,
}

/// Why no address could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindAddressError {
    /// The route tables have no default route.
    #[error("no default routes found in \"/proc/net/route\" or \"/proc/net/ipv6_route\"")]
    NoRoutes,
    /// Default routes exist but no interface they transit has a usable address.
    #[error("unable to select an IP from default routes.")]
    NoAddressOnRoutes,
    /// No interface has a global unicast address.
    #[error("no acceptable interface with global unicast address found on host")]
    NoGlobalAddress,
    /// A route table line could not be read.
    #[error("malformed route table line {line:?}")]
    MalformedRoute {
        /// The line.
        line: String,
    },
}

/// Reads the default routes from the text of `/proc/net/route` and `/proc/net/ipv6_route`.
pub fn default_routes(ipv4_table: &str, ipv6_table: &str) -> Result<Vec<DefaultRoute>, BindAddressError> {
    let mut routes = Vec::new();
    for line in ipv4_table.lines() {
        if line.starts_with("Iface") || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(iface), Some(dest)) = (fields.first(), fields.get(1)) else {
            return Err(BindAddressError::MalformedRoute { line: line.into() });
        };
        if u32::from_str_radix(dest, 16)
            .map_err(|_| BindAddressError::MalformedRoute { line: line.into() })?
            == 0
        {
            routes.push(DefaultRoute {
                interface: (*iface).to_string(),
                ipv6: false,
            });
        }
    }
    // Upstream ignores an unreadable IPv6 table; so do we for malformed lines in it.
    for line in ipv6_table.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 10 {
            continue;
        }
        let zero = |s: &str| u128::from_str_radix(s, 16).map(|v| v == 0).unwrap_or(false);
        // A default route has an all-zero destination; an all-zero gateway means loopback.
        if zero(fields[0]) && !zero(fields[4]) {
            routes.push(DefaultRoute {
                interface: fields[9].to_string(),
                ipv6: true,
            });
        }
    }
    if routes.is_empty() {
        return Err(BindAddressError::NoRoutes);
    }
    Ok(routes)
}

fn global_unicast(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || *v4 == Ipv4Addr::BROADCAST)
        }
        IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
                && v6
                    .to_ipv4_mapped()
                    .is_none_or(|v4| global_unicast(&IpAddr::V4(v4)))
        }
    }
}

fn family_matches(ip: &IpAddr, ipv6: bool) -> bool {
    match ip {
        IpAddr::V4(_) => !ipv6,
        // Go treats IPv4-mapped IPv6 addresses as IPv4.
        IpAddr::V6(v6) => ipv6 && v6.to_ipv4_mapped().is_none(),
    }
}

fn first_global(addresses: &[IpAddr], ipv6: bool) -> Option<IpAddr> {
    addresses
        .iter()
        .find(|ip| family_matches(ip, ipv6) && global_unicast(ip))
        .copied()
}

/// Chooses the host address from its default routes (IPv4 preferred), as upstream does.
pub fn choose_from_routes(
    routes: &[DefaultRoute],
    interfaces: &[Interface],
) -> Result<IpAddr, BindAddressError> {
    for ipv6 in [false, true] {
        for route in routes.iter().filter(|r| r.ipv6 == ipv6) {
            if let Some(intf) = interfaces.iter().find(|i| i.name == route.interface && i.up)
                && let Some(ip) = first_global(&intf.addresses, ipv6)
            {
                return Ok(ip);
            }
            if let Some(ip) = interfaces
                .iter()
                .filter(|i| i.up && i.loopback)
                .find_map(|i| first_global(&i.addresses, ipv6))
            {
                return Ok(ip);
            }
        }
    }
    Err(BindAddressError::NoAddressOnRoutes)
}

/// Chooses the host address from its interfaces alone (used when there is no route table).
pub fn choose_from_interfaces(interfaces: &[Interface]) -> Result<IpAddr, BindAddressError> {
    for ipv6 in [false, true] {
        for intf in interfaces
            .iter()
            .filter(|i| i.up && !i.loopback && !i.point_to_point)
        {
            if let Some(ip) = first_global(&intf.addresses, ipv6) {
                return Ok(ip);
            }
        }
    }
    Err(BindAddressError::NoGlobalAddress)
}

/// The unspecified IPv4 address, which upstream falls back to when there is no default route.
pub const UNSPECIFIED: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

#[cfg(test)]
mod tests {
    use super::*;

    const V4: &str = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
    const V6: &str = "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n\
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth1\n\
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n";

    fn intf(name: &str, up: bool, addrs: &[&str]) -> Interface {
        Interface {
            name: name.into(),
            up,
            loopback: name == "lo",
            point_to_point: false,
            addresses: addrs.iter().map(|a| a.parse().expect("ip")).collect(),
        }
    }

    #[test]
    fn reads_default_routes_of_both_families() {
        let routes = default_routes(V4, V6).expect("routes");
        assert_eq!(
            routes,
            vec![
                DefaultRoute {
                    interface: "eth0".into(),
                    ipv6: false
                },
                DefaultRoute {
                    interface: "eth1".into(),
                    ipv6: true
                }
            ]
        );
        assert_eq!(
            default_routes("Iface\tDestination\n", ""),
            Err(BindAddressError::NoRoutes)
        );
    }

    #[test]
    fn prefers_ipv4_global_address_on_route_interface() {
        let routes = default_routes(V4, V6).expect("routes");
        let ifs = [
            intf("lo", true, &["127.0.0.1", "::1"]),
            intf("eth0", true, &["fe80::1", "169.254.0.3", "192.0.2.2"]),
            intf("eth1", true, &["fd00::2"]),
        ];
        assert_eq!(
            choose_from_routes(&routes, &ifs),
            Ok("192.0.2.2".parse().expect("ip"))
        );
        // With eth0 down, the IPv6 route's interface wins.
        let ifs = [
            intf("eth0", false, &["192.0.2.2"]),
            intf("eth1", true, &["fe80::1", "fd00::2"]),
        ];
        assert_eq!(
            choose_from_routes(&routes, &ifs),
            Ok("fd00::2".parse().expect("ip"))
        );
    }

    #[test]
    fn falls_back_to_global_address_on_loopback() {
        let routes = [DefaultRoute {
            interface: "eth0".into(),
            ipv6: false,
        }];
        let ifs = [
            intf("lo", true, &["127.0.0.1", "10.1.2.3"]),
            intf("eth0", true, &["169.254.1.1"]),
        ];
        assert_eq!(
            choose_from_routes(&routes, &ifs),
            Ok("10.1.2.3".parse().expect("ip"))
        );
        let ifs = [intf("eth0", true, &["169.254.1.1"])];
        assert_eq!(
            choose_from_routes(&routes, &ifs),
            Err(BindAddressError::NoAddressOnRoutes)
        );
    }

    #[test]
    fn interface_scan_skips_loopback_and_down() {
        let ifs = [
            intf("lo", true, &["10.0.0.1"]),
            intf("a", false, &["10.0.0.2"]),
            intf("b", true, &["10.0.0.3"]),
        ];
        assert_eq!(choose_from_interfaces(&ifs), Ok("10.0.0.3".parse().expect("ip")));
    }
}
