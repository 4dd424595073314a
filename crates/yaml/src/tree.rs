//! The node tree of one YAML document, built from the parser's events, with anchors resolved.
//!
//! Building a tree first (rather than converting events straight to JSON) is what lets aliases
//! and `<<` merge keys be expanded the way yaml.v2 expands them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use crate::{ParseError, Position};

/// A node of the document.
#[derive(Debug)]
pub(crate) enum Node {
    Scalar {
        value: String,
        /// Plain scalars without a tag are resolved (YAML 1.1); others are strings unless tagged.
        plain: bool,
        tag: Option<Tag>,
        pos: Position,
    },
    Sequence {
        items: Vec<Rc<Node>>,
        pos: Position,
    },
    Mapping {
        entries: Vec<(Rc<Node>, Rc<Node>)>,
        pos: Position,
    },
    /// An alias: the anchored node, and where the alias itself is.
    Alias {
        target: Rc<Node>,
        pos: Position,
    },
}

impl Node {
    pub(crate) fn position(&self) -> Position {
        match self {
            Node::Scalar { pos, .. }
            | Node::Sequence { pos, .. }
            | Node::Mapping { pos, .. }
            | Node::Alias { pos, .. } => *pos,
        }
    }

    /// The node an alias stands for (the node itself otherwise).
    pub(crate) fn resolved(&self) -> &Node {
        match self {
            Node::Alias { target, .. } => target.resolved(),
            other => other,
        }
    }
}

/// Reads the first document of `text` (yaml.v2's `Unmarshal` reads only the first). Lines are
/// numbered from `first_line`. `None` when the text holds no document (only comments or blanks).
/// With it, the last line the parser had to read (what follows is never looked at).
pub(crate) fn read(text: &str, first_line: usize) -> Result<(Option<Rc<Node>>, usize), ParseError> {
    // yaml.v2 starts an implicit document at the first token, and a `...` there ends it before any
    // node: "did not find expected node content". The YAML 1.2 parser skips it.
    if let Some((n, _)) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .filter(|(_, l)| {
            l.strip_prefix("...")
                .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
        })
    {
        return Err(ParseError::Syntax {
            position: Position {
                line: first_line + n,
                column: 1,
            },
            message: "did not find expected node content".to_owned(),
        });
    }
    let mut text = Cow::Borrowed(text);
    // libyaml takes a tab after a `:` indicator as separation (`key:\tvalue`); the YAML 1.2 parser
    // rejects it before some values. Those tabs are never content, so turning them into spaces
    // (same columns) and reading again gives libyaml's result.
    for _ in 0..64 {
        let mut tab_after_colon = None;
        let mut trailing = None;
        match read_once(&text, first_line, &mut tab_after_colon, &mut trailing, &mut 0) {
            Err(e) => match tab_after_colon.and_then(|at| untab_before(&text, at)) {
                Some(fixed) => text = Cow::Owned(fixed),
                None => return after_quoted_root(&text, first_line, trailing).ok_or(e),
            },
            ok => return ok,
        }
    }
    read_once(&text, first_line, &mut None, &mut None, &mut 0)
}

/// The YAML 1.2 parser refuses content after a quoted scalar on its line (char index `at`), where
/// libyaml reads the scalar as a token and lets the parser judge what follows. When the document's
/// node (a quoted scalar, a flow collection) ends before that content, libyaml ends the document
/// there and never parses the rest: read what comes before it alone.
fn after_quoted_root(text: &str, first_line: usize, at: Option<usize>) -> Option<(Option<Rc<Node>>, usize)> {
    let at = at?;
    let before: String = text.chars().take(at).collect();
    let mut root_end = usize::MAX;
    let read = read_once(&before, first_line, &mut None, &mut None, &mut root_end);
    // The node is a flow collection (it starts with the document's first character and ends with
    // its closing bracket) or a quoted scalar; not a block collection, which goes on after it.
    let chars: Vec<char> = before.chars().collect();
    let mut first = None;
    let mut in_comment = false;
    for &c in &chars {
        match c {
            '\n' => in_comment = false,
            _ if in_comment => {}
            '#' => in_comment = true,
            ' ' | '\t' | '\r' | '\u{feff}' => {}
            c => {
                first = Some(c);
                break;
            }
        }
    }
    // (The parser's span of a node's end may take in the blanks after it.)
    let last = chars
        .get(..root_end.min(chars.len()))
        .and_then(|head| head.iter().rev().find(|c| !matches!(c, ' ' | '\t')))
        .copied();
    match (read, first, last) {
        (Ok((Some(node), last_line)), Some(open), Some(close))
            if root_end <= at
                && match &*node {
                    Node::Scalar { .. } => matches!(open, '"' | '\''),
                    Node::Mapping { .. } => open == '{' && close == '}',
                    Node::Sequence { .. } => open == '[' && close == ']',
                    Node::Alias { .. } => false,
                } =>
        {
            Some((Some(node), last_line))
        }
        _ => None,
    }
}

