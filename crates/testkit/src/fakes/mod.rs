//! The recording fakes of the effect traits: an in-memory API server ([`FakeCluster`]), a scripted
//! host ([`FakeHost`]) and a scripted etcd cluster ([`FakeEtcd`]). The real implementations live in
//! kubeadm-host and the dry-run decorators in kubeadm-effects.

mod cluster;
mod etcd;
mod host;

pub use cluster::{FakeCluster, ObjectKey};
pub use etcd::{FakeEtcd, announced_member, started_member};
pub use host::FakeHost;
