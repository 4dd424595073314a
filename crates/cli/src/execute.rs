//! cobra's command resolution and execution order, up to the point where a handler runs.
//!
//! `Find` walks subcommand names skipping flags (with cobra's own approximate flag skipping),
//! then the found command parses its flags, answers `--help`, prints help when it cannot run,
//! validates positional arguments and required flags. Everything here is syntax: the result is
//! either text to print or an [`Invocation`] for the dispatch table.

use kubeadm_workflow::ArgsRule;

use crate::command::{Action, Command, Tree};
use crate::flags::FlagSet;
use crate::{complete, help};

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

/// cobra's `stripFlags`: the words of `args` that are not flags or (probably) flag values.
fn strip_flags(args: &[String], fs: &FlagSet) -> Vec<String> {
    let mut commands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let s = &args[i];
        i += 1;
        let remaining = args.len() - i;
        if s == "--" {
            break;
        }
        let long_with_value = s.starts_with("--") && !s.contains('=') && !fs.has_no_opt_default(&s[2..]);
        let short_with_value =
            s.starts_with('-') && !s.contains('=') && s.len() == 2 && !fs.short_has_no_opt_default(&s[1..]);
        if long_with_value || short_with_value {
            // cobra stops at a value-taking flag that is followed by one word only.
            if remaining <= 1 {
                break;
            }
            i += 1;
            continue;
        }
        if !s.is_empty() && !s.starts_with('-') {
            commands.push(s.clone());
        }
    }
    commands
}

/// cobra's `argsMinusFirstX`: `args` without the first occurrence of `x`.
fn minus_first(args: &[String], x: &str) -> Vec<String> {
    let mut out = args.to_vec();
    if let Some(i) = out.iter().position(|a| a == x) {
        out.remove(i);
    }
    out
}

/// Case-insensitive Levenshtein distance, as cobra's `ld(s, t, true)`.
fn distance(s: &str, t: &str) -> usize {
    let s: Vec<char> = s.to_lowercase().chars().collect();
    let t: Vec<char> = t.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=t.len()).collect();
    for (i, sc) in s.iter().enumerate() {
        let mut cur = vec![i + 1; t.len() + 1];
        for (j, tc) in t.iter().enumerate() {
            let cost = usize::from(sc != tc);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[t.len()]
}

/// Order in which upstream adds the root's subcommands; suggestions follow it.
const ROOT_ORDER: &[&str] = &[
    "certs",
    "completion",
    "config",
    "init",
    "join",
    "reset",
    "version",
    "token",
    "upgrade",
    "alpha",
    "kubeconfig",
    "help",
];

/// cobra's "Did you mean this?" block for an unknown subcommand of `cmd`.
fn suggestions(cmd: &Command, typed: &str) -> String {
    let mut subs: Vec<&Command> = cmd.subs.iter().collect();
    subs.sort_by_key(|c| {
        ROOT_ORDER
            .iter()
            .position(|n| *n == c.name())
            .unwrap_or(usize::MAX)
    });
    let found: Vec<&str> = subs
        .iter()
        .filter(|c| c.is_available())
        .filter(|c| {
            distance(typed, c.name()) <= 2 || c.name().to_lowercase().starts_with(&typed.to_lowercase())
        })
        .map(|c| c.name())
        .collect();
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n\nDid you mean this?\n");
    for s in found {
        out.push_str(&format!("\t{s}\n"));
    }
    out
}

/// cobra's `Find`: the deepest command named by `args` and the arguments left for it.
pub(crate) fn find<'t>(
    tree: &'t Tree,
    args: &[String],
) -> Result<(&'t Command, Vec<String>), (&'t Command, String)> {
    let mut cmd = &tree.root;
    let mut rest = args.to_vec();
    loop {
        let fs = tree.flags_of(&cmd.path).flag_set();
        let words = strip_flags(&rest, &fs);
        let Some(next) = words.first() else { break };
        match cmd.subs.iter().find(|c| c.answers_to(next)) {
            Some(sub) => {
                rest = minus_first(&rest, next);
                cmd = sub;
            }
            None => break,
        }
    }
    if cmd.args == ArgsRule::Legacy && !cmd.subs.is_empty() && cmd.path == tree.root.path {
        let fs = tree.flags_of(&cmd.path).flag_set();
        if let Some(first) = strip_flags(&rest, &fs).first() {
            return Err((
                cmd,
                format!(
                    "unknown command {} for {}{}",
                    go_quote(first),
                    go_quote(&cmd.path),
                    suggestions(cmd, first)
                ),
            ));
        }
    }
    Ok((cmd, rest))
}

use crate::go_values::go_quote;

/// cobra's positional-argument validators.
fn validate_args(cmd: &Command, args: &[String]) -> Result<(), String> {
    let n = args.len();
    match cmd.args {
        ArgsRule::Legacy | ArgsRule::Any => Ok(()),
        ArgsRule::None => match args.first() {
            Some(a) => Err(format!(
                "unknown command {} for {}",
                go_quote(a),
                go_quote(&cmd.path)
            )),
            None => Ok(()),
        },
        ArgsRule::Max(m) if n > m => Err(format!("accepts at most {m} arg(s), received {n}")),
        ArgsRule::Exact(m) if n != m => Err(format!("accepts {m} arg(s), received {n}")),
        ArgsRule::Min(m) if n < m => Err(format!("requires at least {m} arg(s), only received {n}")),
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
        return Resolution::Error(e, fs.int("v"));
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
