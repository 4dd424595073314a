//! The workflow runner: flattening the tree, choosing which phases run, running them, and
//! deriving the `phase` subcommands and the help listing from the same tree.

use std::collections::HashMap;

use crate::flag::{ArgsRule, FlagSpec};
use crate::phase::{BoxError, FailureKind, Phase};

/// Separator of phase names in selectors such as `certs/ca`.
const SEPARATOR: &str = "/";

/// Errors of the runner, worded as upstream's.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// A `--skip-phases` (or filter) entry names no phase.
    #[error("invalid phase name: {0}")]
    InvalidPhaseName(String),
    /// An "all" phase carries its own run or run-if function (a tree defect).
    #[error("phase marked as RunAllSiblings can not have Run functions {0}")]
    RunAllSiblingsWithRun(String),
    /// A run-if condition failed.
    #[error("error execution run condition for phase {phase}: {source}")]
    RunIf {
        /// Selector of the phase.
        phase: String,
        /// The condition's error.
        #[source]
        source: BoxError,
        /// What kind of failure it is.
        kind: FailureKind,
    },
    /// A phase failed.
    #[error("error execution phase {phase}: {source}")]
    Phase {
        /// Selector of the phase.
        phase: String,
        /// The phase's error.
        #[source]
        source: BoxError,
        /// What kind of failure it is.
        kind: FailureKind,
    },
}

impl WorkflowError {
    /// What kind of failure stopped the workflow: a phase's (or run-if's) own, else
    /// [`FailureKind::Failed`].
    pub fn failure_kind(&self) -> FailureKind {
        match self {
            WorkflowError::RunIf { kind, .. } | WorkflowError::Phase { kind, .. } => *kind,
            WorkflowError::InvalidPhaseName(_) | WorkflowError::RunAllSiblingsWithRun(_) => {
                FailureKind::Failed
            }
        }
    }
}

/// A workflow: the phases of one command, plus flags only phase commands have.
#[derive(Debug)]
pub struct Workflow<C> {
    /// Top-level phases, in execution order.
    pub phases: Vec<Phase<C>>,
    /// Flags phase commands may inherit that the workflow's command itself does not have.
    pub additional_flags: &'static [FlagSpec],
}

/// A phase in execution order, with its place in the tree.
#[derive(Debug)]
struct Entry<'a, C> {
    phase: &'a Phase<C>,
    /// Full selector, e.g. `certs/ca`.
    selector: String,
    /// What help lists: the name, prefixed by `/` when nested.
    listed: String,
    level: usize,
    /// Selectors of every phase nested below this one.
    descendants: Vec<String>,
}

/// The generated command for one phase (`kubeadm init phase certs ca`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseCommand {
    /// Cobra `Use`: the lowercased phase name (may carry an argument hint).
    pub use_line: String,
    /// Aliases.
    pub aliases: Vec<&'static str>,
    /// Help texts.
    pub short: &'static str,
    /// Long help.
    pub long: &'static str,
    /// Examples.
    pub example: &'static str,
    /// Flags, in the order they were added (parent's and additional inherited, then local).
    pub flags: Vec<FlagSpec>,
    /// Positional-argument rule.
    pub args: ArgsRule,
    /// The phase selector to run: the phase itself, or its parent for an "all" phase.
    pub selector: String,
    /// Whether the phase has sub-phases (then running the command prints its help).
    pub has_children: bool,
    /// Sub-phase commands.
    pub children: Vec<PhaseCommand>,
}

impl<C> Workflow<C> {
    /// Binds the run function of the phase at `selector` (e.g. `certs/ca`); the trees are generated
    /// as data with placeholders, and each workflow binds the phases it implements. Returns false
    /// when no phase has that selector.
    pub fn bind(&mut self, selector: &str, run: crate::phase::RunFn<C>) -> bool {
        let mut phases = &mut self.phases;
        let mut parts = selector.split(SEPARATOR).peekable();
        while let Some(part) = parts.next() {
            let Some(phase) = phases.iter_mut().find(|p| p.clean_name() == part) else {
                return false;
            };
            if parts.peek().is_none() {
                phase.run = Some(run);
                return true;
            }
            phases = &mut phase.phases;
        }
        false
    }

