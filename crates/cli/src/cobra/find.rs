//! cobra's `Find`: which command a command line names. Subcommand names are walked with cobra's
//! own approximate flag skipping (`stripFlags`), and an unknown command gets cobra's suggestions
//! (Levenshtein distance and prefixes). Shared by execution and completion.

use kubeadm_workflow::ArgsRule;

use crate::cobra::command::{Command, Tree};
use crate::cobra::flags::FlagSet;
use crate::cobra::go_values::go_quote;

/// cobra's `stripFlags`: the words of `args` that are not flags or (probably) flag values.
pub(crate) fn strip_flags(args: &[String], fs: &FlagSet) -> Vec<String> {
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
pub(crate) fn minus_first(args: &[String], x: &str) -> Vec<String> {
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
