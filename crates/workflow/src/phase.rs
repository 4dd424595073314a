//! One phase of a workflow: its help, its flags and what it runs.

use crate::flag::{ArgsRule, FlagSpec};

/// The cause a [`PhaseError`] carries.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What kind of failure a [`PhaseError`] is, for the command running the workflow to choose its
/// exit code by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureKind {
    /// The phase failed while doing its work.
    #[default]
    Failed,
    /// A check made before the work (a preflight check) found the host unfit for it.
    Preflight,
}

/// The error a phase's run or run-if function returns: its cause and its [`FailureKind`]. Any
/// error (or message) converts into one of kind [`FailureKind::Failed`], so `?` works on them;
/// [`PhaseError::preflight`] makes the other kind.
#[derive(Debug)]
pub struct PhaseError {
    source: BoxError,
    kind: FailureKind,
}

impl PhaseError {
    /// A failed preflight check.
    pub fn preflight(source: impl Into<BoxError>) -> Self {
        PhaseError {
            source: source.into(),
            kind: FailureKind::Preflight,
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The cause.
    pub fn into_source(self) -> BoxError {
        self.source
    }
}

impl<E: Into<BoxError>> From<E> for PhaseError {
    fn from(source: E) -> Self {
        PhaseError {
            source: source.into(),
            kind: FailureKind::Failed,
        }
    }
}

impl std::fmt::Display for PhaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

/// A phase action over the workflow's context `C`.
pub type RunFn<C> = fn(&mut C) -> Result<(), PhaseError>;

/// A condition checked before running a phase; `Ok(false)` skips it.
pub type RunIfFn<C> = fn(&C) -> Result<bool, PhaseError>;

/// A phase: a node of the workflow tree.
#[derive(Debug)]
pub struct Phase<C> {
    /// Name; only the part before the first space is used as the command name (upstream allows
    /// `"name [arg]"` forms).
    pub name: &'static str,
    /// Other names of the generated command.
    pub aliases: &'static [&'static str],
    /// One-line help.
    pub short: &'static str,
    /// Long help.
    pub long: &'static str,
    /// Example text.
    pub example: &'static str,
    /// Hidden phases run with the workflow but get no command and are not listed in help.
    pub hidden: bool,
    /// An "all" phase: a command that runs its siblings; never part of the workflow itself.
    pub run_all_siblings: bool,
    /// Names of the flags the phase command takes from the parent command or the workflow's
    /// additional flags; `None` takes none.
    pub inherit_flags: Option<&'static [&'static str]>,
    /// Flags only this phase command has.
    pub local_flags: &'static [FlagSpec],
    /// Positional-argument rule of the phase command; `None` adopts the parent command's for
    /// leaves (phases with children never take arguments).
    pub args: Option<ArgsRule>,
    /// Nested phases, in execution order.
    pub phases: Vec<Phase<C>>,
    /// The action, if any.
    pub run: Option<RunFn<C>>,
    /// The condition, if any.
    pub run_if: Option<RunIfFn<C>>,
}

impl<C> Phase<C> {
    /// A phase with only a name and a short help; fill the rest with struct update syntax.
    pub fn new(name: &'static str, short: &'static str) -> Self {
        Phase {
            name,
            aliases: &[],
            short,
            long: "",
            example: "",
            hidden: false,
            run_all_siblings: false,
            inherit_flags: None,
            local_flags: &[],
            args: None,
            phases: Vec::new(),
            run: None,
            run_if: None,
        }
    }

    /// The name used in selectors and commands: lowercased, cut at the first space.
    pub fn clean_name(&self) -> String {
        let lower = self.name.to_lowercase();
        match lower.find(' ') {
            Some(i) => lower[..i].to_string(),
            None => lower,
        }
    }
}
