//! Choosing the host's address when none is configured, as Kubernetes' `ChooseHostInterface` does.
//!
//! Upstream reads the default routes (`/proc/net/route`, `/proc/net/ipv6_route`) and, for each address
//! family in turn (IPv4 first, or IPv6 first when the address asked for is IPv6), takes the first global
//! unicast address of the up interface a default route of that family transits, falling back to a
//! global address on the loopback interface; with no route table at all it scans every interface.
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
    /// `/proc/net/route` exists but cannot be read.
    #[error("open /proc/net/route: {0}")]
    RouteTableUnreadable(String),
    /// A route table line could not be read.
    #[error("malformed route table line {line:?}")]
    MalformedRoute {
        /// The line.
        line: String,
    },
}

/// Reads the default routes from the text of `/proc/net/route` and `/proc/net/ipv6_route`, as
/// upstream's `getAllDefaultRoutes`: a line counts only once its newline is read; an IPv4 route is
/// default when its destination is 0.0.0.0, an IPv6 one when its destination is `::` and it has a
/// gateway. A malformed IPv4 table is an error; a malformed IPv6 table is ignored as a whole.
pub fn default_routes(ipv4_table: &str, ipv6_table: &str) -> Result<Vec<DefaultRoute>, BindAddressError> {
    let mut routes = ipv4_default_routes(ipv4_table)?;
    routes.extend(ipv6_default_routes(ipv6_table).unwrap_or_default());
    if routes.is_empty() {
        return Err(BindAddressError::NoRoutes);
    }
    Ok(routes)
}

/// The lines Go's `ReadString('\n')` loop reads: those ended by a newline.
fn complete_lines(table: &str) -> impl Iterator<Item = &str> {
    table.split_inclusive('\n').filter_map(|l| l.strip_suffix('\n'))
}

/// A route table's hex address field, `bytes` long; `None` when it is not.
fn route_hex(field: Option<&&str>, bytes: usize) -> Option<u128> {
    let f = field?;
    (f.len() == bytes * 2 && f.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u128::from_str_radix(f, 16).ok())
        .flatten()
}

fn ipv4_default_routes(table: &str) -> Result<Vec<DefaultRoute>, BindAddressError> {
    let mut routes = Vec::new();
    for line in complete_lines(table).filter(|l| !l.starts_with("Iface")) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let malformed = || BindAddressError::MalformedRoute { line: line.into() };
        let dest = route_hex(fields.get(1), 4).ok_or_else(malformed)?;
        route_hex(fields.get(2), 4).ok_or_else(malformed)?;
        if dest == 0 {
            routes.push(DefaultRoute {
                interface: fields[0].to_string(),
                ipv6: false,
            });
        }
    }
    Ok(routes)
}

fn ipv6_default_routes(table: &str) -> Option<Vec<DefaultRoute>> {
    let mut routes = Vec::new();
    for line in complete_lines(table) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let dest = route_hex(fields.first(), 16)?;
        let gateway = route_hex(fields.get(4), 16)?;
        let interface = fields.get(9)?;
        // A default route without a gateway (the kernel's `lo` entries) is not one to follow.
        if dest == 0 && gateway != 0 {
            routes.push(DefaultRoute {
                interface: (*interface).to_string(),
                ipv6: true,
            });
        }
    }
    Some(routes)
}

/// Go's `net.IP.IsGlobalUnicast` (which counts private ranges as global).
pub fn global_unicast(ip: &IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4 == Ipv4Addr::BROADCAST)
        }
        IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

/// Upstream's `memberOf`: Go treats IPv4-mapped IPv6 addresses as IPv4.
fn family_matches(ip: &IpAddr, ipv6: bool) -> bool {
    ip.to_canonical().is_ipv6() == ipv6
}

fn first_global(addresses: &[IpAddr], ipv6: bool) -> Option<IpAddr> {
    addresses
        .iter()
        .find(|ip| family_matches(ip, ipv6) && global_unicast(ip))
        .copied()
}