/// `text` with the tabs just before char index `at` replaced by spaces, if there are any.
fn untab_before(text: &str, at: usize) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = at.min(chars.len());
    let mut fixed = chars.clone();
    while i > 0 && matches!(chars[i - 1], '\t' | ' ') {
        i -= 1;
        fixed[i] = ' ';
    }
    (fixed != chars).then(|| fixed.into_iter().collect())
}

/// One read of `text`: the document's node and the last line read. `tab_after_colon` and
/// `trailing` receive the char index of those refusals of the parser underneath; `root_end`, the
/// char index where the node ends.
fn read_once(
    text: &str,
    first_line: usize,
    tab_after_colon: &mut Option<usize>,
    trailing: &mut Option<usize>,
    root_end: &mut usize,
) -> Result<(Option<Rc<Node>>, usize), ParseError> {
    let mut builder = Builder {
        text,
        parser: Parser::new_from_str(text),
        line_offset: first_line - 1,
        anchors: HashMap::new(),
        tab_after_colon,
        trailing,
        last_line: first_line,
        last_end: 0,
    };
    loop {
        let (event, _) = builder.next()?;
        match event {
            Event::StreamStart => {}
            Event::StreamEnd => return Ok((None, builder.last_line)),
            Event::DocumentStart(_) => break,
            other => return Err(builder.unexpected(&other)),
        }
    }
    let (event, span) = builder.next()?;
    if matches!(event, Event::DocumentEnd) {
        return Ok((None, builder.last_line));
    }
    let node = builder.node(event, span)?;
    let (node_end, node_last_line) = (builder.last_end, builder.last_line);
    *root_end = node_end;
    // yaml.v2 reads the document's end after its node, which scans the next token: it must scan
    // (a character that cannot start a token, an unterminated quoted scalar, a bad escape are
    // refused). libyaml ends the document there whatever the token is, so the parser's complaint
    // about it (which would come from the next document's start, never read) is no error, nor is
    // the YAML 1.2 rule on what may follow a quoted scalar (a token libyaml has not read yet).
    match builder.next() {
        Err(ParseError::Syntax { message, .. })
            if message == "did not find expected <document start>"
                || message.starts_with("invalid trailing content after") => {}
        other => {
            other?;
        }
    }
    // The parser underneath may end the document before that token: libyaml's scanner reaches it,
    // past blank lines and comments, so a refused tab up to its line counts.
    let next_token_line = next_token_line(text, node_end);
    Ok((
        Some(node),
        node_last_line.max(next_token_line + builder.line_offset),
    ))
}

/// The line (1-based, in `text`) of the first character from char index `from` on that is not a
/// space, a line break or part of a comment: where libyaml's scanner stops for the next token (a
/// tab included: after a line break, in block context, it may not start a token). The last line
/// when there is none.
fn next_token_line(text: &str, from: usize) -> usize {
    let mut line = 1;
    let mut in_comment = false;
    let mut after_blank = true;
    for (i, c) in text.chars().enumerate() {
        if i < from {
            if c == '\n' {
                line += 1;
            }
            after_blank = matches!(c, ' ' | '\t' | '\n' | '\r');
            continue;
        }
        match c {
            '\n' => {
                line += 1;
                in_comment = false;
            }
            _ if in_comment => {}
            ' ' | '\r' => {}
            '#' if after_blank => in_comment = true,
            _ => return line,
        }
        after_blank = matches!(c, ' ' | '\t' | '\n' | '\r');
    }
    line
}

struct Builder<'a, 'e> {
    text: &'a str,
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    line_offset: usize,
    anchors: HashMap<usize, Rc<Node>>,
    /// Set to the char index of a "tab after `:`" rejection, so that the caller can retry.
    tab_after_colon: &'e mut Option<usize>,
    /// Set to the char index of a "trailing content after a quoted scalar" rejection.
    trailing: &'e mut Option<usize>,
    /// The line of the end of the last event read.
    last_line: usize,
    /// The char index of the end of the last event read.
    last_end: usize,
}

