//! The kubeadm configuration API.
//!
//! Owns the types of `kubeadm.k8s.io/v1beta3` as they are on the wire (also our internal model),
//! v1beta2 (read and converted), the kubelet and kube-proxy component configs, the Go-compatible
//! encodings of durations, times and tokens, and everything upstream does to a config between the
//! file and its use: decoding, static and dynamic defaulting, validation, and the texts of
//! `kubeadm config print` and `kubeadm config migrate`.
//!
//! Depends on serde and kubeadm-yaml only: no I/O, no clock, no network. Whatever upstream reads from
//! the host (hostname, addresses, CRI sockets, systemd-resolved) comes in as [`dynamic::HostFacts`];
//! randomness and release-marker fetches come in as closures ([`dynamic::DynamicInputs`]).
//!
//! Entry points:
//! - [`internal::load_init_config`] / [`internal::load_join_config`]: a config file to a ready,
//!   validated configuration ([`internal::InitConfig`], [`internal::JoinConfig`]);
//!   [`internal::defaulted_init_config`] / [`internal::defaulted_join_config`] for flag-built ones.
//! - [`print::print_init_defaults`] / [`print::print_join_defaults`]: `kubeadm config print`.
//! - [`migrate::migrate`]: `kubeadm config migrate`.
//! - [`validation`]: upstream's checks, errors rendered as apimachinery's `field.ErrorList`.
//! - [`gofmt`]: Go's text formatting that kubeadm's output depends on (`%q`, `%v` of a slice, OS
//!   errors, `text/tabwriter`, short human durations), the one home for it in the workspace.

pub mod componentconfig;
pub mod defaults;
pub mod document;
pub mod duration;
pub mod dynamic;
pub mod features;
pub mod go_url;
pub mod gofmt;
pub mod internal;
pub mod load;
pub mod migrate;
mod omitempty;
pub mod print;
pub mod semantic_version;
pub mod timestamp;
pub mod v1beta2;
pub mod v1beta3;
pub mod validation;
pub mod version;
