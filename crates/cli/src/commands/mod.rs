//! The command handlers, one small file per command (`kubeadm upgrade plan` in `upgrade_plan.rs`),
//! and the dispatch table that maps a command path to its handler. A handler parses its flags,
//! builds the workflow's data (the configuration, and the effects from `crate::setup`), runs it and
//! reports; the work itself is in `kubeadm-phases`. This directory holds handlers only: what several
//! handlers share lives outside it (flag and configuration loading in `crate::options`, the
//! workflows' data and clients in `crate::setup`, printer helpers in `crate::printers`), so that no
//! handler imports another and no module imports this table (`.ci/modcycles.py` checks it).
//!
//! # Adding a handler
//!
//! 1. Write `fn my_handler(inv: &Invocation, out: &mut Output) -> Result<(), CommandError>` in the
//!    command's file (read flags with `inv.flags.string("name")`, `.bool(..)`, `.strings(..)`,
//!    `.changed(..)`; positional arguments are `inv.args`).
//! 2. Add `("kubeadm config print init-defaults", my_handler)` to [`HANDLERS`].
//! 3. Return typed errors converted into [`CommandError`] (`crate::error` decides the exit code
//!    of each: 1 failure, 2 preflight, 3 bad input). Never exit or print errors yourself: `main`
//!    prints the error in upstream's format and decides the exit code.
//!
//! Commands without a handler print `kubeadm: "<path>" is not implemented yet in kubeadm-rs`
//! and exit 1; phase commands of a workflow run the workflow filtered to their phase.

use crate::cobra::command::{Action, Tree};
use crate::cobra::execute::Invocation;
use crate::error::{CommandError, MissingSubcommand, Output};
use crate::phase_commands::{WorkflowKind, workflow_of};

mod addon;
mod certs;
mod config;
mod init;
mod join;
mod kubeconfig;
mod reset;
mod token;
mod upgrade_apply;
mod upgrade_diff;
mod upgrade_node;
mod upgrade_plan;
pub(crate) mod version;

