//! The `kubeadm` binary's library: [`run`] resolves a command line against the command tree, runs
//! the handler, prints its output and decides the exit code (here only: 1 generic, 2 preflight,
//! 3 validation); [`man_pages`] renders the man pages of the same tree. The binaries are thin:
//! `src/main.rs` (`kubeadm`) and `src/bin/genman.rs` (`kubeadm-genman`, upstream's `genman`).
//!
//! Layers, as in ripgrep: `cobra/` (generic: the command tree as data, pflag syntax, cobra's
//! resolution, help and completion; no kubeadm logic) → `phase_commands` (kubeadm's `phase`
//! subcommands, added to the tree from the workflows) → `commands/` (one small file per command:
//! flags → the workflow's data → run → report) → the workflows in `kubeadm-phases`. `setup/`
//! builds the real effects (the only place besides `main` that reads the host directly) and
//! `error.rs` decides exit codes. Output is written with errors ignored on a closed pipe
//! (`kubeadm completion bash | head` must not panic).

mod cobra;
mod commands;
mod error;
mod man;
mod options;
mod phase_commands;
mod printers;
mod setup;

use std::io::Write;
use std::process::ExitCode;

use cobra::command::Tree;
use cobra::completion;
use cobra::execute::{self, Resolution};

pub use man::{ManDate, ManPage};

/// Upstream's hint after every error (it prints a stack trace instead from `-v 5` up).
const STACK_HINT: &str = "To see the stack trace of this error execute with --v=5 or higher";

fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn write_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Upstream's `CheckErr` output for an error message. From verbosity 5 upstream prints the
/// error with its Go stack trace instead of the hint; we print the message alone.
fn report_error(message: &str, verbosity: i64) {
    let mut text = if verbosity > 4 {
        message.to_string()
    } else {
        format!("{message}\n{STACK_HINT}")
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    write_stderr(&text);
}

/// Runs kubeadm with `args` (the command line without the program name): prints what the
/// command prints and returns its exit code.
pub fn run(args: &[String]) -> ExitCode {
    let tree = phase_commands::kubeadm_tree();
    match execute::resolve(&tree, args) {
        Resolution::Stdout(text) => {
            write_stdout(&text);
            ExitCode::SUCCESS
        }
        Resolution::Stderr(text) => {
            write_stderr(&text);
            ExitCode::SUCCESS
        }
        Resolution::Both(out, err) => {
            write_stdout(&out);
            write_stderr(&err);
            ExitCode::SUCCESS
        }
        Resolution::Error(message, verbosity) => {
            report_error(&message, verbosity);
            ExitCode::from(1)
        }
        Resolution::Run(inv) => {
            for notice in &inv.flags.notices {
                write_stderr(&format!("{notice}\n"));
            }
            let mut out = String::new();
            let result = if inv.command.path == "kubeadm completion" {
                completion::run(&tree, &inv.args, &mut out).map_err(error::CommandError::from)
            } else {
                commands::dispatch(&tree, &inv, &mut out)
            };
            write_stdout(&out);
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e @ error::CommandError::NotImplemented { .. }) => {
                    write_stderr(&format!("{e}\n"));
                    ExitCode::from(e.exit_code())
                }
                Err(e) => {
                    report_error(&e.to_string(), inv.flags.int("v"));
                    ExitCode::from(e.exit_code())
                }
            }
        }
    }
}

/// What [`run`] would do with `args` without running a handler: the text it would print (help,
/// completions), the usage error, or the command it would run with its positional arguments and
/// the flags set. Reads nothing from the host; for the command-line parser's fuzz target, which
/// calls it for every input: the tree is built once (building it leaks the help flags' texts,
/// once per process in [`run`]).
pub fn resolve_only(args: &[String]) -> String {
    static TREE: std::sync::OnceLock<Tree> = std::sync::OnceLock::new();
    let tree = TREE.get_or_init(phase_commands::kubeadm_tree);
    match execute::resolve(tree, args) {
        Resolution::Stdout(text) | Resolution::Stderr(text) => text,
        Resolution::Both(out, err) => out + &err,
        Resolution::Error(message, verbosity) => format!("error (v={verbosity}): {message}"),
        Resolution::Run(inv) => format!(
            "run {:?} {:?} flags {:?}",
            inv.command.path,
            inv.args,
            inv.flags.changed_names()
        ),
    }
}

/// The man pages of every command of kubeadm's tree, as cobra's `GenManTree` lays them out
/// (`kubeadm.1`, `kubeadm-init.1`, `kubeadm-init-phase-certs-apiserver.1`, …), dated `date`.
pub fn man_pages(date: &ManDate) -> Vec<ManPage> {
    let tree = phase_commands::kubeadm_tree();
    man::pages(&tree, date)
}
