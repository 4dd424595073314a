//! The parser: tokens into the template's node tree, with Go's parse errors (their positions and
//! words) and its rules for `define`, `block`, `else if`, `break` and `continue`.

#[allow(unused_imports)]
use super::*;

pub(super) struct Parser<'a> {
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
pub(super) fn is_empty_tree(nodes: &[Node]) -> bool {
    nodes
        .iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

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
pub(super) fn template_node_text(name: &str, pipe: Option<&str>) -> String {
    match pipe.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => format!("{{{{template {} {p}}}}}", kubeadm_api::gofmt::quote(name)),
        None => format!("{{{{template {}}}}}", kubeadm_api::gofmt::quote(name)),
    }
}

pub(super) fn tok_text(t: &Tok) -> String {
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
pub(super) fn go_item(text: &str) -> String {
    if text.chars().count() > 10 {
        let head: String = text.chars().take(10).collect();
        format!("{}...", kubeadm_api::gofmt::quote(&head))
    } else {
        kubeadm_api::gofmt::quote(text)
    }
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
}
