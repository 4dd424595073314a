//! The files kubeadm writes for the kubelet in `kubelet-start`: `/var/lib/kubelet/kubeadm-flags.env`
//! (the node-specific flags, as upstream kubeadm v1.25 sets them) and `/var/lib/kubelet/config.yaml`
//! (the cluster's `KubeletConfiguration`). Pure: host facts such as the hostname come in as values.
//! Patches to the `kubeletconfiguration` target are applied by [`crate::patches`].

mod config;
mod flags;

pub use config::{config_value, config_yaml, patched_config_yaml};
pub use flags::{KubeletFlagsInputs, flags_env, taint_to_string};
