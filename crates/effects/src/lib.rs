//! The effects kubeadm has on the world, as small traits.
//!
//! Each trait has three implementations: the real one (kubeadm-host), the dry-run decorator (here) and
//! the recording fake (kubeadm-testkit). All user-visible output goes through the reporter defined here.
//!
//! Depends on kubeadm-api only.
pub mod cluster;
pub mod cri;
pub mod etcd;
pub mod fs;
pub mod host_probe;
pub mod init_system;
pub mod keygen;
pub mod report;
