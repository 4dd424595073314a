//! The cluster objects of `kubeadm init` (and what `join` reads back), as pure builders: each
//! returns the object as a `serde_json::Value` shaped exactly as Go's `encoding/json` writes the
//! typed object upstream creates or updates, so its YAML (`kubeadm_yaml::to_string`) is what
//! upstream's dry-run prints. Time, randomness and object UIDs come in as arguments.
//!
//! - [`upload_config`]: `kubeadm-config` and `kubelet-config` ConfigMaps and their RBAC;
//! - [`bootstrap_token`]: token Secrets and the TLS-bootstrap RBAC;
//! - [`cluster_info`]: the `cluster-info` ConfigMap, its RBAC and the JWS signatures;
//! - [`node`]: mark-control-plane and the CRI socket annotation, and the Node patch;
//! - [`upload_certs`]: the encrypted `kubeadm-certs` Secret and its RBAC.
//!
//! How upstream applies them (the phases' business, noted here because it goes with the objects):
//! everything is create-or-update (create; on AlreadyExists, update), except the `kubeadm-config`
//! ConfigMap (create-or-mutate: on AlreadyExists only its `ClusterConfiguration` key is replaced)
//! and token Secrets during `init` (a GET first; an existing Secret fails with
//! `a token with id "<id>" already exists`, then create-or-update retried up to five times).
//! [`meta::api_resource`] names each object's resource as the dry-run output does.
//!
//! Depends on kubeadm-api for the configuration types; no I/O.

pub mod bootstrap_token;
pub mod cluster_info;
pub mod meta;
pub mod node;
pub(crate) mod rbac;
pub mod upload_certs;
pub mod upload_config;

pub use rbac::{NODE_BOOTSTRAP_TOKEN_AUTH_GROUP, NODES_GROUP};
