//! Go's `text/template` for the templates kubectl's go-template printer runs: text and actions,
//! trim markers, comments, pipelines, variables, `if`/`else if`/`with`/`range`/`else`/`end`, field
//! chains on maps, and the functions `and or not len index print printf println eq ne lt le gt ge
//! html js urlquery slice call` plus the printer's `base64decode` and `exists`, `define`,
//! `template` and `block` (named templates, executed with their own `$`), and `break` and
//! `continue` in `range`. Values are the decoded JSON (apimachinery's decoder: integers int64, other
//! numbers float64), so `call` always fails as Go's does on data without functions.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::gofmt::{self, Num};

#[derive(Debug, Clone)]
enum Arg {
    /// `.a.b` (empty: `.`).
    Field(Vec<String>),
    /// `$x.a.b`.
    Var(String, Vec<String>),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// A function name.
    Ident(String),
    /// `(pipeline).a.b`.
    Pipe(Box<Pipe>, Vec<String>),
}

#[derive(Debug, Clone)]
struct Cmd {
    args: Vec<Arg>,
    /// The command's source text and position, for errors.
    text: String,
    pos: usize,
    /// Each argument's source text and the position of its last token (where Go places a field
    /// chain's errors).
    spans: Vec<(String, usize)>,
}

#[derive(Debug, Clone)]
struct Pipe {
    decl: Vec<String>,
    assign: bool,
    cmds: Vec<Cmd>,
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Action(Pipe),
    If(Pipe, Vec<Node>, Vec<Node>),
    With(Pipe, Vec<Node>, Vec<Node>),
    Range(Pipe, Vec<Node>, Vec<Node>),
    /// `{{template "name" pipeline}}` (and a `block`'s call): the name, the pipeline, the name's
    /// position and the node as Go prints it in errors.
    Template(String, Option<Pipe>, usize, String),
    Break,
    Continue,
}

/// A parsed template.
#[derive(Debug)]
pub(crate) struct Template {
    name: String,
    text: String,
    nodes: Vec<Node>,
    /// The templates `define` and `block` named.
    defs: BTreeMap<String, Vec<Node>>,
    /// `missingkey=error` (`--allow-missing-template-keys=false`).
    pub(crate) missing_key_error: bool,
}

const FUNCS: &[&str] = &[
    "and",
    "or",
    "not",
    "len",
    "index",
    "print",
    "printf",
    "println",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "html",
    "js",
    "urlquery",
    "base64decode",
    "exists",
    "slice",
    "call",
];

/// The words Go's lexer takes as keywords: never a function name.
const KEYWORDS: &[&str] = &[
    "block", "break", "continue", "define", "else", "end", "if", "range", "template", "with",
];

/// Go's `maxExecDepth`: how deep templates may call templates.
const MAX_EXEC_DEPTH: usize = 100_000;

mod exec;
mod funcs;
mod lex;
mod parse;

// Each part sees the others' items through its `use super::*`.
#[allow(unused_imports)]
use {exec::*, funcs::*, lex::*, parse::*};

/// Why a Go template could not be parsed or run, worded as text/template words it (kubectl prints
/// it inside its own message).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TemplateError {
    /// The text is not a valid template: `template: NAME:LINE: unclosed action`.
    #[error("template: {name}:{line}: {message}")]
    Parse {
        /// The template's name.
        name: String,
        /// The line (from 1) where parsing stopped.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// A node failed on the data: `template: NAME:LINE:COL: executing "NAME" at <.x>: …`.
    #[error(
        "template: {template}:{line}:{col}: executing {} at <{node}>: {message}",
        kubeadm_api::gofmt::quote(.executing)
    )]
    Exec {
        /// The name of the template parsed.
        template: String,
        /// The node's line (from 1).
        line: usize,
        /// The node's column (from 0, in bytes).
        col: usize,
        /// The template executing (the one parsed, or one it defines).
        executing: String,
        /// The node's text.
        node: String,
        /// What went wrong.
        message: String,
    },
    /// The thread that runs templates with definitions (on a large stack) could not start.
    #[error("template: cannot start its execution: {0}")]
    Start(String),
}

/// Why a literal or a builtin function fails on its values, in text/template's words; an
/// execution error puts it after `error calling NAME: `.
#[derive(Debug, thiserror::Error)]
enum ValueError {
    /// Values of kinds the operation does not take: `incompatible types for comparison: int and
    /// string`, `slice of untyped nil`.
    #[error("{0}")]
    Type(String),
    /// An index outside the value, or too many: `index out of range: 5`, `invalid slice index: 2 >
    /// 1`.
    #[error("{0}")]
    Index(String),
    /// Invalid base64 (Go's `base64.CorruptInputError`).
    #[error("illegal base64 data at input byte {0}")]
    Base64(usize),
    /// A quoted literal with an invalid escape (Go's `strconv.ErrSyntax`).
    #[error("invalid syntax")]
    Syntax,
    /// As [`ValueError::Syntax`], naming the literal.
    #[error("invalid syntax: {0}")]
    SyntaxIn(String),
}

/// A parse error: the position and message.
type PErr = (usize, String);
/// Nodes parsed up to a terminating `{{end}}`/`{{else}}` (its word and position), if any.
type Listed = (Vec<Node>, Option<(String, usize)>);
/// A command's arguments and their spans.
type Command = (Vec<Arg>, Vec<(String, usize)>);
