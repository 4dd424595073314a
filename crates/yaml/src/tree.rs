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
        match read_once(&text, first_line, &mut tab_after_colon) {
            Err(e) => match tab_after_colon.and_then(|at| untab_before(&text, at)) {
                Some(fixed) => text = Cow::Owned(fixed),
                None => return Err(e),
            },
            ok => return ok,
        }
    }
    read_once(&text, first_line, &mut None)
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

fn read_once(
    text: &str,
    first_line: usize,
    tab_after_colon: &mut Option<usize>,
) -> Result<(Option<Rc<Node>>, usize), ParseError> {
    let mut builder = Builder {
        text,
        parser: Parser::new_from_str(text),
        line_offset: first_line - 1,
        anchors: HashMap::new(),
        tab_after_colon,
        last_line: first_line,
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
    Ok((Some(node), builder.last_line))
}

struct Builder<'a, 'e> {
    text: &'a str,
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    line_offset: usize,
    anchors: HashMap<usize, Rc<Node>>,
    /// Set to the char index of a "tab after `:`" rejection, so that the caller can retry.
    tab_after_colon: &'e mut Option<usize>,
    /// The line of the end of the last event read.
    last_line: usize,
}

impl<'a> Builder<'a, '_> {
    fn next(&mut self) -> Result<(Event<'a>, Span), ParseError> {
        match self.parser.next_event() {
            Some(Ok(e)) => {
                self.last_line = self.last_line.max(e.1.end.line() + self.line_offset);
                Ok(e)
            }
            Some(Err(e)) => {
                if e.info() == "':' must be followed by a valid YAML whitespace" {
                    *self.tab_after_colon = Some(e.marker().index());
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
