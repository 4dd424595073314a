//! A scripted etcd cluster recording the calls made to it.

use std::sync::Mutex;

use kubeadm_effects::etcd::{Etcd, EtcdError, Member};

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
