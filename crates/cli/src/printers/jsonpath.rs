//! kubectl's JSONPath dialect (client-go's `util/jsonpath`) over a decoded JSON object, in which
//! every number is a float64 (the printer decodes with encoding/json into `interface{}`).
//!
//! The engine keeps upstream's state between runs of one printer: `{range}` narrows the list of
//! top-level nodes for the next run and its counters survive an error, so a printer run once per
//! object (`token list`) behaves as upstream's does on the second object too.

use std::rc::Rc;

use serde_json::Value;

use super::gofmt;

#[derive(Debug, Clone, Copy, Default)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

#[derive(Debug, Clone)]
enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Array([Param; 3]),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

/// A value the walk yields: a part of the object, or a literal of the template.
#[derive(Debug, Clone)]
enum Val<'a> {
    Json(&'a Value),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Nothing (the object an empty `{range}` runs its body on).
    Invalid,
}

// ---- parser ----

struct Parser<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
    width: usize,
    root: Vec<Node>,
}

const EOF: Option<char> = None;

fn is_terminator(r: Option<char>) -> bool {
    match r {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Why a JSONPath template could not be parsed or run, in the words of client-go's `jsonpath`
/// package (kubectl prints them inside its own message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JsonPathError {
    /// The template is not valid JSONPath: `unclosed action`, `unterminated array`, `invalid array
    /// index x`.
    #[error("{0}")]
    Syntax(String),
    /// A quoted string in the template has an invalid escape or quote (Go's `strconv.ErrSyntax`).
    #[error("unquote string {0} error invalid syntax")]
    Unquote(String),
    /// An identifier the template may not use there: `unrecognized identifier x`, `not in range,
    /// nothing to end`, `unrecognized filter operator x`.
    #[error("{0}")]
    Identifier(String),
    /// A field the object does not have, when missing keys are not allowed.
    #[error("{0} is not found")]
    NotFound(String),
    /// A value of the wrong kind for the step: `string is not array or slice`, `incompatible types
    /// for comparison`.
    #[error("{0}")]
    Type(String),
    /// An index or slice outside a list: `array index out of bounds: index 3, length 2`, `step must
    /// be > 0`.
    #[error("{0}")]
    Index(String),
}

/// Parses `text` as a whole template: its top-level nodes.
fn parse(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let mut p = Parser {
        input: text,
        pos: 0,
        start: 0,
        width: 0,
        root: Vec::new(),
    };
    p.parse_text()?;
    Ok(p.root)
}

/// `{text}` parsed: the nodes of its one action.
fn parse_action(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let mut nodes = parse(&format!("{{{text}}}"))?;
    match nodes.swap_remove(0) {
        Node::List(l) => Ok(l),
        other => Ok(vec![other]),
    }
}

impl Parser<'_> {
    fn next(&mut self) -> Option<char> {
        match self.input[self.pos..].chars().next() {
            None => {
                self.width = 0;
                EOF
            }
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                Some(c)
            }
        }
    }
    fn backup(&mut self) {
        self.pos -= self.width;
    }
    fn peek(&mut self) -> Option<char> {
        let r = self.next();
        self.backup();
        r
    }
    fn consume(&mut self) -> String {
        let v = self.input[self.start..self.pos].to_string();
        self.start = self.pos;
        v
    }
    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn parse_text(&mut self) -> Result<(), JsonPathError> {
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    let t = self.consume();
                    self.root.push(Node::Text(t));
                }
                self.pos += 1;
                self.consume();
                let mut cur = Vec::new();
                let after = self.parse_inside(&mut cur)?;
                self.root.push(Node::List(cur));
                self.root.extend(after);
                return Ok(());
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            let t = self.consume();
            self.root.push(Node::Text(t));
        }
        Ok(())
    }

    /// Parses the inside of an action into `cur`; at its closing brace, parses the rest of the
    /// template and returns the top-level nodes that follow.
    fn parse_inside(&mut self, cur: &mut Vec<Node>) -> Result<Vec<Node>, JsonPathError> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                let saved = std::mem::take(&mut self.root);
                let r = self.parse_text();
                let after = std::mem::replace(&mut self.root, saved);
                r?;
                return Ok(after);
            }
            if rest.starts_with("[?(") {
                self.parse_filter(cur)?;
                continue;
            }
            if rest.starts_with("..") {
                if matches!(cur.last(), Some(Node::Recursive)) {
                    return Err(JsonPathError::Syntax("invalid multiple recursive descent".into()));
                }
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if self.peek().is_some_and(is_alnum) {
                    self.parse_field(cur);
                }
                continue;
            }
            match self.next() {
                None | Some('\r') | Some('\n') => {
                    return Err(JsonPathError::Syntax("unclosed action".into()));
                }
                Some(' ') | Some('@') | Some('$') => {
                    self.consume();
                }
                Some('[') => self.parse_array(cur)?,
                Some(q @ ('"' | '\'')) => self.parse_quote(cur, q)?,
                Some('.') => self.parse_field(cur),
                Some(c) if c == '+' || c == '-' || c.is_numeric() => {
                    self.backup();
                    self.parse_number(cur)?;
                }
                Some(c) if is_alnum(c) => {
                    self.backup();
                    loop {
                        let r = self.next();
                        if is_terminator(r) {
                            if r.is_some() {
                                self.backup();
                            }
                            break;
                        }
                    }
                    let v = self.consume();
                    match v.as_str() {
                        "true" => cur.push(Node::Bool(true)),
                        "false" => cur.push(Node::Bool(false)),
                        _ => cur.push(Node::Identifier(v)),
                    }
                }
                Some(c) => {
                    return Err(JsonPathError::Syntax(format!(
                        "unrecognized character in action: U+{:04X} '{c}'",
                        c as u32
                    )));
                }
            }
        }
    }

    fn parse_number(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || c.is_numeric() => {}
                Some(_) => {
                    self.backup();
                    break;
                }
                None => break,
            }
        }
        let v = self.consume();
        if let Ok(i) = v.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Some(f) = go_parse_float(&v) {
            cur.push(Node::Float(f));
        } else {
            return Err(JsonPathError::Syntax(format!("cannot parse number {v}")));
        }
        Ok(())
    }

    fn parse_array(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Syntax("unterminated array".into())),
                Some(']') => break,
                _ => {}
            }
        }
        let text = self.consume();
        let mut text = text[1..text.len() - 1].to_string();
        if text == "*" {
            text = ":".into();
        }
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 1 {
            let mut union = Vec::new();
            for part in parts {
                union.push(parse_action(&format!("[{}]", part.trim_matches(' ')))?);
            }
            cur.push(Node::Union(union));
            return Ok(());
        }
        if text.len() >= 2
            && text.starts_with('\'')
            && text.ends_with('\'')
            && !text[1..text.len() - 1].contains('\'')
        {
            cur.extend(parse_action(&format!(".{}", &text[1..text.len() - 1]))?);
            return Ok(());
        }
        let groups = slice_groups(&text)
            .ok_or_else(|| JsonPathError::Syntax(format!("invalid array index {text}")))?;
        let mut params = [Param::default(); 3];
        for i in 0..3 {
            let g = groups[i];
            if !g.is_empty() {
                let g = if i > 0 { &g[1..] } else { g };
                if i > 0 && g.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value = g
                        .parse()
                        .map_err(|_| JsonPathError::Syntax(format!("array index {g} is not a number")))?;
                }
            } else if i == 1 {
                params[i] = Param {
                    known: true,
                    value: params[0].value + 1,
                    derived: true,
                };
            }
        }
        cur.push(Node::Array(params));
        Ok(())
    }

    fn parse_filter(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end) = (false, false);
        let mut pair = '"';
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Syntax("unterminated filter".into())),
                Some(r @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = r;
                        continue;
                    }
                    if self.input.as_bytes()[self.pos - 2] != b'\\' && r == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                _ => {}
            }
        }
        if self.next() != Some(']') {
            return Err(JsonPathError::Syntax("unclosed array expect ]".into()));
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        match split_filter(text) {
            None => cur.push(Node::Filter {
                left: parse_action(text)?,
                right: Vec::new(),
                op: "exists".into(),
            }),
            Some((l, op, r)) => {
                let left = parse_action(l)?;
                let right = parse_action(r)?;
                cur.push(Node::Filter {
                    left,
                    right,
                    op: op.into(),
                });
            }
        }
        Ok(())
    }

    fn parse_quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Syntax("unterminated quoted string".into())),
                Some(c) if c == end && self.input.as_bytes()[self.pos - 2] != b'\\' => break,
                _ => {}
            }
        }
        let v = self.consume();
        let s = unquote(&v).ok_or_else(|| JsonPathError::Unquote(v.clone()))?;
        cur.push(Node::Text(s));
        Ok(())
    }

    fn parse_field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            let r = self.next();
            if r == Some('\\') {
                self.next();
            } else if is_terminator(r) {
                if r.is_some() {
                    self.backup();
                }
                break;
            }
        }
        let v = self.consume();
        if v == "*" {
            cur.push(Node::Wildcard);
        } else {
            cur.push(Node::Field(v.replace('\\', "")));
        }
    }
}

