//! Gathers the host facts that configuration defaulting needs: the host name, the address upstream's
//! `ChooseHostInterface` would pick, and which CRI sockets exist.

use std::path::Path;

use kubeadm_api::defaults::KNOWN_CRI_SOCKETS;
use kubeadm_api::dynamic::HostFacts;
use kubeadm_api::gofmt;
use kubeadm_core::bind_address::{self, BindAddressError, HostChoice, Interface};
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
        default_route_ipv4: chosen.ipv4,
        default_route_ipv6: chosen.ipv6,
        host_address_error: chosen.failure(),
        loopback_address: bind_address::choose_for_interface(LOOPBACK_INTERFACE, &interfaces),
        existing_cri_sockets: KNOWN_CRI_SOCKETS
            .iter()
            .filter(|s| probe::is_socket(Path::new(s.trim_start_matches("unix://"))))
            .map(|s| s.to_string())
            .collect(),
        systemd_resolved_active: probe::systemd_resolved_active(),
        init_system_error: probe::init_system_error(),
    }
}

/// The interface upstream looks on for a loopback advertise address (`netutil.LoopbackInterfaceName`).
const LOOPBACK_INTERFACE: &str = "lo";

/// What upstream's `ChooseHostInterface` finds for each family: from the default routes when
/// `/proc/net/route` exists, else from the interfaces alone.
fn choose_address(interfaces: &[Interface]) -> HostChoice {
    match probe::route_tables() {
        Ok((v4, v6)) => bind_address::choose_host(v4.as_deref().map(|v4| (v4, v6.as_str())), interfaces),
        Err(e) => HostChoice {
            error: Some(BindAddressError::RouteTableUnreadable(gofmt::io_error(&e))),
            ..HostChoice::default()
        },
    }
}
