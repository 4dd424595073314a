//! `kubeadm upgrade node` and `kubeadm upgrade node phase …`: builds the context as upstream's
//! `newNodeData` does (a client from `--kubeconfig`, a dry-run decorator that also prints what it
//! reads under `--dry-run`, the cluster's configuration with `k8s.gcr.io` read as `registry.k8s.io`
//! and not written back) and runs the workflow.
//!
//! A node with a kube-apiserver manifest is a control-plane node: its configuration is read whole
//! from the cluster (its registration from its Node, its API endpoint from its API server Pod, the
//! component configurations from their ConfigMaps), and its static pods are upgraded.

use std::path::{Path, PathBuf};

use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{APISERVER_MANIFEST, KUBELET_CONF, KUBERNETES_DIR, Layout};
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::DEFAULT_CRI_SOCKET;
use kubeadm_effects::report::Reporter;
use kubeadm_phases::NodeData;
use kubeadm_phases::upgrade::node::ControlPlaneTools;

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, UpgradeNodeError};
use crate::setup::workflow_data::client;

/// The image repository releases before 1.25 defaulted to, and its successor.
const LEGACY_REPOSITORY: &str = "k8s.gcr.io";
const REPOSITORY: &str = "registry.k8s.io";

/// Runs the workflow: all of it (`filter` empty) or the phase `filter` names.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    let workflow = kubeadm_phases::upgrade::node::workflow();
    let skip = inv.flags.strings("skip-phases");
    // Upstream checks the phase names before it builds the context (which reads the cluster).
    workflow.plan(filter, &skip)?;
    let mut data = context(inv)?;
    workflow.run(&mut data, filter, &skip)?;
    Ok(())
}

/// Upstream's `newNodeData`.
fn context(inv: &Invocation<'_>) -> Result<NodeData, CommandError> {
    let f = &inv.flags;
    let dry_run = f.bool("dry-run");
    let effects = crate::setup::effects(inv, dry_run);
    let rep = &*effects.reporter;
    // Phase commands have only the flags they inherit; the others keep upstream's defaults.
    // Upstream's flag shows admin.conf as its default but holds kubelet.conf until it is set.
    let kubeconfig = if f.changed("kubeconfig") {
        f.string("kubeconfig")
    } else {
        KUBELET_CONF.to_string()
    };
    let is_control_plane = crate::setup::stat_ok(Path::new(APISERVER_MANIFEST));
    let cluster = client(&effects.reporter, Path::new(&kubeconfig), dry_run).map_err(|source| {
        CommandError::Client {
            kubeconfig: kubeconfig.clone(),
            source,
        }
    })?;

    let host = crate::setup::host_facts::gather();
    let fs = &effects.fs;
    let mut cfg = if is_control_plane {
        control_plane_config(&*cluster, &**fs, &host, rep)?
    } else {
        kubeadm_phases::fetch_new_node_config(&*cluster, &host, rep, "upgrade")
            .map_err(UpgradeNodeError::from)?
    };
    // 1.25 reads the legacy registry as the new one; only `upgrade apply` writes that back.
    if cfg.cluster.image_repository == LEGACY_REPOSITORY {
        cfg.cluster.image_repository = REPOSITORY.to_string();
    }

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.init.node_registration.ignore_preflight_errors,
    )
    .map_err(BadInput::from)?;
    cfg.init.node_registration.ignore_preflight_errors = ignore.iter().cloned().collect();

    let patches_dir = f.string("patches");
    // Read now, used (and any error reported) by the phase that applies them, as upstream reads
    // them there.
    let patches = if patches_dir.is_empty() {
        None
    } else {
        Some((
            patches_dir.clone(),
            crate::options::patches::read_patch_dir(&**fs, &patches_dir),
        ))
    };
    let socket = if is_control_plane {
        cfg.init.node_registration.cri_socket.clone()
    } else {
        DEFAULT_CRI_SOCKET.to_string()
    };
    let runtime = effects.runtime(&socket);
    let external_ca = kubeadm_phases::upgrade::diff::using_external_ca(
        &**fs,
        &*effects.host_probe,
        Path::new(&cfg.cluster.certificates_dir),
        effects.now(),
    );
    let control_plane = ControlPlaneTools {
        // Phase commands have only the flags they inherit; the others keep upstream's defaults.
        etcd_upgrade: f.value("etcd-upgrade").is_none() || f.bool("etcd-upgrade"),
        renew_certs: f.value("certificate-renewal").is_none() || f.bool("certificate-renewal"),
        kubernetes_dir: PathBuf::from(KUBERNETES_DIR),
        facts: crate::setup::manifest_host_facts(external_ca),
        now: effects.now(),
        timeout: kubeadm_phases::upgrade::staticpods::manifest_timeout(
            crate::setup::env_var(kubeadm_phases::upgrade::staticpods::UPGRADE_MANIFEST_TIMEOUT_ENV)
                .as_deref(),
        )
        .map_err(BadInput::Timeout)?,
    };
    Ok(NodeData {
        cfg,
        dry_run,
        is_control_plane,
        cluster,
        kubeconfig_path: PathBuf::from(kubeconfig),
        patches,
        ignore_preflight_errors: ignore,
        kubelet_dir: Layout::default().kubelet_dir(),
        runtime,
        control_plane,
        patches_announced: false,
        effects,
    })
}

/// Upstream's `FetchInitConfigurationFromCluster` for a control-plane node: everything, this node's
/// registration and API endpoint included.
fn control_plane_config(
    cluster: &dyn Cluster,
    fs: &dyn kubeadm_effects::fs::Fs,
    host: &kubeadm_api::dynamic::HostFacts,
    rep: &dyn Reporter,
) -> Result<kubeadm_api::internal::InitConfig, CommandError> {
    rep.out("[upgrade] Reading configuration from the cluster...\n");
    rep.out("[upgrade] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n");
    let mut token = crate::setup::secrets::new_token;
    let mut inputs = kubeadm_api::dynamic::DynamicInputs {
        host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let mut warnings = Vec::new();
    let fetched = kubeadm_phases::config_from_cluster::fetch_init_config_with_components(
        cluster,
        fs,
        Path::new(KUBELET_CONF),
        &mut inputs,
        &mut warnings,
        "",
    );
    kubeadm_phases::log_config_warnings(rep, &warnings);
    let cfg = fetched.map_err(UpgradeNodeError::ClusterConfig)?;
    kubeadm_phases::log_config_warnings(rep, &cfg.warnings);
    Ok(cfg)
}
