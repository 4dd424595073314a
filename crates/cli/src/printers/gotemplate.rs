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

// ---- lexing and parsing ----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Text(String),
    /// Action start; its tokens follow until `Close`.
    Open,
    Close,
    Word(String),
    Field(String),
    Var(String),
    Str(String),
    Num(String),
    LParen,
    RParen,
    Pipe,
    Declare,
    Assign,
    Comma,
}

struct Lexed {
    toks: Vec<(Tok, usize)>,
}

fn line_of(text: &str, pos: usize) -> usize {
    1 + text[..pos.min(text.len())].matches('\n').count()
}

fn lex(text: &str) -> Result<Lexed, (usize, String)> {
    let mut toks = Vec::new();
    let mut pos = 0;
    let b = text.as_bytes();
    while pos < text.len() {
        let Some(open) = text[pos..].find("{{").map(|i| i + pos) else {
            toks.push((Tok::Text(text[pos..].to_string()), pos));
            break;
        };
        let mut chunk = &text[pos..open];
        let mut inner = open + 2;
        if text[inner..].starts_with("- ")
            || text[inner..].starts_with("-\t")
            || text[inner..].starts_with("-\n")
            || text[inner..].starts_with("-\r")
        {
            chunk = chunk.trim_end_matches([' ', '\t', '\r', '\n']);
            inner += 1;
        }
        if !chunk.is_empty() {
            toks.push((Tok::Text(chunk.to_string()), pos));
        }
        // Comment.
        let ws = text[inner..].len() - text[inner..].trim_start_matches([' ', '\t', '\r', '\n']).len();
        if text[inner + ws..].starts_with("/*") {
            let start = inner + ws;
            let end = text[start..]
                .find("*/")
                .map(|i| i + start + 2)
                .ok_or((start, "unclosed comment".to_string()))?;
            let rest = &text[end..];
            let (after, trim) = if let Some(r) = rest.strip_prefix(" -}}") {
                (text.len() - r.len(), true)
            } else if let Some(r) = rest.strip_prefix("}}") {
                (text.len() - r.len(), false)
            } else {
                return Err((end, "comment ends before closing delimiter".into()));
            };
            pos = after;
            if trim {
                pos = text.len() - text[pos..].trim_start_matches([' ', '\t', '\r', '\n']).len();
            }
            continue;
        }
        toks.push((Tok::Open, open));
        let mut i = inner;
        loop {
            if i >= b.len() {
                return Err((open, "unclosed action".into()));
            }
            let c = b[i];
            if text[i..].starts_with(" -}}")
                || text[i..].starts_with("\t-}}")
                || text[i..].starts_with("\n-}}")
            {
                toks.push((Tok::Close, i));
                i += 4;
                i = text.len() - text[i..].trim_start_matches([' ', '\t', '\r', '\n']).len();
                break;
            }
            if text[i..].starts_with("}}") {
                toks.push((Tok::Close, i));
                i += 2;
                break;
            }
            match c {
                b' ' | b'\t' | b'\r' => i += 1,
                b'\n' => return Err((i, "unclosed action".into())),
                b'(' => {
                    toks.push((Tok::LParen, i));
                    i += 1;
                }
                b')' => {
                    toks.push((Tok::RParen, i));
                    i += 1;
                }
                b'|' => {
                    toks.push((Tok::Pipe, i));
                    i += 1;
                }
                b',' => {
                    toks.push((Tok::Comma, i));
                    i += 1;
                }
                b':' if b.get(i + 1) == Some(&b'=') => {
                    toks.push((Tok::Declare, i));
                    i += 2;
                }
                b'=' => {
                    toks.push((Tok::Assign, i));
                    i += 1;
                }
                b'"' => {
                    let start = i;
                    i += 1;
                    loop {
                        match b.get(i) {
                            None | Some(b'\n') => return Err((start, "unterminated quoted string".into())),
                            Some(b'\\') => i += 2,
                            Some(b'"') => break,
                            _ => i += 1,
                        }
                    }
                    i += 1;
                    let s = unquote(&text[start..i]).map_err(|e| (start, e.to_string()))?;
                    toks.push((Tok::Str(s), start));
                }
                b'`' => {
                    let start = i;
                    let end = text[i + 1..]
                        .find('`')
                        .ok_or((start, "unterminated raw quoted string".to_string()))?;
                    toks.push((Tok::Str(text[i + 1..i + 1 + end].to_string()), start));
                    i += end + 2;
                }
                b'.' | b'$' => {
                    let start = i;
                    i += 1;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                        i += 1;
                    }
                    let word = &text[start..i];
                    if c == b'.' && word.len() > 1 && word.as_bytes()[1].is_ascii_digit() {
                        toks.push((Tok::Num(word.to_string()), start));
                    } else if c == b'.' {
                        toks.push((Tok::Field(word[1..].to_string()), start));
                    } else {
                        toks.push((Tok::Var(word.to_string()), start));
                    }
                }
                b'0'..=b'9' | b'-' | b'+' => {
                    let start = i;
                    i += 1;
                    while i < b.len()
                        && (b[i].is_ascii_alphanumeric()
                            || b[i] == b'.'
                            || b[i] == b'_'
                            || ((b[i] == b'-' || b[i] == b'+') && matches!(b[i - 1], b'e' | b'E')))
                    {
                        i += 1;
                    }
                    toks.push((Tok::Num(text[start..i].to_string()), start));
                }
                c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                        i += 1;
                    }
                    toks.push((Tok::Word(text[start..i].to_string()), start));
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or(' ');
                    return Err((
                        i,
                        format!(
                            "unexpected {} in command",
                            kubeadm_api::gofmt::quote(&ch.to_string())
                        ),
                    ));
                }
            }
        }
        pos = i;
    }
    Ok(Lexed { toks })
}

fn unquote(s: &str) -> Result<String, ValueError> {
    let body = &s[1..s.len() - 1];
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some(e @ ('x' | 'u' | 'U')) => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(n).collect();
                let v = u32::from_str_radix(&hex, 16).map_err(|_| ValueError::Syntax)?;
                out.push(char::from_u32(v).ok_or(ValueError::Syntax)?);
            }
            _ => return Err(ValueError::SyntaxIn(s.to_string())),
        }
    }
    Ok(out)
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize)>,
    at: usize,
    vars: Vec<String>,
    /// How many `range` bodies the parser is in (`break` and `continue` need one).
    range_depth: usize,
    /// Inside a control structure: `define` only comes at the top.
    nested: usize,
    defs: BTreeMap<String, Vec<Node>>,
}

