//! `kubeadm upgrade diff [version]`: the unified diff between each control-plane static Pod
//! manifest on disk and the one kubeadm would write for the target version, as upstream's
//! `runDiff` prints it (go-difflib's format, see [`kubeadm_core::unified_diff`]).
//!
//! The configuration comes from `--config`, else from the cluster (`--kubeconfig`); the target
//! version is the configuration's, or the positional argument when one is given. Nothing is
//! written anywhere: neither the manifests nor the cluster's configuration.

use std::path::Path;

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_core::layout::Layout;
use kubeadm_core::manifests::Component;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::ClientError;
use kubeadm_host::fs::RealFs;
use kubeadm_phases::config_from_cluster::fetch_init_config;
use kubeadm_phases::upgrade::diff::{
    DiffError, IMAGE_REPOSITORY, LEGACY_IMAGE_REPOSITORY, check_manifest_path, manifest_diffs,
    target_version, using_external_ca,
};

use crate::cobra::execute::Invocation;
use crate::error::{CommandError, Output};
use crate::options::config_load::{config_error, log_warnings, read_config};
use crate::setup::reporter;

/// `kubeadm upgrade diff [version]`.
pub(crate) fn run(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let paths = [
        (Component::ApiServer, f.string("api-server-manifest")),
        (
            Component::ControllerManager,
            f.string("controller-manager-manifest"),
        ),
        (Component::Scheduler, f.string("scheduler-manifest")),
    ];
    // Upstream's "preflight" for diff: every manifest must exist before anything else happens.
    let host = crate::setup::host_probe();
    for (_, path) in &paths {
        check_manifest_path(&*host, path)?;
    }
    let rep = reporter(inv);
    let mut cfg = load_config(inv, &rep, out)?;

    let version = target_version(&cfg.cluster.kubernetes_version, &inv.args)?;
    cfg.cluster.kubernetes_version = version;

    let external_ca = using_external_ca(
        &RealFs,
        &*host,
        Path::new(&cfg.cluster.certificates_dir),
        crate::setup::unix_now(),
    );
    let facts = crate::setup::manifest_host_facts(external_ca);
    let context = f.int("context-lines");
    out.push_str(&manifest_diffs(&cfg, &paths, &facts, &RealFs, context, &rep)?);
    Ok(())
}

/// The configuration: from `--config`, else fetched from the cluster through `--kubeconfig`.
fn load_config(
    inv: &Invocation<'_>,
    rep: &dyn Reporter,
    out: &mut Output,
) -> Result<InitConfig, CommandError> {
    let host = crate::setup::host_facts::gather();
    let mut token = crate::setup::secrets::new_token;
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let config_path = inv.flags.string("config");
    if !config_path.is_empty() {
        let text = read_config(&config_path)?;
        let cfg = load_init_config(&config_path, &text, &mut inputs).map_err(|e| config_error(e, ""))?;
        log_warnings(rep, &cfg.warnings);
        return Ok(cfg);
    }

    let kubeconfig = inv.flags.string("kubeconfig");
    let client_error = |reason: String| DiffError::Client {
        path: kubeconfig.clone(),
        reason,
    };
    RealFs.read(Path::new(&kubeconfig)).map_err(|e| {
        client_error(format!(
            "failed to load admin kubeconfig: open {kubeconfig}: {}",
            kubeadm_api::gofmt::io_error(&e)
        ))
    })?;
    let cluster =
        kubeadm_host::cluster::KubeCluster::from_kubeconfig(Path::new(&kubeconfig)).map_err(|e| {
            client_error(match e {
                // Upstream's wording; the reason itself is the YAML parser's, not client-go's.
                ClientError::Kubeconfig { message, .. } => {
                    format!("failed to load admin kubeconfig: {message}")
                }
                other => other.to_string(),
            })
        })?;
    out.push_str("[upgrade/diff] Reading configuration from the cluster...\n");
    out.push_str(
        "[upgrade/diff] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n",
    );
    let mut warnings = Vec::new();
    let fetched = fetch_init_config(
        &cluster,
        &RealFs,
        &Layout::default().kubelet_conf(),
        &mut inputs,
        &mut warnings,
    );
    for w in &warnings {
        rep.warn("configset.go", w);
    }
    let mut cfg = fetched.map_err(DiffError::from)?;
    log_warnings(rep, &cfg.warnings);
    if cfg.cluster.image_repository == LEGACY_IMAGE_REPOSITORY {
        cfg.cluster.image_repository = IMAGE_REPOSITORY.to_string();
    }
    Ok(cfg)
}
