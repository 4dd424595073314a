//! The `remove-etcd-member` phase of `kubeadm reset`: the local etcd's data directory, and this
//! node's member removed from the etcd cluster.

use std::path::{Path, PathBuf};

use kubeadm_api::internal::InitConfig;
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::reset::ResetData;

/// Why the etcd data directory is unknown (upstream then assumes an external etcd).
#[derive(Debug, thiserror::Error)]
pub enum EtcdDataDirError {
    /// The manifest could not be read.
    #[error("failed to read manifest for {path:?}: {reason}")]
    Read {
        /// The manifest path.
        path: PathBuf,
        /// The error text.
        reason: String,
    },
    /// The manifest has no `etcd-data` host path volume.
    #[error("invalid etcd pod manifest")]
    Invalid,
}

/// Upstream's `getEtcdDataDir`: the local etcd's data directory from the configuration, or else
/// from the `etcd-data` volume of the static pod manifest.
pub fn etcd_data_dir(
    cfg: Option<&InitConfig>,
    manifest: &[u8],
    manifest_path: &Path,
) -> Result<String, EtcdDataDirError> {
    if let Some(local) = cfg.and_then(|c| c.cluster.etcd.local.as_ref()) {
        return Ok(local.data_dir.clone());
    }
    let doc = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(manifest))
        .map_err(|e| EtcdDataDirError::Read {
            path: manifest_path.to_path_buf(),
            reason: e.to_string(),
        })?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let dir = doc
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some("etcd-data"))
        .and_then(|v| v.pointer("/hostPath/path"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if dir.is_empty() {
        return Err(EtcdDataDirError::Invalid);
    }
    Ok(dir.to_string())
}

/// The `remove-etcd-member` phase: adds the local etcd's data directory to the directories to
/// empty and, with a configuration from the cluster, removes this node's member from the etcd
/// cluster (a failure is only a warning, as upstream).
pub(crate) fn run_remove_etcd_member(data: &mut ResetData) -> Result<(), PhaseError> {
    let manifest_path = data.kubernetes_dir.join("manifests/etcd.yaml");
    let has_local = data.cfg.as_ref().is_some_and(|c| c.cluster.etcd.local.is_some());
    let dir = if has_local {
        etcd_data_dir(data.cfg.as_ref(), b"", &manifest_path)
    } else {
        data.reporter.warn(
            "removeetcdmember.go",
            "[reset] No kubeadm config, using etcd pod spec to get data directory",
        );
        match data.fs.read(&manifest_path) {
            Ok(bytes) => etcd_data_dir(None, &bytes, &manifest_path),
            Err(e) => Err(EtcdDataDirError::Read {
                path: manifest_path.clone(),
                reason: format!(
                    "open {}: {}",
                    manifest_path.display(),
                    kubeadm_api::gofmt::io_error(&e)
                ),
            }),
        }
    };
    match dir {
        Ok(dir) => {
            data.dirs_to_clean.push(PathBuf::from(dir));
            if data.cfg.is_some() {
                if data.dry_run {
                    data.say("[reset] Would remove the etcd member on this node from the etcd cluster");
                } else if let Err(e) = crate::reset::cluster::remove_stacked_etcd_member(data) {
                    data.reporter.warn(
                        "removeetcdmember.go",
                        &format!(
                            "[reset] Failed to remove etcd member: {e}, please manually remove this etcd member using etcdctl"
                        ),
                    );
                }
            }
        }
        Err(e) => {
            data.reporter
                .info(1, "removeetcdmember.go", &format!("[reset] {e}"));
            data.say("[reset] No etcd config found. Assuming external etcd");
            data.say("[reset] Please, manually reset etcd to prevent further issues");
        }
    }
    Ok(())
}