/// Whether a list of nodes is empty as Go's `parse.IsEmptyTree` says: only white space text.
fn is_empty_tree(nodes: &[Node]) -> bool {
    nodes
        .iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

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

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }
    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.text.len(), |t| t.1)
    }
    fn next(&mut self) -> Option<(Tok, usize)> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    /// Parses nodes up to `{{end}}`/`{{else}}` (returned as the terminator word) or the end.
    fn list(&mut self) -> Result<Listed, PErr> {
        let mut nodes = Vec::new();
        while let Some((tok, pos)) = self.next() {
            match tok {
                Tok::Text(t) => nodes.push(Node::Text(t)),
                Tok::Open => match self.peek().cloned() {
                    Some(Tok::Word(w)) if matches!(w.as_str(), "end" | "else") => {
                        self.at += 1;
                        return Ok((nodes, Some((w, pos))));
                    }
                    Some(Tok::Word(w)) if matches!(w.as_str(), "if" | "with" | "range") => {
                        self.at += 1;
                        self.nested += 1;
                        let node = self.control(&w, pos);
                        self.nested -= 1;
                        nodes.push(node?);
                    }
                    Some(Tok::Word(w)) if w == "define" && self.nested == 0 => {
                        self.at += 1;
                        self.define()?;
                    }
                    Some(Tok::Word(w)) if w == "block" => {
                        self.at += 1;
                        nodes.push(self.block()?);
                    }
                    Some(Tok::Word(w)) if w == "template" => {
                        self.at += 1;
                        nodes.push(self.template_call()?);
                    }
                    Some(Tok::Word(w)) if w == "break" || w == "continue" => {
                        self.at += 1;
                        match self.next() {
                            Some((Tok::Close, _)) => {}
                            Some((t, p)) => {
                                return Err((p, format!("unexpected {} in {{{{{w}}}}}", tok_text(&t))));
                            }
                            None => return Err((self.text.len(), "unclosed action".into())),
                        }
                        if self.range_depth == 0 {
                            return Err((pos, format!("{{{{{w}}}}} outside {{{{range}}}}")));
                        }
                        nodes.push(if w == "break" { Node::Break } else { Node::Continue });
                    }
                    _ => {
                        let p = self.pipeline("command", true)?;
                        nodes.push(Node::Action(p));
                    }
                },
                _ => return Err((pos, "unexpected token".into())),
            }
        }
        Ok((nodes, None))
    }

    /// A template's name: a quoted string.
    fn template_name(&mut self, context: &str) -> Result<(String, usize), PErr> {
        match self.next() {
            Some((Tok::Str(name), p)) => Ok((name, p)),
            Some((t, p)) => Err((p, format!("unexpected {} in {context}", tok_text(&t)))),
            None => Err((self.text.len(), "unclosed action".into())),
        }
    }

    /// A named template's body, up to its `{{end}}`, parsed as a template of its own (no
    /// variables but `$`, outside any `range`).
    fn body_of(&mut self, context: &str) -> Result<Vec<Node>, PErr> {
        let vars = std::mem::take(&mut self.vars);
        let (range_depth, nested) = (self.range_depth, self.nested);
        (self.range_depth, self.nested) = (0, 1);
        let listed = self.list();
        (self.vars, self.range_depth, self.nested) = (vars, range_depth, nested);
        match listed? {
            (_, None) => Err((self.text.len(), "unexpected EOF".into())),
            (_, Some((t, p))) if t != "end" => Err(self.misplaced(&t, p, Some(context))),
            (body, _) => {
                self.close()?;
                Ok(body)
            }
        }
    }

    /// Installs a named template as Go's `Tree.add` does: an empty one never replaces another, and
    /// two that are not empty are an error.
    fn add(&mut self, name: String, body: Vec<Node>, pos: usize) -> Result<(), PErr> {
        match self.defs.get(&name) {
            Some(old) if !is_empty_tree(old) => {
                if !is_empty_tree(&body) {
                    return Err((
                        pos,
                        format!(
                            "template: multiple definition of template {}",
                            kubeadm_api::gofmt::quote(&name)
                        ),
                    ));
                }
            }
            _ => {
                self.defs.insert(name, body);
            }
        }
        Ok(())
    }

    /// `{{define "name"}}…{{end}}` (the word is past).
    fn define(&mut self) -> Result<(), PErr> {
        let (name, pos) = self.template_name("define clause")?;
        match self.next() {
            Some((Tok::Close, _)) => {}
            Some((t, p)) => return Err((p, format!("unexpected {} in define clause", tok_text(&t)))),
            None => return Err((self.text.len(), "unclosed action".into())),
        }
        let body = self.body_of("define clause")?;
        // Go reports a second definition where the parse has got to: its `{{end}}`.
        let end = self.toks.get(self.at.saturating_sub(1)).map_or(pos, |t| t.1);
        self.add(name, body, end)
    }

    /// `{{block "name" pipeline}}…{{end}}` (the word is past): defines the template and calls it.
    fn block(&mut self) -> Result<Node, PErr> {
        let (name, pos) = self.template_name("block clause")?;
        let start = self.pos();
        let pipe = self.pipeline("block clause", true)?;
        let node = template_node_text(&name, Some(&self.text[start..self.toks[self.at - 1].1]));
        let body = self.body_of("block clause")?;
        let end = self.toks.get(self.at.saturating_sub(1)).map_or(pos, |t| t.1);
        self.add(name.clone(), body, end)?;
        Ok(Node::Template(name, Some(pipe), pos, node))
    }

    /// `{{template "name"}}` or `{{template "name" pipeline}}` (the word is past).
    fn template_call(&mut self) -> Result<Node, PErr> {
        let (name, pos) = self.template_name("template clause")?;
        if self.peek() == Some(&Tok::Close) {
            self.at += 1;
            return Ok(Node::Template(
                name.clone(),
                None,
                pos,
                template_node_text(&name, None),
            ));
        }
        let start = self.pos();
        let pipe = self.pipeline("template clause", true)?;
        let node = template_node_text(&name, Some(&self.text[start..self.toks[self.at - 1].1]));
        Ok(Node::Template(name, Some(pipe), pos, node))
    }

    fn control(&mut self, word: &str, pos: usize) -> Result<Node, PErr> {
        let depth = self.vars.len();
        let pipe = self.pipeline(word, false)?;
        if word == "range" {
            self.range_depth += 1;
        }
        let body = self.list();
        if word == "range" {
            self.range_depth -= 1;
        }
        let (body, term) = body?;
        let mut els = Vec::new();
        match term {
            None => return Err((self.text.len(), "unexpected EOF".into())),
            Some((t, _)) if t == "end" => self.close()?,
            Some(_) => {
                // `{{else if …}}` / `{{else with …}}`: a nested control ending at the same end.
                if let Some(Tok::Word(w)) = self.peek().cloned()
                    && (w == "if" || (w == "with" && word == "with"))
                {
                    self.at += 1;
                    let p = self.pos();
                    els.push(self.control(&w, p)?);
                } else {
                    self.close_in("else")?;
                    let (e, term) = self.list()?;
                    els = e;
                    match term {
                        None => return Err((self.text.len(), "unexpected EOF".into())),
                        Some((t, p)) if t != "end" => {
                            return Err((p, format!("expected end; found {{{{{t}}}}}")));
                        }
                        _ => self.close()?,
                    }
                }
            }
        }
        self.vars.truncate(depth);
        let _ = pos;
        Ok(match word {
            "if" => Node::If(pipe, body, els),
            "with" => Node::With(pipe, body, els),
            _ => Node::Range(pipe, body, els),
        })
    }

    fn close(&mut self) -> Result<(), PErr> {
        self.close_in("end")
    }

    /// The `}}` that ends an `{{end}}` or `{{else}}` (`context`).
    fn close_in(&mut self, context: &str) -> Result<(), PErr> {
        match self.next() {
            Some((Tok::Close, _)) => Ok(()),
            Some((t, p)) => Err((p, format!("unexpected {} in {context}", tok_text(&t)))),
            None => Err((self.text.len(), "unclosed action".into())),
        }
    }

    /// An `{{end}}` or `{{else}}` that `list` stopped at where none may come: Go parses the
    /// action to its `}}` first (its errors come first), then refuses it.
    fn misplaced(&mut self, word: &str, pos: usize, context: Option<&str>) -> PErr {
        let if_or_with = matches!(self.peek(), Some(Tok::Word(w)) if w == "if" || w == "with");
        if !(word == "else" && if_or_with)
            && let Err(e) = self.close_in(word)
        {
            return e;
        }
        match context {
            Some(c) => (pos, format!("unexpected {{{{{word}}}}} in {c}")),
            None => (pos, format!("unexpected {{{{{word}}}}}")),
        }
    }

    fn pipeline(&mut self, context: &str, top: bool) -> Result<Pipe, PErr> {
        let mut decl = Vec::new();
        let mut assign = false;
        // Declarations: `$x :=`, `$i, $e :=`, `$x =`.
        let save = self.at;
        if let Some(Tok::Var(v)) = self.peek().cloned() {
            self.at += 1;
            match self.peek() {
                Some(Tok::Declare) | Some(Tok::Assign) => {
                    assign = self.peek() == Some(&Tok::Assign);
                    self.at += 1;
                    decl.push(v);
                }
                Some(Tok::Comma) if context == "range" => {
                    self.at += 1;
                    if let Some(Tok::Var(v2)) = self.peek().cloned() {
                        self.at += 1;
                        if matches!(self.peek(), Some(Tok::Declare | Tok::Assign)) {
                            self.at += 1;
                            decl.push(v);
                            decl.push(v2);
                        } else {
                            return Err((self.pos(), "range can only initialize variables".into()));
                        }
                    }
                }
                _ => self.at = save,
            }
        }
        if !assign {
            self.vars.extend(decl.iter().cloned());
        }
        let mut cmds = Vec::new();
        loop {
            let start = self.pos();
            let (args, spans) = self.command()?;
            let end = self.toks.get(self.at).map_or(self.text.len(), |t| t.1);
            if args.is_empty() {
                return Err((start, format!("missing value for {context}")));
            }
            cmds.push(Cmd {
                args,
                text: self.text[start..end].trim_end().to_string(),
                pos: start,
                spans,
            });
            match self.next() {
                Some((Tok::Pipe, _)) => continue,
                Some((Tok::Close, _)) if top || context != "paren" => break,
                Some((Tok::RParen, _)) if context == "paren" => break,
                Some((t, p)) => return Err((p, format!("unexpected {} in {context}", tok_text(&t)))),
                None => return Err((self.text.len(), "unclosed action".into())),
            }
        }
        Ok(Pipe { decl, assign, cmds })
    }

    fn command(&mut self) -> Result<Command, PErr> {
        let mut args = Vec::new();
        let mut spans = Vec::new();
        loop {
            let (tok, pos) = match self.toks.get(self.at) {
                Some(t) => t.clone(),
                None => return Err((self.text.len(), "unclosed action".into())),
            };
            let arg = match tok {
                Tok::Close | Tok::Pipe | Tok::RParen => return Ok((args, spans)),
                Tok::Field(f) => {
                    self.at += 1;
                    Arg::Field(if f.is_empty() { Vec::new() } else { vec![f] })
                }
                Tok::Var(v) => {
                    self.at += 1;
                    if !self.vars.contains(&v) && v != "$" {
                        return Err((
                            pos,
                            format!("undefined variable {}", kubeadm_api::gofmt::quote(&v)),
                        ));
                    }
                    Arg::Var(v, Vec::new())
                }
                Tok::Str(s) => {
                    self.at += 1;
                    Arg::Str(s)
                }
                Tok::Num(n) => {
                    self.at += 1;
                    if let Ok(i) = n.parse::<i64>() {
                        Arg::Int(i)
                    } else if let Ok(f) = n.parse::<f64>() {
                        Arg::Float(f)
                    } else {
                        return Err((
                            pos,
                            format!("bad number syntax: {}", kubeadm_api::gofmt::quote(&n)),
                        ));
                    }
                }
                Tok::Word(w) => {
                    self.at += 1;
                    match w.as_str() {
                        "true" => Arg::Bool(true),
                        "false" => Arg::Bool(false),
                        "nil" => Arg::Nil,
                        _ if KEYWORDS.contains(&w.as_str()) => {
                            return Err((pos, format!("unexpected <{w}> in command")));
                        }
                        _ if FUNCS.contains(&w.as_str()) => Arg::Ident(w),
                        _ => {
                            return Err((
                                pos,
                                format!("function {} not defined", kubeadm_api::gofmt::quote(&w)),
                            ));
                        }
                    }
                }
                Tok::LParen => {
                    self.at += 1;
                    let p = self.pipeline("paren", false)?;
                    Arg::Pipe(Box::new(p), Vec::new())
                }
                t => return Err((pos, format!("unexpected {} in command", tok_text(&t)))),
            };
            // A field chain directly after (`$x.a`, `(…).a`, `.a.b`).
            let mut arg = arg;
            while let Some((Tok::Field(f), p)) = self.toks.get(self.at).cloned() {
                let prev_end = self.toks.get(self.at - 1).map_or(0, |t| t.1);
                let _ = prev_end;
                if p > 0 && self.text.as_bytes()[p - 1].is_ascii_whitespace() {
                    break;
                }
                self.at += 1;
                match &mut arg {
                    Arg::Field(c) | Arg::Var(_, c) | Arg::Pipe(_, c) => c.push(f),
                    _ => return Err((p, "unexpected . after term".into())),
                }
            }
            let last = self.toks.get(self.at - 1).map_or(pos, |t| t.1);
            let end = self.toks.get(self.at).map_or(self.text.len(), |t| t.1);
            spans.push((self.text[pos..end].trim_end().to_string(), last));
            args.push(arg);
        }
    }
}

