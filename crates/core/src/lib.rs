//! Pure kubeadm computation.
//!
//! Takes values, returns values: the host layout, certificate specs, kubeconfig files, static pod
//! manifests, kubelet files, addon objects, patches, preflight evaluation of host facts and upgrade plans.
//!
//! Must not depend on tokio, kube or any effect implementation, nor use `std::fs`, `std::net`,
//! `std::process`, `std::env` or the system clock: `clippy.toml` beside this crate's manifest
//! forbids the methods that would (the crate's tests may read fixtures).

pub mod addons;
pub mod bind_address;
pub mod cluster;
pub mod images;
pub mod kubeconfig;
pub mod kubelet;
pub mod layout;
pub mod manifests;
pub mod patches;
pub mod pki;
pub mod unified_diff;
pub mod upgrade;
pub mod users;
