//! A generic phase engine.
//!
//! A workflow is a tree of phases (name, help, sub-phases, run, run-if, flags). The engine
//! filters and skips phases with subtree semantics, runs them in order, and derives from the same
//! tree the `phase` subcommands and the phase list shown in the command's help, as upstream
//! kubeadm's `phases/workflow` runner does.
//! It knows nothing of kubeadm, and nothing of how a command line is parsed: flags are plain data
//! ([`FlagSpec`]) that the binary interprets.

mod flag;
mod phase;
mod runner;

pub use flag::{ArgsRule, FlagSpec};
pub use phase::{BoxError, FailureKind, Phase, PhaseError, RunFn, RunIfFn};
pub use runner::{PhaseCommand, Workflow, WorkflowError};
