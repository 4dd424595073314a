//! The kubelet's files and service as `init`, `join` and `upgrade node` handle them: writing the
//! flags and configuration files, stopping and starting the kubelet, and the text that says where to
//! look when it fails.

use std::path::{Path, PathBuf};

use kubeadm_core::kubelet;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::init_system::InitSystem;
use kubeadm_effects::report::Reporter;

/// The kubelet's service name.
const KUBELET: &str = "kubelet";

/// Why the kubelet files could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KubeletError {
    /// No kubelet component config (defaulting always adds one).
    #[error("no kubelet component config found")]
    NoConfig,
    /// A patch could not be applied.
    #[error(
        "error writing kubelet configuration to disk: could not apply patches to the KubeletConfiguration: {0}"
    )]
    Patch(#[source] kubeadm_core::patches::PatchError),
    /// A file could not be written.
    #[error("{what}: failed to write kubelet configuration to the file {path:?}: {source}")]
    Write {
        /// Which step.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes one of the kubelet's files (mode 0644) into `kubelet_dir` (created 0700 when missing);
/// shared by `init` and `join`.
pub(crate) fn write_file(
    fs: &dyn Fs,
    kubelet_dir: &Path,
    path: &Path,
    bytes: &[u8],
    what: &'static str,
) -> Result<(), KubeletError> {
    fs.create_dir_all(kubelet_dir, 0o700)
        .and_then(|()| fs.write(path, bytes, 0o644))
        .map_err(|source| KubeletError::Write {
            what,
            path: path.display().to_string(),
            source,
        })
}

/// The kubelet's `config.yaml` as kubeadm writes it (upstream's `WriteConfigToDisk` up to the
/// write): the configuration with the `kubeletconfiguration` patches applied, their `[patches]`
/// lines and then the `Writing kubelet configuration` line printed through `say`. Returns the file's
/// path and content; writing it, and how that error reads, is the caller's.
pub(crate) fn config_file(
    kc: &kubeadm_api::componentconfig::kubelet::KubeletConfiguration,
    patches: Option<&kubeadm_core::patches::PatchManager>,
    kubelet_dir: &Path,
    say: &dyn Fn(&str),
) -> Result<(PathBuf, String), kubeadm_core::patches::PatchError> {
    let (text, messages) = kubelet::patched_config_yaml(kc, patches)?;
    for m in messages {
        say(&m);
    }
    let path = kubelet_dir.join("config.yaml");
    say(&format!(
        "[kubelet-start] Writing kubelet configuration to file {:?}",
        path.display().to_string()
    ));
    Ok((path, text))
}

/// The error and where to look at the kubelet: upstream's `kubeadmJoinFailMsg` (a join whose
/// TLS bootstrap timed out), and the start of its `kubeletFailTempl` (init's wait for the control
/// plane).
pub(crate) fn failure_text(error: &str) -> String {
    format!(
        "
Unfortunately, an error has occurred:
\t{error}

This error is likely caused by:
\t- The kubelet is not running
\t- The kubelet is unhealthy due to a misconfiguration of the node in some way (required cgroups disabled)

If you are on a systemd-powered system, you can try to troubleshoot the error with the following commands:
\t- 'systemctl status kubelet'
\t- 'journalctl -xeu kubelet'
"
    )
}

/// Upstream's `TryStopKubelet`: best effort, with its messages (`say` prints a line).
pub(crate) fn try_stop(init: &dyn InitSystem, say: &dyn Fn(&str), reporter: &dyn Reporter) {
    if init.kind().is_none() {
        say(
            "[kubelet-start] No supported init system detected, won't make sure the kubelet not running for a short period of time while setting up configuration for it.",
        );
        return;
    }
    if !init.service_exists(KUBELET) {
        say(
            "[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet not running for a short period of time while setting up configuration for it.",
        );
    }
    if let Err(e) = init.service_stop(KUBELET) {
        reporter.warn(
            "kubelet.rs",
            &format!("[kubelet-start] WARNING: unable to stop the kubelet service momentarily: [{e}]"),
        );
    }
}

/// Upstream's `TryStartKubelet`: best effort, with its messages (`say` prints a line).
pub(crate) fn try_start(init: &dyn InitSystem, say: &dyn Fn(&str), reporter: &dyn Reporter) {
    if init.kind().is_none() {
        say(
            "[kubelet-start] No supported init system detected, won't make sure the kubelet is running properly.",
        );
        return;
    }
    if !init.service_exists(KUBELET) {
        say(
            "[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet is running properly.",
        );
    }
    if let Err(e) = init.service_restart(KUBELET) {
        reporter.warn(
            "kubelet.rs",
            &format!("[kubelet-start] WARNING: unable to start the kubelet service: [{e}]"),
        );
        say("[kubelet-start] Please ensure kubelet is reloaded and running manually.");
    }
}
