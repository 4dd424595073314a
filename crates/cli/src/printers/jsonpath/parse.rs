//! The parser: a JSONPath template as client-go's `util/jsonpath` parser reads it (text, `{…}`
//! actions, fields, arrays and slices, filters, unions, `range`/`end`), with its error words.

#[allow(unused_imports)]
use super::*;

pub(super) struct Parser<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
    width: usize,
    root: Vec<Node>,
}

pub(super) const EOF: Option<char> = None;

pub(super) fn is_terminator(r: Option<char>) -> bool {
    match r {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

pub(super) fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Parses `text` as a whole template: its top-level nodes.
pub(super) fn parse(text: &str) -> Result<Vec<Node>, JsonPathError> {
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
pub(super) fn parse_action(text: &str) -> Result<Vec<Node>, JsonPathError> {
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
pub(super) fn slice_groups(text: &str) -> Option<[&str; 3]> {
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
pub(super) fn split_filter(text: &str) -> Option<(&str, &str, &str)> {
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
pub(super) fn go_parse_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    if body.is_empty() || body.matches('.').count() > 1 || body == "." {
        return None;
    }
    s.parse().ok()
}

/// client-go's `UnquoteExtend`: Go's unquoting for `"…"` and `'…'`; `None` on invalid syntax.
pub(super) fn unquote(s: &str) -> Option<String> {
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
