//! The command tree: static specs (kubeadm's are generated in `command_tree`), assembled into one
//! tree with cobra's inheritance of persistent flags. Kubeadm's `phase` subcommands are added to
//! the built tree by `crate::phase_commands`.
//!
//! # Why not clap
//!
//! ARCHITECTURE.md names clap for the CLI. We depart from it here: kubeadm must be a drop-in,
//! so its help must be cobra's byte for byte (column alignment, `Global Flags:`, `Additional help
//! topics:`, `(default …)` per pflag type) and its parsing must be pflag's (bools that never take
//! the next argument, slices that append, Go durations, grouped shorthands, interspersed
//! positionals, error texts). clap renders and parses differently in each of those points, so
//! the tree is plain data and the parser and renderer are our own small modules.

use kubeadm_workflow::{ArgsRule, FlagSpec};

use crate::cobra::flags::FlagSet;

/// A command as upstream declares it (generated data).
#[derive(Debug)]
pub(crate) struct CommandSpec {
    pub(crate) use_line: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) short: &'static str,
    pub(crate) long: &'static str,
    pub(crate) example: &'static str,
    pub(crate) hidden: bool,
    pub(crate) deprecated: &'static str,
    pub(crate) runnable: bool,
    pub(crate) args: ArgsRule,
    pub(crate) valid_args: &'static [&'static str],
    pub(crate) disable_flags_in_use_line: bool,
    /// Flags of this command only.
    pub(crate) flags: &'static [FlagSpec],
    /// Flags this command passes down to its subcommands.
    pub(crate) persistent: &'static [FlagSpec],
    pub(crate) subs: &'static [CommandSpec],
}

/// What running a command does; the dispatch table maps these to handlers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// An ordinary command, known by its path (`kubeadm token generate`).
    Command,
    /// A phase command: runs the named phase selector of its workflow (or prints help when the
    /// phase has sub-phases).
    Phase { selector: String, has_children: bool },
    /// cobra's `help [command]`.
    Help,
}

/// A command of the assembled tree.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub(crate) use_line: String,
    /// Space-separated path from the root (`kubeadm init phase certs`).
    pub(crate) path: String,
    pub(crate) aliases: Vec<String>,
    pub(crate) short: String,
    pub(crate) long: String,
    pub(crate) example: String,
    pub(crate) hidden: bool,
    pub(crate) deprecated: String,
    pub(crate) runnable: bool,
    pub(crate) args: ArgsRule,
    pub(crate) valid_args: Vec<String>,
    pub(crate) disable_flags_in_use_line: bool,
    /// Own non-persistent flags, then `help` (added last, as cobra does at execution).
    pub(crate) flags: Vec<FlagSpec>,
    pub(crate) persistent: Vec<FlagSpec>,
    /// Subcommands in the order they were added.
    pub(crate) subs: Vec<Command>,
    pub(crate) action: Action,
    /// cobra's `-h, --help` for this command (`"help for <name>"`), made once when the tree is built.
    pub(crate) help_flag: FlagSpec,
}

impl Command {
    /// The command's name: the first word of its use line.
    pub(crate) fn name(&self) -> &str {
        self.use_line.split_whitespace().next().unwrap_or("")
    }

    /// Whether `word` names this command (name or alias).
    pub(crate) fn answers_to(&self, word: &str) -> bool {
        self.name() == word || self.aliases.iter().any(|a| a == word)
    }

    /// Subcommands sorted by name, as cobra lists them.
    pub(crate) fn sorted_subs(&self) -> Vec<&Command> {
        let mut subs: Vec<&Command> = self.subs.iter().collect();
        subs.sort_by(|a, b| a.name().cmp(b.name()));
        subs
    }

    /// cobra's `IsAvailableCommand`.
    pub(crate) fn is_available(&self) -> bool {
        if !self.deprecated.is_empty() || self.hidden || self.action == Action::Help {
            return false;
        }
        self.runnable || self.has_available_subs()
    }

    pub(crate) fn has_available_subs(&self) -> bool {
        self.subs.iter().any(Command::is_available)
    }

    /// cobra's `IsAdditionalHelpTopicCommand`.
    pub(crate) fn is_help_topic(&self) -> bool {
        if self.runnable || !self.deprecated.is_empty() || self.hidden {
            return false;
        }
        self.subs.iter().all(Command::is_help_topic)
    }
}

/// The flags of a command at execution, split as cobra splits them.
#[derive(Debug, Clone)]
pub(crate) struct CommandFlags {
    /// Declared on the command (its own and its own persistent flags), `help` included.
    pub(crate) local: Vec<FlagSpec>,
    /// Inherited from the persistent flags of its ancestors.
    pub(crate) inherited: Vec<FlagSpec>,
}

impl CommandFlags {
    /// Every flag the command accepts, in cobra's merge order.
    pub(crate) fn all(&self) -> Vec<FlagSpec> {
        self.local.iter().chain(&self.inherited).copied().collect()
    }

    /// A fresh flag set for parsing.
    pub(crate) fn flag_set(&self) -> FlagSet {
        FlagSet::new(self.all())
    }
}

