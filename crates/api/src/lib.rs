//! The kubeadm configuration API.
//!
//! Owns the types of `kubeadm.k8s.io/v1beta3` (and v1beta2, read for migration) as they are on the wire,
//! the component configs kubeadm carries, decoding, defaulting, validation and conversion, and the
//! Go-compatible YAML encoding of those objects.
//!
//! Depends on serde only: no I/O, no clock, no network.