impl<'a> Builder<'a, '_> {
    fn next(&mut self) -> Result<(Event<'a>, Span), ParseError> {
        match self.parser.next_event() {
            Some(Ok(e)) => {
                self.last_line = self.last_line.max(e.1.end.line() + self.line_offset);
                self.last_end = self.last_end.max(e.1.end.index());
                Ok(e)
            }
            Some(Err(e)) => {
                if e.info() == "':' must be followed by a valid YAML whitespace" {
                    *self.tab_after_colon = Some(e.marker().index());
                }
                if e.info().starts_with("invalid trailing content after") {
                    *self.trailing = Some(e.marker().index());
                }
                Err(self.scan_error(&e))
            }
            None => Err(ParseError::Syntax {
                position: Position { line: 1, column: 1 },
                message: "unexpected end of stream".to_owned(),
            }),
        }
    }

    fn position(&self, span: &Span) -> Position {
        Position {
            line: span.start.line() + self.line_offset,
            column: span.start.col() + 1,
        }
    }

    fn scan_error(&self, e: &ScanError) -> ParseError {
        ParseError::Syntax {
            position: Position {
                line: e.marker().line() + self.line_offset,
                column: e.marker().col() + 1,
            },
            message: e.info().to_owned(),
        }
    }

    fn unexpected(&self, e: &Event<'_>) -> ParseError {
        ParseError::Syntax {
            position: Position { line: 1, column: 1 },
            message: format!("unexpected parser event {e:?}"),
        }
    }

    fn node(&mut self, event: Event<'a>, span: Span) -> Result<Rc<Node>, ParseError> {
        let mut pos = self.position(&span);
        if let Event::Scalar(_, ScalarStyle::Literal | ScalarStyle::Folded, _, _) = event
            && let Some((up, column)) = block_header(self.text, span.start.index())
        {
            pos = Position {
                line: pos.line - up,
                column,
            };
        }
        let (node, anchor) = match event {
            Event::Scalar(value, style, anchor, tag) => (
                Node::Scalar {
                    value: value.into_owned(),
                    plain: style == ScalarStyle::Plain,
                    tag: tag.map(Cow::into_owned),
                    pos,
                },
                anchor,
            ),
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (e, s) = self.next()?;
                    if matches!(e, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(e, s)?);
                }
                (Node::Sequence { items, pos }, anchor)
            }
            Event::MappingStart(anchor, _) => {
                let mut entries = Vec::new();
                loop {
                    let (e, s) = self.next()?;
                    if matches!(e, Event::MappingEnd) {
                        break;
                    }
                    let key = self.node(e, s)?;
                    let (e, s) = self.next()?;
                    let value = self.node(e, s)?;
                    entries.push((key, value));
                }
                (Node::Mapping { entries, pos }, anchor)
            }
            Event::Alias(id) => {
                let target = self.anchors.get(&id).cloned().ok_or(ParseError::Syntax {
                    position: pos,
                    message: "unknown anchor referenced".to_owned(),
                })?;
                return Ok(Rc::new(Node::Alias { target, pos }));
            }
            other => return Err(self.unexpected(&other)),
        };
        let node = Rc::new(node);
        if anchor > 0 {
            self.anchors.insert(anchor, Rc::clone(&node));
        }
        Ok(node)
    }
}

/// Where the `|` / `>` indicator of a block scalar is, given where its content starts (a char
/// index): how many lines above the content, and its 1-based column. The parser reports the
/// content's position, but errors read better pointing at the line that introduces the text.
fn block_header(text: &str, content_index: usize) -> Option<(usize, usize)> {
    let byte = text
        .char_indices()
        .nth(content_index)
        .map_or(text.len(), |(b, _)| b);
    let before = &text[..byte];
    // Step back over the content's indentation and any blank lines before it.
    let mut up = 0;
    let mut lines = before.rsplit('\n');
    let current = lines.next()?;
    if !current.trim().is_empty() {
        // The content does not start a line: no header to find.
        return None;
    }
    for line in lines {
        up += 1;
        if line.trim().is_empty() {
            continue;
        }
        // The header line: the indicator is the last `|` or `>` followed only by indentation and
        // chomping indicators, blanks and an optional comment.
        let chars: Vec<char> = line.chars().collect();
        for (i, &c) in chars.iter().enumerate().rev() {
            if (c == '|' || c == '>') && is_header_tail(&chars[i + 1..]) {
                return Some((up, i + 1));
            }
        }
        return None;
    }
    None
}

fn is_header_tail(rest: &[char]) -> bool {
    let mut i = 0;
    while i < rest.len() && (rest[i] == '-' || rest[i] == '+' || rest[i].is_ascii_digit()) {
        i += 1;
    }
    let start = i;
    while i < rest.len() && (rest[i] == ' ' || rest[i] == '\t') {
        i += 1;
    }
    i == rest.len() || (rest[i] == '#' && i > start)
}
