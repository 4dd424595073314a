//! Token discovery's checks of `cluster-info`: the detached JWS signature for a token, the CA pins
//! (`--discovery-token-ca-cert-hash`) and the CA bundle they pin. Whatever the ConfigMap holds, a
//! forged or missing signature is refused and a signature made with the token verifies.
//! Input: token NUL ConfigMap (YAML or JSON) NUL pins, one per line NUL CA data (base64).
#![no_main]

use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_core::cluster::cluster_info::{detached_jws, detached_jws_is_valid, jws_signature_key};
use kubeadm_phases::join::discovery::{check_pins, parse_pins, verify_cluster_info};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let [token, cm, pins, ca] = kubeadm_fuzz::parts(data, 4)[..] else {
        unreachable!()
    };
    let token = BootstrapTokenString::parse(&kubeadm_fuzz::text(token)).unwrap_or(BootstrapTokenString {
        id: "abcdef".into(),
        secret: "0123456789abcdef".into(),
    });
    if let Some(cm) = kubeadm_fuzz::document(cm) {
        if let Ok(kubeconfig) = verify_cluster_info(&cm, &token) {
            // Accepted only with the signature the token makes.
            let signature = cm["data"][jws_signature_key(&token.id)]
                .as_str()
                .unwrap_or_default();
            assert_eq!(signature, detached_jws(&kubeconfig, &token.id, &token.secret));
        }
        if let Some(content) = cm.pointer("/data/kubeconfig").and_then(|v| v.as_str()) {
            for (_, v) in cm["data"].as_object().into_iter().flatten() {
                let _ =
                    detached_jws_is_valid(v.as_str().unwrap_or_default(), content, &token.id, &token.secret);
            }
        }
    }
    let content = kubeadm_fuzz::text(cm);
    let signed = json!({"data": {
        "kubeconfig": content,
        jws_signature_key(&token.id): detached_jws(&content, &token.id, &token.secret),
    }});
    match verify_cluster_info(&signed, &token) {
        Ok(k) => assert_eq!(k, content),
        Err(e) => assert!(content.is_empty(), "a signed cluster-info was refused: {e}"),
    }
    let pins: Vec<String> = kubeadm_fuzz::text(pins).lines().map(str::to_string).collect();
    if let Ok(pins) = parse_pins(&pins) {
        let _ = check_pins(&kubeadm_fuzz::text(ca), &pins);
    }
});
