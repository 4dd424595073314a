//! From a command line and its `--config` file to what the handlers run with: the kubeadm
//! configuration as the commands load it ([`config_load`]), `kubeadm init`'s flags made into a
//! configuration ([`init_options`]), upstream's rule on mixing `--config` with other flags
//! ([`mixed_args`]) and the `--patches` directory ([`patches`]). Shared by several handlers of
//! `crate::commands`, none of which it knows.

pub(crate) mod config_load;
pub(crate) mod init_options;
pub(crate) mod mixed_args;
pub(crate) mod patches;