/// What upstream's `ChooseHostInterface` finds for each address family, tried on its own. Upstream
/// tries the families in an order (IPv4 first, or IPv6 first when the requested address is IPv6)
/// and takes the first family that gives an address; knowing what each family gives, the caller
/// can follow either order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostChoice {
    /// What the IPv4 pass finds.
    pub ipv4: Option<IpAddr>,
    /// What the IPv6 pass finds.
    pub ipv6: Option<IpAddr>,
    /// Why neither pass can find one, when neither does.
    pub error: Option<BindAddressError>,
}

impl HostChoice {
    /// Why upstream's choice fails, in its words, as [`HostFacts::host_address_error`] holds it:
    /// `None` when it does not or when there is no default route (upstream then warns and goes on).
    ///
    /// [`HostFacts::host_address_error`]: kubeadm_api::dynamic::HostFacts::host_address_error
    pub fn failure(&self) -> Option<String> {
        self.error
            .as_ref()
            .filter(|e| **e != BindAddressError::NoRoutes)
            .map(ToString::to_string)
    }
}

/// Chooses per family as upstream's `chooseHostInterface`: with a route table (`route_tables` is the
/// text of `/proc/net/route`, `None` when that file does not exist, and of `/proc/net/ipv6_route`),
/// from the default routes; without one, from every interface.
pub fn choose_host(route_tables: Option<(&str, &str)>, interfaces: &[Interface]) -> HostChoice {
    let routes = match route_tables.map(|(v4, v6)| default_routes(v4, v6)) {
        Some(Err(e)) => {
            return HostChoice {
                error: Some(e),
                ..HostChoice::default()
            };
        }
        Some(Ok(routes)) => Some(routes),
        None => None,
    };
    let pass = |ipv6| match &routes {
        Some(routes) => from_routes(routes, interfaces, ipv6),
        None => from_interfaces(interfaces, ipv6),
    };
    let (ipv4, ipv6) = (pass(false), pass(true));
    let error = match (ipv4, ipv6, &routes) {
        (None, None, Some(_)) => Some(BindAddressError::NoAddressOnRoutes),
        (None, None, None) => Some(BindAddressError::NoGlobalAddress),
        _ => None,
    };
    HostChoice { ipv4, ipv6, error }
}

/// One family's pass of upstream's `chooseHostInterfaceFromRoute`: for each default route of the
/// family in the table's order, the first global address of that family on the route's interface
/// when it is up, else the first one on an up loopback interface (RFC 5549 setups put the host's
/// address there).
fn from_routes(routes: &[DefaultRoute], interfaces: &[Interface], ipv6: bool) -> Option<IpAddr> {
    routes.iter().filter(|r| r.ipv6 == ipv6).find_map(|route| {
        interfaces
            .iter()
            .find(|i| i.name == route.interface)
            .filter(|i| i.up)
            .and_then(|i| first_global(&i.addresses, ipv6))
            .or_else(|| {
                interfaces
                    .iter()
                    .filter(|i| i.up && i.loopback)
                    .find_map(|i| first_global(&i.addresses, ipv6))
            })
    })
}

/// One family's pass of upstream's `chooseIPFromHostInterfaces`: the first global address of the
/// family on an up interface that is neither loopback nor point-to-point, in interface order.
fn from_interfaces(interfaces: &[Interface], ipv6: bool) -> Option<IpAddr> {
    interfaces
        .iter()
        .filter(|i| i.up && !i.loopback && !i.point_to_point)
        .find_map(|i| first_global(&i.addresses, ipv6))
}