    /// Phases in execution order: parents before their children; top-level "all" phases are left
    /// out, as they only exist to generate commands.
    fn entries(&self) -> Vec<Entry<'_, C>> {
        let mut out = Vec::new();
        for phase in self.phases.iter().filter(|p| !p.run_all_siblings) {
            Self::collect(phase, &mut Vec::new(), &mut out);
        }
        out
    }

    fn collect<'a>(phase: &'a Phase<C>, ancestors: &mut Vec<usize>, out: &mut Vec<Entry<'a, C>>) {
        let name = phase.clean_name();
        let (selector, listed) = match ancestors.last() {
            Some(&p) => (
                format!("{}{SEPARATOR}{name}", out[p].selector),
                format!("{SEPARATOR}{name}"),
            ),
            None => (name.clone(), name),
        };
        // Register the new phase with all its ancestors, for subtree filtering.
        for &a in ancestors.iter() {
            out[a].descendants.push(selector.clone());
        }
        let index = out.len();
        out.push(Entry {
            phase,
            selector,
            listed,
            level: ancestors.len(),
            descendants: Vec::new(),
        });
        ancestors.push(index);
        for child in &phase.phases {
            Self::collect(child, ancestors, out);
        }
        ancestors.pop();
    }

    /// Every phase selector, in execution order (hidden ones included).
    pub fn selectors(&self) -> Vec<String> {
        self.entries().into_iter().map(|e| e.selector).collect()
    }

    /// Which phases run, in execution order. `filter` keeps only the named phases and their
    /// subtrees (empty keeps all); `skip` then removes named phases with their subtrees.
    pub fn plan(&self, filter: &[String], skip: &[String]) -> Result<Vec<(String, bool)>, WorkflowError> {
        let entries = self.entries();
        let index: HashMap<&str, &Entry<'_, C>> = entries.iter().map(|e| (e.selector.as_str(), e)).collect();
        let mut run: HashMap<&str, bool> = entries
            .iter()
            .map(|e| (e.selector.as_str(), filter.is_empty()))
            .collect();
        for (names, value) in [(filter, true), (skip, false)] {
            for name in names {
                let entry = index
                    .get(name.as_str())
                    .ok_or_else(|| WorkflowError::InvalidPhaseName(name.clone()))?;
                run.insert(entry.selector.as_str(), value);
                for d in &entry.descendants {
                    run.insert(d.as_str(), value);
                }
            }
        }
        Ok(entries
            .iter()
            .map(|e| {
                (
                    e.selector.clone(),
                    run.get(e.selector.as_str()).copied().unwrap_or(false),
                )
            })
            .collect())
    }

    /// Runs the workflow over `ctx`: the chosen phases in order, each after its run-if.
    pub fn run(&self, ctx: &mut C, filter: &[String], skip: &[String]) -> Result<(), WorkflowError> {
        let plan = self.plan(filter, skip)?;
        for (entry, (_, selected)) in self.entries().iter().zip(plan) {
            if !selected {
                continue;
            }
            if entry.phase.run_all_siblings && (entry.phase.run.is_some() || entry.phase.run_if.is_some()) {
                return Err(WorkflowError::RunAllSiblingsWithRun(entry.selector.clone()));
            }
            if let Some(run_if) = entry.phase.run_if {
                let go = run_if(ctx).map_err(|e| WorkflowError::RunIf {
                    phase: entry.selector.clone(),
                    kind: e.kind(),
                    source: e.into_source(),
                })?;
                if !go {
                    continue;
                }
            }
            if let Some(run) = entry.phase.run {
                run(ctx).map_err(|e| WorkflowError::Phase {
                    phase: entry.selector.clone(),
                    kind: e.kind(),
                    source: e.into_source(),
                })?;
            }
        }
        Ok(())
    }

    /// The phase list upstream appends to the command's long help.
    pub fn help(&self, command_use: &str) -> String {
        let entries = self.entries();
        let shown: Vec<&Entry<'_, C>> = entries
            .iter()
            .filter(|e| !e.phase.hidden && !e.phase.run_all_siblings)
            .collect();
        let width = shown.iter().map(|e| e.listed.len()).max().unwrap_or(0);
        let mut out = format!("The {command_use:?} command executes the following phases:\n```\n");
        for e in shown {
            out.push_str(&" ".repeat(2 * e.level));
            out.push_str(&e.listed);
            out.push_str(&" ".repeat(width - e.listed.len() + 2));
            out.push_str(e.phase.short);
            out.push('\n');
        }
        out.push_str("```");
        out
    }

    /// The long help of the workflow's command: its own long help (or short, when it has none)
    /// followed by the phase list.
    pub fn command_long(&self, command_use: &str, long: &str, short: &str) -> String {
        let head = if long.is_empty() { short } else { long };
        format!("{head}\n\n{}\n", self.help(command_use))
    }

    /// The `--skip-phases` flag the runner adds to its command.
    pub fn skip_phases_flag() -> FlagSpec {
        FlagSpec {
            default: "[]",
            usage: "List of phases to be skipped",
            ..FlagSpec::new("skip-phases", "stringSlice")
        }
    }

    /// The commands under `<command> phase`, generated from the tree. `parent_flags` are the
    /// command's own flags and `parent_args` its positional rule, both inherited as upstream does.
    pub fn phase_commands(&self, parent_flags: &[FlagSpec], parent_args: ArgsRule) -> Vec<PhaseCommand> {
        let mut out = Vec::new();
        for phase in self.phases.iter().filter(|p| !p.run_all_siblings) {
            if let Some(cmd) = self.command_for(phase, None, None, parent_flags, parent_args) {
                out.push(cmd);
            }
        }
        out
    }

    fn command_for(
        &self,
        phase: &Phase<C>,
        parent_selector: Option<&str>,
        siblings_selector: Option<&str>,
        parent_flags: &[FlagSpec],
        parent_args: ArgsRule,
    ) -> Option<PhaseCommand> {
        if phase.hidden {
            return None;
        }
        let own = match parent_selector {
            Some(p) => format!("{p}{SEPARATOR}{}", phase.clean_name()),
            None => phase.clean_name(),
        };
        let selector = match (phase.run_all_siblings, siblings_selector) {
            (true, Some(parent)) => parent.to_string(),
            _ => own.clone(),
        };
        // Inherited flags keep the sorted order pflag visits them in; local flags follow.
        let mut flags = Vec::new();
        if let Some(names) = phase.inherit_flags {
            for source in [parent_flags, self.additional_flags] {
                let mut sorted: Vec<&FlagSpec> = source.iter().collect();
                sorted.sort_by(|a, b| a.name.cmp(b.name));
                for f in sorted {
                    if names.contains(&f.name) && !flags.iter().any(|g: &FlagSpec| g.name == f.name) {
                        flags.push(*f);
                    }
                }
            }
        }
        flags.extend(phase.local_flags.iter().copied());
        let has_children = !phase.phases.is_empty();
        let args = if has_children {
            ArgsRule::None
        } else {
            phase.args.unwrap_or(parent_args)
        };
        let children = phase
            .phases
            .iter()
            .filter_map(|child| self.command_for(child, Some(&own), Some(&own), parent_flags, parent_args))
            .collect();
        Some(PhaseCommand {
            use_line: phase.name.to_lowercase(),
            aliases: phase.aliases.to_vec(),
            short: phase.short,
            long: phase.long,
            example: phase.example,
            flags,
            args,
            selector,
            has_children,
            children,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::PhaseError;

    type Log = Vec<&'static str>;

    fn record(name: &'static str) -> Phase<Log> {
        Phase {
            run: Some(|_| Ok(())),
            ..Phase::new(name, "")
        }
    }

    /// A tree shaped like upstream's init: a hidden phase, an "all" child, nested phases.
    fn tree() -> Workflow<Log> {
        let certs = Phase {
            phases: vec![
                Phase {
                    run_all_siblings: true,
                    ..Phase::new("all", "Generate all certificates")
                },
                Phase {
                    run: Some(|l: &mut Log| {
                        l.push("certs/ca");
                        Ok(())
                    }),
                    ..Phase::new("ca", "Generate the CA")
                },
                Phase {
                    run: Some(|l: &mut Log| {
                        l.push("certs/sa");
                        Ok(())
                    }),
                    ..Phase::new("sa", "Generate sa")
                },
            ],
            ..Phase::new("certs", "Certificate generation")
        };
        Workflow {
            phases: vec![
                Phase {
                    run: Some(|l: &mut Log| {
                        l.push("preflight");
                        Ok(())
                    }),
                    ..record("preflight")
                },
                certs,
                Phase {
                    hidden: true,
                    run: Some(|l: &mut Log| {
                        l.push("wait");
                        Ok(())
                    }),
                    ..record("wait-control-plane")
                },
                Phase {
                    run: Some(|l: &mut Log| {
                        l.push("addon");
                        Ok(())
                    }),
                    run_if: Some(|l: &Log| Ok(!l.contains(&"wait"))),
                    ..record("addon")
                },
            ],
            additional_flags: &[],
        }
    }

    fn run(filter: &[&str], skip: &[&str]) -> Result<Log, WorkflowError> {
        let mut log = Vec::new();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        tree().run(&mut log, &s(filter), &s(skip)).map(|()| log)
    }

    /// A phase's failure keeps its kind, and its message, through the runner's error.
    #[test]
    fn a_phase_failure_keeps_its_kind() {
        let failing = |kind: FailureKind| Workflow::<Log> {
            phases: vec![Phase {
                run: Some(match kind {
                    FailureKind::Failed => |_: &mut Log| Err("broken".into()),
                    FailureKind::Preflight => |_: &mut Log| Err(PhaseError::preflight("unfit")),
                }),
                ..Phase::new("check", "")
            }],
            additional_flags: &[],
        };
        for (kind, text) in [
            (FailureKind::Failed, "error execution phase check: broken"),
            (FailureKind::Preflight, "error execution phase check: unfit"),
        ] {
            let e = failing(kind).run(&mut Vec::new(), &[], &[]).expect_err("fails");
            assert_eq!((e.failure_kind(), e.to_string().as_str()), (kind, text));
        }
        let e = tree()
            .run(&mut Vec::new(), &[], &["nope".to_string()])
            .expect_err("bad name");
        assert_eq!(e.failure_kind(), FailureKind::Failed);
    }

    #[test]
    fn runs_in_order_parents_before_children() {
        assert_eq!(
            tree().selectors(),
            [
                "preflight",
                "certs",
                "certs/all",
                "certs/ca",
                "certs/sa",
                "wait-control-plane",
                "addon"
            ]
        );
        // The run-if of addon sees the hidden phase ran.
        assert_eq!(
            run(&[], &[]).expect("runs"),
            ["preflight", "certs/ca", "certs/sa", "wait"]
        );
    }

    #[test]
    fn skipping_a_parent_skips_its_subtree() {
        assert_eq!(run(&[], &["certs"]).expect("runs"), ["preflight", "wait"]);
        assert_eq!(
            run(&[], &["certs/ca", "wait-control-plane"]).expect("runs"),
            ["preflight", "certs/sa", "addon"]
        );
    }

    #[test]
    fn filtering_keeps_a_subtree() {
        assert_eq!(run(&["certs"], &[]).expect("runs"), ["certs/ca", "certs/sa"]);
        assert_eq!(run(&["certs"], &["certs/sa"]).expect("runs"), ["certs/ca"]);
    }

    #[test]
    fn unknown_names_are_errors() {
        let err = run(&[], &["bogus"]).expect_err("fails");
        assert_eq!(err.to_string(), "invalid phase name: bogus");
        // Phase commands use the bare name, never the command-line alias.
        assert!(run(&[], &["ca"]).is_err());
    }

    #[test]
    fn all_phases_must_not_run_anything() {
        let mut w = tree();
        w.phases[1].phases[0].run = Some(|_| Ok(()));
        let err = w.run(&mut Vec::new(), &[], &[]).expect_err("fails");
        assert_eq!(
            err.to_string(),
            "phase marked as RunAllSiblings can not have Run functions certs/all"
        );
    }

    #[test]
    fn failures_name_the_phase() {
        let mut w = tree();
        w.phases[0].run = Some(|_| Err("boom".into()));
        let err = w.run(&mut Vec::new(), &[], &[]).expect_err("fails");
        assert_eq!(err.to_string(), "error execution phase preflight: boom");
    }

    #[test]
    fn help_lists_visible_phases_aligned() {
        // As upstream: the padding ignores the indentation of nested phases.
        let expected = "The \"init\" command executes the following phases:\n```\npreflight  \ncerts      Certificate generation\n  /ca        Generate the CA\n  /sa        Generate sa\naddon      \n```";
        assert_eq!(tree().help("init"), expected);
    }

    #[test]
    fn phase_commands_inherit_named_flags_and_all_runs_the_parent() {
        static PARENT: &[FlagSpec] = &[
            FlagSpec::new("config", "string"),
            FlagSpec::new("dry-run", "bool"),
        ];
        let mut w = tree();
        w.phases[1].phases[1].inherit_flags = Some(&["dry-run", "config", "missing"]);
        let cmds = w.phase_commands(PARENT, ArgsRule::None);
        assert_eq!(
            cmds.iter().map(|c| c.use_line.as_str()).collect::<Vec<_>>(),
            ["preflight", "certs", "addon"]
        );
        let certs = &cmds[1];
        assert_eq!(certs.args, ArgsRule::None);
        assert_eq!(
            certs.children[0].selector, "certs",
            "'all' runs its parent's subtree"
        );
        assert_eq!(certs.children[1].selector, "certs/ca");
        let names: Vec<&str> = certs.children[1].flags.iter().map(|f| f.name).collect();
        assert_eq!(names, ["config", "dry-run"]);
        assert!(certs.children[2].flags.is_empty());
    }
}
