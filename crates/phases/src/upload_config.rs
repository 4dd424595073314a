//! Uploading the configuration (upstream's `app/phases/uploadconfig`), for `kubeadm init`'s
//! `upload-config` phases (bound in `init/upload_config.rs`), with the RBAC and object helpers
//! `bootstrap-token`, `upload-certs` and `upgrade apply` share: the `kubeadm-config` ConfigMap (create, or replace only its
//! `ClusterConfiguration` key) and the `kubelet-config` ConfigMap with their RBAC, then the
//! control-plane Node annotated with its CRI socket.

use kubeadm_core::cluster::{node, upload_config};
use kubeadm_effects::cluster::{Cluster, ClusterError, Resource};
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::ClusterConnectError;
use crate::InitData;

/// Why an upload failed (upstream's wrapping texts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum UploadConfigError {
    /// No client.
    #[error(transparent)]
    Client(#[from] ClusterConnectError),
    /// `kubeadm-config` or its RBAC.
    #[error("error uploading the kubeadm ClusterConfiguration: {0}")]
    Kubeadm(#[source] ClusterError),
    /// `kubelet-config` or its RBAC.
    #[error("error creating kubelet configuration ConfigMap: {0}")]
    Kubelet(#[source] ClusterError),
    /// No kubelet component config.
    #[error("error creating kubelet configuration ConfigMap: no kubelet component config found")]
    NoKubeletConfig,
    /// The node annotation.
    #[error("Error writing Crisocket information for the control-plane node: {0}")]
    CriSocket(#[source] ClusterError),
}

/// Creates or updates each RBAC object, retrying as upstream's `CreateOrUpdateRole` does.
pub(crate) fn apply_rbac(c: &dyn Cluster, objects: &[Value]) -> Result<(), ClusterError> {
    for obj in objects {
        c.create_or_update_with_retry(&resource_of(obj), obj)?;
    }
    Ok(())
}

/// The REST resource of an object built by kubeadm-core (all of them are known kinds).
pub(crate) fn resource_of(obj: &Value) -> Resource {
    match kubeadm_core::cluster::meta::api_resource(obj) {
        Some(api) => Resource::from_group_version(api.group_version, api.resource),
        None => Resource::config_maps(),
    }
}

/// `upload-config kubeadm`.
pub(crate) fn run_kubeadm(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(UploadConfigError::Client)?;
    data.effects.reporter.info(
        1,
        "uploadconfig.go",
        "[upload-config] Uploading the kubeadm ClusterConfiguration to a ConfigMap",
    );
    data.say(&format!(
        "[upload-config] Storing the configuration used in ConfigMap {:?} in the {:?} Namespace",
        upload_config::KUBEADM_CONFIG_CONFIG_MAP,
        kubeadm_core::cluster::meta::NAMESPACE_SYSTEM
    ));
    // Upstream's control-plane phase records the authorization modes in the configuration it
    // uploads later in the same run; only then (not when this phase runs alone) are they uploaded.
    let mut cluster = data.cfg.cluster.clone();
    if data.planned.contains("control-plane/apiserver") {
        kubeadm_core::manifests::record_authorization_mode(&mut cluster);
    }
    let cm = upload_config::kubeadm_config_map(&cluster, &data.cfg.resolved);
    let new_value = cm["data"][upload_config::CLUSTER_CONFIGURATION_KEY].clone();
    c.create_or_mutate_config_map(&cm, &mut |existing| {
        existing["data"][upload_config::CLUSTER_CONFIGURATION_KEY] = new_value.clone();
    })
    .map_err(UploadConfigError::Kubeadm)?;
    apply_rbac(c, &upload_config::kubeadm_config_rbac()).map_err(UploadConfigError::Kubeadm)?;
    Ok(())
}

/// `upload-config kubelet`.
pub(crate) fn run_kubelet(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(UploadConfigError::Client)?;
    data.effects.reporter.info(
        1,
        "uploadconfig.go",
        "[upload-config] Uploading the kubelet component config to a ConfigMap",
    );
    let kubelet = data
        .cfg
        .component_configs
        .kubelet
        .as_ref()
        .ok_or(UploadConfigError::NoKubeletConfig)?;
    data.say(&format!(
        "[kubelet] Creating a ConfigMap {:?} in namespace {} with the configuration for the kubelets in the cluster",
        upload_config::KUBELET_CONFIG_CONFIG_MAP,
        kubeadm_core::cluster::meta::NAMESPACE_SYSTEM
    ));
    let cm = upload_config::kubelet_config_map(kubelet, data.cfg.user_supplied.0);
    c.create_or_update(&Resource::config_maps(), &cm)
        .map_err(UploadConfigError::Kubelet)?;
    apply_rbac(c, &upload_config::kubelet_config_rbac()).map_err(UploadConfigError::Kubelet)?;

    data.effects.reporter.info(
        1,
        "uploadconfig.go",
        "[upload-config] Preserving the CRISocket information for the control-plane node",
    );
    let socket = data.cfg.init.node_registration.cri_socket.clone();
    data.effects.reporter.info(
        1,
        "patchnode.go",
        &format!("[patchnode] Uploading the CRI Socket information {socket:?} to the Node API object {:?} as an annotation", data.cfg.init.node_registration.name),
    );
    c.patch_node(&data.cfg.init.node_registration.name, &mut |current| {
        let mut annotated = current.clone();
        node::annotate_cri_socket(&mut annotated, &socket);
        node::two_way_merge_patch(current, &annotated)
    })
    .map_err(UploadConfigError::CriSocket)?;
    Ok(())
}