/// A template node as Go's `TemplateNode.String` prints it: `{{template "name" PIPELINE}}`.
fn template_node_text(name: &str, pipe: Option<&str>) -> String {
    match pipe.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => format!("{{{{template {} {p}}}}}", kubeadm_api::gofmt::quote(name)),
        None => format!("{{{{template {}}}}}", kubeadm_api::gofmt::quote(name)),
    }
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Close => "\"}}\"".into(),
        Tok::RParen => "\")\"".into(),
        Tok::LParen => "\"(\"".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        // Go's `item.String`: keywords (and `.`, `nil`) in angle brackets, any other token's text
        // quoted, the first 10 characters of a longer one.
        Tok::Word(w) if KEYWORDS.contains(&w.as_str()) || w == "nil" => format!("<{w}>"),
        Tok::Field(f) if f.is_empty() => "<.>".into(),
        Tok::Field(f) => go_item(&format!(".{f}")),
        Tok::Word(w) | Tok::Var(w) | Tok::Num(w) => go_item(w),
        // The token's text is the quoted literal.
        Tok::Str(s) => go_item(&kubeadm_api::gofmt::quote(s)),
        Tok::Text(_) | Tok::Open => "text".into(),
    }
}

/// Go's `%q` of a token's text, `%.10q...` when it is longer than 10 characters.
fn go_item(text: &str) -> String {
    if text.chars().count() > 10 {
        let head: String = text.chars().take(10).collect();
        format!("{}...", kubeadm_api::gofmt::quote(&head))
    } else {
        kubeadm_api::gofmt::quote(text)
    }
}

