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

/// An upgrade command's failure keeps the exit code its variant names.
impl From<kubeadm_phases::upgrade::UpgradeError> for CommandError {
    fn from(e: kubeadm_phases::upgrade::UpgradeError) -> Self {
        use kubeadm_phases::upgrade::UpgradeError;
        match e {
            UpgradeError::Failed(m) => CommandError::Failed(m),
            UpgradeError::Preflight(m) => CommandError::Preflight(m),
            UpgradeError::Validation(m) => CommandError::Validation(m),
        }
    }
}

impl From<kubeadm_phases::upgrade::diff::DiffError> for CommandError {
    /// Bad input (an empty manifest path, a version that is not one, a wrong number of arguments)
    /// exits 3, as this project's rule says; upstream returns every one of these as a plain
    /// error and exits 1. A file that cannot be used, or a cluster that cannot be asked, exits 1.
    fn from(e: kubeadm_phases::upgrade::diff::DiffError) -> Self {
        use kubeadm_phases::upgrade::diff::DiffError;
        match e {
            DiffError::EmptyPath
            | DiffError::MissingVersion
            | DiffError::TooManyArguments
            | DiffError::Version(_) => CommandError::Validation(e.to_string()),
            _ => CommandError::Failed(e.to_string()),
        }
    }
}

/// A certificate renewal's failure: exit code 1.
impl From<kubeadm_phases::renewal::RenewalError> for CommandError {
    fn from(e: kubeadm_phases::renewal::RenewalError) -> Self {
        CommandError::Failed(e.0)
    }
}
