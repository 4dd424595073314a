//! `kubeadm upgrade apply [version]`: reads the flags, builds the real effects (the API client from
//! `--kubeconfig`, printing its calls under `--dry-run`; the host's file system, an overlay in a dry
//! run; the runtime, etcd, key generation, standard input for the prompt) and runs the workflow,
//! [`kubeadm_phases::upgrade::apply`].

use std::io::BufRead;
use std::path::{Path, PathBuf};

use kubeadm_core::layout::{KUBELET_CONF, KUBERNETES_DIR, Layout};
use kubeadm_phases::upgrade::apply::{Apply, ApplyFlags, ServerVersion};
use kubeadm_phases::upgrade::staticpods::UPGRADE_MANIFEST_TIMEOUT_ENV;

use crate::cobra::execute::Invocation;
use crate::error::{CommandError, Output};
use crate::setup::host_facts;

/// `kubeadm upgrade apply [version]`.
pub(crate) fn run(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let flags = ApplyFlags {
        config: f.string("config"),
        dry_run: f.bool("dry-run"),
        force: f.bool("force"),
        yes: f.bool("yes"),
        etcd_upgrade: f.bool("etcd-upgrade"),
        renew_certs: f.bool("certificate-renewal"),
        print_config: f.bool("print-config"),
        feature_gates: f.string("feature-gates"),
        ignore_preflight_errors: f.strings("ignore-preflight-errors"),
        allow_experimental: f.bool("allow-experimental-upgrades"),
        allow_release_candidates: f.bool("allow-release-candidate-upgrades"),
        patches: f.string("patches"),
    };
    let effects = crate::setup::effects(inv, flags.dry_run);

    // enforceRequirements
    let kubeconfig = f.string("kubeconfig");
    let cluster =
        crate::setup::workflow_data::client(&effects.reporter, Path::new(&kubeconfig), flags.dry_run)
            .map_err(|source| CommandError::Client {
                kubeconfig: kubeconfig.clone(),
                source,
            })?;
    let fs = effects.fs.clone();
    let version_kubeconfig = PathBuf::from(&kubeconfig);
    let mut read_answer = || {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    };
    Apply {
        args: &inv.args,
        flags,
        cluster: &*cluster,
        host_facts: &host_facts::gather,
        server_version: Box::new(move || {
            let client = kubeadm_host::cluster::KubeCluster::from_kubeconfig(&version_kubeconfig)?;
            Ok(Box::new(move || client.server_version()) as ServerVersion<'_>)
        }),
        manifest_facts: &crate::setup::manifest_host_facts,
        read_patches: &|dir| crate::options::patches::read_patch_dir(&*fs, dir),
        manifest_timeout: crate::setup::env_var(UPGRADE_MANIFEST_TIMEOUT_ENV),
        kubernetes_dir: PathBuf::from(KUBERNETES_DIR),
        kubelet_conf: PathBuf::from(KUBELET_CONF),
        kubelet_dir: Layout::default().kubelet_dir(),
        read_answer: &mut read_answer,
        effects,
    }
    .run()?;
    Ok(())
}
