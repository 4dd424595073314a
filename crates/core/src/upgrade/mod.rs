//! Upgrade planning: which versions a cluster can move to (`kubeadm upgrade plan`), computed from
//! versions passed in; finding those versions is the caller's business.

pub mod coredns;
pub mod plan;
pub mod policy;
pub mod version;