// ---- execution ----

/// A value in execution: `None` is Go's invalid value (`<no value>`).
type V = Option<Value>;

struct Exec<'a> {
    t: &'a Template,
    vars: Vec<(String, V)>,
    /// The template being executed (`executing "NAME"` in errors) and how deep in template calls.
    name: String,
    depth: usize,
}

/// How a list of nodes ended: normally, or at a `{{break}}` or `{{continue}}`.
#[derive(PartialEq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

impl Template {
    /// Parses `text` as the template `name`; the error is Go's (`template: NAME:LINE: …`).
    pub(crate) fn parse(name: &str, text: &str) -> Result<Self, TemplateError> {
        let err = |(pos, message): PErr| TemplateError::Parse {
            name: name.to_string(),
            line: line_of(text, pos),
            message,
        };
        let lexed = lex(text).map_err(err)?;
        let mut p = Parser {
            text,
            toks: lexed.toks,
            at: 0,
            vars: Vec::new(),
            range_depth: 0,
            nested: 0,
            defs: BTreeMap::new(),
        };
        let (mut nodes, term) = p.list().map_err(err)?;
        if let Some((t, pos)) = term {
            return Err(err(p.misplaced(&t, pos, None)));
        }
        // The template itself is added last: a `define` of its own name stands when its text is
        // otherwise empty (Go's `Tree.add`).
        if let Some(defined) = p.defs.get(name) {
            if is_empty_tree(&nodes) {
                nodes = defined.clone();
            } else if !is_empty_tree(defined) {
                return Err(err((
                    text.len(),
                    format!(
                        "template: multiple definition of template {}",
                        kubeadm_api::gofmt::quote(name)
                    ),
                )));
            }
        }
        Ok(Template {
            name: name.to_string(),
            text: text.to_string(),
            nodes,
            defs: p.defs,
            missing_key_error: false,
        })
    }

    /// Runs the template on `data`, writing into `out` as it goes (a failure leaves what was
    /// written); the error is Go's (`template: NAME:LINE:COL: executing "NAME" at <…>: …`).
    pub(crate) fn execute(&self, data: &Value, out: &mut String) -> Result<(), TemplateError> {
        let run = |out: &mut String| {
            let mut e = Exec {
                t: self,
                vars: vec![("$".into(), Some(data.clone()))],
                name: self.name.clone(),
                depth: 0,
            };
            e.nodes(&self.nodes, &Some(data.clone()), out).map(|_| ())
        };
        if self.defs.is_empty() {
            return run(out);
        }
        // Templates may call templates as deep as Go allows (MAX_EXEC_DEPTH): on a stack of their
        // own, large enough for that depth (reserved, not used unless the calls go that deep).
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(4 << 30)
                .spawn_scoped(scope, || run(out))
                .map_err(|e| TemplateError::Start(e.to_string()))?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}

fn truth(v: &V) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
    }
}

/// What `{{…}}` prints for a value.
fn print_value(v: &V) -> String {
    match v {
        None | Some(Value::Null) => "<no value>".into(),
        Some(v) => gofmt::v(v, true),
    }
}

