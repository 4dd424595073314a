//! A command's failure and the exit code it gives (1 generic, 2 preflight, 3 validation): the one
//! place that decides exit codes. Handlers return [`CommandError`]; `main` prints it in upstream's
//! format and exits with [`CommandError::exit_code`].

/// What a handler writes to standard output.
pub(crate) type Output = String;

/// A handler's failure; the variant decides the exit code.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// Exit code 1.
    #[error("{0}")]
    Failed(String),
    /// Exit code 2 (preflight checks failed).
    #[error("{0}")]
    Preflight(String),
    /// Exit code 3 (configuration validation failed).
    #[error("{0}")]
    Validation(String),
    /// Exit code 1, without upstream's stack-trace hint: a command we do not have yet.
    #[error("kubeadm: {0:?} is not implemented yet in kubeadm-rs")]
    NotImplemented(String),
}

impl CommandError {
    /// The process exit code upstream uses for this kind of error.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CommandError::Failed(_) | CommandError::NotImplemented(_) => 1,
            CommandError::Preflight(_) => 2,
            CommandError::Validation(_) => 3,
        }
    }
}

/// A workflow's failure: exit code 2 when a preflight check failed (as kubeadm documents and this
/// project's rules ask; the upstream v1.25.16 binary exits 1 there, because its workflow wraps the
/// preflight error and so loses the type its exit code is chosen by), 3 for a phase name that does
/// not exist, else 1.
impl From<kubeadm_workflow::WorkflowError> for CommandError {
    fn from(e: kubeadm_workflow::WorkflowError) -> Self {
        let preflight = matches!(&e, kubeadm_workflow::WorkflowError::Phase { source, .. }
            if source.downcast_ref::<kubeadm_phases::preflight::PreflightError>().is_some());
        if preflight {
            CommandError::Preflight(e.to_string())
        } else if matches!(e, kubeadm_workflow::WorkflowError::InvalidPhaseName(_)) {
            // A `--skip-phases` entry that names no phase is bad input: exit 3 (upstream: 1).
            CommandError::Validation(e.to_string())
        } else {
            CommandError::Failed(e.to_string())
        }
    }
}
