//! Config decoding of every kind and version: the text is loaded as `init`, `join` and
//! `config migrate` load a `--config` file (decode, default, validate), on fixed host facts and
//! with no network. Any input ends in a config or an error value, never a panic; a migrated
//! config migrates again to itself.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_api::{internal, migrate, version};
use libfuzzer_sys::fuzz_target;

fn host() -> HostFacts {
    HostFacts {
        hostname: "fuzz-node".into(),
        default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10))),
        default_route_ipv6: None,
        host_address_error: None,
        loopback_address: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        existing_cri_sockets: vec!["unix:///var/run/containerd/containerd.sock".into()],
        systemd_resolved_active: false,
        init_system_error: None,
    }
}

fn token() -> BootstrapTokenString {
    BootstrapTokenString {
        id: "abcdef".into(),
        secret: "0123456789abcdef".into(),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = kubeadm_fuzz::text(data);
    let host = host();
    let mut new_token = token;
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &version::offline,
    };
    let _ = internal::load_init_config("fuzz.yaml", &text, &mut inputs);
    let _ = internal::load_join_config("fuzz.yaml", &text, &host, &|_| true);
    if let Ok(first) = migrate::migrate("fuzz.yaml", &text, &mut inputs, &|_| true) {
        match migrate::migrate("migrated.yaml", &first.text, &mut inputs, &|_| true) {
            Ok(second) => assert_eq!(second.text, first.text, "migrating twice changed the config"),
            Err(e) => panic!("the migrated config does not load: {e}\n{}", first.text),
        }
    }
});
