//! The node tree of one YAML document, built from the parser's events, with anchors resolved.
//!
//! Building a tree first (rather than converting events straight to JSON) is what lets aliases
//! and `<<` merge keys be expanded the way yaml.v2 expands them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use crate::{MAX_DEPTH, ParseError, Position, too_deep};

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
            Err(e) => match tab_after_colon
                .and_then(|at| untab_before(&text, at))
                .or_else(|| indent_continuation(&text, &e, first_line))
            {
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

/// libyaml reads the lines of a quoted scalar or a flow collection wherever they start; the YAML
/// 1.2 parser wants them indented deeper than the block they are in. Spaces that start such a
/// line are never content (they fold away with the line break), so `text` with the line the
/// parser refused (`e`) indented reads as libyaml reads the original: for a quoted scalar, each
/// of its lines indented to the column of its opening quote (deeper than the key or dash before
/// it); for a flow collection, the refused line one column deeper than the line before it or than
/// itself (tried again while the parser refuses a line). Lines are numbered from `first_line`.
fn indent_continuation(text: &str, e: &ParseError, first_line: usize) -> Option<String> {
    let ParseError::Syntax { position, message } = e else {
        return None;
    };
    // Lines as the parser counts them (a break is CR LF, LF or a CR alone), each kept with its
    // break so that the text is put back as it was.
    let (mut lines, breaks) = split_lines(text);
    let at = position.line.checked_sub(first_line)?;
    let leading = |l: &str| l.chars().take_while(|&c| c == ' ').count();
    let blank = |l: &str| l.trim_matches([' ', '\t', '\r']).is_empty();
    // A document marker at a line's start ends the document for libyaml too: left alone.
    let marker = |l: &str| {
        (l.starts_with("---") || l.starts_with("..."))
            && l[3..]
                .chars()
                .next()
                .is_none_or(|c| matches!(c, ' ' | '\t' | '\r'))
    };
    let mut changed = false;
    match message.as_str() {
        "invalid indentation in quoted scalar" => {
            let column = position.column.checked_sub(1)?;
            let quote = lines
                .get(at)?
                .chars()
                .nth(column)
                .filter(|c| matches!(c, '"' | '\''))?;
            // The scalar's extent: to its closing quote (`\"` escapes in double quotes, `''` in
            // single quotes).
            let mut line = at;
            let mut chars: Vec<char> = lines[at].chars().skip(column + 1).collect();
            loop {
                let mut i = 0;
                let mut closed = false;
                while i < chars.len() {
                    match chars[i] {
                        '\\' if quote == '"' => i += 1,
                        '\'' if quote == '\'' && chars.get(i + 1) == Some(&'\'') => i += 1,
                        c if c == quote => {
                            closed = true;
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
                if closed || line + 1 >= lines.len() {
                    break;
                }
                line += 1;
                let l = &lines[line];
                if !blank(l) && !marker(l) && leading(l) < column {
                    lines[line] = format!("{}{l}", " ".repeat(column - leading(l)));
                    changed = true;
                }
                chars = lines[line].chars().collect();
            }
        }
        // (The parser's check of any token's column, reached in flow context only.)
        "invalid indentation in flow construct" | "invalid indentation" => {
            let before = lines.get(..at)?.iter().rev().find(|l| !blank(l))?;
            let l = lines.get(at)?;
            let want = (leading(before) + 1).max(leading(l) + 1);
            if !marker(l) {
                lines[at] = format!("{}{l}", " ".repeat(want - leading(l)));
                changed = true;
            }
        }
        _ => {}
    }
    changed.then(|| {
        lines
            .iter()
            .zip(&breaks)
            .map(|(l, b)| format!("{l}{b}"))
            .collect()
    })
}

/// `text` split into lines at CR LF, LF or a lone CR: the lines, and the break after each (empty
/// after the last one).
fn split_lines(text: &str) -> (Vec<String>, Vec<&'static str>) {
    let mut lines = Vec::new();
    let mut breaks = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(rest[..i].to_string());
        let brk = if rest[i..].starts_with("\r\n") {
            "\r\n"
        } else if rest[i..].starts_with('\r') {
            "\r"
        } else {
            "\n"
        };
        breaks.push(brk);
        rest = &rest[i + brk.len()..];
    }
    lines.push(rest.to_string());
    breaks.push("");
    (lines, breaks)
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
        depth: 0,
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
    // past blank lines and comments, so a refused tab up to its line counts. When that token
    // starts a line's content and may be a simple key (a scalar, a flow collection, an anchor, an
    // alias, a tag), libyaml looks ahead until the key can no longer be one: it scans on to the
    // first token of a later line.
    let mut read_to = next_token_line(text, node_end);
    if let Some(token) = next_token(text, node_end)
        && token.after_break
        && !token.document_marker
        && may_be_simple_key(token.first, token.second)
    {
        let next_line_start = text
            .chars()
            .enumerate()
            .skip(token.index)
            .find(|&(_, c)| c == '\n')
            .map(|(i, _)| i + 1);
        if let Some(start) = next_line_start {
            read_to = next_token_line(text, start);
        }
    }
    Ok((Some(node), node_last_line.max(read_to + builder.line_offset)))
}

/// The first token libyaml's scanner stops at from a char index on (see [`next_token_line`]).
struct NextToken {
    /// Its char index.
    index: usize,
    /// Its first two characters.
    first: char,
    second: Option<char>,
    /// Whether a line break comes between the index it was looked for from and the token.
    after_break: bool,
    /// Whether it is `---` or `...` at a line's start (a document marker, not a scalar).
    document_marker: bool,
}

fn next_token(text: &str, from: usize) -> Option<NextToken> {
    let chars: Vec<char> = text.chars().collect();
    let mut in_comment = false;
    let mut after_blank = from == 0 || matches!(chars.get(from - 1), Some(' ' | '\t' | '\n' | '\r'));
    let mut after_break = false;
    for (index, &c) in chars.iter().enumerate().skip(from) {
        match c {
            '\n' => {
                after_break = true;
                in_comment = false;
            }
            _ if in_comment => {}
            ' ' | '\r' => {}
            '#' if after_blank => in_comment = true,
            first => {
                let rest = &chars[index..];
                let document_marker = (index == 0 || chars[index - 1] == '\n')
                    && (rest.starts_with(&['-'; 3]) || rest.starts_with(&['.'; 3]))
                    && rest.get(3).is_none_or(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
                return Some(NextToken {
                    index,
                    first,
                    second: chars.get(index + 1).copied(),
                    after_break,
                    document_marker,
                });
            }
        }
        after_blank = matches!(c, ' ' | '\t' | '\n' | '\r');
    }
    None
}

/// Whether libyaml saves a possible simple key where a token starts with `c` (then `next`): a
/// quoted or plain scalar, a flow collection's start, an anchor, an alias or a tag.
fn may_be_simple_key(c: char, next: Option<char>) -> bool {
    let blank_after = next.is_none_or(|n| matches!(n, ' ' | '\t' | '\r' | '\n'));
    match c {
        '[' | '{' | '"' | '\'' | '&' | '*' | '!' => true,
        '-' | '?' | ':' => !blank_after,
        ',' | ']' | '}' | '#' | '|' | '>' | '%' | '@' | '`' | '\t' => false,
        _ => true,
    }
}

/// The line (1-based, in `text`) of the first character from char index `from` on that is not a
/// space, a line break or part of a comment: where libyaml's scanner stops for the next token (a
/// tab included: after a line break, in block context, it may not start a token). The last line
/// when there is none.
fn next_token_line(text: &str, from: usize) -> usize {
    let end = next_token(text, from).map_or(usize::MAX, |t| t.index);
    1 + text.chars().take(end).filter(|&c| c == '\n').count()
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
    /// How many collections the node being read is in.
    depth: usize,
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
        // The parser's own limit on nested flow collections (255), in the words of ours.
        if e.info() == "recursion limit exceeded" {
            return too_deep(Position {
                line: e.marker().line() + self.line_offset,
                column: e.marker().col() + 1,
            });
        }
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

    /// Enters a collection that starts at `pos`: refused past [`MAX_DEPTH`] levels, so that
    /// neither this recursive read nor any walk of the tree (or of the JSON made from it) can
    /// run out of stack.
    fn enter(&mut self, pos: Position) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(pos));
        }
        Ok(())
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
                self.enter(pos)?;
                let mut items = Vec::new();
                loop {
                    let (e, s) = self.next()?;
                    if matches!(e, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(e, s)?);
                }
                self.depth -= 1;
                (Node::Sequence { items, pos }, anchor)
            }
            Event::MappingStart(anchor, _) => {
                self.enter(pos)?;
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
                self.depth -= 1;
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
