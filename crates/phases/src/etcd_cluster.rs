//! The stacked etcd cluster as kubeadm reaches it through the API server (upstream's
//! `etcdutil.NewFromCluster`): the client URLs from the etcd Pods' annotations, a client made with
//! the etcd CA and the health-check client certificate, and what `reset` and a control-plane `join`
//! ask of it: the member to add for a joining node (upstream's `AddMember`, made safe to re-run),
//! and the health of every member (`CheckClusterHealth`, `WaitForClusterAvailable`).

use std::path::Path;
use std::time::Duration;

pub use kubeadm_core::manifests::{EtcdMember, client_url, peer_url};
use kubeadm_effects::cluster::{Cluster, ListOptions, Resource};
use kubeadm_effects::etcd::{Etcd, EtcdError, Member};
use serde_json::Value;

/// The etcd Pod annotation holding its advertise client URL.
const ETCD_CLIENT_URLS_ANNOTATION: &str = "kubeadm.kubernetes.io/etcd.advertise-client-urls";
/// Opens an etcd client on the given endpoints with the given CA, client certificate and key files.
pub use kubeadm_effects::etcd::{EtcdConnector, EtcdTlsFiles};

/// Why no client to the etcd cluster could be made.
#[derive(Debug, thiserror::Error)]
pub enum EtcdClientError {
    /// The etcd endpoints could not be read from the etcd Pods.
    #[error("could not retrieve the list of etcd endpoints: {0}")]
    Endpoints(String),
    /// The etcd client could not be created or synced.
    #[error("error creating etcd client for {endpoints:?} endpoints: {reason}")]
    Connect {
        /// The endpoints from the Pods.
        endpoints: Vec<String>,
        /// What failed.
        reason: crate::SuppliedError,
    },
}

/// The etcd client URLs from the etcd Pods' annotations, retried as upstream until every etcd Pod
/// has one (the static pods may not be mirrored yet).
pub fn etcd_endpoints(cluster: &dyn Cluster) -> Result<Vec<String>, EtcdClientError> {
    let options = ListOptions {
        label_selector: "component=etcd,tier=control-plane".into(),
        field_selector: String::new(),
    };
    crate::mirror_pods::retry(cluster, || {
        let pods = cluster
            .list(&Resource::core("pods"), "kube-system", &options)
            .map_err(|e| e.to_string())?;
        let urls: Vec<String> = pods
            .iter()
            .filter_map(|p| {
                p.pointer("/metadata/annotations")
                    .and_then(|a| a.get(ETCD_CLIENT_URLS_ANNOTATION))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect();
        if !urls.is_empty() && urls.len() == pods.len() {
            Ok(urls)
        } else {
            Err("timed out waiting for the condition".to_string())
        }
    })
    .map_err(EtcdClientError::Endpoints)
}

/// Upstream's `NewFromCluster`: the endpoints from the etcd Pods, then a client with the
/// health-check client certificate under `cert_dir` (the connector syncs the endpoints with the
/// member list).
pub fn client_from_cluster(
    cluster: &dyn Cluster,
    cert_dir: &Path,
    connect: &EtcdConnector,
    log: &dyn Fn(&str),
) -> Result<Box<dyn Etcd>, EtcdClientError> {
    let endpoints = etcd_endpoints(cluster)?;
    log(&format!("etcd endpoints read from pods: {}", endpoints.join(",")));
    connect(&endpoints, &EtcdTlsFiles::healthcheck_client(cert_dir)).map_err(|reason| {
        EtcdClientError::Connect {
            endpoints: endpoints.clone(),
            reason,
        }
    })
}

/// Why the joining node's member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddMemberError {
    /// etcd refused the new member because members added before never started: the cluster
    /// would lose its quorum. Names them and what to do.
    #[error(
        "etcd refused to add the member {peer_url}: {source}. The etcd cluster has members that were added but never started: {stale}. \
         Such a member is left behind by a control-plane join that failed after announcing it. \
         Re-run the join on the node it belongs to, or remove it with 'etcdctl member remove <ID>' on a healthy control-plane node, then run this join again"
    )]
    StaleMembers {
        /// The peer URL being added.
        peer_url: String,
        /// The members that never started, `ID (peer URL)`.
        stale: String,
        /// etcd's answer.
        #[source]
        source: EtcdError,
    },
    /// Any other failure of the etcd calls.
    #[error(transparent)]
    Etcd(#[from] EtcdError),
}

