//! The `preflight` phase of `kubeadm init` (upstream's `cmd/phases/init/preflight.go`): the checks
//! of [`crate::preflight`] in init's order, their lines, and the error that stops the run.

use kubeadm_effects::cri::PullProgress;
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::preflight::{IgnoreSet, Stream, run_init_preflight};

/// The `preflight` phase of `kubeadm init`: upstream's lines on stdout, warnings on stderr, and a
/// [`crate::preflight::PreflightError`] (exit code 2) when a check that is not ignored fails.
pub(crate) fn run(data: &mut InitData) -> Result<(), PhaseError> {
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    // On a terminal, each image pull shows on one line while it runs.
    let runtime = PullProgress {
        runtime: &*data.runtime,
        reporter: &*data.effects.reporter,
        prefix: "preflight",
    };
    let run = run_init_preflight(
        &data.cfg,
        &ignore,
        &*data.effects.host_probe,
        &runtime,
        data.dry_run,
    );
    for (stream, text) in &run.output {
        match stream {
            Stream::Stdout => data.effects.reporter.out(text),
            Stream::Stderr => data.effects.reporter.err(text),
        }
    }
    match run.error {
        Some(e) => Err(PhaseError::preflight(e)),
        None => Ok(()),
    }
}
