//! The etcd client reset and a control-plane join use, against a real etcd v3.5 (upstream's, with
//! the TLS files upstream's `init phase certs all` wrote): the member list, the endpoints synced
//! from it, a member that is down among the endpoints, the status of one endpoint, the error of a
//! removal etcd refuses, and a member added.

use std::path::Path;

use kubeadm_effects::etcd::Etcd;
use kubeadm_host::etcd::{Backoff, EtcdClient};
use kubeadm_testkit::apiserver::ApiServer;

#[test]
fn lists_members_syncs_endpoints_and_reports_refusals() {
    let server = ApiServer::start();
    let pki = server.root().join("etc/kubernetes/pki/etcd");
    let url = server.etcd_client_url();
    let client = EtcdClient::connect(
        std::slice::from_ref(&url),
        &pki.join("ca.crt"),
        &pki.join("healthcheck-client.crt"),
        &pki.join("healthcheck-client.key"),
    )
    .expect("connect");
    let members = client.list_members().expect("list");
    assert_eq!(members.len(), 1, "{members:?}");
    assert_eq!(members[0].client_urls, std::slice::from_ref(&url));
    assert!(
        members[0].peer_urls[0].starts_with("https://127.0.0.1:"),
        "{members:?}"
    );
    assert_ne!(members[0].id, 0);
    // Upstream's Sync: the endpoints are the members' client URLs.
    assert_eq!(client.endpoints(), std::slice::from_ref(&url));

    // As upstream's RemoveMember: a member etcd does not know was removed already.
    let left = client.remove_member(members[0].id ^ 1).expect("unknown member");
    assert!(left.is_empty(), "{left:?}");
    // Nothing was removed.
    assert_eq!(client.list_members().expect("list").len(), 1);

    // A client certificate the etcd CA did not sign (the kubernetes CA did) is refused, after
    // the retries (three quick ones here; upstream's backoff takes about five minutes).
    let quick = Backoff {
        steps: 3,
        first: std::time::Duration::from_millis(10),
    };
    let k8s_pki = server.root().join("etc/kubernetes/pki");
    let started = std::time::Instant::now();
    let refused = EtcdClient::connect_with(
        std::slice::from_ref(&url),
        &pki.join("ca.crt"),
        &k8s_pki.join("apiserver-kubelet-client.crt"),
        &k8s_pki.join("apiserver-kubelet-client.key"),
        quick,
    );
    assert!(refused.is_err());
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(25),
        "no retry"
    );
    // A member that is down among the endpoints (its Pod still listed) does not fail the calls.
    let dead = "https://127.0.0.1:1".to_string();
    let client_with_dead = EtcdClient::connect(
        &[dead.clone(), url.clone()],
        &pki.join("ca.crt"),
        &pki.join("healthcheck-client.crt"),
        &pki.join("healthcheck-client.key"),
    )
    .expect("connect past the dead endpoint");
    assert_eq!(client_with_dead.list_members().expect("list").len(), 1);
    // Status asks the one endpoint named.
    client.status(&url).expect("status");
    let down = client.status(&dead).expect_err("down");
    assert!(
        down.to_string().starts_with("Status https://127.0.0.1:1"),
        "{down}"
    );
    // A snapshot is the member's bbolt database: its first meta page carries bbolt's magic number
    // (0xED0CDAED, little-endian, after the 16-byte page header).
    let db = client.snapshot(&url).expect("snapshot");
    assert!(db.len() >= 8192, "a snapshot of {} bytes", db.len());
    assert_eq!(db[16..20], 0xED0C_DAEDu32.to_le_bytes(), "not a bbolt database");
    assert!(client.snapshot(&dead).is_err());

    // TLS verification is on: a server certificate the given CA did not sign (the kubernetes CA
    // is given, etcd's signed it) is refused, whatever the client certificate.
    let untrusting = EtcdClient::connect_with(
        std::slice::from_ref(&url),
        &k8s_pki.join("ca.crt"),
        &pki.join("healthcheck-client.crt"),
        &pki.join("healthcheck-client.key"),
        quick,
    );
    let refusal = match untrusting.map(|c| c.list_members()) {
        Ok(Ok(members)) => panic!("etcd answered a client that does not trust it: {members:?}"),
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    assert!(refusal.contains("certificate: UnknownIssuer"), "{refusal}");

    // A missing file is named.
    let missing = EtcdClient::connect(
        std::slice::from_ref(&url),
        Path::new("/nonexistent/ca.crt"),
        &pki.join("healthcheck-client.crt"),
        &pki.join("healthcheck-client.key"),
    )
    .expect_err("no CA");
    assert!(
        missing.to_string().starts_with("open /nonexistent/ca.crt: "),
        "{missing}"
    );

    // Last, as it leaves a one-member cluster waiting for its second: a voting member added, known
    // by its peer URL only until it starts.
    let after = client.add_member("https://127.0.0.1:2").expect("add");
    assert_eq!(after.len(), 2, "{after:?}");
    let new = after
        .iter()
        .find(|m| m.peer_urls == ["https://127.0.0.1:2"])
        .expect("the new member");
    assert!(new.name.is_empty() && new.client_urls.is_empty(), "{new:?}");
}
