//! Cluster-object details the dry-run goldens cannot pin: expiration arithmetic from a fixed clock,
//! absolute expiries, sealed certificate data, and the errors.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;

use kubeadm_api::duration::Duration;
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString, ClusterConfiguration, ExternalEtcd};
use kubeadm_core::cluster::{bootstrap_token, upload_certs};
use serde_json::Value;

fn token(ttl: Option<Duration>, expires: Option<Time>) -> BootstrapToken {
    BootstrapToken {
        token: Some(BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token")),
        ttl,
        expires,
        ..BootstrapToken::default()
    }
}

fn expiration(secret: &Value) -> Option<String> {
    use base64::Engine as _;
    let b64 = secret.pointer("/data/expiration")?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    String::from_utf8(bytes).ok()
}

#[test]
fn token_expiration_is_now_plus_ttl_or_the_absolute_expiry_in_utc() {
    // 2026-11-30T06:28:14Z, the clock of one upstream dry-run.
    let now = Time::parse("2026-11-30T06:28:14Z").expect("time");
    let cases = [
        (
            token(Some(Duration::from_hours(24)), None),
            Some("2026-12-01T06:28:14Z"),
        ),
        (
            token(Some(Duration::from_mins(90)), None),
            Some("2026-11-30T07:58:14Z"),
        ),
        // Sub-second TTLs are dropped with the fraction, as Go's RFC 3339 formatting does.
        (
            token(Some(Duration::from_nanos(1_999_999_999)), None),
            Some("2026-11-30T06:28:15Z"),
        ),
        (token(Some(Duration::ZERO), None), None),
        (token(None, None), None),
        (
            token(
                None,
                Some(Time::parse("2030-01-02T03:04:05+02:00").expect("time")),
            ),
            Some("2030-01-02T01:04:05Z"),
        ),
        // Both set cannot pass validation; upstream then prefers `expires`.
        (
            token(
                Some(Duration::from_hours(1)),
                Some(Time::parse("2030-01-02T03:04:05Z").expect("time")),
            ),
            Some("2030-01-02T03:04:05Z"),
        ),
    ];
    for (t, want) in cases {
        let secret = bootstrap_token::token_secret(&t, 0, now).expect("secret");
        assert_eq!(expiration(&secret).as_deref(), want, "{t:?}");
        assert_eq!(secret["metadata"]["name"], "bootstrap-token-abcdef");
        assert_eq!(secret["type"], "bootstrap.kubernetes.io/token");
    }
    let missing = BootstrapToken::default();
    assert_eq!(
        bootstrap_token::token_secret(&missing, 3, now).map(|_| ()),
        Err(bootstrap_token::TokenSecretError::Missing { index: 3 })
    );
}

/// A TTL asked for must give an expiration: a clock so late that `now + ttl` is past the last
/// time RFC 3339 can write is an error, never a Secret that does not expire.
#[test]
fn a_ttl_whose_expiration_is_out_of_range_is_an_error() {
    // 9999-12-30T20:00:00Z: a day later is past the last instant a timestamp holds.
    let late = Time::from_unix_seconds(253_402_200_000).expect("time");
    let ttl = Duration::from_hours(24);
    assert_eq!(
        bootstrap_token::token_secret(&token(Some(ttl), None), 1, late).map(|_| ()),
        Err(bootstrap_token::TokenSecretError::Expiration { index: 1, ttl })
    );
    let err = bootstrap_token::token_secret(&token(Some(ttl), None), 1, late).expect_err("out of range");
    assert!(!err.to_string().contains("0123456789abcdef"), "{err}");
    // Without a TTL the token never expires, as upstream's.
    let secret = bootstrap_token::token_secret(&token(None, None), 0, late).expect("secret");
    assert_eq!(expiration(&secret), None);
}

#[test]
fn kubeadm_certs_secret_carries_sealed_files_that_open_with_the_key() {
    let key_bytes = [7u8; upload_certs::CERTIFICATE_KEY_SIZE];
    let key_hex = upload_certs::certificate_key(&key_bytes);
    assert_eq!(key_hex.len(), 64);
    let key = upload_certs::decode_certificate_key(&key_hex).expect("key");
    let cluster = ClusterConfiguration {
        certificates_dir: "/etc/kubernetes/pki".to_string(),
        ..ClusterConfiguration::default()
    };
    let files = upload_certs::certs_to_transfer(&cluster);
    let keys: Vec<&str> = files.iter().map(|f| f.secret_key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "ca.crt",
            "ca.key",
            "etcd-ca.crt",
            "etcd-ca.key",
            "front-proxy-ca.crt",
            "front-proxy-ca.key",
            "sa.key",
            "sa.pub"
        ]
    );
    assert_eq!(files[2].path, "/etc/kubernetes/pki/etcd/ca.crt");
    let mut sealed = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        let nonce = [i as u8; upload_certs::NONCE_SIZE];
        let data = format!("contents of {}", f.path);
        let s = upload_certs::encrypt_bytes(data.as_bytes(), &key, &nonce).expect("seal");
        assert_eq!(&s[..upload_certs::NONCE_SIZE], &nonce, "nonce first");
        sealed.insert(f.secret_key.clone(), Some(s));
    }
    let secret = upload_certs::kubeadm_certs_secret(&sealed, "r36tm7", "uid-1");
    assert_eq!(
        secret["metadata"]["ownerReferences"][0]["name"],
        "bootstrap-token-r36tm7"
    );
    assert_eq!(secret["metadata"]["ownerReferences"][0]["uid"], "uid-1");
    assert!(
        secret.get("type").is_none(),
        "an Opaque secret by omission, as upstream"
    );
    for f in &files {
        use base64::Engine as _;
        let b64 = secret["data"][&f.secret_key].as_str().expect("data");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("b64");
        let plain = upload_certs::decrypt_bytes(&raw, &key).expect("open");
        assert_eq!(plain, format!("contents of {}", f.path).into_bytes());
    }

    let external = ClusterConfiguration {
        certificates_dir: "/pki/".to_string(),
        etcd: kubeadm_api::v1beta3::Etcd {
            local: None,
            external: Some(ExternalEtcd {
                ca_file: "/x/ca.pem".to_string(),
                cert_file: "/x/c.pem".to_string(),
                key_file: "/x/k.pem".to_string(),
                ..ExternalEtcd::default()
            }),
        },
        ..ClusterConfiguration::default()
    };
    let files = upload_certs::certs_to_transfer(&external);
    let find = |k: &str| files.iter().find(|f| f.secret_key == k).map(|f| f.path.as_str());
    assert_eq!(find("external-etcd-ca.crt"), Some("/x/ca.pem"));
    assert_eq!(find("external-etcd.key"), Some("/x/k.pem"));
    assert_eq!(find("sa.pub"), Some("/pki/sa.pub"));
    assert_eq!(find("etcd-ca.crt"), None);

    let token =
        upload_certs::upload_certs_token(BootstrapTokenString::parse("r36tm7.lr6njd9so223i965").expect("t"));
    assert_eq!(token.ttl, Some(Duration::from_hours(2)));
    assert!(token.usages.is_empty() && token.groups.is_empty());
}

