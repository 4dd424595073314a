//! Test support: recording fakes for every effect trait, fixtures and golden-file helpers, and the
//! runner that puts upstream kubeadm v1.25.16 and ours side by side.
//!
//! A dev-dependency only; never linked into the kubeadm binary.

pub mod apiserver;
pub mod fakes;
pub mod oracle;
pub mod pki;
pub mod rootfs;
