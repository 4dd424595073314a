//! Execution: the node tree run on the decoded JSON, with Go's rules for pipelines, variables,
//! field chains, `range`, `with`, nested templates and the builtin functions' dispatch.

#[allow(unused_imports)]
use super::*;

/// A value in execution: `None` is Go's invalid value (`<no value>`).
pub(super) type V = Option<Value>;

pub(super) struct Exec<'a> {
    t: &'a Template,
    vars: Vec<(String, V)>,
    /// The template being executed (`executing "NAME"` in errors) and how deep in template calls.
    name: String,
    depth: usize,
}

/// How a list of nodes ended: normally, or at a `{{break}}` or `{{continue}}`.
#[derive(PartialEq)]
pub(super) enum Flow {
    Normal,
    Break,
    Continue,
}

impl Template {
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

pub(super) fn truth(v: &V) -> bool {
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
pub(super) fn print_value(v: &V) -> String {
    match v {
        None | Some(Value::Null) => "<no value>".into(),
        Some(v) => gofmt::v(v, true),
    }
}

/// fmt's `%v` of a function argument (a missing value is a nil interface).
pub(super) fn arg_v(v: &V) -> String {
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
pub(super) fn decoded_cap(len: usize) -> usize {
    if len == 0 || len > 512 {
        len
    } else {
        len.next_power_of_two()
    }
}