/// fmt's `%v` of a function argument (a missing value is a nil interface).
fn arg_v(v: &V) -> String {
    match v {
        None => "<nil>".into(),
        Some(v) => gofmt::v(v, true),
    }
}

impl Exec<'_> {
    fn error_at(&self, cmd: &Cmd, msg: &str) -> TemplateError {
        self.error_at_pos(cmd.pos, &cmd.text, msg)
    }

    /// Go's execution error: the place in the parsed text (named after the template parsed), the
    /// template executing, the node.
    fn error_at_pos(&self, pos: usize, node: &str, msg: &str) -> TemplateError {
        let text = &self.t.text;
        TemplateError::Exec {
            template: self.t.name.clone(),
            line: line_of(text, pos),
            col: pos - text[..pos].rfind('\n').map_or(0, |i| i + 1),
            executing: self.name.clone(),
            node: node.to_string(),
            message: msg.to_string(),
        }
    }

    fn nodes(&mut self, nodes: &[Node], dot: &V, out: &mut String) -> Result<Flow, TemplateError> {
        for n in nodes {
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
                Node::Template(name, pipe, pos, node) => {
                    let Some(body) = self.t.defs.get(name) else {
                        return Err(self.error_at_pos(
                            *pos,
                            node,
                            &format!("template {} not defined", kubeadm_api::gofmt::quote(name)),
                        ));
                    };
                    if self.depth == MAX_EXEC_DEPTH {
                        return Err(self.error_at_pos(
                            *pos,
                            node,
                            &format!("exceeded maximum template depth ({MAX_EXEC_DEPTH})"),
                        ));
                    }
                    // The pipeline's variables persist; the called template sees only `$`.
                    let v = match pipe {
                        Some(p) => self.pipe(p, dot)?,
                        None => None,
                    };
                    let mut called = Exec {
                        t: self.t,
                        vars: vec![("$".into(), v.clone())],
                        name: name.clone(),
                        depth: self.depth + 1,
                    };
                    called.nodes(body, &v, out)?;
                }
                Node::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.decl.is_empty() {
                        out.push_str(&print_value(&v));
                    }
                }
                Node::If(p, body, els) | Node::With(p, body, els) => {
                    let depth = self.vars.len();
                    let v = self.pipe(p, dot)?;
                    let with = matches!(n, Node::With(..));
                    let flow = if truth(&v) {
                        let d = if with { v } else { dot.clone() };
                        self.nodes(body, &d, out)?
                    } else {
                        self.nodes(els, dot, out)?
                    };
                    self.vars.truncate(depth);
                    if flow != Flow::Normal {
                        return Ok(flow);
                    }
                }
                Node::Range(p, body, els) => {
                    let depth = self.vars.len();
                    let v = self.pipe_value(p, dot)?;
                    let items: Vec<(Value, Value)> = match &v {
                        None => Vec::new(),
                        Some(Value::Array(a)) => a
                            .iter()
                            .enumerate()
                            .map(|(i, x)| (Value::from(i as i64), x.clone()))
                            .collect(),
                        Some(Value::Object(m)) => {
                            let mut keys: Vec<&String> = m.keys().collect();
                            keys.sort();
                            keys.into_iter()
                                .map(|k| (Value::String(k.clone()), m[k.as_str()].clone()))
                                .collect()
                        }
                        Some(Value::Number(n)) if n.is_i64() => (0..n.as_i64().unwrap_or(0))
                            .map(|i| (Value::from(i), Value::from(i)))
                            .collect(),
                        Some(other) => {
                            let cmd = &p.cmds[0];
                            return Err(self.error_at(
                                cmd,
                                &format!("range can't iterate over {}", gofmt::v(other, true)),
                            ));
                        }
                    };
                    if items.is_empty() {
                        // The else list is outside the loop: a break there ends the range above.
                        let flow = self.nodes(els, dot, out)?;
                        if flow != Flow::Normal {
                            self.vars.truncate(depth);
                            return Ok(flow);
                        }
                    }
                    for (k, x) in items {
                        match p.decl.as_slice() {
                            [e] => self.set(e, Some(x.clone()), p.assign),
                            [i, e] => {
                                self.set(i, Some(k), p.assign);
                                self.set(e, Some(x.clone()), p.assign);
                            }
                            _ => {}
                        }
                        if self.nodes(body, &Some(x), out)? == Flow::Break {
                            break;
                        }
                    }
                    self.vars.truncate(depth);
                }
            }
        }
        Ok(Flow::Normal)
    }

    fn set(&mut self, name: &str, v: V, assign: bool) {
        if assign && let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            slot.1 = v;
            return;
        }
        self.vars.push((name.to_string(), v));
    }

    /// A pipeline's value, its declarations made.
    fn pipe(&mut self, p: &Pipe, dot: &V) -> Result<V, TemplateError> {
        let v = self.pipe_value(p, dot)?;
        if let [d] = p.decl.as_slice() {
            self.set(d, v.clone(), p.assign);
        }
        Ok(v)
    }

    fn pipe_value(&mut self, p: &Pipe, dot: &V) -> Result<V, TemplateError> {
        let mut prev: Option<V> = None;
        for cmd in &p.cmds {
            prev = Some(self.command(cmd, dot, prev)?);
        }
        Ok(prev.unwrap_or(None))
    }

    fn command(&mut self, cmd: &Cmd, dot: &V, piped: Option<V>) -> Result<V, TemplateError> {
        let first = &cmd.args[0];
        if let Arg::Ident(f) = first {
            let mut args = Vec::new();
            for (i, a) in cmd.args.iter().enumerate().skip(1) {
                args.push(self.arg(a, dot, cmd, i)?);
            }
            if let Some(p) = piped {
                args.push(p);
            }
            return self.call(f, args, cmd);
        }
        if cmd.args.len() > 1 || piped.is_some() {
            let what = match first {
                Arg::Field(_) | Arg::Var(..) | Arg::Pipe(..) => "can't give argument to non-function",
                _ => "can't give argument to non-function",
            };
            return Err(self.error_at(
                cmd,
                &format!("{what} {}", cmd.text.split_whitespace().next().unwrap_or("")),
            ));
        }
        self.arg(first, dot, cmd, 0)
    }

    fn arg(&mut self, a: &Arg, dot: &V, cmd: &Cmd, index: usize) -> Result<V, TemplateError> {
        let span = &cmd.spans[index];
        Ok(match a {
            Arg::Field(chain) => self.chain(dot.clone(), chain, span)?,
            Arg::Var(name, chain) => {
                let v = self
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or(None);
                self.chain(v, chain, span)?
            }
            Arg::Str(s) => Some(Value::String(s.clone())),
            Arg::Int(i) => Some(Value::from(*i)),
            Arg::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number),
            Arg::Bool(b) => Some(Value::Bool(*b)),
            Arg::Nil => return Err(self.error_at(cmd, "nil is not a command")),
            Arg::Ident(f) => self.call(f, Vec::new(), cmd)?,
            Arg::Pipe(p, chain) => {
                let v = self.pipe_value(p, dot)?;
                self.chain(v, chain, span)?
            }
        })
    }

    fn chain(&self, mut v: V, chain: &[String], span: &(String, usize)) -> Result<V, TemplateError> {
        let err = |msg: String| self.error_at_pos(span.1, &span.0, &msg);
        for name in chain {
            v = match v {
                Some(Value::Object(m)) => match m.get(name) {
                    Some(x) => Some(x.clone()),
                    None if self.t.missing_key_error => {
                        return Err(err(format!(
                            "map has no entry for key {}",
                            kubeadm_api::gofmt::quote(name)
                        )));
                    }
                    None => None,
                },
                None | Some(Value::Null) => {
                    if self.t.missing_key_error {
                        return Err(err(format!(
                            "nil data; no entry for key {}",
                            kubeadm_api::gofmt::quote(name)
                        )));
                    }
                    None
                }
                // Every value below the root is held in an `interface{}`.
                Some(_) => return Err(err(format!("can't evaluate field {name} in type interface {{}}"))),
            };
        }
        Ok(v)
    }

    fn call(&self, f: &str, args: Vec<V>, cmd: &Cmd) -> Result<V, TemplateError> {
        let fail = |m: String| self.error_at(cmd, &format!("error calling {f}: {m}"));
        // The Go type of argument `i`: an integer constant of the template is an `int`, the data's
        // integers are `int64`.
        let type_of = |i: usize, v: &Value| -> &'static str {
            if matches!(cmd.args.get(i + 1), Some(Arg::Int(_))) {
                "int"
            } else {
                gofmt::type_name(v, true)
            }
        };
        let want = |n: usize| -> Result<(), TemplateError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(self.error_at(
                    cmd,
                    &format!("wrong number of args for {f}: want {n} got {}", args.len()),
                ))
            }
        };
        let at_least = |n: usize| -> Result<(), TemplateError> {
            if args.len() >= n {
                Ok(())
            } else {
                Err(self.error_at(
                    cmd,
                    &format!(
                        "wrong number of args for {f}: want at least {n} got {}",
                        args.len()
                    ),
                ))
            }
        };
        let s = |x: String| Ok(Some(Value::String(x)));
        match f {
            "and" => {
                at_least(1)?;
                Ok(args
                    .iter()
                    .find(|a| !truth(a))
                    .cloned()
                    .unwrap_or_else(|| args[args.len() - 1].clone()))
            }
            "or" => {
                at_least(1)?;
                Ok(args
                    .iter()
                    .find(|a| truth(a))
                    .cloned()
                    .unwrap_or_else(|| args[args.len() - 1].clone()))
            }
            "not" => {
                want(1)?;
                Ok(Some(Value::Bool(!truth(&args[0]))))
            }
            "len" => {
                want(1)?;
                match &args[0] {
                    Some(Value::String(x)) => Ok(Some(Value::from(x.len() as i64))),
                    Some(Value::Array(x)) => Ok(Some(Value::from(x.len() as i64))),
                    Some(Value::Object(x)) => Ok(Some(Value::from(x.len() as i64))),
                    None | Some(Value::Null) => Err(fail("len of nil pointer".into())),
                    Some(other) => Err(fail(format!("len of type {}", type_of(0, other)))),
                }
            }
            "index" => {
                at_least(1)?;
                let mut v = args[0].clone();
                for (at, i) in args.iter().enumerate().skip(1) {
                    let item_type = |x: &Value| {
                        if at == 1 {
                            type_of(0, x)
                        } else {
                            gofmt::type_name(x, true)
                        }
                    };
                    v = match (&v, i) {
                        (Some(Value::Object(m)), Some(Value::String(k))) => {
                            m.get(k).cloned().or(Some(Value::Null))
                        }
                        (Some(Value::Array(a)), Some(Value::Number(n))) if n.is_i64() => {
                            let x = n.as_i64().unwrap_or(0);
                            if x < 0 || x as usize >= a.len() {
                                return Err(fail(format!("index out of range: {x}")));
                            }
                            Some(a[x as usize].clone())
                        }
                        (None | Some(Value::Null), _) => return Err(fail("index of untyped nil".into())),
                        (Some(Value::Array(_)), _) => {
                            return Err(fail(
                                "cannot index slice/array with type ".to_string()
                                    + i.as_ref().map_or("<nil>", |x| type_of(at, x)),
                            ));
                        }
                        (Some(Value::Object(_)), _) => {
                            return Err(fail(format!(
                                "value has type {}; should be string",
                                i.as_ref().map_or("<nil>", |x| type_of(at, x))
                            )));
                        }
                        (Some(other), _) => {
                            return Err(fail(format!("can't index item of type {}", item_type(other))));
                        }
                    };
                }
                Ok(v)
            }
            "print" => s(sprint(&args)),
            "println" => s(args.iter().map(arg_v).collect::<Vec<_>>().join(" ") + "\n"),
            "printf" => {
                at_least(1)?;
                let Some(Value::String(format)) = &args[0] else {
                    return Err(self.error_at(
                        cmd,
                        "wrong type for value; expected string; got ".to_string().as_str(),
                    ));
                };
                s(sprintf(format, &args[1..]))
            }
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
                at_least(if f == "eq" { 1 } else { 2 })?;
                if f != "eq" {
                    want(2)?;
                }
                let r = compare(f, &args[0], &args[1..]).map_err(|e| fail(e.to_string()))?;
                Ok(Some(Value::Bool(r)))
            }
            "html" => s(html(&eval_args(&args))),
            "js" => s(js(&eval_args(&args))),
            "urlquery" => s(urlquery(&eval_args(&args))),
            "base64decode" => {
                want(1)?;
                let Some(Value::String(x)) = &args[0] else {
                    return Err(fail("wrong type for value; expected string".into()));
                };
                base64_decode(x)
                    .map_err(|e| fail(format!("base64 decode failed: {e}")))
                    .and_then(s)
            }
            "exists" => {
                at_least(1)?;
                let mut v = args[0].clone();
                for i in &args[1..] {
                    v = match (&v, i) {
                        (Some(Value::Object(m)), Some(Value::String(k))) => m.get(k).cloned(),
                        (Some(Value::Array(a)), Some(Value::Number(n))) => n
                            .as_i64()
                            .and_then(|x| usize::try_from(x).ok())
                            .and_then(|x| a.get(x))
                            .cloned(),
                        _ => return Ok(Some(Value::Bool(false))),
                    };
                }
                Ok(Some(Value::Bool(!matches!(v, None | Some(Value::Null)))))
            }
            "slice" => {
                at_least(1)?;
                slice(&args[0], &args[1..], &|v| type_of(0, v)).map_err(|e| fail(e.to_string()))
            }
            "call" => {
                at_least(1)?;
                // Go names the callee by its node (or, piped, by the value's String()).
                let callee = match cmd.spans.get(1) {
                    Some((text, _)) => text.clone(),
                    None => match &args[0] {
                        Some(Value::String(x)) => x.clone(),
                        other => format!(
                            "<{} Value>",
                            other.as_ref().map_or("<nil>", |v| gofmt::type_name(v, true))
                        ),
                    },
                };
                // Decoded JSON holds no functions.
                Err(fail(match &args[0] {
                    None | Some(Value::Null) => "call of nil".to_string(),
                    Some(v) => format!("non-function {callee} of type {}", type_of(0, v)),
                }))
            }
            _ => Err(self.error_at(cmd, &format!("{f} is not a defined function"))),
        }
    }
}

