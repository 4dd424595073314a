//! `kubeadm completion bash|zsh`: cobra v1.4's bash completion (V1) generated from the command
//! tree, wrapped as upstream kubeadm wraps it (license boilerplate; for zsh, a bash-emulation
//! head and tail around the bash script).

use std::fmt::Write as _;

use kubeadm_workflow::FlagSpec;

use crate::cobra::command::{Action, Command, Tree};
use crate::cobra::completion_text::{BASH_POSTSCRIPT, BASH_PREAMBLE, BOILERPLATE, ZSH_HEAD, ZSH_TAIL};

/// The command that runs: cobra has added the help flag to it, and to no other.
const EXECUTED: &str = "kubeadm completion";

/// Why `kubeadm completion` printed nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompletionError {
    /// No shell argument.
    #[error("shell not specified")]
    NoShell,
    /// More than one argument.
    #[error("too many arguments. expected only the shell type")]
    TooManyArguments,
    /// A shell it has no script for.
    #[error("unsupported shell type {0:?}")]
    UnsupportedShell(String),
}

/// Runs `kubeadm completion` with its positional arguments.
pub(crate) fn run(tree: &Tree, args: &[String], out: &mut String) -> Result<(), CompletionError> {
    let shell = match args {
        [] => return Err(CompletionError::NoShell),
        [shell] => shell.as_str(),
        _ => {
            return Err(CompletionError::TooManyArguments);
        }
    };
    match shell {
        "bash" => {
            out.push_str(BOILERPLATE);
            out.push_str(&bash(tree));
        }
        "zsh" => {
            out.push_str(BOILERPLATE);
            out.push_str(ZSH_HEAD);
            out.push_str(&bash(tree));
            out.push_str(ZSH_TAIL);
        }
        other => return Err(CompletionError::UnsupportedShell(other.to_string())),
    }
    Ok(())
}

/// cobra's `GenBashCompletion` without kubeadm's boilerplate.
fn bash(tree: &Tree) -> String {
    let mut buf = String::from(BASH_PREAMBLE);
    command_function(tree, &tree.root, &mut buf);
    buf.push_str(BASH_POSTSCRIPT);
    buf
}

fn listed(cmd: &Command) -> bool {
    cmd.is_available() || cmd.action == Action::Help
}

/// One `_kubeadm_<path>()` function per listed command, children first.
fn command_function(tree: &Tree, cmd: &Command, buf: &mut String) {
    for sub in cmd.sorted_subs() {
        if listed(sub) {
            command_function(tree, sub, buf);
        }
    }
    let name = cmd.path.replace(' ', "_").replace(':', "__");
    if cmd.path == tree.root.path {
        let _ = write!(buf, "_{name}_root_command()\n{{\n");
    } else {
        let _ = write!(buf, "_{name}()\n{{\n");
    }
    let _ = write!(
        buf,
        "    last_command={name:?}\n\n    command_aliases=()\n\n    commands=()\n"
    );
    for sub in cmd.sorted_subs() {
        if !listed(sub) {
            continue;
        }
        let _ = writeln!(buf, "    commands+=({:?})", sub.name());
        if !sub.aliases.is_empty() {
            let mut aliases = sub.aliases.clone();
            aliases.sort();
            buf.push_str("    if [[ -z \"${BASH_VERSION:-}\" || \"${BASH_VERSINFO[0]:-}\" -gt 3 ]]; then\n");
            for a in aliases {
                let _ = writeln!(buf, "        command_aliases+=({a:?})");
                let _ = writeln!(buf, "        aliashash[{a:?}]={:?}", sub.name());
            }
            buf.push_str("    fi\n");
        }
    }
    buf.push_str("\n    flags=()\n    two_word_flags=()\n    local_nonpersistent_flags=()\n    flags_with_completion=()\n    flags_completion=()\n\n");
    let flags = tree.flags_with_help(&cmd.path, cmd.path == EXECUTED);
    let mut local = flags.local.clone();
    local.sort_by(|a, b| a.name.cmp(b.name));
    let mut inherited = flags.inherited.clone();
    inherited.sort_by(|a, b| a.name.cmp(b.name));
    for f in local.iter().filter(|f| completable(f)) {
        write_flag(f, buf);
        // Local non-persistent: declared on the command, not as persistent.
        if !cmd.persistent.iter().any(|p| p.name == f.name) {
            let _ = writeln!(buf, "    local_nonpersistent_flags+=(\"--{}\")", f.name);
            if f.no_opt_default.is_empty() {
                let _ = writeln!(buf, "    local_nonpersistent_flags+=(\"--{}=\")", f.name);
            }
            if !f.shorthand.is_empty() {
                let _ = writeln!(buf, "    local_nonpersistent_flags+=(\"-{}\")", f.shorthand);
            }
        }
    }
    for f in inherited.iter().filter(|f| completable(f)) {
        write_flag(f, buf);
    }
    buf.push_str("\n    must_have_one_flag=()\n");
    for f in local.iter().filter(|f| completable(f) && f.required) {
        let eq = if f.value_type == "bool" { "" } else { "=" };
        let _ = writeln!(buf, "    must_have_one_flag+=(\"--{}{eq}\")", f.name);
        if !f.shorthand.is_empty() {
            let _ = writeln!(buf, "    must_have_one_flag+=(\"-{}\")", f.shorthand);
        }
    }
    buf.push_str("    must_have_one_noun=()\n");
    let mut nouns = cmd.valid_args.clone();
    nouns.sort();
    for n in nouns {
        let _ = writeln!(
            buf,
            "    must_have_one_noun+=({:?})",
            n.split('\t').next().unwrap_or("")
        );
    }
    if cmd.action == Action::Help {
        // cobra's help command completes through a Go function.
        buf.push_str("    has_completion_function=1\n");
    }
    buf.push_str("    noun_aliases=()\n}\n\n");
}

fn completable(f: &FlagSpec) -> bool {
    !f.hidden && f.deprecated.is_empty()
}

/// cobra's `writeFlag` and `writeShortFlag`.
fn write_flag(f: &FlagSpec, buf: &mut String) {
    if f.no_opt_default.is_empty() {
        let _ = writeln!(buf, "    flags+=(\"--{}=\")", f.name);
        let _ = writeln!(buf, "    two_word_flags+=(\"--{}\")", f.name);
    } else {
        let _ = writeln!(buf, "    flags+=(\"--{}\")", f.name);
    }
    if !f.shorthand.is_empty() {
        if f.no_opt_default.is_empty() {
            let _ = writeln!(buf, "    two_word_flags+=(\"-{}\")", f.shorthand);
        } else {
            let _ = writeln!(buf, "    flags+=(\"-{}\")", f.shorthand);
        }
    }
}
