//! The `kubelet-config` phase of `kubeadm upgrade node` (upstream's
//! `cmd/phases/upgrade/node/kubeletconfig.go`): rewrites `/var/lib/kubelet/config.yaml` from the
//! cluster's `kubelet-config` ConfigMap (with `--patches`) and repairs a CRI socket annotation that
//! older kubeadm releases wrote with a doubled `unix://`. The kubelet is not restarted: upstream
//! leaves that to the package upgrade that follows.

use kubeadm_core::cluster::node;
use kubeadm_core::patches::PatchError;
use kubeadm_effects::cluster::{ClusterError, Resource};
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::config_from_cluster::node_name_from_kubelet_conf;
use crate::upgrade::node::NodeData;

/// The annotation that holds a node's CRI socket.
const CRI_SOCKET_ANNOTATION: &str = "kubeadm.alpha.kubernetes.io/cri-socket";
/// What older releases (v1.24.0 to v1.24.2) could leave at the front of that annotation.
const DOUBLED_SCHEME: &str = "unix://unix://";

/// Why `kubelet-config` failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeletConfigError {
    /// The fetched configuration has no kubelet component config.
    #[error("no kubelet component config found")]
    NoKubeletConfig,
    /// A patch could not be read or applied (the file it came from named).
    #[error("could not apply patches to the KubeletConfiguration: {}", .0.detailed())]
    Patch(#[source] PatchError),
    /// The kubelet's directory could not be made.
    #[error("failed to create directory {path:?}: {source}")]
    Dir {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `config.yaml` could not be written.
    #[error("failed to write kubelet configuration to the file {path:?}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The node's registration could not be read.
    #[error("could not retrieve the node registration options for this node: {0}")]
    NodeRegistration(#[source] NodeRegistrationError),
    /// The repaired CRI socket annotation could not be written.
    #[error("error updating the CRI socket for Node {node:?}: {source}")]
    CriSocket {
        /// The node.
        node: String,
        /// Why.
        #[source]
        source: ClusterError,
    },
}

/// Upstream's `runKubeletConfigPhase`.
pub(crate) fn run_kubelet_config(data: &mut NodeData) -> Result<(), PhaseError> {
    let kc = data
        .cfg
        .component_configs
        .kubelet
        .as_ref()
        .ok_or(KubeletConfigError::NoKubeletConfig)?;
    let patches = match &data.patches {
        Some((_, Ok(pm))) => {
            // Upstream announces the folder once per run, where it first reads it.
            if !data.patches_announced {
                for m in pm.messages() {
                    data.say(m);
                }
            }
            Some(pm)
        }
        Some((dir, Err(e))) => {
            data.say(&format!(
                "[patches] Reading patches from path {}",
                kubeadm_api::gofmt::quote(dir)
            ));
            return Err(KubeletConfigError::Patch(e.clone()).into());
        }
        None => None,
    };
    // A dry run writes into a temporary folder, as upstream (only in the dry-run overlay here),
    // names that file, and prints it as if in its real place.
    let dir = if data.dry_run {
        let tools = &data.control_plane;
        tools.kubernetes_dir.join(format!(
            "tmp/kubeadm-upgrade-dryrun{}",
            (data.effects.random)() % 10_000_000_000
        ))
    } else {
        data.kubelet_dir.clone()
    };
    let (path, text) = crate::kubelet::config_file(kc, patches, &dir, &|l| data.say(l))
        .map_err(KubeletConfigError::Patch)?;
    data.effects
        .fs
        .create_dir_all(&dir, 0o700)
        .map_err(|source| KubeletConfigError::Dir {
            path: dir.display().to_string(),
            source,
        })?;
    data.effects
        .fs
        .write(&path, text.as_bytes(), 0o644)
        .map_err(|source| KubeletConfigError::Write {
            path: path.display().to_string(),
            source,
        })?;

    if data.dry_run {
        let shown = data.kubelet_dir.join("config.yaml");
        crate::dry_run::print_file(&*data.effects.fs, &*data.effects.reporter, &path, &shown);
        return Ok(());
    }

    repair_cri_socket(data)?;
    data.say("[upgrade] The configuration for this node was successfully updated!");
    data.say("[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.");
    Ok(())
}

/// Rewrites a CRI socket annotation that starts with a doubled `unix://` (written by kubeadm
/// v1.24.0 to v1.24.2) with one scheme, as upstream's 1.25 `upgrade node` does.
fn repair_cri_socket(data: &NodeData) -> Result<(), KubeletConfigError> {
    let (name, socket) = node_registration(data).map_err(KubeletConfigError::NodeRegistration)?;
    if !socket.starts_with(DOUBLED_SCHEME) {
        return Ok(());
    }
    let fixed = format!("unix://{}", socket.replace("unix://", ""));
    data.effects.reporter.info(
        2,
        "kubeletconfig.go",
        &format!("ensuring that Node {name:?} has a CRI socket annotation with correct URL scheme {fixed:?}"),
    );
    data.effects.reporter.info(
        1,
        "patchnode.go",
        &format!(
            "[patchnode] Uploading the CRI Socket information {fixed:?} to the Node API object {name:?} as an annotation"
        ),
    );
    data.cluster
        .patch_node(&name, &mut |current| {
            let mut annotated = current.clone();
            node::annotate_cri_socket(&mut annotated, &fixed);
            node::two_way_merge_patch(current, &annotated)
        })
        .map_err(|source| KubeletConfigError::CriSocket { node: name, source })
}

/// Why this node's registration could not be read, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum NodeRegistrationError {
    /// The node's name could not be read from the kubelet's kubeconfig; the reader's words.
    #[error("failed to get node name from kubelet config: {0}")]
    NodeName(String),
    /// The Node could not be read.
    #[error("failed to get corresponding node: {0}")]
    Node(#[source] ClusterError),
    /// The Node has no CRI socket annotation.
    #[error("node {node} doesn't have {annotation} annotation", annotation = CRI_SOCKET_ANNOTATION)]
    NoCriSocket {
        /// The Node.
        node: String,
    },
}

/// Upstream's `GetNodeRegistration`: this node's name (from the client certificate of
/// `--kubeconfig`) and the CRI socket annotation of its Node object.
fn node_registration(data: &NodeData) -> Result<(String, String), NodeRegistrationError> {
    let name = node_name_from_kubelet_conf(&*data.effects.fs, &data.kubeconfig_path)
        .map_err(NodeRegistrationError::NodeName)?;
    let node = data
        .cluster
        .get(&Resource::nodes(), "", &name)
        .map_err(NodeRegistrationError::Node)?;
    let socket = node
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CRI_SOCKET_ANNOTATION))
        .and_then(Value::as_str)
        .ok_or_else(|| NodeRegistrationError::NoCriSocket { node: name.clone() })?;
    Ok((name, socket.to_string()))
}