/// A member that was added but never started: etcd knows no name and no client URL for it.
fn never_started_member(m: &Member) -> bool {
    m.name.is_empty() && m.client_urls.is_empty()
}

/// The `--initial-cluster` list of a joining member: every member by name and first peer URL, the
/// one with `peer_url` named `name` (upstream's naming, ids in hex for nameless others).
fn initial_cluster(members: &[Member], name: &str, peer_url: &str) -> Vec<EtcdMember> {
    members
        .iter()
        .filter_map(|m| {
            let first = m.peer_urls.first()?;
            let member_name = if first == peer_url {
                name.to_string()
            } else if m.name.is_empty() {
                format!("{:x}", m.id)
            } else {
                m.name.clone()
            };
            Some(EtcdMember {
                name: member_name,
                peer_url: first.clone(),
            })
        })
        .collect()
}

/// Upstream's `AddMember` for a joining control plane, safe to re-run: when a member with this
/// peer URL exists already (a previous attempt announced it), it is reused rather than added
/// again; upstream tries the add first and reuses only on `ErrPeerURLExist`, which etcd never
/// answers when the stale member itself makes the add fail its quorum check. Returns the
/// `--initial-cluster` members and whether the member was already there.
pub fn add_joining_member(
    etcd: &dyn Etcd,
    name: &str,
    peer_url: &str,
) -> Result<(Vec<EtcdMember>, bool), AddMemberError> {
    let members = etcd.list_members()?;
    if members
        .iter()
        .any(|m| m.peer_urls.first().map(String::as_str) == Some(peer_url))
    {
        return Ok((initial_cluster(&members, name, peer_url), true));
    }
    match etcd.add_member(peer_url) {
        Ok(after) => Ok((initial_cluster(&after, name, peer_url), false)),
        Err(e) if e.message.contains("Peer URLs already exists") => {
            let members = etcd.list_members()?;
            Ok((initial_cluster(&members, name, peer_url), true))
        }
        Err(e) if e.message.contains("not enough started members") => {
            let stale: Vec<String> = members
                .iter()
                .filter(|m| never_started_member(m))
                .map(|m| format!("{:x} ({})", m.id, m.peer_urls.join(",")))
                .collect();
            if stale.is_empty() {
                return Err(e.into());
            }
            Err(AddMemberError::StaleMembers {
                peer_url: peer_url.to_string(),
                stale: stale.join(", "),
                source: e,
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Upstream's `CheckClusterHealth`: every endpoint of the client answers `Status`; the first that
/// does not is the error.
pub fn check_cluster_health(etcd: &dyn Etcd) -> Result<(), EtcdError> {
    etcd.endpoints().iter().try_for_each(|ep| etcd.status(ep))
}

/// Upstream's `WaitForClusterAvailable` over `endpoints` (the client's and the new member's):
/// every endpoint answers `Status`, checked up to `retries` times `interval` apart (`pause`
/// waits). Upstream checks every 5 s; the same deadline polled more often finishes sooner.
pub fn wait_for_cluster_available(
    etcd: &dyn Etcd,
    endpoints: &[String],
    retries: u32,
    interval: Duration,
    pause: &dyn Fn(Duration),
) -> Result<(), WaitEtcdError> {
    let mut last = None;
    for attempt in 0..retries {
        if attempt > 0 {
            pause(interval);
        }
        match endpoints.iter().try_for_each(|ep| etcd.status(ep)) {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(WaitEtcdError { last })
}

/// The etcd cluster did not become available in time.
#[derive(Debug, thiserror::Error)]
#[error("timeout waiting for etcd cluster to be available{}", .last.as_ref().map(|e| format!(" (last error: {e})")).unwrap_or_default())]
pub struct WaitEtcdError {
    /// The last failed status call.
    pub last: Option<EtcdError>,
}

#[cfg(test)]
mod tests {
    use kubeadm_api::v1beta3::ApiEndpoint;
    use kubeadm_testkit::fakes::{FakeEtcd, announced_member, started_member};

    use super::*;

    #[test]
    fn a_new_member_is_added_and_listed_with_the_others() {
        let etcd = FakeEtcd::new(
            &["https://10.0.0.1:2379"],
            vec![started_member(1, "node1", "10.0.0.1")],
        );
        let (initial, existed) = add_joining_member(&etcd, "node2", "https://10.0.0.2:2380").expect("added");
        assert!(!existed);
        assert_eq!(
            initial,
            [
                EtcdMember {
                    name: "node1".into(),
                    peer_url: "https://10.0.0.1:2380".into()
                },
                EtcdMember {
                    name: "node2".into(),
                    peer_url: "https://10.0.0.2:2380".into()
                },
            ]
        );
        assert_eq!(etcd.calls(), ["list", "add https://10.0.0.2:2380"]);
    }

    /// A previous attempt announced this node's member and failed before its etcd started: with two
    /// started members of three, adding it again would fail etcd's quorum check, so it is reused.
    #[test]
    fn a_member_left_by_a_failed_attempt_is_reused_not_added() {
        let etcd = FakeEtcd::new(
            &["https://10.0.0.1:2379"],
            vec![
                started_member(1, "node1", "10.0.0.1"),
                started_member(2, "node2", "10.0.0.2"),
                announced_member(3, "10.0.0.3"),
            ],
        );
        let (initial, existed) = add_joining_member(&etcd, "node3", "https://10.0.0.3:2380").expect("added");
        assert!(existed);
        assert_eq!(initial[2].name, "node3");
        assert_eq!(etcd.calls(), ["list"]);
    }

    /// Another node's failed attempt blocks this one: the error names that member and what to do.
    #[test]
    fn another_nodes_stale_member_is_named_in_the_error() {
        let etcd = FakeEtcd::new(
            &["https://10.0.0.1:2379"],
            vec![
                started_member(1, "node1", "10.0.0.1"),
                started_member(2, "node2", "10.0.0.2"),
                announced_member(0x3a, "10.0.0.3"),
            ],
        );
        let err = add_joining_member(&etcd, "node4", "https://10.0.0.4:2380").expect_err("refused");
        let text = err.to_string();
        assert!(matches!(err, AddMemberError::StaleMembers { .. }), "{text}");
        assert!(text.contains("3a (https://10.0.0.3:2380)"), "{text}");
        assert!(text.contains("etcdctl member remove"), "{text}");
    }

    #[test]
    fn the_wait_gives_up_after_its_retries_with_the_last_error() {
        let etcd = FakeEtcd::new(
            &["https://10.0.0.1:2379"],
            vec![started_member(1, "node1", "10.0.0.1")],
        );
        let paused = std::cell::Cell::new(0);
        let eps = [
            "https://10.0.0.1:2379".to_string(),
            "https://10.0.0.2:2379".to_string(),
        ];
        let err = wait_for_cluster_available(&etcd, &eps, 3, Duration::from_secs(1), &|_| {
            paused.set(paused.get() + 1)
        })
        .expect_err("refused");
        assert_eq!(paused.get(), 2);
        assert!(
            err.to_string()
                .starts_with("timeout waiting for etcd cluster to be available")
        );
        assert!(err.to_string().contains("10.0.0.2:2379"), "{err}");
        assert!(wait_for_cluster_available(&etcd, &eps[..1], 3, Duration::ZERO, &|_| ()).is_ok());
    }

    #[test]
    fn urls_bracket_ipv6() {
        let ep = ApiEndpoint {
            advertise_address: "fd00::3".into(),
            bind_port: 6443,
        };
        assert_eq!(peer_url(&ep), "https://[fd00::3]:2380");
        assert_eq!(client_url(&ep), "https://[fd00::3]:2379");
    }
}
