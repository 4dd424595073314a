//! cobra v1.4's help and usage text, rendered from the command tree.
//!
//! Follows cobra's default help and usage templates and pflag's `FlagUsages` column layout, so
//! `--help` output is byte-identical to upstream.

use kubeadm_workflow::FlagSpec;

use crate::cobra::command::{Command, Tree};

/// Minimum padding of command names in `Available Commands:` (cobra's `minNamePadding`).
const MIN_NAME_PADDING: usize = 11;
/// Minimum padding of command paths in `Additional help topics:`.
const MIN_PATH_PADDING: usize = 11;

/// `{{. | trimTrailingWhitespaces}}`.
fn trim_end(s: &str) -> &str {
    s.trim_end()
}

/// The help of `cmd`: long (or short) description, then usage (cobra's `HelpTemplate`).
pub(crate) fn help(tree: &Tree, cmd: &Command) -> String {
    let mut out = String::new();
    let text = if cmd.long.is_empty() {
        &cmd.short
    } else {
        &cmd.long
    };
    if !text.is_empty() {
        out.push_str(trim_end(text));
        out.push_str("\n\n");
    }
    if cmd.runnable || !cmd.subs.is_empty() {
        out.push_str(&usage(tree, cmd));
    }
    out
}

/// cobra's `UseLine`.
pub(crate) fn use_line(tree: &Tree, cmd: &Command, with_help: bool) -> String {
    let parent = cmd.path.rsplit_once(' ').map(|(p, _)| p);
    let mut line = match parent {
        Some(p) => format!("{p} {}", cmd.use_line),
        None => cmd.use_line.clone(),
    };
    if cmd.disable_flags_in_use_line {
        return line;
    }
    let has_flags = tree
        .flags_with_help(&cmd.path, with_help)
        .all()
        .iter()
        .any(|f| !f.hidden);
    if has_flags && !line.contains("[flags]") {
        line.push_str(" [flags]");
    }
    line
}

/// cobra's usage text (`UsageTemplate`), ending with a newline.
pub(crate) fn usage(tree: &Tree, cmd: &Command) -> String {
    usage_with(tree, cmd, true)
}

/// Usage text; `with_help` says whether cobra has added the help flag to the command yet (it has
/// not for the root when `help <unknown>` prints the root's usage).
pub(crate) fn usage_with(tree: &Tree, cmd: &Command, with_help: bool) -> String {
    let mut out = String::from("Usage:");
    if cmd.runnable {
        out.push_str(&format!("\n  {}", use_line(tree, cmd, with_help)));
    }
    let available = cmd.has_available_subs();
    if available {
        out.push_str(&format!("\n  {} [command]", cmd.path));
    }
    if !cmd.aliases.is_empty() {
        let mut names = vec![cmd.name().to_string()];
        names.extend(cmd.aliases.iter().cloned());
        out.push_str(&format!("\n\nAliases:\n  {}", names.join(", ")));
    }
    if !cmd.example.is_empty() {
        out.push_str(&format!("\n\nExamples:\n{}", cmd.example));
    }
    if available {
        out.push_str("\n\nAvailable Commands:");
        let pad = cmd
            .subs
            .iter()
            .map(|c| c.name().len())
            .max()
            .unwrap_or(0)
            .max(MIN_NAME_PADDING);
        for sub in cmd.sorted_subs() {
            if sub.is_available() || sub.name() == "help" {
                out.push_str(&format!("\n  {:<pad$} {}", sub.name(), sub.short));
            }
        }
    }
    let flags = tree.flags_with_help(&cmd.path, with_help);
    if flags.local.iter().any(|f| !f.hidden) {
        out.push_str("\n\nFlags:\n");
        out.push_str(trim_end(&flag_usages(&flags.local)));
    }
    if flags.inherited.iter().any(|f| !f.hidden) {
        out.push_str("\n\nGlobal Flags:\n");
        out.push_str(trim_end(&flag_usages(&flags.inherited)));
    }
    if cmd.subs.iter().any(Command::is_help_topic) {
        out.push_str("\n\nAdditional help topics:");
        let pad = cmd
            .subs
            .iter()
            .map(|c| c.path.len())
            .max()
            .unwrap_or(0)
            .max(MIN_PATH_PADDING);
        for sub in cmd.sorted_subs() {
            if sub.is_help_topic() {
                out.push_str(&format!("\n  {:<pad$} {}", sub.path, sub.short));
            }
        }
    }
    if available {
        out.push_str(&format!(
            "\n\nUse \"{} [command] --help\" for more information about a command.",
            cmd.path
        ));
    }
    out.push('\n');
    out
}

