//! Gathers the host facts that configuration defaulting needs: the host name, the address upstream's
//! `ChooseHostInterface` would pick, and which CRI sockets exist.

use std::net::IpAddr;
use std::path::Path;

use kubeadm_api::defaults::KNOWN_CRI_SOCKETS;
use kubeadm_api::dynamic::HostFacts;
use kubeadm_core::bind_address::{self, Interface};
use kubeadm_host::probe;

/// Reads this host's facts. Failures to read a fact leave it empty: defaulting then reports what is
/// missing in upstream's words.
pub(crate) fn gather() -> HostFacts {
    let interfaces: Vec<Interface> = probe::interfaces()
        .unwrap_or_default()
        .into_iter()
        .map(|i| Interface {
            up: i.up(),
            loopback: i.loopback(),
            point_to_point: i.point_to_point(),
            name: i.name,
            addresses: i.addresses,
        })
        .collect();
    let chosen = choose_address(&interfaces);
    HostFacts {
        hostname: probe::hostname().unwrap_or_default(),
        default_route_ipv4: chosen.filter(IpAddr::is_ipv4),
        default_route_ipv6: chosen.filter(IpAddr::is_ipv6),
        loopback_address: chosen,
        existing_cri_sockets: KNOWN_CRI_SOCKETS
            .iter()
            .filter(|s| probe::is_socket(Path::new(s.trim_start_matches("unix://"))))
            .map(|s| s.to_string())
            .collect(),
        systemd_resolved_active: probe::systemd_resolved_active(),
        init_system_error: probe::init_system_error(),
    }
}

/// Upstream's `ChooseHostInterface`: from the default routes when the route table exists, else from
/// the interfaces alone.
fn choose_address(interfaces: &[Interface]) -> Option<IpAddr> {
    match probe::route_tables() {
        Ok((Some(v4), v6)) => bind_address::default_routes(&v4, &v6)
            .ok()
            .and_then(|routes| bind_address::choose_from_routes(&routes, interfaces).ok()),
        Ok((None, _)) => bind_address::choose_from_interfaces(interfaces).ok(),
        Err(_) => None,
    }
}
