//! cobra's hidden `__complete` / `__completeNoDesc` commands: the completion requests the shell
//! scripts make (the bash script uses it for `kubeadm help <TAB>`), answered from the tree.
//!
//! Output: one candidate per line (`name<TAB>description` unless `NoDesc`), then `:<directive>`;
//! a note on standard error names the directive, and problems are reported there as
//! `[Debug] [Error] ...`, as cobra v1.4 does.

use kubeadm_workflow::FlagSpec;

use crate::cobra::command::{Action, Command, Tree};
use crate::cobra::find::find;
use crate::cobra::flags::{FlagError, FlagSet};

/// cobra's shell-completion directives.
const DEFAULT: u32 = 0;
const NO_SPACE: u32 = 2;
const NO_FILE_COMP: u32 = 4;

/// The names cobra gives the request command.
pub(crate) const REQUEST: &str = "__complete";
pub(crate) const REQUEST_NO_DESC: &str = "__completeNoDesc";

fn directive_name(d: u32) -> String {
    let mut names = Vec::new();
    if d & NO_SPACE != 0 {
        names.push("ShellCompDirectiveNoSpace");
    }
    if d & NO_FILE_COMP != 0 {
        names.push("ShellCompDirectiveNoFileComp");
    }
    if names.is_empty() {
        names.push("ShellCompDirectiveDefault");
    }
    names.join(", ")
}

/// Answers a completion request; returns (stdout, stderr).
pub(crate) fn answer(tree: &Tree, args: &[String], descriptions: bool) -> (String, String) {
    let mut err = String::new();
    let (completions, directive) = match completions(tree, args) {
        Ok(found) => found,
        Err(message) => {
            err.push_str(&format!("[Debug] [Error] {message}\n"));
            (Vec::new(), DEFAULT)
        }
    };
    let mut out = String::new();
    for comp in completions {
        let comp = if descriptions {
            comp.as_str()
        } else {
            comp.split('\t').next().unwrap_or("")
        };
        let comp = comp.split('\n').next().unwrap_or("").trim();
        out.push_str(comp);
        out.push('\n');
    }
    out.push_str(&format!(":{directive}\n"));
    err.push_str(&format!(
        "Completion ended with directive: {}\n",
        directive_name(directive)
    ));
    (out, err)
}

/// `cmd.Flags()` as it stands while completing: cobra has not added `--help` to it.
fn flags_of(tree: &Tree, cmd: &Command) -> (Vec<FlagSpec>, Vec<FlagSpec>) {
    let f = tree.flags_with_help(&cmd.path, false);
    let mut local = f.local;
    let mut inherited = f.inherited;
    local.sort_by(|a, b| a.name.cmp(b.name));
    inherited.sort_by(|a, b| a.name.cmp(b.name));
    (local, inherited)
}

fn flag_name_completions(f: &FlagSpec, to_complete: &str) -> Vec<String> {
    let mut out = Vec::new();
    if f.hidden || !f.deprecated.is_empty() {
        return out;
    }
    let long = format!("--{}", f.name);
    if long.starts_with(to_complete) {
        out.push(format!("{long}\t{}", f.usage));
    }
    let short = format!("-{}", f.shorthand);
    if !f.shorthand.is_empty() && short.starts_with(to_complete) {
        out.push(format!("{short}\t{}", f.usage));
    }
    out
}

fn required_flag_completions(
    local: &[FlagSpec],
    inherited: &[FlagSpec],
    fs: &FlagSet,
    to_complete: &str,
) -> Vec<String> {
    inherited
        .iter()
        .chain(local)
        .filter(|f| f.required && !fs.changed(f.name))
        .flat_map(|f| flag_name_completions(f, to_complete))
        .collect()
}

/// Why a completion request cannot be answered, in cobra's words (printed after `[Debug] [Error] `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum CompletionError {
    /// The flag whose value is being completed is not one of the command's.
    #[error("Subcommand '{command}' does not support flag '{flag}'")]
    UnknownFlag {
        /// The command's name.
        command: String,
        /// The flag's name.
        flag: String,
    },
    /// No command matches the arguments.
    #[error("Unable to find a command for arguments: {}", kubeadm_api::gofmt::list(.0))]
    NoCommand(Vec<String>),
    /// The arguments' flags do not parse; the text is pflag's.
    #[error("Error while parsing flags from args {}: {reason}", kubeadm_api::gofmt::list(.args))]
    Flags {
        /// The arguments.
        args: Vec<String>,
        /// pflag's error.
        reason: String,
    },
}

/// A flag whose value is being completed (cobra's `checkIfFlagCompletion`): the flag, the
/// arguments without it, and the text to complete.
type FlagCompletion = (Option<FlagSpec>, Vec<String>, String);

