//! cobra and pflag as kubeadm's command line sees them, byte for byte: the command tree as data
//! ([`command`], with kubeadm's own tree generated into [`command_tree`]), pflag parsing
//! ([`flags`], Go's value syntax in [`go_values`]), cobra's resolution of a command line
//! ([`execute`]: help, argument rules, errors), help text ([`help`]) and completion ([`complete`],
//! [`completion`]). Nothing here knows what a command does: handlers live in `crate::commands`.

pub(crate) mod command;
pub(crate) mod command_tree;
pub(crate) mod complete;
pub(crate) mod completion;
pub(crate) mod completion_text;
pub(crate) mod execute;
pub(crate) mod find;
pub(crate) mod flags;
pub(crate) mod go_values;
pub(crate) mod help;
