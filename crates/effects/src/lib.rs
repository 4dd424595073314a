//! The effects kubeadm has on the world, as small traits.
//!
//! Each trait has three implementations: the real one (kubeadm-host), the dry-run decorator (here) and
//! the recording fake (kubeadm-testkit). All user-visible output goes through the reporter defined here.
//!
//! Depends on kubeadm-api only.
pub mod bundle;
pub mod cluster;
pub mod cri;
pub mod etcd;
pub mod fs;
pub mod host_probe;
pub mod init_system;
pub mod keygen;
pub mod report;

pub use bundle::Effects;

/// Why an effect the binary supplies (a client it connects, a version it asks) failed: the
/// supplier's own error, carried as itself (the supplier's crate is not a dependency of the
/// workflows').
pub type SuppliedError = Box<dyn std::error::Error + Send + Sync>;
