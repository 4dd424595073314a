//! JWS signatures, AES-GCM sealing and Node patches against vectors computed by upstream's own Go
//! code (`tests/gen/vectors/main.go`: cluster-bootstrap's jws, kubeadm's util/crypto, and the
//! mark-control-plane / patchnode phases run against a fake clientset).
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use kubeadm_api::v1beta3::Taint;
use kubeadm_core::cluster::{cluster_info, node, upload_certs};
use serde_json::Value;

fn vectors() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen/vectors.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("json")
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
fn detached_jws_matches_upstream() {
    let v = vectors();
    let cases = v["jws"].as_array().expect("jws");
    assert!(cases.len() >= 5);
    for c in cases {
        let (content, id, secret, want) = (
            s(c, "content"),
            s(c, "token_id"),
            s(c, "token_secret"),
            s(c, "signature"),
        );
        assert_eq!(cluster_info::detached_jws(content, id, secret), want, "{id}");
        assert!(cluster_info::detached_jws_is_valid(want, content, id, secret));
        assert!(!cluster_info::detached_jws_is_valid(
            want,
            &format!("{content}x"),
            id,
            secret
        ));
        assert!(!cluster_info::detached_jws_is_valid(
            want,
            content,
            id,
            "xxxxxxxxxxxxxxxx"
        ));
    }
}

#[test]
fn aes_gcm_matches_upstream() {
    let v = vectors();
    for c in v["gcm"].as_array().expect("gcm") {
        let key = upload_certs::decode_certificate_key(s(c, "key_hex")).expect("key");
        let nonce: [u8; 12] = hex::decode(s(c, "nonce_hex"))
            .expect("hex")
            .try_into()
            .expect("12 bytes");
        let plain = hex::decode(s(c, "plain_hex")).expect("hex");
        let sealed = hex::decode(s(c, "sealed_hex")).expect("hex");
        assert_eq!(
            upload_certs::encrypt_bytes(&plain, &key, &nonce).expect("seal"),
            sealed
        );
        assert_eq!(upload_certs::decrypt_bytes(&sealed, &key).expect("open"), plain);
        let mut tampered = sealed.clone();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert_eq!(
            upload_certs::decrypt_bytes(&tampered, &key),
            Err(upload_certs::CertsCryptoError::Open)
        );
    }
    assert_eq!(
        upload_certs::decrypt_bytes(&[0; 5], &[0; 32]),
        Err(upload_certs::CertsCryptoError::TooShort)
    );
    assert_eq!(
        upload_certs::encrypt_bytes(b"x", &[0; 20], &[0; 12]),
        Err(upload_certs::CertsCryptoError::KeySize(20))
    );
    assert!(upload_certs::decode_certificate_key("zz").is_err());
    // Go's `hex.DecodeString` errors, as `go run` printed them for these inputs.
    for (input, go) in [
        ("zz", "encoding/hex: invalid byte: U+007A 'z'"),
        ("abc", "encoding/hex: odd length hex string"),
        ("abcg", "encoding/hex: invalid byte: U+0067 'g'"),
        ("ab\x01c", "encoding/hex: invalid byte: U+0001"),
        ("a", "encoding/hex: odd length hex string"),
    ] {
        let err = upload_certs::decode_certificate_key(input).expect_err("not hex");
        assert_eq!(
            err.to_string(),
            format!("error decoding certificate key: {go}"),
            "{input:?}"
        );
    }
}

#[test]
fn node_patches_match_upstream() {
    let v = vectors();
    let cases = v["nodes"].as_array().expect("nodes");
    assert!(cases.len() >= 8);
    for c in cases {
        let old = c["node"].clone();
        assert!(node::has_hostname_label(&old));
        let mut new = old.clone();
        match c.get("cri_socket").and_then(Value::as_str) {
            Some(socket) => node::annotate_cri_socket(&mut new, socket),
            None => {
                let taints: Vec<Taint> = serde_json::from_value(c["taints"].clone())
                    .map(Option::unwrap_or_default)
                    .expect("taints");
                node::mark_control_plane(&mut new, &taints);
            }
        }
        let got = node::patch_json(&node::two_way_merge_patch(&old, &new));
        assert_eq!(got, s(c, "patch"), "node {old}");
    }
}

#[test]
fn cri_socket_annotation_is_the_endpoint_as_configured() {
    // Upstream stores NodeRegistration.CRISocket verbatim; a scheme is never added here (defaulting
    // adds `unix://` to a bare path before), so a `unix:` endpoint without `//` stays as it is.
    for socket in [
        "unix:///var/run/containerd/containerd.sock",
        "unix:x.sock",
        "npipe:////./pipe/containerd-containerd",
    ] {
        let mut n = serde_json::json!({"metadata": {"name": "n"}});
        node::annotate_cri_socket(&mut n, socket);
        assert_eq!(
            n["metadata"]["annotations"]["kubeadm.alpha.kubernetes.io/cri-socket"],
            socket
        );
    }
}