#[test]
fn token_secrets_read_back_as_upstream_decodes_them() {
    let now = Time::parse("2026-11-30T06:28:14Z").expect("time");
    let written = BootstrapToken {
        token: Some(BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token")),
        description: "first token".to_string(),
        ttl: Some(Duration::from_mins(90)),
        usages: vec!["signing".to_string(), "authentication".to_string()],
        groups: vec![
            "system:bootstrappers:a".to_string(),
            "system:bootstrappers:b".to_string(),
        ],
        ..BootstrapToken::default()
    };
    let secret = bootstrap_token::token_secret(&written, 0, now).expect("secret");
    let read = bootstrap_token::token_from_secret(&secret).expect("token");
    assert_eq!(read.token, written.token);
    assert_eq!(read.description, "first token");
    assert_eq!(read.ttl, None);
    assert_eq!(
        read.expires.map(|t| t.to_string()).as_deref(),
        Some("2026-11-30T07:58:14Z")
    );
    // Sorted, as upstream sorts them.
    assert_eq!(read.usages, ["authentication", "signing"]);
    assert_eq!(read.groups, written.groups);

    let mut renamed = secret.clone();
    renamed["metadata"]["name"] = "bootstrap-token-zzzzzz".into();
    assert_eq!(
        bootstrap_token::token_from_secret(&renamed).map(|_| ()).map_err(|e| e.to_string()),
        Err("bootstrap token name is not of the form 'bootstrap-token-(token-id)'. Actual: \"bootstrap-token-zzzzzz\". Expected: \"bootstrap-token-abcdef\"".to_string())
    );
    let mut not_true = secret.clone();
    // "yes" is not "true": the usage is dropped.
    not_true["data"]["usage-bootstrap-signing"] = "eWVz".into();
    let read = bootstrap_token::token_from_secret(&not_true).expect("token");
    assert_eq!(read.usages, ["authentication"]);
    let mut no_id = secret;
    no_id["data"].as_object_mut().expect("data").remove("token-id");
    assert_eq!(
        bootstrap_token::token_from_secret(&no_id)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err("bootstrap Token Secret has no token-id data: bootstrap-token-abcdef".to_string())
    );
}

#[test]
fn kubeadm_certs_restore_for_a_joining_control_plane() {
    let key = [9u8; 32];
    let cluster = ClusterConfiguration {
        certificates_dir: "/etc/kubernetes/pki".to_string(),
        ..ClusterConfiguration::default()
    };
    let pem = |t: &str| format!("-----BEGIN {t}-----\nAAAA\n-----END {t}-----\n");
    let mut sealed = BTreeMap::new();
    for (i, f) in upload_certs::certs_to_transfer(&cluster).iter().enumerate() {
        let body = if f.secret_key.ends_with(".key") {
            pem("RSA PRIVATE KEY")
        } else if f.secret_key == "sa.pub" {
            pem("PUBLIC KEY")
        } else {
            pem("CERTIFICATE")
        };
        let value = if f.secret_key == "etcd-ca.key" {
            // Missing at upload time: stored as null, skipped on restore.
            None
        } else {
            Some(upload_certs::encrypt_bytes(body.as_bytes(), &key, &[i as u8; 12]).expect("seal"))
        };
        sealed.insert(f.secret_key.clone(), value);
    }
    let secret = upload_certs::kubeadm_certs_secret(&sealed, "abcdef", "u");
    let files = upload_certs::restore_kubeadm_certs(&secret, &key, &cluster).expect("restore");
    let summary: Vec<(String, upload_certs::RestoredKind)> =
        files.iter().map(|f| (f.path.clone(), f.kind)).collect();
    use upload_certs::RestoredKind::{PrivateKey, Public};
    let p = |s: &str| format!("/etc/kubernetes/pki/{s}");
    assert_eq!(
        summary,
        [
            (p("ca.crt"), Public),
            (p("ca.key"), PrivateKey),
            (p("etcd/ca.crt"), Public),
            (p("front-proxy-ca.crt"), Public),
            (p("front-proxy-ca.key"), PrivateKey),
            (p("sa.key"), PrivateKey),
            (p("sa.pub"), Public),
        ]
    );
    assert_eq!(files[0].data, pem("CERTIFICATE").into_bytes());

    let wrong = upload_certs::restore_kubeadm_certs(&secret, &[8u8; 32], &cluster).map(|_| ());
    assert_eq!(
        wrong.map_err(|e| e.to_string()),
        Err(
            "error decoding secret data with provided key: cipher: message authentication failed".to_string()
        )
    );
    let mut partial = secret.clone();
    partial["data"]
        .as_object_mut()
        .expect("data")
        .remove("etcd-ca.crt");
    assert_eq!(
        upload_certs::restore_kubeadm_certs(&partial, &key, &cluster).map(|_| ()).map_err(|e| e.to_string()),
        Err("the Secret does not include the required certificate or key - name: etcd/ca.crt, path: /etc/kubernetes/pki/etcd/ca.crt".to_string())
    );
}
