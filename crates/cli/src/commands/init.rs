//! `kubeadm init` and `kubeadm init phase …`: builds the init context from the options and runs the
//! workflow (whole, or filtered to one phase) with the real or the dry-run effects.

use std::path::PathBuf;

use kubeadm_effects::Effects;
use kubeadm_effects::cluster::{Cluster, DryRunCluster, Resource};
use kubeadm_phases::InitData;

use crate::cobra::execute::Invocation;
use crate::error::{CommandError, InitError};
use crate::options::init_options::{self, InitOptions};
use crate::options::patches::lazy_patches;
use crate::setup;
use crate::setup::workflow_data::init_data;

/// Runs the init workflow: all of it (`filter` empty) or the phase `filter` names.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    // The run's effects, chosen once; the configuration's warnings go through their reporter.
    let effects = setup::effects(inv, inv.flags.bool("dry-run"));
    let opts = init_options::load(inv, &*effects.reporter)?;
    let mut skip = inv.flags.strings("skip-phases");
    if filter.is_empty() && skip.is_empty() {
        skip = opts.cfg.init.skip_phases.clone();
    }
    let workflow = kubeadm_phases::init::workflow();
    let mut data = context(effects, opts);
    // The phases that will run, so the `certs` phase can generate every key they need at once.
    data.planned = workflow
        .plan(filter, &skip)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(selector, selected)| selected.then_some(selector))
        .collect();
    kubeadm_phases::detect_external_ca(&mut data).map_err(InitError::ExternalCa)?;
    // Upstream's `newInitData`: the CA keys to upload are not there.
    if data.upload_certs && data.external_ca {
        return Err(InitError::UploadCertsWithExternalCa.into());
    }
    // Beyond upstream: the keys are generated while the preflight checks run.
    kubeadm_phases::certs::prefetch_keys(&mut data);
    // Printed once the run's data is ready, as upstream's `init` does.
    if filter.is_empty() {
        data.say(&format!(
            "[init] Using Kubernetes version: {}",
            data.cfg.cluster.kubernetes_version
        ));
    }
    // A failed preflight check exits 2 (see `CommandError::exit_code`).
    workflow.run(&mut data, filter, &skip)?;
    if filter.is_empty() {
        // Upstream's `showJoinCommand`, after every phase ran.
        kubeadm_phases::init::finish::show(&data).map_err(InitError::PrintJoinCommand)?;
    }
    Ok(())
}

/// Upstream's `InitDryRunGetter` Node: the control-plane node as a kubelet would have registered
/// it, so the node patches have something to read.
fn dry_run_node(name: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": {"creationTimestamp": null, "labels": {"kubernetes.io/hostname": name}, "name": name},
        "spec": {},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}},
    })
}

/// How the phases reach the API server: the real client from `--kubeconfig`, or with `--dry-run` a
/// client that prints every write and answers reads from a fake control-plane Node.
fn cluster_access(effects: &Effects, opts: &InitOptions) -> kubeadm_phases::ClusterAccess {
    if opts.dry_run {
        // Upstream reads the admin.conf it just wrote to its dry-run folder; ours is in the overlay.
        let path = PathBuf::from(&opts.kubeconfig_dir).join("admin.conf");
        let rep = effects.reporter.clone();
        let node = dry_run_node(&opts.cfg.init.node_registration.name);
        kubeadm_phases::ClusterAccess::new(
            path,
            Box::new(move |_| {
                let dry = DryRunCluster::new(rep.clone(), kubeadm_yaml::to_string)
                    .with_object(&Resource::nodes(), node.clone());
                Ok(Box::new(dry) as Box<dyn Cluster>)
            }),
        )
    } else {
        setup::cluster_access(PathBuf::from(&opts.kubeconfig_path))
    }
}

fn context(effects: Effects, opts: InitOptions) -> InitData {
    let cluster = cluster_access(&effects, &opts);
    let patches = (!opts.patches_dir.is_empty()).then(|| lazy_patches(&opts.patches_dir));
    let base = init_data(
        opts.cfg,
        opts.dry_run,
        effects,
        patches,
        PathBuf::from(&opts.kubeconfig_dir),
        cluster,
    );
    InitData {
        ignore_preflight_errors: opts.ignore_preflight_errors,
        upload_certs: opts.upload_certs,
        skip_token_print: opts.skip_token_print,
        skip_certificate_key_print: opts.skip_certificate_key_print,
        ..base
    }
}