/// `^(-?\d*)(:-?\d*)?(:-?\d*)?$`: the three groups, empty when absent.
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    fn num_end(s: &str, from: usize) -> usize {
        let b = s.as_bytes();
        let mut i = from;
        if i < b.len() && b[i] == b'-' {
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    }
    let mut groups = [""; 3];
    let e0 = num_end(text, 0);
    groups[0] = &text[..e0];
    let mut at = e0;
    for g in groups.iter_mut().skip(1) {
        if text[at..].starts_with(':') {
            let e = num_end(text, at + 1);
            *g = &text[at..e];
            at = e;
        }
    }
    (at == text.len()).then_some(groups)
}

/// `^([^!<>=]+)([!<>=]+)(.+?)$`.
fn split_filter(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let l_end = text.find(is_op)?;
    if l_end == 0 {
        return None;
    }
    let rest = &text[l_end..];
    let op_len = rest.find(|c| !is_op(c)).unwrap_or(rest.len());
    let right = &rest[op_len..];
    if right.is_empty() || right.contains('\n') {
        return None;
    }
    Some((&text[..l_end], &rest[..op_len], right))
}

/// Go's `strconv.ParseFloat` for the digits-and-dots the number parser collects.
fn go_parse_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    if body.is_empty() || body.matches('.').count() > 1 || body == "." {
        return None;
    }
    s.parse().ok()
}

