//! The stacked etcd cluster as `kubeadm reset` uses it: the member list and the removal of one
//! member (upstream's `etcdutil.Client.ListMembers` / `RemoveMember`), behind a small synchronous
//! trait. The gRPC client lives in kubeadm-host; [`FakeEtcd`] scripts a cluster for tests.
//!
//! There is no dry-run decorator: upstream never connects to etcd in a dry run (the phase prints
//! `Would remove the etcd member…` instead), and neither do we.

use std::sync::Mutex;

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
}

/// A scripted etcd cluster recording the calls made to it.
#[derive(Debug, Default)]
pub struct FakeEtcd {
    endpoints: Vec<String>,
    members: Mutex<Vec<Member>>,
    calls: Mutex<Vec<String>>,
}

impl FakeEtcd {
    /// A cluster of `members`, reached through `endpoints`.
    pub fn new(endpoints: &[&str], members: Vec<Member>) -> Self {
        Self {
            endpoints: endpoints.iter().map(|e| e.to_string()).collect(),
            members: Mutex::new(members),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The calls made so far: `list`, `remove <id>`.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn record(&self, call: String) {
        if let Ok(mut c) = self.calls.lock() {
            c.push(call);
        }
    }

    fn members(&self) -> Vec<Member> {
        self.members.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

impl Etcd for FakeEtcd {
    fn endpoints(&self) -> Vec<String> {
        self.endpoints.clone()
    }

    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        self.record("list".into());
        Ok(self.members())
    }

    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        self.record(format!("remove {id}"));
        let mut members = self.members.lock().map_err(|_| EtcdError {
            call: format!("MemberRemove {id}"),
            endpoints: self.endpoints.clone(),
            message: "poisoned".into(),
        })?;
        let before = members.len();
        members.retain(|m| m.id != id);
        if members.len() == before {
            return Err(EtcdError {
                call: format!("MemberRemove {id}"),
                endpoints: self.endpoints.clone(),
                message: "etcdserver: member not found".into(),
            });
        }
        Ok(members.clone())
    }
}