/// The help flag cobra adds to every command. Its usage names the command, so it is made (and
/// its text leaked, once per command and process) when the tree is built: flags are `'static` data.
pub(crate) fn help_flag(name: &str) -> FlagSpec {
    let usage: &'static str = Box::leak(format!("help for {name}").into_boxed_str());
    FlagSpec {
        shorthand: "h",
        default: "false",
        usage,
        no_opt_default: "true",
        ..FlagSpec::new("help", "bool")
    }
}

/// The whole tree, root first.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) root: Command,
}

impl Tree {
    /// Assembles the tree: the specs (kubeadm's are generated into `command_tree`), the flags every
    /// command inherits, and cobra's `help` command. Commands added later (kubeadm's phase
    /// commands, `crate::phase_commands`) go in with [`Tree::command_mut`].
    pub(crate) fn build(spec: &CommandSpec, global_flags: &[FlagSpec]) -> Self {
        let mut root = from_spec(spec, "");
        root.persistent.extend(global_flags.iter().copied());
        let help_long = format!(
            "Help provides help for any command in the application.\nSimply type {} help [path to command] for full details.",
            root.name()
        );
        let help = Command {
            use_line: "help [command]".to_string(),
            path: format!("{} help", root.path),
            aliases: Vec::new(),
            short: "Help about any command".to_string(),
            long: help_long,
            example: String::new(),
            hidden: false,
            deprecated: String::new(),
            runnable: true,
            args: ArgsRule::Legacy,
            valid_args: Vec::new(),
            disable_flags_in_use_line: false,
            flags: Vec::new(),
            persistent: Vec::new(),
            subs: Vec::new(),
            action: Action::Help,
            help_flag: help_flag("help"),
        };
        root.subs.push(help);
        Tree { root }
    }

    /// The chain of commands from the root to the command at `path`.
    pub(crate) fn chain(&self, path: &str) -> Vec<&Command> {
        let mut out = vec![&self.root];
        let mut cmd = &self.root;
        for w in path.split(' ').skip(1) {
            match cmd.subs.iter().find(|c| c.name() == w) {
                Some(c) => {
                    out.push(c);
                    cmd = c;
                }
                None => break,
            }
        }
        out
    }

    /// The command at `path`, to add subcommands or flags to once the tree is built; `None` when
    /// no command has that path.
    pub(crate) fn command_mut(&mut self, path: &str) -> Option<&mut Command> {
        let mut cmd = &mut self.root;
        for w in path.split(' ').skip(1) {
            cmd = cmd.subs.iter_mut().find(|c| c.name() == w)?;
        }
        Some(cmd)
    }

    /// The flags of the command at `path`, split into local and inherited, with cobra's help
    /// flag (added to a command when it executes or prints its help).
    pub(crate) fn flags_of(&self, path: &str) -> CommandFlags {
        self.flags_with_help(path, true)
    }

    /// Same, choosing whether the help flag has been added yet.
    pub(crate) fn flags_with_help(&self, path: &str, with_help: bool) -> CommandFlags {
        let chain = self.chain(path);
        let (cmd, ancestors) = chain
            .split_last()
            .map(|(c, a)| (*c, a.to_vec()))
            .unwrap_or((&self.root, Vec::new()));
        // Parents' persistent flags, nearest parent first (cobra's VisitParents order).
        let mut parents: Vec<FlagSpec> = Vec::new();
        for a in ancestors.iter().rev() {
            for f in &a.persistent {
                if !parents.iter().any(|p| p.name == f.name) {
                    parents.push(*f);
                }
            }
        }
        let mut local: Vec<FlagSpec> = Vec::new();
        for f in cmd.flags.iter().chain(&cmd.persistent) {
            if !local.iter().any(|l| l.name == f.name) && !parents.iter().any(|p| p.name == f.name) {
                local.push(*f);
            }
        }
        if with_help && !local.iter().any(|f| f.name == "help") && !parents.iter().any(|f| f.name == "help") {
            local.push(cmd.help_flag);
        }
        let inherited = parents
            .into_iter()
            .filter(|p| !local.iter().any(|l| l.name == p.name))
            .collect();
        CommandFlags { local, inherited }
    }
}

fn from_spec(spec: &CommandSpec, parent_path: &str) -> Command {
    let name = spec.use_line.split_whitespace().next().unwrap_or("");
    let path = if parent_path.is_empty() {
        name.to_string()
    } else {
        format!("{parent_path} {name}")
    };
    Command {
        use_line: spec.use_line.to_string(),
        path: path.clone(),
        aliases: spec.aliases.iter().map(|s| s.to_string()).collect(),
        short: spec.short.to_string(),
        long: spec.long.to_string(),
        example: spec.example.to_string(),
        hidden: spec.hidden,
        deprecated: spec.deprecated.to_string(),
        runnable: spec.runnable,
        args: spec.args,
        valid_args: spec.valid_args.iter().map(|s| s.to_string()).collect(),
        disable_flags_in_use_line: spec.disable_flags_in_use_line,
        flags: spec.flags.to_vec(),
        persistent: spec.persistent.to_vec(),
        subs: spec.subs.iter().map(|s| from_spec(s, &path)).collect(),
        action: Action::Command,
        help_flag: help_flag(name),
    }
}
