//! The `kubelet-start` phase of `kubeadm init`: the kubelet's flags file and configuration file,
//! written while the kubelet is stopped, then the kubelet (re)started through the init system.

use std::path::Path;

use kubeadm_core::kubelet::{self, KubeletFlagsInputs};
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::kubelet::{KubeletError, config_file, try_start, try_stop, write_file};

/// `kubelet-start`.
pub(crate) fn run_start(data: &mut InitData) -> Result<(), PhaseError> {
    if !data.dry_run {
        data.effects
            .reporter
            .info(1, "kubelet.rs", "Stopping the kubelet");
        try_stop(
            &*data.effects.init_system,
            &|l| data.say(l),
            &*data.effects.reporter,
        );
    }
    let flags = kubelet::flags_env(&KubeletFlagsInputs {
        cluster: &data.cfg.cluster,
        resolved: &data.cfg.resolved,
        node_registration: &data.cfg.init.node_registration,
        hostname: &data.hostname,
        register_taints_using_flags: false,
    });
    let env_path = data.kubelet_dir.join("kubeadm-flags.env");
    data.say(&format!(
        "[kubelet-start] Writing kubelet environment file with flags to file {:?}",
        env_path.display().to_string()
    ));
    write(
        data,
        &env_path,
        flags.as_bytes(),
        "error writing a dynamic environment file for the kubelet",
    )?;

    let kc = data
        .cfg
        .component_configs
        .kubelet
        .as_ref()
        .ok_or(KubeletError::NoConfig)?;
    let patches = match &data.patches {
        Some(p) => Some(p.get(&|l| data.say(l)).map_err(KubeletError::Patch)?),
        None => None,
    };
    let (config_path, text) =
        config_file(kc, patches, &data.kubelet_dir, &|l| data.say(l)).map_err(KubeletError::Patch)?;
    write(
        data,
        &config_path,
        text.as_bytes(),
        "error writing kubelet configuration to disk",
    )?;

    if !data.dry_run {
        data.say("[kubelet-start] Starting the kubelet");
        try_start(
            &*data.effects.init_system,
            &|l| data.say(l),
            &*data.effects.reporter,
        );
    }
    Ok(())
}

fn write(data: &InitData, path: &Path, bytes: &[u8], what: &'static str) -> Result<(), KubeletError> {
    write_file(&*data.effects.fs, &data.kubelet_dir, path, bytes, what)
}
