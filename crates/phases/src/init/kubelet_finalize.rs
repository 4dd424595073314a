//! The `kubelet-finalize experimental-cert-rotation` phase: once the kubelet has rotated its client
//! certificate (`kubelet-client-current.pem` exists), `kubelet.conf` is pointed at that file instead
//! of the embedded certificate, and the kubelet is restarted.

use std::path::{Path, PathBuf};

use kubeadm_core::layout::KUBELET_CONF;
use kubeadm_workflow::PhaseError;
use serde_json::{Value, json};

use crate::InitData;

/// The kubelet's service name.
const KUBELET: &str = "kubelet";

/// Why `kubelet.conf` could not be updated (upstream's texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FinalizeError {
    /// Unreadable or unparsable.
    #[error("could not load {path:?}: {reason}")]
    Load {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// No credentials for the node's user.
    #[error("the file {path:?} does not contain authentication for user {node:?}")]
    NoUser {
        /// The file.
        path: String,
        /// The node name.
        node: String,
    },
    /// Not written.
    #[error("failed to serialize {path:?}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// `kubelet-finalize experimental-cert-rotation`.
pub(crate) fn run_cert_rotation(data: &mut InitData) -> Result<(), PhaseError> {
    let reg = &data.cfg.init.node_registration;
    let pki = reg
        .kubelet_extra_args
        .get("cert-dir")
        .map_or_else(|| data.kubelet_dir.join("pki"), PathBuf::from);
    let pem = pki.join("kubelet-client-current.pem");
    if !data.effects.fs.exists(&pem) {
        data.effects.reporter.info(
            1,
            "kubeletfinalize.go",
            &format!("[kubelet-finalize] Assuming that kubelet client certificate rotation is disabled: stat {}: no such file or directory", pem.display()),
        );
        return Ok(());
    }
    data.say(&format!(
        "[kubelet-finalize] Updating {KUBELET_CONF:?} to point to a rotatable kubelet client certificate and key"
    ));
    if data.dry_run {
        return Ok(());
    }
    let path = Path::new(KUBELET_CONF);
    let load = |reason: String| FinalizeError::Load {
        path: KUBELET_CONF.to_string(),
        reason,
    };
    let bytes = data.effects.fs.read(path).map_err(|e| {
        load(format!(
            "open {KUBELET_CONF}: {}",
            kubeadm_api::gofmt::io_error(&e)
        ))
    })?;
    let mut doc = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(&bytes))
        .map_err(|e| load(e.to_string()))?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let user_name = format!("system:node:{}", reg.name);
    let pem_text = pem.display().to_string();
    let user = doc
        .get_mut("users")
        .and_then(Value::as_array_mut)
        .and_then(|users| {
            users
                .iter_mut()
                .find(|u| u.get("name").and_then(Value::as_str) == Some(user_name.as_str()))
        })
        .ok_or_else(|| FinalizeError::NoUser {
            path: KUBELET_CONF.to_string(),
            node: reg.name.clone(),
        })?;
    let mut auth = user.get("user").cloned().unwrap_or_else(|| json!({}));
    if let Some(m) = auth.as_object_mut() {
        m.remove("client-certificate-data");
        m.remove("client-key-data");
        m.insert("client-certificate".into(), json!(pem_text));
        m.insert("client-key".into(), json!(pem_text));
    }
    user["user"] = auth;
    data.effects
        .fs
        .write(path, kubeadm_yaml::to_string(&doc).as_bytes(), 0o600)
        .map_err(|source| FinalizeError::Write {
            path: KUBELET_CONF.to_string(),
            source,
        })?;
    data.effects.reporter.info(
        1,
        "kubeletfinalize.go",
        "[kubelet-finalize] Restarting the kubelet to enable client certificate rotation",
    );
    try_restart(data);
    Ok(())
}

/// Upstream's `TryRestartKubelet`: best effort, with its messages.
fn try_restart(data: &InitData) {
    let init = &*data.effects.init_system;
    if init.kind().is_none() {
        data.say("[kubelet-start] No supported init system detected, won't make sure the kubelet not running for a short period of time while setting up configuration for it.");
        return;
    }
    if !init.service_exists(KUBELET) {
        data.say("[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet not running for a short period of time while setting up configuration for it.");
    }
    if let Err(e) = init.service_restart(KUBELET) {
        data.effects.reporter.warn(
            "kubelet.go",
            &format!("[kubelet-start] WARNING: unable to restart the kubelet service momentarily: [{e}]"),
        );
    }
}