/// Upstream's `ChooseBindAddressForInterface`: the first global IPv4 address of the named interface,
/// else its first global IPv6 one, when it is up.
pub fn choose_for_interface(name: &str, interfaces: &[Interface]) -> Option<IpAddr> {
    let intf = interfaces.iter().find(|i| i.name == name && i.up)?;
    first_global(&intf.addresses, false).or_else(|| first_global(&intf.addresses, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeadm_api::dynamic::{DynamicError, HostFacts, default_api_endpoint};
    use kubeadm_api::v1beta3::ApiEndpoint;

    const V4_HEADER: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
    const V4: &str = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
    const V6: &str = "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n\
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth1\n\
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n";

    /// A `/proc/net/route` with a default route through each of `default_via` and a subnet route
    /// through each of `subnet_via`.
    fn v4_table(default_via: &[&str], subnet_via: &[&str]) -> String {
        let mut t = V4_HEADER.to_string();
        for i in default_via {
            t.push_str(&format!(
                "{i}\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
            ));
        }
        for i in subnet_via {
            t.push_str(&format!(
                "{i}\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
            ));
        }
        t
    }

    /// A `/proc/net/ipv6_route` with a default route (gateway 2001:db8::1) through each of
    /// `default_via`, plus the kernel's gateway-less `lo` entries.
    fn v6_table(default_via: &[&str]) -> String {
        let mut t = String::new();
        for i in default_via {
            t.push_str(&format!("00000000000000000000000000000000 00 00000000000000000000000000000000 00 20010db8000000000000000000000001 00000400 00000001 00000000 00000003 {i:>8}\n"));
        }
        t.push_str("00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n");
        t.push_str("00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n");
        t
    }

    fn intf(name: &str, up: bool, addrs: &[&str]) -> Interface {
        Interface {
            name: name.into(),
            up,
            loopback: name == "lo",
            point_to_point: false,
            addresses: addrs.iter().map(|a| a.parse().expect("ip")).collect(),
        }
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().expect("ip"))
    }

    /// The advertise address upstream's `SetAPIEndpointDynamicDefaults` ends with for `requested`
    /// on a host with these route tables (`None`: no /proc/net/route) and interfaces, or its error.
    fn advertise(
        tables: Option<(&str, &str)>,
        interfaces: &[Interface],
        requested: &str,
    ) -> Result<(String, Vec<String>), DynamicError> {
        let choice = choose_host(tables, interfaces);
        let host = HostFacts {
            default_route_ipv4: choice.ipv4,
            default_route_ipv6: choice.ipv6,
            host_address_error: choice.failure(),
            loopback_address: choose_for_interface("lo", interfaces),
            ..HostFacts::default()
        };
        let mut ep = ApiEndpoint {
            advertise_address: requested.into(),
            bind_port: 6443,
        };
        let mut warnings = Vec::new();
        default_api_endpoint(&mut ep, &host, &mut warnings)?;
        Ok((ep.advertise_address, warnings))
    }

    /// The addresses chosen for each requested address, in order.
    fn advertised(tables: Option<(&str, &str)>, interfaces: &[Interface], requested: &[&str]) -> Vec<String> {
        requested
            .iter()
            .map(|r| match advertise(tables, interfaces, r) {
                Ok((a, _)) => a,
                Err(e) => format!("error: {e}"),
            })
            .collect()
    }

    const REQUESTS: [&str; 5] = ["", "0.0.0.0", "::", "198.51.100.7", "2001:db8:ffff::7"];

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
    fn route_tables_are_read_as_upstream_reads_them() {
        // A last line without its newline is not read (Go's ReadString loop stops at EOF).
        let table = v4_table(&["eth0"], &[]);
        assert_eq!(default_routes(&table, "").map(|r| r.len()), Ok(1));
        let unterminated = table.trim_end_matches('\n');
        assert_eq!(default_routes(unterminated, ""), Err(BindAddressError::NoRoutes));
        // A malformed IPv4 table is an error, whatever else it holds.
        let bad = format!("{V4}eth9\t0000000G\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
        assert!(matches!(
            default_routes(&bad, V6),
            Err(BindAddressError::MalformedRoute { .. })
        ));
        let short = format!("{V4}eth9\t000000\t00000000\n");
        assert!(matches!(
            default_routes(&short, ""),
            Err(BindAddressError::MalformedRoute { .. })
        ));
        // A malformed IPv6 table is dropped as a whole, its good lines too.
        let bad6 = format!("{}zz\n", v6_table(&["eth1"]));
        let routes = default_routes(&v4_table(&[], &["eth0"]), &bad6);
        assert_eq!(routes, Err(BindAddressError::NoRoutes));
        // An IPv6 default route without a gateway does not count.
        let no_gw = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 00000400 00000001 00000000 00000001     eth1\n";
        assert_eq!(default_routes(V4_HEADER, no_gw), Err(BindAddressError::NoRoutes));
        // An IPv4 default route needs no gateway.
        let dev_only = format!("{V4_HEADER}eth0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n");
        assert_eq!(default_routes(&dev_only, "").map(|r| r.len()), Ok(1));
    }

    #[test]
    fn ipv4_default_route_and_a_global_ipv6_address_without_ipv6_route() {
        let (v4, v6) = (v4_table(&["eth0"], &["eth0"]), v6_table(&[]));
        let ifs = [
            intf("lo", true, &["127.0.0.1", "::1"]),
            intf("eth0", true, &["192.0.2.10", "2001:db8::10", "fe80::10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &REQUESTS),
            [
                "192.0.2.10",
                "192.0.2.10",
                "192.0.2.10",
                "198.51.100.7",
                "2001:db8:ffff::7"
            ]
        );
    }

    #[test]
    fn both_default_routes_the_unspecified_family_decides() {
        let (v4, v6) = (v4_table(&["eth0"], &[]), v6_table(&["eth0"]));
        let ifs = [
            intf("lo", true, &["127.0.0.1", "::1"]),
            intf("eth0", true, &["192.0.2.10", "fe80::10", "2001:db8::10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &REQUESTS),
            [
                "192.0.2.10",
                "192.0.2.10",
                "2001:db8::10",
                "198.51.100.7",
                "2001:db8:ffff::7"
            ]
        );
        // An IPv4-mapped unspecified address is IPv4 to Go.
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["::ffff:0.0.0.0"]),
            ["192.0.2.10"]
        );
        // A host address is kept as it is, without a warning.
        let (chosen, warnings) = advertise(Some((&v4, &v6)), &ifs, "2001:db8::10").expect("kept");
        assert_eq!((chosen.as_str(), warnings.len()), ("2001:db8::10", 0));
    }

    #[test]
    fn ipv6_default_route_only() {
        let (v4, v6) = (v4_table(&[], &["eth0"]), v6_table(&["eth0"]));
        let ifs = [intf("eth0", true, &["192.0.2.10", "2001:db8::10"])];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &REQUESTS),
            [
                "2001:db8::10",
                "2001:db8::10",
                "2001:db8::10",
                "198.51.100.7",
                "2001:db8:ffff::7"
            ]
        );
    }

    #[test]
    fn no_default_route_warns_and_uses_the_ipv4_unspecified_address() {
        let (v4, v6) = (v4_table(&[], &["eth0", "eth1"]), v6_table(&[]));
        let ifs = [
            intf("eth0", true, &["192.0.2.10", "2001:db8::10"]),
            intf("eth1", true, &["203.0.113.10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &REQUESTS),
            [
                "0.0.0.0",
                "0.0.0.0",
                "0.0.0.0",
                "198.51.100.7",
                "2001:db8:ffff::7"
            ]
        );
        let (_, warnings) = advertise(Some((&v4, &v6)), &ifs, "::").expect("defaults");
        assert_eq!(
            warnings,
            [
                "WARNING: could not obtain a bind address for the API Server: no default routes found in \"/proc/net/route\" or \"/proc/net/ipv6_route\"; using: 0.0.0.0"
            ]
        );
    }

    #[test]
    fn link_local_addresses_are_skipped() {
        // The IPv6 default route's interface has only a link-local address: `::` falls to IPv4.
        let (v4, v6) = (v4_table(&["eth0"], &[]), v6_table(&["eth1"]));
        let ifs = [
            intf("eth0", true, &["169.254.3.3", "192.0.2.10", "fe80::10"]),
            intf("eth1", true, &["fe80::11"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["", "::"]),
            ["192.0.2.10", "192.0.2.10"]
        );
        // Nothing global anywhere a route goes: upstream fails, it does not fall back to 0.0.0.0.
        let ifs = [
            intf("eth0", true, &["169.254.3.3"]),
            intf("eth1", true, &["fe80::11"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["", "::", "192.0.2.99"]),
            [
                "error: unable to select an IP from default routes.",
                "error: unable to select an IP from default routes.",
                "192.0.2.99"
            ]
        );
    }

    #[test]
    fn global_address_on_loopback_when_route_interfaces_have_none() {
        let (v4, v6) = (v4_table(&["eth0"], &[]), v6_table(&["eth0"]));
        let ifs = [
            intf("lo", true, &["127.0.0.1", "203.0.113.7", "::1", "2001:db8:9::7"]),
            intf("eth0", true, &["169.254.1.1", "fe80::1"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["", "::", "127.0.0.1", "::1"]),
            ["203.0.113.7", "2001:db8:9::7", "203.0.113.7", "203.0.113.7"]
        );
        // A loopback request with no global address on lo fails, as upstream's does.
        let ifs = [
            intf("lo", true, &["127.0.0.1", "::1"]),
            intf("eth0", true, &["192.0.2.10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["127.0.0.1", "::1", "::ffff:127.0.0.1"]),
            ["error: unable to select an IP from lo network interface"; 3]
        );
        // lo down: its addresses do not count.
        let ifs = [
            intf("lo", false, &["203.0.113.7"]),
            intf("eth0", true, &["fe80::1"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["127.0.0.1"]),
            ["error: unable to select an IP from lo network interface"]
        );
    }

    #[test]
    fn interface_down_is_skipped() {
        let (v4, v6) = (v4_table(&["eth0", "eth1"], &[]), v6_table(&[]));
        let ifs = [
            intf("eth0", false, &["192.0.2.10"]),
            intf("eth1", true, &["203.0.113.10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["", "::"]),
            ["203.0.113.10"; 2]
        );
    }

    #[test]
    fn the_default_routes_interface_not_the_first_one() {
        let (v4, v6) = (v4_table(&["eth1"], &["eth0"]), v6_table(&["eth1"]));
        let ifs = [
            intf("lo", true, &["127.0.0.1"]),
            intf("eth0", true, &["192.0.2.10", "2001:db8::10"]),
            intf("eth1", true, &["203.0.113.10", "2001:db8:1::10"]),
        ];
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["", "::"]),
            ["203.0.113.10", "2001:db8:1::10"]
        );
        // Several default routes: the first in the table whose interface has an address wins.
        let v4 = v4_table(&["eth2", "eth0", "eth1"], &[]);
        assert_eq!(advertised(Some((&v4, &v6)), &ifs, &[""]), ["192.0.2.10"]);
    }

    #[test]
    fn without_a_route_table_every_interface_is_scanned() {
        let mut p2p = intf("tun0", true, &["198.51.100.1", "2001:db8:7::1"]);
        p2p.point_to_point = true;
        let ifs = [
            intf("lo", true, &["127.0.0.1", "10.9.9.9"]),
            p2p,
            intf("eth0", false, &["10.0.0.2"]),
            intf("eth1", true, &["fe80::1", "2001:db8::3"]),
            intf("eth2", true, &["10.0.0.3"]),
        ];
        assert_eq!(
            advertised(None, &ifs, &["", "0.0.0.0", "::"]),
            ["10.0.0.3", "10.0.0.3", "2001:db8::3"]
        );
        let ifs = [
            intf("lo", true, &["127.0.0.1", "10.9.9.9"]),
            intf("eth0", true, &["fe80::1"]),
        ];
        assert_eq!(
            advertised(None, &ifs, &["", "10.1.1.1"]),
            [
                "error: no acceptable interface with global unicast address found on host",
                "10.1.1.1"
            ]
        );
    }

    #[test]
    fn loopback_only_host() {
        let (v4, v6) = (v4_table(&[], &[]), v6_table(&[]));
        let ifs = [intf("lo", true, &["127.0.0.1", "::1"])];
        assert_eq!(advertised(Some((&v4, &v6)), &ifs, &REQUESTS[..3]), ["0.0.0.0"; 3]);
        assert_eq!(
            advertised(Some((&v4, &v6)), &ifs, &["127.0.0.1"]),
            ["error: unable to select an IP from lo network interface"]
        );
    }

    #[test]
    fn global_unicast_is_gos() {
        for (a, want) in [
            ("10.0.0.1", true),
            ("192.0.2.1", true),
            ("fd00::1", true),
            ("2001:db8::1", true),
            ("::ffff:10.0.0.1", true),
            ("0.0.0.0", false),
            ("127.0.0.2", false),
            ("169.254.0.1", false),
            ("224.0.0.1", false),
            ("255.255.255.255", false),
            ("::", false),
            ("::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            ("ff02::1", false),
            ("::ffff:169.254.0.1", false),
        ] {
            assert_eq!(global_unicast(&ip(a).expect("ip")), want, "{a}");
        }
    }
}