/// client-go's `UnquoteExtend`: Go's unquoting for `"…"` and `'…'`; `None` on invalid syntax.
fn unquote(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b[b.len() - 1] || (b[0] != b'"' && b[0] != b'\'') {
        return None;
    }
    let quote = b[0] as char;
    let body = &s[1..s.len() - 1];
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '\'' | '"' if e == quote => out.push(e),
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(n).collect();
                let v = u32::from_str_radix(&hex, 16).ok()?;
                if hex.len() != n {
                    return None;
                }
                out.push(char::from_u32(v)?);
            }
            '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                let v = u32::from_str_radix(&format!("{e}{rest}"), 8).ok()?;
                if v > 255 {
                    return None;
                }
                out.push(char::from_u32(v)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

// ---- evaluation ----

/// A parsed JSONPath template and the state upstream keeps between its runs.
#[derive(Debug)]
pub(crate) struct JsonPath {
    nodes: Rc<Vec<Node>>,
    root_start: usize,
    begin_range: usize,
    in_range: usize,
    end_range: usize,
    last_end: Option<usize>,
    pub(crate) allow_missing_keys: bool,
    pub(crate) output_json: bool,
}

impl JsonPath {
    /// Parses `text`; the error is upstream's parser's message.
    pub(crate) fn parse(text: &str) -> Result<Self, JsonPathError> {
        Ok(JsonPath {
            nodes: Rc::new(parse(text)?),
            root_start: 0,
            begin_range: 0,
            in_range: 0,
            end_range: 0,
            last_end: None,
            allow_missing_keys: true,
            output_json: false,
        })
    }

    /// Runs the template on `data`: the text, or upstream's error message.
    pub(crate) fn execute(&mut self, data: &Value) -> Result<String, JsonPathError> {
        let results = self.find_results(Val::Json(data))?;
        let mut out = String::new();
        for r in results {
            self.print_results(&mut out, r);
        }
        Ok(out)
    }

    fn find_results<'a>(&mut self, data: Val<'a>) -> Result<Vec<Vec<Val<'a>>>, JsonPathError> {
        let nodes = Rc::clone(&self.nodes);
        let cur = vec![data];
        let mut full = Vec::new();
        let mut i = self.root_start;
        while i < nodes.len() {
            let results = self.walk(&cur, &nodes[i])?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    self.root_start = i + 1;
                    self.find_results(Val::Invalid)?;
                } else {
                    for v in results {
                        self.root_start = i + 1;
                        full.extend(self.find_results(v)?);
                    }
                }
                self.in_range -= 1;
                for k in i + 1..nodes.len() {
                    if self.last_end == Some(k) {
                        i = k;
                        break;
                    }
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn print_results(&self, out: &mut String, results: Vec<Val<'_>>) {
        if self.output_json {
            let arr = Value::Array(results.iter().map(to_value).collect());
            out.push_str(&gofmt::json(&arr, Some("    "), false));
            out.push('\n');
            return;
        }
        let n = results.len();
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Val::Json(v @ (Value::Object(_) | Value::Array(_))) => {
                    out.push_str(&gofmt::json(v, None, false))
                }
                Val::Json(v) => out.push_str(&gofmt::v(v, false)),
                Val::Str(s) => out.push_str(&s),
                Val::Int(x) => out.push_str(&x.to_string()),
                Val::Float(f) => out.push_str(&gofmt::float_v(f)),
                Val::Bool(b) => out.push_str(&b.to_string()),
                Val::Invalid => out.push_str("<no value>"),
            }
            if i + 1 != n {
                out.push(' ');
            }
        }
    }

    fn walk<'a>(&mut self, input: &[Val<'a>], node: &Node) -> Result<Vec<Val<'a>>, JsonPathError> {
        match node {
            Node::List(nodes) => self.eval_list(input, nodes),
            Node::Text(t) => Ok(vec![Val::Str(t.clone())]),
            Node::Field(name) => self.eval_field(input, name),
            Node::Array(params) => eval_array(input, *params),
            Node::Filter { left, right, op } => self.eval_filter(input, left, right, op),
            Node::Int(v) => Ok(input.iter().map(|_| Val::Int(*v)).collect()),
            Node::Float(v) => Ok(input.iter().map(|_| Val::Float(*v)).collect()),
            Node::Bool(v) => Ok(input.iter().map(|_| Val::Bool(*v)).collect()),
            Node::Wildcard => Ok(input.iter().flat_map(children).collect()),
            Node::Recursive => Ok(recursive(input)),
            Node::Union(lists) => {
                let mut out = Vec::new();
                for l in lists {
                    out.extend(self.eval_list(input, l)?);
                }
                Ok(out)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input.to_vec())
                }
                "end" if self.in_range > 0 => {
                    self.end_range += 1;
                    Ok(Vec::new())
                }
                "end" => Err(JsonPathError::Identifier("not in range, nothing to end".into())),
                other => Err(JsonPathError::Identifier(format!(
                    "unrecognized identifier {other}"
                ))),
            },
        }
    }

    fn eval_list<'a>(&mut self, input: &[Val<'a>], nodes: &[Node]) -> Result<Vec<Val<'a>>, JsonPathError> {
        let mut cur = input.to_vec();
        for n in nodes {
            cur = self.walk(&cur, n)?;
        }
        Ok(cur)
    }

    fn eval_field<'a>(&self, input: &[Val<'a>], name: &str) -> Result<Vec<Val<'a>>, JsonPathError> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let mut results = Vec::new();
        for v in input {
            if let Val::Json(Value::Object(map)) = v
                && let Some(found) = map.get(name)
            {
                results.push(Val::Json(found));
            }
        }
        if results.is_empty() && !self.allow_missing_keys {
            return Err(JsonPathError::NotFound(name.to_string()));
        }
        Ok(results)
    }

    fn eval_filter<'a>(
        &mut self,
        input: &[Val<'a>],
        left: &[Node],
        right: &[Node],
        op: &str,
    ) -> Result<Vec<Val<'a>>, JsonPathError> {
        let mut results = Vec::new();
        for v in input {
            let items = match v {
                Val::Json(Value::Array(items)) => items,
                other => {
                    return Err(JsonPathError::Type(format!(
                        "{} is not array or slice and cannot be filtered",
                        val_v(other)
                    )));
                }
            };
            for item in items {
                let temp = [Val::Json(item)];
                let lefts = self.eval_list(&temp, left);
                if op == "exists" {
                    if lefts.is_ok_and(|l| !l.is_empty()) {
                        results.push(Val::Json(item));
                    }
                    continue;
                }
                let lefts = lefts?;
                match lefts.len() {
                    0 => continue,
                    1 => {}
                    _ => {
                        return Err(JsonPathError::Type(
                            "can only compare one element at a time".into(),
                        ));
                    }
                }
                let rights = self.eval_list(&temp, right)?;
                match rights.len() {
                    0 => continue,
                    1 => {}
                    _ => {
                        return Err(JsonPathError::Type(
                            "can only compare one element at a time".into(),
                        ));
                    }
                }
                if compare(&lefts[0], &rights[0], op)? {
                    results.push(Val::Json(item));
                }
            }
        }
        Ok(results)
    }
}

