//! `kubeadm reset` and `kubeadm reset phase …`: builds the reset context as upstream's
//! `newResetData` does (an API client from `--kubeconfig` when one can be made, the configuration
//! fetched through it, the CRI socket from the flag, the configuration or the host) and runs the
//! workflow; the whole command then empties the stateful directories and prints the instructions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{ADMIN_CONF, Layout};
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::DEFAULT_CRI_SOCKET;
use kubeadm_phases::ResetData;
use kubeadm_phases::reset::DEFAULT_CERT_DIR;
use kubeadm_phases::reset::finish::{CLEANUP_INSTRUCTIONS, clean_stateful_dirs};

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, ResetError};

/// Runs the reset workflow: all of it with the final cleanup (`filter` empty), or one phase.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    let workflow = kubeadm_phases::reset::workflow();
    let mut data = context(inv)?;
    data.stateful_dirs_after = filter.is_empty();
    let skip = inv.flags.strings("skip-phases");
    // A failed preflight check exits 2 (see `CommandError::exit_code`).
    workflow.run(&mut data, filter, &skip)?;
    if filter.is_empty() {
        clean_stateful_dirs(&data);
        data.effects.reporter.out(CLEANUP_INSTRUCTIONS);
    }
    Ok(())
}

/// Upstream's `newResetData`.
fn context(inv: &Invocation<'_>) -> Result<ResetData, CommandError> {
    let f = &inv.flags;
    let dry_run = f.bool("dry-run");
    let effects = crate::setup::effects(inv, dry_run);
    let rep = &effects.reporter;
    // Phase commands have only the flags they inherit; the others keep upstream's defaults.
    let kubeconfig = or_default(f.string("kubeconfig"), ADMIN_CONF);

    // A client when the kubeconfig can be loaded; the configuration only when the cluster answers.
    let cluster: Option<Box<dyn Cluster>> =
        match kubeadm_host::cluster::KubeCluster::from_kubeconfig(Path::new(&kubeconfig)) {
            Ok(c) => {
                rep.info(
                    1,
                    "reset.go",
                    &format!("[reset] Loaded client set from kubeconfig file: {kubeconfig}"),
                );
                Some(Box::new(c))
            }
            Err(_) => {
                rep.info(
                    1,
                    "reset.go",
                    &format!("[reset] Could not obtain a client set from the kubeconfig file: {kubeconfig}"),
                );
                None
            }
        };
    let mut cfg = None;
    if let Some(client) = cluster.as_deref() {
        rep.out("[reset] Reading configuration from the cluster...\n");
        rep.out("[reset] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n");
        let host = crate::setup::host_facts::gather();
        // Defaulting fills a bootstrap token reset never uses; it must still be a valid one.
        let mut token = crate::setup::secrets::new_token;
        let mut inputs = DynamicInputs {
            host: &host,
            new_token: &mut token,
            fetch_version: &kubeadm_api::version::offline,
        };
        let kubelet_conf = Layout::default().kubelet_conf();
        let mut warnings = Vec::new();
        let fetched = kubeadm_phases::config_from_cluster::fetch_init_config(
            client,
            &*effects.fs,
            &kubelet_conf,
            &mut inputs,
            &mut warnings,
        );
        for w in &warnings {
            rep.warn("configset.go", w);
        }
        match fetched {
            Ok(c) => cfg = Some(c),
            Err(e) => rep.warn(
                "reset.go",
                &format!("[reset] Unable to fetch the kubeadm-config ConfigMap from cluster: {e}"),
            ),
        }
    }

    let from_file: &[String] = cfg
        .as_ref()
        .map_or(&[], |c| &c.init.node_registration.ignore_preflight_errors);
    let ignore: BTreeSet<String> =
        validate_ignore_preflight_errors(&f.strings("ignore-preflight-errors"), from_file)
            .map_err(BadInput::from)?;
    if let Some(c) = cfg.as_mut() {
        c.init.node_registration.ignore_preflight_errors = ignore.iter().cloned().collect();
    }

    let cri_socket = match (f.string("cri-socket"), cfg.as_ref()) {
        (flag, _) if !flag.is_empty() => {
            rep.info(
                1,
                "reset.go",
                &format!("[reset] Using specified CRI socket: {flag}"),
            );
            flag
        }
        (_, Some(c)) => c.init.node_registration.cri_socket.clone(),
        (_, None) => {
            let socket = detect_cri_socket(&crate::setup::host_facts::gather().existing_cri_sockets)
                .map_err(ResetError::CriSocket)?;
            rep.info(
                1,
                "reset.go",
                &format!("[reset] Detected and using CRI socket: {socket}"),
            );
            socket
        }
    };
    let runtime = effects.runtime(&cri_socket);
    let layout = Layout::default();
    Ok(ResetData {
        cfg,
        dry_run,
        force: f.bool("force"),
        ignore_preflight_errors: ignore,
        cert_dir: PathBuf::from(or_default(f.string("cert-dir"), DEFAULT_CERT_DIR)),
        kubernetes_dir: layout.kubernetes_dir(),
        kubelet_dir: layout.kubelet_dir(),
        mounts_file: PathBuf::from("/proc/self/mountinfo"),
        input: Box::new(std::io::BufReader::new(std::io::stdin())),
        dirs_to_clean: Vec::new(),
        stateful_dirs_after: false,
        runtime,
        cluster,
        effects,
    })
}

/// The flag's value, or upstream's default when the command does not have the flag.
fn or_default(value: String, default: &str) -> String {
    if value.is_empty() {
        default.to_string()
    } else {
        value
    }
}

/// Upstream's `DetectCRISocket`: the one known CRI socket that exists, the default when none does.
fn detect_cri_socket(existing: &[String]) -> Result<String, crate::error::MultipleCriSockets> {
    match existing {
        [] => Ok(DEFAULT_CRI_SOCKET.to_string()),
        [one] => Ok(one.clone()),
        many => Err(crate::error::MultipleCriSockets(many.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cri_socket_detection_follows_upstream() {
        assert_eq!(detect_cri_socket(&[]).as_deref(), Ok(DEFAULT_CRI_SOCKET));
        let crio = "unix:///var/run/crio/crio.sock".to_string();
        assert_eq!(detect_cri_socket(std::slice::from_ref(&crio)), Ok(crio.clone()));
        let err = detect_cri_socket(&[DEFAULT_CRI_SOCKET.to_string(), crio]).expect_err("two");
        assert!(
            err.to_string()
                .ends_with("unix:///var/run/containerd/containerd.sock, unix:///var/run/crio/crio.sock")
        );
    }
}
