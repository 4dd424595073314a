//! The kubeconfig readers: a join discovery file (parsed, validated as client-go validates it, the
//! files it names read and embedded) and the checks of existing kubeconfig files (current cluster,
//! embedded client certificate, CA comparison). Input: kubeconfig NUL content-of-every-named-file
//! (a named path starting with `missing` does not exist).
#![no_main]

use std::io;

use kubeadm_core::kubeconfig::{Config, check_existing_kubeconfig, embedded_client_certificate};
use kubeadm_phases::join::discovery::read_discovery_kubeconfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [kubeconfig, file] = kubeadm_fuzz::parts(data, 2)[..] else {
        unreachable!()
    };
    let read = |path: &str| -> io::Result<Vec<u8>> {
        if path.starts_with("missing") {
            Err(io::Error::from(io::ErrorKind::NotFound))
        } else {
            Ok(file.to_vec())
        }
    };
    if let Ok(config) = read_discovery_kubeconfig(kubeconfig, &read) {
        // What join hands its client reads back.
        let written = kubeadm_yaml::to_string(&config);
        assert!(kubeadm_yaml::parse_documents(&written).is_ok(), "{written}");
    }
    if let Some(doc) = kubeadm_fuzz::document(kubeconfig) {
        let _ = Config::from_value(&doc).current_cluster();
        let _ = embedded_client_certificate(&doc);
        let _ = check_existing_kubeconfig("fuzz.conf", &doc, &doc);
        if let Some(other) = kubeadm_fuzz::document(file) {
            let _ = check_existing_kubeconfig("fuzz.conf", &doc, &other);
        }
    }
});
