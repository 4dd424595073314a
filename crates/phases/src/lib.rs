//! The kubeadm workflows: init, join, reset and upgrade.
//!
//! Each phase is glue: it computes with kubeadm-core and applies the result through kubeadm-effects,
//! with a typed context per workflow.
