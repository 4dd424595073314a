//! The `preflight` phase of `kubeadm reset`: the confirmation prompt, or with `--force` the root
//! check.

use std::io::BufRead;

use kubeadm_api::gofmt;
use kubeadm_workflow::PhaseError;

use crate::preflight::{IgnoreSet, root_checks, run_checks};
use crate::reset::ResetData;
use crate::reset::remove_etcd_member::{EtcdDataDir, locate_etcd_data_dir};

/// The user did not confirm the reset (upstream's `InteractivelyConfirmAction`).
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// Any answer but `y` or `yes`.
    #[error("won't proceed; the user didn't answer (Y|y) in order to continue")]
    Declined,
    /// Standard input could not be read.
    #[error("couldn't read from standard input: {0}")]
    Read(#[source] std::io::Error),
}

/// The `preflight` phase: without `--force` (and outside a dry run) only the confirmation prompt,
/// as upstream returns right after it; otherwise `[preflight] Running pre-flight checks` and the
/// root check, whose failure is a [`crate::preflight::PreflightError`] (exit code 2).
pub(crate) fn run_preflight(data: &mut ResetData) -> Result<(), PhaseError> {
    if !data.force && !data.dry_run {
        data.effects.reporter.warn(
            "preflight.go",
            "[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.",
        );
        // Beyond upstream: what will be emptied, etcd's data directory among it only when reset
        // would empty it (see `check_etcd_data_dir`).
        let mut dirs = vec![data.kubernetes_dir.join("manifests"), data.cert_dir.clone()];
        if let EtcdDataDir::Clean(dir) = locate_etcd_data_dir(data) {
            dirs.push(dir);
        }
        dirs.push(data.kubelet_dir.clone());
        // A warning, as upstream's line above: standard output stays upstream's.
        data.effects.reporter.warn(
            "preflight.go",
            &format!(
                "[reset] The contents of these directories will be deleted: {}",
                gofmt::list(dirs.iter().map(|d| d.display()))
            ),
        );
        data.effects
            .reporter
            .out("[reset] Are you sure you want to proceed? [y/N]: ");
        let mut line = String::new();
        data.input
            .read_line(&mut line)
            .map_err(|e| Box::new(ConfirmError::Read(e)))?;
        // Go's line scanner drops the newline and a carriage return before it.
        let answer = line.strip_suffix('\n').unwrap_or(&line);
        let answer = answer.strip_suffix('\r').unwrap_or(answer).to_lowercase();
        return if answer == "y" || answer == "yes" {
            Ok(())
        } else {
            Err(ConfirmError::Declined.into())
        };
    }
    data.say("[preflight] Running pre-flight checks");
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    run_checks(&root_checks(), &*data.effects.host_probe, &*data.runtime, &ignore)
        .report(&*data.effects.reporter)
        .map_err(PhaseError::preflight)?;
    Ok(())
}