fn to_value(v: &Val<'_>) -> Value {
    match v {
        Val::Json(v) => (*v).clone(),
        Val::Str(s) => Value::String(s.clone()),
        Val::Int(i) => Value::from(*i),
        Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Val::Bool(b) => Value::Bool(*b),
        Val::Invalid => Value::Null,
    }
}

/// `%v` of a value.
fn val_v(v: &Val<'_>) -> String {
    match v {
        Val::Json(v) => gofmt::v(v, false),
        Val::Str(s) => s.clone(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => gofmt::float_v(*f),
        Val::Bool(b) => b.to_string(),
        Val::Invalid => "<invalid reflect.Value>".into(),
    }
}

/// The elements of a list or string, or the values of a map (in key order: Go's is random).
fn children<'a>(v: &Val<'a>) -> Vec<Val<'a>> {
    match v {
        Val::Json(Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.into_iter().map(|k| Val::Json(&map[k.as_str()])).collect()
        }
        Val::Json(Value::Array(items)) => items.iter().map(Val::Json).collect(),
        // A string's elements are its bytes (Go's uint8).
        Val::Json(Value::String(s)) => s.bytes().map(|b| Val::Int(i64::from(b))).collect(),
        Val::Str(s) => s.bytes().map(|b| Val::Int(i64::from(b))).collect(),
        _ => Vec::new(),
    }
}

