//! cobra's command resolution and execution order, up to the point where a handler runs.
//!
//! `Find` walks subcommand names skipping flags (with cobra's own approximate flag skipping),
//! then the found command parses its flags, answers `--help`, prints help when it cannot run,
//! validates positional arguments and required flags. Everything here is syntax: the result is
//! either text to print or an [`Invocation`] for the dispatch table.

use kubeadm_workflow::ArgsRule;

use crate::cobra::command::{Action, Command, Tree};
use crate::cobra::find::{find, minus_first, strip_flags};
use crate::cobra::flags::FlagSet;
use crate::cobra::go_values::go_quote;
use crate::cobra::{complete, help};

/// A command ready to run: which one, its parsed flags and its positional arguments.
#[derive(Debug)]
pub(crate) struct Invocation<'t> {
    pub(crate) command: &'t Command,
    pub(crate) flags: FlagSet,
    pub(crate) args: Vec<String>,
}

/// The result of resolving a command line.
#[derive(Debug)]
pub(crate) enum Resolution<'t> {
    /// Text for standard output; success.
    Stdout(String),
    /// Text for standard error; success (cobra's "Unknown help topic").
    Stderr(String),
    /// A usage error (exit code 1): the message, and the klog verbosity parsed before it
    /// (upstream prints its stack-trace hint only below 5).
    Error(String, i64),
    /// Texts for standard output and standard error; success (completion requests).
    Both(String, String),
    /// A handler must run.
    Run(Invocation<'t>),
}

/// Why a command's positional arguments are refused, in cobra's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ArgsError {
    /// A command that takes no arguments got one (cobra's `NoArgs`).
    #[error("unknown command {} for {}", go_quote(.arg), go_quote(.command))]
    UnknownCommand {
        /// The first argument.
        arg: String,
        /// The command's path.
        command: String,
    },
    /// More than `MaximumNArgs`.
    #[error("accepts at most {max} arg(s), received {got}")]
    TooMany {
        /// The most accepted.
        max: usize,
        /// How many were given.
        got: usize,
    },
    /// Not `ExactArgs`.
    #[error("accepts {want} arg(s), received {got}")]
    NotExactly {
        /// How many are needed.
        want: usize,
        /// How many were given.
        got: usize,
    },
    /// Fewer than `MinimumNArgs`.
    #[error("requires at least {min} arg(s), only received {got}")]
    TooFew {
        /// The fewest accepted.
        min: usize,
        /// How many were given.
        got: usize,
    },
}

/// cobra's positional-argument validators.
fn validate_args(cmd: &Command, args: &[String]) -> Result<(), ArgsError> {
    let got = args.len();
    match cmd.args {
        ArgsRule::Legacy | ArgsRule::Any => Ok(()),
        ArgsRule::None => match args.first() {
            Some(a) => Err(ArgsError::UnknownCommand {
                arg: a.clone(),
                command: cmd.path.clone(),
            }),
            None => Ok(()),
        },
        ArgsRule::Max(max) if got > max => Err(ArgsError::TooMany { max, got }),
        ArgsRule::Exact(want) if got != want => Err(ArgsError::NotExactly { want, got }),
        ArgsRule::Min(min) if got < min => Err(ArgsError::TooFew { min, got }),
        _ => Ok(()),
    }
}

/// Resolves a command line (without the program name) the way cobra's `ExecuteC` does.
pub(crate) fn resolve<'t>(tree: &'t Tree, args: &[String]) -> Resolution<'t> {
    // cobra adds its hidden completion-request command only when the command line names it; it
    // takes its arguments raw (no flag parsing) and needs at least one.
    let root_flags = tree.flags_of(&tree.root.path).flag_set();
    if let Some(first) = strip_flags(args, &root_flags).first()
        && (first == complete::REQUEST || first == complete::REQUEST_NO_DESC)
    {
        let raw = minus_first(args, first);
        if raw.is_empty() {
            return Resolution::Error("requires at least 1 arg(s), only received 0".to_string(), 0);
        }
        let (out, err) = complete::answer(tree, &raw, first == complete::REQUEST);
        return Resolution::Both(out, err);
    }
    let (cmd, rest) = match find(tree, args) {
        Ok(found) => found,
        Err((_, message)) => return Resolution::Error(message, 0),
    };
    let mut fs = tree.flags_of(&cmd.path).flag_set();
    if let Err(e) = fs.parse(&rest) {
        return Resolution::Error(e.to_string(), fs.int("v"));
    }
    if fs.bool("help") || !cmd.runnable {
        return Resolution::Stdout(help::help(tree, cmd));
    }
    if let Err(e) = validate_args(cmd, &fs.args) {
        return Resolution::Error(e.to_string(), fs.int("v"));
    }
    let missing: Vec<String> = {
        let mut names: Vec<&str> = tree
            .flags_of(&cmd.path)
            .all()
            .iter()
            .filter(|f| f.required && !fs.changed(f.name))
            .map(|f| f.name)
            .collect();
        names.sort_unstable();
        names.iter().map(|n| n.to_string()).collect()
    };
    if !missing.is_empty() {
        return Resolution::Error(
            format!("required flag(s) \"{}\" not set", missing.join("\", \"")),
            fs.int("v"),
        );
    }
    if cmd.action == Action::Help {
        return help_command(tree, &fs.args);
    }
    let args = fs.args.clone();
    Resolution::Run(Invocation {
        command: cmd,
        flags: fs,
        args,
    })
}

/// cobra's `help [command]`.
fn help_command<'t>(tree: &'t Tree, args: &[String]) -> Resolution<'t> {
    match find(tree, args) {
        Ok((cmd, _)) => Resolution::Stdout(help::help(tree, cmd)),
        Err(_) => {
            let topic = args
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(" ");
            Resolution::Stderr(format!(
                "Unknown help topic [{topic}]\n{}",
                help::usage_with(tree, &tree.root, false)
            ))
        }
    }
}
