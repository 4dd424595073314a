//! Kubeadm's `phase` subcommands: what upstream's workflow runner does with `BindToCommand` for
//! `kubeadm init`, `join`, `reset` and `upgrade node`. Each of these commands gets the phase list
//! in its long help, a `phase` subcommand with one command per phase of its workflow (generated
//! from the tree in `kubeadm-phases`) and the `--skip-phases` flag. The generic command tree is
//! `crate::cobra::command`; this module only adds to it.

use kubeadm_workflow::{ArgsRule, PhaseCommand};

use crate::cobra::command::{Action, Command, Tree, help_flag};
use crate::cobra::command_tree;

/// Which workflow a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkflowKind {
    /// `kubeadm init`.
    Init,
    /// `kubeadm join`.
    Join,
    /// `kubeadm reset`.
    Reset,
    /// `kubeadm upgrade node`.
    UpgradeNode,
}

/// The commands that run a workflow, by path (gen.py's `WORKFLOWS`).
const WORKFLOWS: &[(&str, WorkflowKind)] = &[
    ("kubeadm init", WorkflowKind::Init),
    ("kubeadm join", WorkflowKind::Join),
    ("kubeadm reset", WorkflowKind::Reset),
    ("kubeadm upgrade node", WorkflowKind::UpgradeNode),
];

/// Kubeadm's whole command tree: the generated specs with the global flags, then each workflow's
/// phase commands.
pub(crate) fn kubeadm_tree() -> Tree {
    let mut tree = Tree::build(&command_tree::ROOT, command_tree::GLOBAL_FLAGS);
    for (path, kind) in WORKFLOWS {
        if let Some(cmd) = tree.command_mut(path) {
            attach_workflow(cmd, *kind);
        }
    }
    tree
}

/// The workflow a phase command (`kubeadm init phase certs ca`) belongs to.
pub(crate) fn workflow_of(command: &Command) -> Option<WorkflowKind> {
    WORKFLOWS
        .iter()
        .find(|(path, _)| {
            command
                .path
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with(" phase "))
        })
        .map(|(_, kind)| *kind)
}

/// What the runner's `BindToCommand` does: the phase list in the long help, the `phase`
/// subcommand tree and the `--skip-phases` flag.
fn attach_workflow(cmd: &mut Command, kind: WorkflowKind) {
    let (long, phases) = match kind {
        WorkflowKind::Init => {
            let w = kubeadm_phases::init::tree::workflow();
            (
                w.command_long(&cmd.use_line, &cmd.long, &cmd.short),
                w.phase_commands(&cmd.flags, cmd.args),
            )
        }
        WorkflowKind::Join => {
            let w = kubeadm_phases::join::tree::workflow();
            (
                w.command_long(&cmd.use_line, &cmd.long, &cmd.short),
                w.phase_commands(&cmd.flags, cmd.args),
            )
        }
        WorkflowKind::Reset => {
            let w = kubeadm_phases::reset::tree::workflow();
            (
                w.command_long(&cmd.use_line, &cmd.long, &cmd.short),
                w.phase_commands(&cmd.flags, cmd.args),
            )
        }
        WorkflowKind::UpgradeNode => {
            let w = kubeadm_phases::upgrade::node::tree::workflow();
            (
                w.command_long(&cmd.use_line, &cmd.long, &cmd.short),
                w.phase_commands(&cmd.flags, cmd.args),
            )
        }
    };
    let phase_path = format!("{} phase", cmd.path);
    let phase = Command {
        use_line: "phase".to_string(),
        path: phase_path.clone(),
        aliases: Vec::new(),
        short: format!(
            "Use this command to invoke single phase of the {} workflow",
            cmd.name()
        ),
        long: String::new(),
        example: String::new(),
        hidden: false,
        deprecated: String::new(),
        runnable: false,
        args: ArgsRule::Legacy,
        valid_args: Vec::new(),
        disable_flags_in_use_line: false,
        flags: Vec::new(),
        persistent: Vec::new(),
        subs: phases.into_iter().map(|p| from_phase(p, &phase_path)).collect(),
        action: Action::Command,
        help_flag: help_flag("phase"),
    };
    cmd.long = long;
    cmd.subs.push(phase);
    cmd.flags
        .push(kubeadm_workflow::Workflow::<()>::skip_phases_flag());
}

fn from_phase(p: PhaseCommand, parent_path: &str) -> Command {
    let name = p.use_line.split_whitespace().next().unwrap_or("").to_string();
    let path = format!("{parent_path} {name}");
    Command {
        use_line: p.use_line,
        path: path.clone(),
        aliases: p.aliases.iter().map(|s| s.to_string()).collect(),
        short: p.short.to_string(),
        long: p.long.to_string(),
        example: p.example.to_string(),
        hidden: false,
        deprecated: String::new(),
        runnable: true,
        args: p.args,
        valid_args: Vec::new(),
        disable_flags_in_use_line: false,
        flags: p.flags,
        persistent: Vec::new(),
        subs: p.children.into_iter().map(|c| from_phase(c, &path)).collect(),
        action: Action::Phase {
            selector: p.selector,
            has_children: p.has_children,
        },
        help_flag: help_flag(&name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workflow command of the table exists and has its `phase` subcommand, whose commands
    /// belong to that workflow.
    #[test]
    fn every_workflow_command_gets_its_phase_commands() {
        let tree = kubeadm_tree();
        for (path, kind) in WORKFLOWS {
            let cmd = tree.chain(path).last().copied().expect("root");
            assert_eq!(&cmd.path, path, "no command {path:?} in the tree");
            let phase = cmd
                .subs
                .iter()
                .find(|c| c.name() == "phase")
                .expect("phase command");
            assert!(!phase.subs.is_empty(), "{path:?} has no phase commands");
            for sub in &phase.subs {
                assert_eq!(workflow_of(sub), Some(*kind), "{}", sub.path);
            }
        }
    }
}