type Handler = fn(&Invocation<'_>, &mut Output) -> Result<(), CommandError>;

/// Command path → handler.
const HANDLERS: &[(&str, Handler)] = &[
    ("kubeadm version", run_version),
    ("kubeadm config print init-defaults", config::print_init_defaults),
    ("kubeadm config print join-defaults", config::print_join_defaults),
    ("kubeadm config migrate", config::migrate),
    ("kubeadm config images list", config::images_list),
    ("kubeadm config images pull", config::images_pull),
    ("kubeadm token generate", run_token_generate),
    ("kubeadm certs certificate-key", run_certificate_key),
    ("kubeadm token", missing_subcommand),
    ("kubeadm upgrade", missing_subcommand),
    ("kubeadm config", missing_subcommand),
    ("kubeadm config print", missing_subcommand),
    ("kubeadm config images", missing_subcommand),
    ("kubeadm certs renew", missing_subcommand),
    ("kubeadm certs check-expiration", certs::check_expiration),
    ("kubeadm certs generate-csr", certs::generate_csr),
    ("kubeadm certs renew all", certs::renew),
    ("kubeadm certs renew admin.conf", certs::renew),
    ("kubeadm certs renew apiserver", certs::renew),
    ("kubeadm certs renew apiserver-etcd-client", certs::renew),
    ("kubeadm certs renew apiserver-kubelet-client", certs::renew),
    ("kubeadm certs renew controller-manager.conf", certs::renew),
    ("kubeadm certs renew etcd-healthcheck-client", certs::renew),
    ("kubeadm certs renew etcd-peer", certs::renew),
    ("kubeadm certs renew etcd-server", certs::renew),
    ("kubeadm certs renew front-proxy-client", certs::renew),
    ("kubeadm certs renew scheduler.conf", certs::renew),
    ("kubeadm kubeconfig user", kubeconfig::user),
    ("kubeadm init", run_init),
    ("kubeadm join", run_join),
    ("kubeadm reset", run_reset),
    ("kubeadm token create", token::create),
    ("kubeadm token list", token::list),
    ("kubeadm token delete", token::delete),
    ("kubeadm upgrade apply", upgrade_apply::run),
    ("kubeadm upgrade diff", upgrade_diff::run),
    ("kubeadm upgrade plan", upgrade_plan::run),
    ("kubeadm upgrade node", run_upgrade_node),
];

/// Runs the handler of an invocation.
pub(crate) fn dispatch(tree: &Tree, inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    crate::setup::enter_rootfs(&inv.flags.string("rootfs"))?;
    if let (Action::Phase { .. }, Some(workflow)) = (&inv.command.action, workflow_of(inv.command)) {
        return run_phase(tree, inv, workflow, out);
    }
    match HANDLERS.iter().find(|(path, _)| *path == inv.command.path) {
        Some((_, handler)) => handler(inv, out),
        None => Err(CommandError::NotImplemented {
            command: inv.command.path.clone(),
        }),
    }
}

fn run_version(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    use kubeadm_effects::report::Reporter as _;
    let rep = crate::setup::reporter(inv);
    rep.info(1, "version.go", "[version] retrieving version info");
    rep.info(1, "version.go", &version::identity());
    let text = version::render(&inv.flags.string("output"))?;
    out.push_str(&text);
    Ok(())
}

fn run_token_generate(_: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    out.push_str(&crate::setup::secrets::bootstrap_token());
    out.push('\n');
    Ok(())
}

fn run_certificate_key(_: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    out.push_str(&crate::setup::secrets::certificate_key());
    out.push('\n');
    Ok(())
}

/// `kubeadm init`: the whole workflow.
fn run_init(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    init::run(inv, &[])
}

/// `kubeadm reset`: the whole workflow, then the stateful directories and the instructions.
fn run_reset(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    reset::run(inv, &[])
}

/// Upstream's `SubCmdRunE`: a command that only groups subcommands.
fn missing_subcommand(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let name = inv.command.name();
    Err(match inv.args.first() {
        None => MissingSubcommand::Missing {
            name: name.to_string(),
        },
        Some(a) => MissingSubcommand::Invalid { arg: a.clone() },
    }
    .into())
}

/// `kubeadm upgrade node`: the whole workflow (worker nodes).
fn run_upgrade_node(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    upgrade_node::run(inv, &[])
}

/// `kubeadm join`: the whole workflow (worker nodes), then the closing message.
fn run_join(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    join::run(inv, &[])
}

/// A phase command: prints help for phases with sub-phases, as upstream's generated command
/// does, else runs the workflow filtered to the phase (after the checks upstream makes first).
fn run_phase(
    tree: &Tree,
    inv: &Invocation<'_>,
    workflow: WorkflowKind,
    out: &mut Output,
) -> Result<(), CommandError> {
    if let Action::Phase {
        has_children: true, ..
    } = inv.command.action
    {
        out.push_str(&crate::cobra::help::help(tree, inv.command));
        return Ok(());
    }
    if let (WorkflowKind::Init, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        if addon::wants_print(selector, inv) {
            return addon::print(selector, inv, out);
        }
        return init::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::Reset, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return reset::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::Join, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return join::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::UpgradeNode, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return upgrade_node::run(inv, std::slice::from_ref(selector));
    }
    Err(CommandError::NotImplemented {
        command: inv.command.path.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every handler is bound to a command that exists: a misspelt path would leave the command
    /// saying "not implemented" while its handler sits unused.
    #[test]
    fn every_handler_names_a_command_of_the_tree() {
        let tree = crate::phase_commands::kubeadm_tree();
        for (path, _) in HANDLERS {
            let found = tree.chain(path).last().map(|c| c.path.clone());
            assert_eq!(found.as_deref(), Some(*path), "no command {path:?} in the tree");
        }
        let paths: std::collections::BTreeSet<_> = HANDLERS.iter().map(|(p, _)| *p).collect();
        assert_eq!(paths.len(), HANDLERS.len(), "a command has two handlers");
    }
}
