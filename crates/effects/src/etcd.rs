//! The stacked etcd cluster as `kubeadm reset` and a control-plane `kubeadm join` use it: the
//! member list, adding and removing one member, and the status of one endpoint (upstream's
//! `etcdutil.Client` calls `MemberList`, `MemberAdd`, `MemberRemove`, `Status`), behind a small
//! synchronous trait. The gRPC client lives in kubeadm-host; kubeadm-testkit's `FakeEtcd` scripts a cluster for
//! tests.
//!
//! There is no dry-run decorator: upstream never connects to etcd in a dry run (the phase prints
//! `Would remove the etcd member…` instead), and neither do we.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Connects to the etcd cluster at these endpoints with these TLS files (the real gRPC client, or a
/// fake in tests).
pub type EtcdConnector =
    Arc<dyn Fn(&[String], &EtcdTlsFiles) -> Result<Box<dyn Etcd>, crate::SuppliedError> + Send + Sync>;

/// The files of upstream's etcd client: `etcd/ca.crt`, `etcd/healthcheck-client.{crt,key}` under the
/// certificates directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdTlsFiles {
    /// The etcd CA certificate.
    pub ca: PathBuf,
    /// The client certificate.
    pub cert: PathBuf,
    /// The client key.
    pub key: PathBuf,
}

impl EtcdTlsFiles {
    /// The health-check client's files under `cert_dir`, as upstream's `NewFromCluster` uses them.
    pub fn healthcheck_client(cert_dir: &Path) -> Self {
        Self {
            ca: cert_dir.join("etcd/ca.crt"),
            cert: cert_dir.join("etcd/healthcheck-client.crt"),
            key: cert_dir.join("etcd/healthcheck-client.key"),
        }
    }
}

/// One etcd member, as `MemberList` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member id.
    pub id: u64,
    /// The member name (the node name for kubeadm's members).
    pub name: String,
    /// Peer URLs, e.g. `https://10.0.0.1:2380`.
    pub peer_urls: Vec<String>,
    /// Client URLs, e.g. `https://10.0.0.1:2379` (empty for a learner not started yet).
    pub client_urls: Vec<String>,
}

/// A failed etcd call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} on {endpoints:?}: {message}")]
pub struct EtcdError {
    /// The call (`MemberList`, `MemberRemove 123`).
    pub call: String,
    /// The endpoints the client used.
    pub endpoints: Vec<String>,
    /// What went wrong.
    pub message: String,
}

/// A client connected to the etcd cluster.
pub trait Etcd: Send + Sync {
    /// The client URLs the client talks to (after upstream's `Sync`: every member's client URLs).
    fn endpoints(&self) -> Vec<String>;
    /// `MemberList`.
    fn list_members(&self) -> Result<Vec<Member>, EtcdError>;
    /// `MemberRemove`; returns the members left.
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError>;
    /// `MemberAdd` of a voting member with this peer URL; returns the members after it (the new one
    /// has no name and no client URLs until it starts).
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError>;
    /// `Status` of one endpoint: `Ok` when that member answers.
    fn status(&self, endpoint: &str) -> Result<(), EtcdError>;
    /// `Snapshot` of the member at `endpoint`: a consistent copy of its database (what `etcdutl
    /// snapshot restore` takes). Default: unsupported.
    fn snapshot(&self, endpoint: &str) -> Result<Vec<u8>, EtcdError> {
        Err(EtcdError {
            call: format!("Snapshot {endpoint}"),
            endpoints: vec![endpoint.to_string()],
            message: "not supported by this client".into(),
        })
    }
}

/// A shared client is a client too, so that a test can keep a handle on the fake it gives away.
impl<E: Etcd + ?Sized> Etcd for std::sync::Arc<E> {
    fn endpoints(&self) -> Vec<String> {
        (**self).endpoints()
    }
    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        (**self).list_members()
    }
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        (**self).remove_member(id)
    }
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        (**self).add_member(peer_url)
    }
    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        (**self).status(endpoint)
    }
    fn snapshot(&self, endpoint: &str) -> Result<Vec<u8>, EtcdError> {
        (**self).snapshot(endpoint)
    }
}
