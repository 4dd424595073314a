//! The `preflight` phase of `kubeadm join` (upstream's `cmd/phases/join/preflight.go`) on a
//! worker: the checks, then discovery and the cluster's configuration.

use kubeadm_workflow::PhaseError;

use crate::join::JoinData;
use crate::join::cluster_config::ensure_init_cfg;
use crate::preflight::{IgnoreSet, Stream, run_join_preflight};

/// Upstream's `runPreflight` for a worker: the checks, then discovery and the configuration fetch.
pub(crate) fn run_preflight(data: &mut JoinData) -> Result<(), PhaseError> {
    let ignore = IgnoreSet::from(data.ignore_preflight_errors.clone());
    let run = run_join_preflight(&data.cfg, &ignore, &*data.host_probe, &*data.runtime);
    for (stream, text) in &run.output {
        match stream {
            Stream::Stdout => data.reporter.out(text),
            Stream::Stderr => data.reporter.err(text),
        }
    }
    if let Some(e) = run.error {
        return Err(Box::new(e));
    }
    ensure_init_cfg(data)
}