/// pflag's `UnquoteUsage`: the value placeholder and the usage with back-quotes removed.
fn unquote_usage(f: &FlagSpec) -> (String, String) {
    let usage = f.usage;
    if let Some(i) = usage.find('`')
        && let Some(j) = usage[i + 1..].find('`')
    {
        let name = &usage[i + 1..i + 1 + j];
        return (
            name.to_string(),
            format!("{}{}{}", &usage[..i], name, &usage[i + 2 + j..]),
        );
    }
    let name = match f.value_type {
        "bool" => "",
        "float64" => "float",
        "int64" => "int",
        "uint64" => "uint",
        "stringSlice" => "strings",
        "intSlice" => "ints",
        "uintSlice" => "uints",
        "boolSlice" => "bools",
        other => other,
    };
    (name.to_string(), usage.to_string())
}

/// pflag's `defaultIsZeroValue`.
fn default_is_zero(f: &FlagSpec) -> bool {
    match f.value_type {
        "bool" => f.default == "false",
        "duration" => f.default == "0" || f.default == "0s",
        "int" | "int8" | "int32" | "int64" | "uint" | "uint8" | "uint16" | "uint32" | "uint64" | "count"
        | "float32" | "float64" => f.default == "0",
        "string" => f.default.is_empty(),
        "ip" | "ipMask" | "ipNet" => f.default == "<nil>",
        "intSlice" | "stringSlice" | "stringArray" => f.default == "[]",
        // Other values print their current value, which is the default before parsing.
        _ => matches!(f.default, "false" | "<nil>" | "" | "0"),
    }
}

/// pflag's `FlagUsages` (no wrapping), flags sorted by name.
pub(crate) fn flag_usages(flags: &[FlagSpec]) -> String {
    let mut sorted: Vec<&FlagSpec> = flags.iter().filter(|f| !f.hidden).collect();
    sorted.sort_by(|a, b| a.name.cmp(b.name));
    let mut lines = Vec::new();
    let mut max = 0;
    for f in sorted {
        let mut left = if !f.shorthand.is_empty() && f.shorthand_deprecated.is_empty() {
            format!("  -{}, --{}", f.shorthand, f.name)
        } else {
            format!("      --{}", f.name)
        };
        let (var, usage) = unquote_usage(f);
        if !var.is_empty() {
            left.push(' ');
            left.push_str(&var);
        }
        if !f.no_opt_default.is_empty() {
            match f.value_type {
                "string" => left.push_str(&format!("[=\"{}\"]", f.no_opt_default)),
                "bool" if f.no_opt_default != "true" => left.push_str(&format!("[={}]", f.no_opt_default)),
                "bool" => {}
                "count" if f.no_opt_default != "+1" => left.push_str(&format!("[={}]", f.no_opt_default)),
                "count" => {}
                _ => left.push_str(&format!("[={}]", f.no_opt_default)),
            }
        }
        max = max.max(left.len() + 1);
        let mut right = usage;
        if !default_is_zero(f) {
            if f.value_type == "string" {
                right.push_str(&format!(
                    " (default {})",
                    crate::cobra::go_values::go_quote(f.default)
                ));
            } else {
                right.push_str(&format!(" (default {})", f.default));
            }
        }
        if !f.deprecated.is_empty() {
            right.push_str(&format!(" (DEPRECATED: {})", f.deprecated));
        }
        lines.push((left, right));
    }
    let mut out = String::new();
    for (left, right) in lines {
        // pflag pads to the longest left part plus one, then Println adds a separating space.
        let spacing = " ".repeat(max - left.len());
        let right = right.replace('\n', &format!("\n{}", " ".repeat(max + 2)));
        out.push_str(&format!("{left} {spacing} {right}\n"));
    }
    out
}
