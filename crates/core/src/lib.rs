//! Pure kubeadm computation.
//!
//! Takes values, returns values: the host layout, certificate specs, kubeconfig files, static pod
//! manifests, kubelet files, addon objects, patches, preflight evaluation of host facts and upgrade plans.
//!
//! Must not depend on tokio, kube or any effect implementation, nor use `std::fs`, `std::net`,
//! `std::process`, `std::env` or the system clock.

pub mod addons;
pub mod bind_address;
pub mod cluster;
pub mod images;
pub mod kubeconfig;
pub mod kubelet;
pub mod manifests;
pub mod patches;
pub mod pki;
pub mod text;
pub mod unified_diff;
pub mod upgrade;
