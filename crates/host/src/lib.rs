//! The real implementations of the effect traits.
//!
//! The only library crate that touches the file system, the network, processes, the environment and
//! the clock (in the binary, only `main.rs` and its `setup` module do, which build these).
//! Depends on kubeadm-api and kubeadm-effects; heavy dependencies (kube, etcd, gRPC) live only here.
pub mod cluster;
pub mod cri;
pub mod etcd;
pub mod fs;
pub mod host_probe;
pub mod https;
pub mod init_system;
pub mod keygen;
pub mod path_lookup;
pub mod probe;
pub mod report;