fn recursive<'a>(input: &[Val<'a>]) -> Vec<Val<'a>> {
    let mut result = Vec::new();
    for v in input {
        let kids = children(v);
        if !kids.is_empty() {
            result.push(v.clone());
            result.extend(recursive(&kids));
        }
    }
    result
}

fn eval_array<'a>(input: &[Val<'a>], node: [Param; 3]) -> Result<Vec<Val<'a>>, JsonPathError> {
    let mut result = Vec::new();
    for v in input {
        let items = match v {
            Val::Json(Value::Null) => continue,
            Val::Json(Value::Array(items)) => items,
            Val::Json(other) => {
                return Err(JsonPathError::Type(format!(
                    "{} is not array or slice",
                    gofmt::type_name(other, false)
                )));
            }
            Val::Str(_) => return Err(JsonPathError::Type("string is not array or slice".into())),
            Val::Int(_) => return Err(JsonPathError::Type("int is not array or slice".into())),
            Val::Float(_) => return Err(JsonPathError::Type("float64 is not array or slice".into())),
            Val::Bool(_) => return Err(JsonPathError::Type("bool is not array or slice".into())),
            Val::Invalid => {
                return Err(JsonPathError::Type(
                    "<invalid Value> is not array or slice".into(),
                ));
            }
        };
        let len = items.len() as i64;
        let mut p = node;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value == p[0].value {
            return Ok(result);
        }
        if p[0].value >= len || p[0].value < 0 {
            return Err(JsonPathError::Index(format!(
                "array index out of bounds: index {}, length {len}",
                p[0].value
            )));
        }
        if p[1].value > len || p[1].value < 0 {
            return Err(JsonPathError::Index(format!(
                "array index out of bounds: index {}, length {len}",
                p[1].value - 1
            )));
        }
        if p[0].value > p[1].value {
            return Err(JsonPathError::Index(format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            )));
        }
        let slice = &items[p[0].value as usize..p[1].value as usize];
        let step = if p[2].known {
            if p[2].value <= 0 {
                return Err(JsonPathError::Index("step must be > 0".into()));
            }
            p[2].value as usize
        } else {
            1
        };
        result.extend(slice.iter().step_by(step).map(Val::Json));
    }
    Ok(result)
}

