//! The `kubeadm` binary: resolves the command line against the command tree, runs the handler,
//! prints its output and decides the exit code (here only: 1 generic, 2 preflight, 3 validation).
//!
//! Layers, as in ripgrep: `command`/`command_tree` (the tree as data) → `flags` (pflag syntax)
//! → `execute` (cobra's resolution: help, argument rules) → `dispatch` (handlers). Output is
//! written with errors ignored on a closed pipe (`kubeadm completion bash | head` must not panic).

mod addon_cmd;
mod certs_cmd;
mod command;
mod command_tree;
mod complete;
mod completion;
mod completion_text;
mod component_config_states;
mod config_cmd;
mod dispatch;
mod execute;
mod flags;
mod go_values;
mod help;
mod host_facts;
mod init_cmd;
mod init_options;
mod join_cmd;
mod kubeconfig_cmd;
mod mixed_args;
mod reset_cmd;
mod secrets;
mod token_cmd;
mod upgrade_diff;
mod upgrade_health;
mod upgrade_node_cmd;
mod upgrade_plan;
mod version;

use std::io::Write;
use std::process::ExitCode;

use command::Tree;
use execute::Resolution;

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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tree = Tree::build();
    match execute::resolve(&tree, &args) {
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
                completion::run(&tree, &inv.args, &mut out)
            } else {
                dispatch::dispatch(&tree, &inv, &mut out)
            };
            write_stdout(&out);
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e @ dispatch::CommandError::NotImplemented(_)) => {
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
