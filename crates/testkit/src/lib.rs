//! Test support: recording fakes for every effect trait, fixtures and golden-file helpers.
//!
//! A dev-dependency only; never linked into the kubeadm binary.