fn flag_being_completed(
    cmd: &Command,
    all: &[FlagSpec],
    args: &[String],
    last: &str,
) -> Result<FlagCompletion, CompletionError> {
    let mut name = String::new();
    let mut trimmed = args.to_vec();
    let mut to_complete = last.to_string();
    let mut with_equal = false;
    if last.starts_with('-') {
        match last.find('=') {
            Some(i) => {
                name = if last[..i].starts_with("--") {
                    last[2..i].to_string()
                } else {
                    last[i - 1..i].to_string()
                };
                to_complete = last[i + 1..].to_string();
                with_equal = true;
            }
            None => return Ok((None, trimmed, to_complete)),
        }
    }
    if name.is_empty()
        && let Some(prev) = args.last()
    {
        let is_flag = (prev.len() >= 3 && prev.as_bytes()[1] == b'-')
            || (prev.len() >= 2 && prev.starts_with('-') && prev.as_bytes()[1] != b'-');
        if is_flag && !prev.contains('=') {
            name = if let Some(n) = prev.strip_prefix("--") {
                n.to_string()
            } else {
                prev[prev.len() - 1..].to_string()
            };
            trimmed.pop();
        }
    }
    if name.is_empty() {
        return Ok((None, trimmed, to_complete));
    }
    let found = if name.chars().count() == 1 {
        all.iter().find(|f| f.shorthand == name)
    } else {
        all.iter().find(|f| f.name == name)
    };
    let Some(flag) = found else {
        return Err(CompletionError::UnknownFlag {
            command: cmd.name().to_string(),
            flag: name,
        });
    };
    if !with_equal && !flag.no_opt_default.is_empty() {
        return Ok((None, args.to_vec(), to_complete));
    }
    Ok((Some(*flag), trimmed, to_complete))
}

fn parse_error_text(e: &FlagError) -> String {
    match e {
        // Without the help flag, pflag answers `--help` and `-h` with ErrHelp.
        FlagError::UnknownFlag(name) if name == "help" => "pflag: help requested".to_string(),
        FlagError::UnknownShorthand('h', _) => "pflag: help requested".to_string(),
        other => other.to_string(),
    }
}

/// cobra's `getCompletions`.
fn completions(tree: &Tree, args: &[String]) -> Result<(Vec<String>, u32), CompletionError> {
    let (last, trimmed) = match args.split_last() {
        Some((l, t)) => (l.clone(), t.to_vec()),
        None => (String::new(), Vec::new()),
    };
    let (cmd, rest) = find(tree, &trimmed).map_err(|_| CompletionError::NoCommand(trimmed.clone()))?;
    let (local, inherited) = flags_of(tree, cmd);
    let all: Vec<FlagSpec> = local.iter().chain(&inherited).copied().collect();
    let checked = flag_being_completed(cmd, &all, &rest, &last);
    let (flag, rest, to_complete, flag_error) = match checked {
        Ok((f, r, t)) => (f, r, t, None),
        Err(e) => (None, rest, last.clone(), Some(e)),
    };
    // A `--` among the arguments ends flag parsing: then no flag is being completed.
    let mut probe = FlagSet::new(all.iter().copied());
    let _ = probe.parse(&rest.iter().cloned().chain(["--".to_string()]).collect::<Vec<_>>());
    let mut fs = FlagSet::new(all.iter().copied());
    fs.parse(&rest).map_err(|e| CompletionError::Flags {
        args: rest.clone(),
        reason: parse_error_text(&e),
    })?;
    let flag_completion = probe.args.len() <= fs.args.len();
    if let Some(e) = flag_error
        && flag_completion
    {
        return Err(e);
    }
    let positional = fs.args.clone();
    let mut out = Vec::new();
    if flag.is_none() && to_complete.starts_with('-') && !to_complete.contains('=') && flag_completion {
        out = required_flag_completions(&local, &inherited, &fs, &to_complete);
        if out.is_empty() {
            for f in inherited.iter().chain(&local) {
                if !fs.changed(f.name) || f.value_type.contains("Slice") || f.value_type.contains("Array") {
                    out.extend(flag_name_completions(f, &to_complete));
                }
            }
        }
        let directive = if out.len() == 1 && out[0].ends_with('=') {
            NO_SPACE
        } else {
            NO_FILE_COMP
        };
        return Ok((out, directive));
    }
    let mut directive = DEFAULT;
    if flag.is_none() {
        let local_nonpersistent_set = local
            .iter()
            .any(|f| !cmd.persistent.iter().any(|p| p.name == f.name) && fs.changed(f.name));
        if positional.is_empty() && !local_nonpersistent_set {
            for sub in cmd.sorted_subs() {
                if sub.is_available() || sub.action == Action::Help {
                    if sub.name().starts_with(to_complete.as_str()) {
                        out.push(format!("{}\t{}", sub.name(), sub.short));
                    }
                    directive = NO_FILE_COMP;
                }
            }
        }
        out.extend(required_flag_completions(&local, &inherited, &fs, &to_complete));
        if !cmd.valid_args.is_empty() {
            if positional.is_empty() {
                out.extend(
                    cmd.valid_args
                        .iter()
                        .filter(|v| v.starts_with(to_complete.as_str()))
                        .cloned(),
                );
                directive = NO_FILE_COMP;
            }
            return Ok((out, directive));
        }
        if cmd.action == Action::Help {
            // The help command's own completion: subcommands of the command named so far.
            directive = NO_FILE_COMP;
            if let Ok((target, _)) = find(tree, &positional) {
                for sub in target.sorted_subs() {
                    if (sub.is_available() || sub.action == Action::Help)
                        && sub.name().starts_with(to_complete.as_str())
                    {
                        out.push(format!("{}\t{}", sub.name(), sub.short));
                    }
                }
            }
        }
    }
    Ok((out, directive))
}