/// The capacity Go's `append` leaves a `[]interface{}` of `len` elements decoded from JSON (grown
/// one element at a time from empty: doubled up to 512); beyond that, its length (Go's size
/// classes are not modelled there).
fn decoded_cap(len: usize) -> usize {
    if len == 0 || len > 512 {
        len
    } else {
        len.next_power_of_two()
    }
}

/// Go's `slice` builtin on a decoded JSON value: `slice x`, `slice x i`, `slice x i j` and, on a
/// list, `slice x i j k`; indexes may reach the capacity (a list's positions past its length are
/// nil).
fn slice(item: &V, indexes: &[V], item_type: &dyn Fn(&Value) -> &'static str) -> Result<V, ValueError> {
    let (len, cap) = match item {
        None | Some(Value::Null) => return Err(ValueError::Type("slice of untyped nil".into())),
        _ if indexes.len() > 3 => {
            return Err(ValueError::Index(format!(
                "too many slice indexes: {}",
                indexes.len()
            )));
        }
        Some(Value::String(x)) => {
            if indexes.len() == 3 {
                return Err(ValueError::Type("cannot 3-index slice a string".into()));
            }
            (x.len(), x.len())
        }
        Some(Value::Array(a)) => (a.len(), decoded_cap(a.len())),
        Some(other) => {
            return Err(ValueError::Type(format!(
                "can't slice item of type {}",
                item_type(other)
            )));
        }
    };
    let mut idx = [0, len, 0];
    for (i, index) in indexes.iter().enumerate() {
        let x = match index {
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().unwrap_or(0),
            None | Some(Value::Null) => {
                return Err(ValueError::Type("cannot index slice/array with nil".into()));
            }
            Some(other) => {
                return Err(ValueError::Type(format!(
                    "cannot index slice/array with type {}",
                    gofmt::type_name(other, true)
                )));
            }
        };
        match usize::try_from(x) {
            Ok(x) if x <= cap => idx[i] = x,
            _ => return Err(ValueError::Index(format!("index out of range: {x}"))),
        }
    }
    if idx[0] > idx[1] {
        return Err(ValueError::Index(format!(
            "invalid slice index: {} > {}",
            idx[0], idx[1]
        )));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(ValueError::Index(format!(
            "invalid slice index: {} > {}",
            idx[1], idx[2]
        )));
    }
    Ok(Some(if let Some(Value::Array(a)) = item {
        Value::Array(
            (idx[0]..idx[1])
                .map(|i| a.get(i).cloned().unwrap_or(Value::Null))
                .collect(),
        )
    } else {
        // A string (the only other kind that gets here): its bytes, as Go slices them.
        let x = item.as_ref().and_then(Value::as_str).unwrap_or_default();
        Value::String(String::from_utf8_lossy(&x.as_bytes()[idx[0]..idx[1]]).into_owned())
    }))
}

