//! The dispatch table: one handler per command path.
//!
//! # Adding a handler
//!
//! 1. Write `fn my_handler(inv: &Invocation, out: &mut Output) -> Result<(), CommandError>` in the
//!    module that owns the command's domain (read flags with `inv.flags.string("name")`,
//!    `.bool(..)`, `.strings(..)`, `.changed(..)`; positional arguments are `inv.args`).
//! 2. Add `("kubeadm config print init-defaults", my_handler)` to [`HANDLERS`].
//! 3. Return typed errors converted into [`CommandError`]; pick the variant for the exit code
//!    (`Failed` 1, `Preflight` 2, `Validation` 3). Never exit or print errors yourself: `main`
//!    prints the error in upstream's format and decides the exit code.
//!
//! Commands without a handler print `kubeadm: "<path>" is not implemented yet in kubeadm-rs`
//! and exit 1; phase commands of a workflow run the workflow filtered to their phase.

use crate::command::{Action, Tree, WorkflowKind};
use crate::execute::Invocation;
use crate::{
    addon_cmd, certs_cmd, config_cmd, init_cmd, join_cmd, kubeconfig_cmd, reset_cmd, secrets, token_cmd,
    upgrade_diff, upgrade_node_cmd, upgrade_plan, version,
};

/// What a handler writes to standard output.
pub(crate) type Output = String;

/// A handler's failure; the variant decides the exit code.
#[derive(Debug, thiserror::Error)]
#[allow(dead_code)] // Preflight is for the handlers still to come
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

type Handler = fn(&Invocation<'_>, &mut Output) -> Result<(), CommandError>;

/// Command path → handler.
const HANDLERS: &[(&str, Handler)] = &[
    ("kubeadm version", run_version),
    (
        "kubeadm config print init-defaults",
        config_cmd::print_init_defaults,
    ),
    (
        "kubeadm config print join-defaults",
        config_cmd::print_join_defaults,
    ),
    ("kubeadm config migrate", config_cmd::migrate),
    ("kubeadm config images list", config_cmd::images_list),
    ("kubeadm config images pull", config_cmd::images_pull),
    ("kubeadm token generate", run_token_generate),
    ("kubeadm certs certificate-key", run_certificate_key),
    ("kubeadm token", missing_subcommand),
    ("kubeadm upgrade", missing_subcommand),
    ("kubeadm config", missing_subcommand),
    ("kubeadm config print", missing_subcommand),
    ("kubeadm config images", missing_subcommand),
    ("kubeadm certs renew", missing_subcommand),
    ("kubeadm certs check-expiration", certs_cmd::check_expiration),
    ("kubeadm certs generate-csr", certs_cmd::generate_csr),
    ("kubeadm certs renew all", certs_cmd::renew),
    ("kubeadm certs renew admin.conf", certs_cmd::renew),
    ("kubeadm certs renew apiserver", certs_cmd::renew),
    ("kubeadm certs renew apiserver-etcd-client", certs_cmd::renew),
    ("kubeadm certs renew apiserver-kubelet-client", certs_cmd::renew),
    ("kubeadm certs renew controller-manager.conf", certs_cmd::renew),
    ("kubeadm certs renew etcd-healthcheck-client", certs_cmd::renew),
    ("kubeadm certs renew etcd-peer", certs_cmd::renew),
    ("kubeadm certs renew etcd-server", certs_cmd::renew),
    ("kubeadm certs renew front-proxy-client", certs_cmd::renew),
    ("kubeadm certs renew scheduler.conf", certs_cmd::renew),
    ("kubeadm kubeconfig user", kubeconfig_cmd::user),
    ("kubeadm init", run_init),
    ("kubeadm join", run_join),
    ("kubeadm reset", run_reset),
    ("kubeadm token create", token_cmd::create),
    ("kubeadm token list", token_cmd::list),
    ("kubeadm token delete", token_cmd::delete),
    ("kubeadm upgrade diff", upgrade_diff::run),
    ("kubeadm upgrade plan", upgrade_plan::run),
    ("kubeadm upgrade node", run_upgrade_node),
];

/// Runs the handler of an invocation.
pub(crate) fn dispatch(tree: &Tree, inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    enter_rootfs(&inv.flags.string("rootfs"))?;
    if let Action::Phase { workflow, .. } = &inv.command.action {
        return run_phase(tree, inv, *workflow, out);
    }
    match HANDLERS.iter().find(|(path, _)| *path == inv.command.path) {
        Some((_, handler)) => handler(inv, out),
        None => Err(CommandError::NotImplemented(inv.command.path.clone())),
    }
}

fn run_version(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let text =
        version::render(&inv.flags.string("output")).map_err(|e| CommandError::Failed(e.to_string()))?;
    out.push_str(&text);
    Ok(())
}

fn run_token_generate(_: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    out.push_str(&secrets::bootstrap_token());
    out.push('\n');
    Ok(())
}

fn run_certificate_key(_: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    out.push_str(&secrets::certificate_key());
    out.push('\n');
    Ok(())
}

/// `kubeadm init`: the whole workflow.
fn run_init(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    init_cmd::run(inv, &[])
}

/// `kubeadm reset`: the whole workflow, then the stateful directories and the instructions.
fn run_reset(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    reset_cmd::run(inv, &[])
}

/// Upstream's `SubCmdRunE`: a command that only groups subcommands.
fn missing_subcommand(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let name = inv.command.name();
    Err(CommandError::Failed(match inv.args.first() {
        None => format!("missing subcommand; {name:?} is not meant to be run on its own"),
        Some(a) => format!("invalid subcommand: {a:?}"),
    }))
}

/// `kubeadm upgrade node`: the whole workflow (worker nodes).
fn run_upgrade_node(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    upgrade_node_cmd::run(inv, &[])
}

/// `kubeadm join`: the whole workflow (worker nodes), then the closing message.
fn run_join(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    join_cmd::run(inv, &[])
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
        out.push_str(&crate::help::help(tree, inv.command));
        return Ok(());
    }
    if let (WorkflowKind::Init, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        if addon_cmd::wants_print(selector, inv) {
            return addon_cmd::print(selector, inv, out);
        }
        return init_cmd::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::Reset, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return reset_cmd::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::Join, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return join_cmd::run(inv, std::slice::from_ref(selector));
    }
    if let (WorkflowKind::UpgradeNode, Action::Phase { selector, .. }) = (workflow, &inv.command.action) {
        return upgrade_node_cmd::run(inv, std::slice::from_ref(selector));
    }
    Err(CommandError::NotImplemented(inv.command.path.clone()))
}

/// The global `--rootfs` flag: like upstream's persistent pre-run, chroot into the given directory
/// (and go to its `/`) before any command runs, so every path the command uses lives under it.
fn enter_rootfs(rootfs: &str) -> Result<(), CommandError> {
    if rootfs.is_empty() {
        return Ok(());
    }
    std::os::unix::fs::chroot(rootfs).map_err(|e| {
        CommandError::Failed(format!(
            "unable to chroot to {rootfs}: {}",
            crate::config_cmd::go_io_error(&e)
        ))
    })?;
    std::env::set_current_dir("/").map_err(|e| {
        CommandError::Failed(format!(
            "unable to chdir to /: {}",
            crate::config_cmd::go_io_error(&e)
        ))
    })
}
