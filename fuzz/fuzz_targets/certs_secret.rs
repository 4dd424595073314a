//! The `kubeadm-certs` Secret of `--upload-certs`: the certificate key (hex), AES-GCM opening of
//! each value and the restore of the files a joining control plane writes. Sealing then opening
//! gives the data back; opening anything else is an error value, never a panic.
//! Input: certificate key NUL Secret (YAML or JSON) NUL raw sealed bytes.
#![no_main]

use kubeadm_api::defaults::default_cluster_configuration;
use kubeadm_api::v1beta3::ClusterConfiguration;
use kubeadm_core::cluster::upload_certs::{
    NONCE_SIZE, decode_certificate_key, decrypt_bytes, encrypt_bytes, restore_kubeadm_certs,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [key, secret, sealed] = kubeadm_fuzz::parts(data, 3)[..] else {
        unreachable!()
    };
    let Ok(key) = decode_certificate_key(&kubeadm_fuzz::text(key)) else {
        return;
    };
    let _ = decrypt_bytes(sealed, &key);
    let nonce = [7u8; NONCE_SIZE];
    if let Ok(closed) = encrypt_bytes(sealed, &key, &nonce) {
        assert_eq!(
            decrypt_bytes(&closed, &key).expect("opens what it sealed"),
            sealed
        );
    }
    if let Some(secret) = kubeadm_fuzz::document(secret) {
        let mut cluster = ClusterConfiguration::default();
        default_cluster_configuration(&mut cluster);
        let _ = restore_kubeadm_certs(&secret, &key, &cluster);
    }
});
