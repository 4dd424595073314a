//! A scripted etcd cluster recording the calls made to it.

use std::sync::Mutex;

use kubeadm_effects::etcd::{Etcd, EtcdError, Member};

/// A member that runs: named, with the client URL of its address (`https://<ip>:2379`).
pub fn started_member(id: u64, name: &str, ip: &str) -> Member {
    Member {
        id,
        name: name.into(),
        peer_urls: vec![format!("https://{ip}:2380")],
        client_urls: vec![format!("https://{ip}:2379")],
    }
}

/// A member that was added and never started: no name, no client URL.
pub fn announced_member(id: u64, ip: &str) -> Member {
    Member {
        id,
        name: String::new(),
        peer_urls: vec![format!("https://{ip}:2380")],
        client_urls: Vec::new(),
    }
}

/// Why a member of a [`FakeEtcd`] could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// A thread panicked while holding the members.
    #[error("poisoned")]
    Poisoned,
    /// No member with this peer URL was added: etcd exits.
    #[error("no member with peer URL {0} was added to the cluster")]
    NotAdded(String),
}

/// A scripted etcd cluster recording the calls made to it.
#[derive(Debug, Default)]
pub struct FakeEtcd {
    endpoints: Vec<String>,
    members: Mutex<Vec<Member>>,
    calls: Mutex<Vec<String>>,
    starts_new_members: bool,
}

impl FakeEtcd {
    /// A cluster of `members`, reached through `endpoints`.
    pub fn new(endpoints: &[&str], members: Vec<Member>) -> Self {
        Self {
            endpoints: endpoints.iter().map(|e| e.to_string()).collect(),
            members: Mutex::new(members),
            calls: Mutex::new(Vec::new()),
            starts_new_members: false,
        }
    }

    /// A cluster whose added members start at once (as if their static pod came up): named
    /// `started-<id>`, answering on the client URL of their peer URL's host.
    pub fn starting_new_members(mut self) -> Self {
        self.starts_new_members = true;
        self
    }

    /// The members now.
    pub fn member_list(&self) -> Vec<Member> {
        self.members()
    }

    /// The member of `peer_url` starts, as etcd does when a kubelet runs it: it takes the name
    /// `name` and answers on `client_url`. A member the cluster was never told of does not start
    /// (etcd exits when its peer URL is not among the members).
    pub fn start_member(&self, peer_url: &str, name: &str, client_url: &str) -> Result<(), StartError> {
        let mut members = self.members.lock().map_err(|_| StartError::Poisoned)?;
        let member = members
            .iter_mut()
            .find(|m| m.peer_urls.iter().any(|u| u == peer_url))
            .ok_or_else(|| StartError::NotAdded(peer_url.to_string()))?;
        member.name = name.to_string();
        member.client_urls = vec![client_url.to_string()];
        Ok(())
    }

    /// Whether the started members are a majority of the voting members (a member added and
    /// never started counts as a voter that does not answer).
    pub fn has_quorum(&self) -> bool {
        let members = self.members();
        let started = members.iter().filter(|m| !m.name.is_empty()).count();
        started * 2 > members.len()
    }

    fn no_quorum(&self, call: String) -> EtcdError {
        EtcdError {
            call,
            endpoints: self.endpoints.clone(),
            message: "etcdserver: request timed out".into(),
        }
    }

    /// The calls made so far: `list`, `remove <id>`, `add <peer URL>`, `status <endpoint>`.
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
        if !self.has_quorum() {
            return Err(self.no_quorum(format!("MemberRemove {id}")));
        }
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

    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        self.record(format!("add {peer_url}"));
        // A membership change is a raft proposal: without a quorum it times out.
        if !self.has_quorum() {
            return Err(self.no_quorum(format!("MemberAdd {peer_url}")));
        }
        let fail = |message: &str| EtcdError {
            call: format!("MemberAdd {peer_url}"),
            endpoints: self.endpoints.clone(),
            message: message.into(),
        };
        let mut members = self.members.lock().map_err(|_| fail("poisoned"))?;
        if members.iter().any(|m| m.peer_urls.iter().any(|u| u == peer_url)) {
            return Err(fail("etcdserver: Peer URLs already exists"));
        }
        // etcd's strict reconfiguration check (`IsReadyToAddVotingMember`): the started members
        // must still make a quorum, except when a one-member cluster gets its second.
        let started = members.iter().filter(|m| !m.name.is_empty()).count();
        let after = members.len() + 1;
        if !(started == 1 && after == 2) && started < after / 2 + 1 {
            return Err(fail(
                "etcdserver: re-configuration failed due to not enough started members",
            ));
        }
        let id = members.iter().map(|m| m.id).max().unwrap_or(0) + 1;
        let added = members.clone();
        let mut new = Member {
            id,
            name: String::new(),
            peer_urls: vec![peer_url.to_string()],
            client_urls: Vec::new(),
        };
        let mut answer = added;
        answer.push(new.clone());
        if self.starts_new_members {
            new.name = format!("started-{id}");
            new.client_urls = vec![peer_url.replace(":2380", ":2379")];
        }
        members.push(new);
        Ok(answer)
    }

    /// A started member's "database": its name, for tests to recognise.
    fn snapshot(&self, endpoint: &str) -> Result<Vec<u8>, EtcdError> {
        self.record(format!("snapshot {endpoint}"));
        self.members()
            .into_iter()
            .find(|m| m.client_urls.iter().any(|u| u == endpoint))
            .map(|m| format!("snapshot of {}", m.name).into_bytes())
            .ok_or_else(|| EtcdError {
                call: format!("Snapshot {endpoint}"),
                endpoints: vec![endpoint.to_string()],
                message: "context deadline exceeded".into(),
            })
    }

    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        self.record(format!("status {endpoint}"));
        let members = self.members();
        if members
            .iter()
            .any(|m| m.client_urls.iter().any(|u| u == endpoint))
        {
            Ok(())
        } else {
            Err(EtcdError {
                call: format!("Status {endpoint}"),
                endpoints: vec![endpoint.to_string()],
                message: "context deadline exceeded".into(),
            })
        }
    }
}