#[derive(PartialEq)]
enum Basic {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

fn basic(v: &Val<'_>) -> Result<Basic, JsonPathError> {
    Ok(match v {
        Val::Json(Value::Bool(b)) | Val::Bool(b) => Basic::Bool(*b),
        Val::Json(Value::Number(n)) => Basic::Float(n.as_f64().unwrap_or(0.0)),
        Val::Json(Value::String(s)) => Basic::Str(s.clone()),
        Val::Str(s) => Basic::Str(s.clone()),
        Val::Int(i) => Basic::Int(*i),
        Val::Float(f) => Basic::Float(*f),
        _ => return Err(JsonPathError::Type("invalid type for comparison".into())),
    })
}

/// The forked text/template comparisons: same basic kinds only (a JSON number is a float64, an
/// integer literal an int: they do not compare).
fn compare(l: &Val<'_>, r: &Val<'_>, op: &str) -> Result<bool, JsonPathError> {
    let (a, b) = (basic(l)?, basic(r)?);
    let incompatible = || {
        Err(JsonPathError::Type(
            "incompatible types for comparison".to_string(),
        ))
    };
    let eq = || -> Result<bool, JsonPathError> {
        match (&a, &b) {
            (Basic::Bool(x), Basic::Bool(y)) => Ok(x == y),
            (Basic::Int(x), Basic::Int(y)) => Ok(x == y),
            (Basic::Float(x), Basic::Float(y)) => Ok(x == y),
            (Basic::Str(x), Basic::Str(y)) => Ok(x == y),
            _ => incompatible(),
        }
    };
    let less = || -> Result<bool, JsonPathError> {
        match (&a, &b) {
            (Basic::Int(x), Basic::Int(y)) => Ok(x < y),
            (Basic::Float(x), Basic::Float(y)) => Ok(x < y),
            (Basic::Str(x), Basic::Str(y)) => Ok(x < y),
            (Basic::Bool(_), Basic::Bool(_)) => {
                Err(JsonPathError::Type("invalid type for comparison".into()))
            }
            _ => incompatible(),
        }
    };
    match op {
        "==" => eq(),
        "!=" => eq().map(|t| !t),
        "<" => less(),
        ">=" => less().map(|t| !t),
        "<=" => {
            let lt = less()?;
            if lt { Ok(true) } else { eq() }
        }
        ">" => {
            let lt = less()?;
            if lt { Ok(false) } else { eq().map(|t| !t) }
        }
        other => Err(JsonPathError::Identifier(format!(
            "unrecognized filter operator {other}"
        ))),
    }
}