/// fmt.Sprint: a space between operands when neither is a string.
fn sprint(args: &[V]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let is_str = matches!(a, Some(Value::String(_)));
        if i > 0 && !is_str && !matches!(args[i - 1], Some(Value::String(_))) {
            out.push(' ');
        }
        out.push_str(&arg_v(a));
    }
    out
}

/// text/template's evalArgs: the one string argument, else fmt.Sprint of all.
fn eval_args(args: &[V]) -> String {
    if let [Some(Value::String(x))] = args {
        return x.clone();
    }
    sprint(args)
}

enum Kind {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Nil,
    Other,
}

fn kind(v: &V) -> Kind {
    match v {
        None | Some(Value::Null) => Kind::Nil,
        Some(Value::Bool(b)) => Kind::Bool(*b),
        Some(Value::String(s)) => Kind::Str(s.clone()),
        Some(Value::Number(n)) => match gofmt::num(n, true) {
            Num::Int(i) => Kind::Int(i),
            Num::Float(f) => Kind::Float(f),
        },
        _ => Kind::Other,
    }
}

fn compare(f: &str, a: &V, rest: &[V]) -> Result<bool, ValueError> {
    const INCOMPATIBLE: &str = "incompatible types for comparison";
    const BAD: &str = "invalid type for comparison";
    if rest.is_empty() {
        return Err(ValueError::Type("missing argument for comparison".into()));
    }
    // Go names the two types; an integer is named `int`, as template literals are.
    let tname = |v: &V| match kind(v) {
        Kind::Bool(_) => "bool",
        Kind::Int(_) => "int",
        Kind::Float(_) => "float64",
        Kind::Str(_) => "string",
        Kind::Nil => "<nil>",
        Kind::Other => v.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
    };
    let incompatible =
        |a: &V, b: &V| ValueError::Type(format!("{INCOMPATIBLE}: {} and {}", tname(a), tname(b)));
    let eq = |a: &V, b: &V| -> Result<bool, ValueError> {
        match (kind(a), kind(b)) {
            (Kind::Bool(x), Kind::Bool(y)) => Ok(x == y),
            (Kind::Int(x), Kind::Int(y)) => Ok(x == y),
            (Kind::Float(x), Kind::Float(y)) => Ok(x == y),
            (Kind::Str(x), Kind::Str(y)) => Ok(x == y),
            (Kind::Nil, Kind::Nil) => Ok(true),
            (Kind::Nil, _) | (_, Kind::Nil) => Ok(false),
            (Kind::Other, Kind::Other) => Err(ValueError::Type(format!(
                "non-comparable types {}: {}, {}: {}",
                arg_v(a),
                a.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                b.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                arg_v(b)
            ))),
            _ => Err(incompatible(a, b)),
        }
    };
    let lt = |a: &V, b: &V| -> Result<bool, ValueError> {
        match (kind(a), kind(b)) {
            (Kind::Int(x), Kind::Int(y)) => Ok(x < y),
            (Kind::Float(x), Kind::Float(y)) => Ok(x < y),
            (Kind::Str(x), Kind::Str(y)) => Ok(x < y),
            (Kind::Nil | Kind::Other | Kind::Bool(_), _) | (_, Kind::Nil | Kind::Other | Kind::Bool(_)) => {
                Err(ValueError::Type(BAD.into()))
            }
            _ => Err(incompatible(a, b)),
        }
    };
    let b = &rest[0];
    match f {
        "eq" => {
            for r in rest {
                if eq(a, r)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        "ne" => eq(a, b).map(|t| !t),
        "lt" => lt(a, b),
        "le" => Ok(lt(a, b)? || eq(a, b)?),
        "gt" => Ok(!(lt(a, b)? || eq(a, b)?)),
        _ => lt(a, b).map(|t| !t),
    }
}

fn html(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn js(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn urlquery(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// Go's `base64.StdEncoding.DecodeString` (padded, strict), with its error text.
fn base64_decode(s: &str) -> Result<String, ValueError> {
    use base64::Engine as _;
    let stripped: String = s.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    match base64::engine::general_purpose::STANDARD.decode(&stripped) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(base64::DecodeError::InvalidByte(i, _)) => Err(ValueError::Base64(i)),
        Err(_) => {
            // A length that is not a multiple of four: Go reports the end of the last full quantum.
            let i = stripped.len() / 4 * 4;
            Err(ValueError::Base64(i))
        }
    }
}

/// fmt.Sprintf for the verbs templates use: `%v %s %d %q %f %t %x %X %%`, flags `-+ 0#`, width
/// and precision.
fn sprintf(format: &str, args: &[V]) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    let mut argi = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut minus = false;
        let mut zero = false;
        let mut plus = false;
        let mut space = false;
        while let Some(&f) = chars.peek() {
            match f {
                '-' => minus = true,
                '0' => zero = true,
                '+' => plus = true,
                ' ' => space = true,
                '#' => {}
                _ => break,
            }
            chars.next();
        }
        let mut width: Option<usize> = None;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            width = Some(width.unwrap_or(0) * 10 + d as usize);
            chars.next();
        }
        let mut prec: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            prec = Some(0);
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                prec = Some(prec.unwrap_or(0) * 10 + d as usize);
                chars.next();
            }
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(argi) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        argi += 1;
        let bad = || {
            format!(
                "%!{verb}({}={})",
                arg.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                arg_v(arg)
            )
        };
        let text = match (verb, kind(arg)) {
            ('v', Kind::Float(f)) | ('f' | 'g' | 'e', Kind::Float(f)) if verb == 'v' || verb == 'g' => {
                if let Some(p) = prec {
                    format!("{f:.p$}")
                } else {
                    gofmt::float_v(f)
                }
            }
            ('v', _) => {
                if arg.is_none() || matches!(arg, Some(Value::Null)) {
                    "<nil>".into()
                } else {
                    arg_v(arg)
                }
            }
            ('s', Kind::Str(s)) => match prec {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            },
            ('s', Kind::Other) => arg_v(arg),
            ('q', Kind::Str(s)) => kubeadm_api::gofmt::quote(&s),
            ('d', Kind::Int(i)) => {
                if plus && i >= 0 {
                    format!("+{i}")
                } else if space && i >= 0 {
                    format!(" {i}")
                } else {
                    i.to_string()
                }
            }
            ('x', Kind::Int(i)) => format!("{i:x}"),
            ('X', Kind::Int(i)) => format!("{i:X}"),
            ('x', Kind::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
            ('f' | 'F', Kind::Float(f)) => format!("{f:.*}", prec.unwrap_or(6)),
            ('e', Kind::Float(f)) => {
                let s = format!("{f:.*e}", prec.unwrap_or(6));
                match s.split_once('e') {
                    Some((m, e)) => {
                        let n: i32 = e.parse().unwrap_or(0);
                        format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
                    }
                    None => s,
                }
            }
            ('t', Kind::Bool(b)) => b.to_string(),
            ('s' | 'q' | 'd' | 'x' | 'X' | 'f' | 'F' | 'e' | 't', Kind::Nil) => format!("%!{verb}(<nil>)"),
            _ => bad(),
        };
        let numeric = matches!(verb, 'd' | 'f' | 'F' | 'e' | 'x' | 'X');
        let len = text.chars().count();
        match width {
            Some(w) if w > len => {
                let pad = w - len;
                if minus {
                    out.push_str(&text);
                    out.push_str(&" ".repeat(pad));
                } else if zero && numeric {
                    let (sign, digits) = match text.strip_prefix(['-', '+']) {
                        Some(d) => (&text[..1], d),
                        None => ("", text.as_str()),
                    };
                    out.push_str(sign);
                    out.push_str(&"0".repeat(pad));
                    out.push_str(digits);
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(&text);
                }
            }
            _ => out.push_str(&text),
        }
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|a| {
                format!(
                    "{}={}",
                    a.as_ref().map_or("<nil>", |x| gofmt::type_name(x, true)),
                    arg_v(a)
                )
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}
