//! Test support: the recording fakes of the effect traits ([`fakes`]: the API server, the host,
//! etcd; the file system, init system and CRI are faked by their dry-run decorators or by the
//! tests that need a special one), a real kube-apiserver with etcd ([`apiserver`]), PKI checks
//! ([`pki`]), chrooted roots ([`rootfs`]), masks for dry-run outputs ([`dryrun`]), ELF facts of executables ([`elf`]), the runner
//! that puts upstream kubeadm v1.25.16 and ours side by side ([`oracle`]), and the audit of what
//! ours prints for secrets ([`secrets`]).
//!
//! A dev-dependency only; never linked into the kubeadm binary.

pub mod apiserver;
pub mod dryrun;
pub mod elf;
pub mod fakes;
pub mod oracle;
pub mod pki;
pub mod rootfs;
pub mod secrets;
