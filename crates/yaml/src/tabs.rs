//! libyaml's rules for tabs in block context, which the YAML 1.2 parser underneath does not have:
//! the scanner skips a tab between tokens only where a simple key cannot start, so a tab in the
//! indentation of a block line, or right after a `-`, `?` or line-leading `:` indicator, is
//! "found character that cannot start any token"; and a tab in the indentation of a plain scalar's
//! continuation line left of the scalar's block indentation is "found a tab character that
//! violates indentation". Inside flow collections, quoted scalars and block scalars (which have
//! their own rule, applied by the parser) tabs are left alone.
//!
//! A `|` or `>` cannot start a token inside a flow collection either ("found character that cannot
//! start any token"); the YAML 1.2 parser reads it as the start of a plain scalar.
//!
//! This is a line-based approximation of libyaml's scanner state, erring towards accepting: the
//! block indentation of a plain scalar is taken from the key or `-` on the line it starts on (0 when
//! it has neither), so a tab deeper in the indentation of a continuation line may be accepted where
//! yaml.v2 refuses it. Tabs at the start of a line, the common case, are judged as yaml.v2 does.

use crate::{ParseError, Position};

/// What the scanner is inside of at the end of a line.
#[derive(Default)]
struct State {
    /// Unclosed `[` and `{`.
    flow: usize,
    /// An unclosed quoted scalar's quote.
    quote: Option<u8>,
    /// Whether that quoted scalar began on an earlier line.
    quote_spans_lines: bool,
    /// A block scalar's parent indentation: more-indented and blank lines are its content.
    block_scalar: Option<usize>,
    /// A plain scalar that may continue on the next line: the column its continuation lines must
    /// reach before a tab (its block indentation plus one).
    plain: Option<usize>,
}

/// The text to parse (`None`: `text` as it is), with the tabs of quoted scalars' continuation
/// indentation made spaces, and the first tab yaml.v2 refuses in `text` (one document, starting on
/// source line `first_line`), if any. The caller judges whether yaml.v2 would get that far: its
/// `Unmarshal` stops reading after the first node.
pub(crate) fn check(text: &str, first_line: usize) -> (Option<String>, Option<ParseError>) {
    if !text.contains(['\t', '|', '>', '"', '\'']) {
        return (None, None);
    }
    let mut refused = None;
    let fixed = scan_lines(text, first_line, &mut refused);
    (fixed, refused)
}

fn scan_lines(text: &str, first_line: usize, refused: &mut Option<ParseError>) -> Option<String> {
    let mut fixed: Option<Vec<u8>> = None;
    let mut st = State::default();
    let mut offset = 0;
    for (n, line) in text.split('\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let fail = |column: usize, message: &str| {
            Some(ParseError::Syntax {
                position: Position {
                    line: first_line + n,
                    column: column + 1,
                },
                message: message.to_string(),
            })
        };
        let b = line.as_bytes();
        if st.quote.is_some() {
            let indentation = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
            if b[..indentation].contains(&b'\t') {
                let f = fixed.get_or_insert_with(|| text.as_bytes().to_vec());
                f[start..start + indentation].fill(b' ');
            }
        }
        if st.quote.is_some() || st.flow > 0 {
            if st.quote.is_some() {
                st.quote_spans_lines = true;
            }
            if let Some((column, message)) = scan(b, 0, &mut st) {
                *refused = fail(column, message);
                break;
            }
            continue;
        }
        let spaces = b.iter().take_while(|&&c| c == b' ').count();
        let blank = b.iter().all(|&c| c == b' ' || c == b'\t');
        if let Some(parent) = st.block_scalar {
            if blank || spaces > parent {
                continue;
            }
            st.block_scalar = None;
        }
        if b.starts_with(b"---") || b.starts_with(b"...") || b.starts_with(b"%") {
            st.plain = None;
            continue;
        }
        if b.get(spaces) == Some(&b'\t') {
            *refused = match st.plain {
                Some(indent) if spaces >= indent => None,
                Some(_) => fail(spaces, "found a tab character that violates indentation"),
                None => fail(spaces, "found character that cannot start any token"),
            };
            if refused.is_some() {
                break;
            }
        }
        let first = b.iter().position(|&c| c != b' ' && c != b'\t');
        let Some(first) = first else { continue };
        if let Some(indent) = st.plain {
            if first >= indent && b[first] != b'#' {
                // More of the plain scalar.
                scan_plain_rest(b, first, &mut st);
                continue;
            }
            st.plain = None;
        }
        if let Some((column, message)) = scan(b, first, &mut st) {
            *refused = fail(column, message);
            break;
        }
    }
    // Only ASCII tabs were replaced by ASCII spaces: still UTF-8.
    fixed.map(|f| String::from_utf8_lossy(&f).into_owned())
}

fn is_blank(c: Option<&u8>) -> bool {
    matches!(c, None | Some(b' ' | b'\t'))
}

/// Continues a plain scalar on a line of its own: it ends at a comment or a `: `, else goes on.
fn scan_plain_rest(b: &[u8], from: usize, st: &mut State) {
    let mut i = from;
    while i < b.len() {
        if b[i] == b'#' && matches!(b[i - 1], b' ' | b'\t') {
            st.plain = None;
            return;
        }
        if b[i] == b':' && is_blank(b.get(i + 1)) {
            // A key where a scalar continues: the parser refuses it; nothing more to judge here.
            st.plain = None;
            return;
        }
        i += 1;
    }
}

/// Scans the tokens of one line from `from`, updating `st`; the column of a tab yaml.v2 refuses
/// after a `-`, `?` or line-leading `:` indicator, or of a `|` or `>` starting a token inside a
/// flow collection, if there is one.
fn scan(b: &[u8], from: usize, st: &mut State) -> Option<(usize, &'static str)> {
    const NO_TOKEN: &str = "found character that cannot start any token";
    let mut i = from;
    let line_start = b.iter().position(|&c| c != b' ' && c != b'\t').unwrap_or(0);
    // The block indentation a plain scalar on this line belongs to: the last key's or entry's column.
    let mut indent: Option<usize> = None;
    let mut token_start = None;
    let mut ends_plain = false;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = st.quote {
            if c == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if c == q {
                if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                st.quote = None;
                // A quoted key over several lines is no simple key for libyaml: in a flow
                // mapping its `:` is then unexpected.
                let next = b[i + 1..].iter().position(|&c| c != b' ' && c != b'\t');
                if st.quote_spans_lines && st.flow > 0 && next.is_some_and(|n| b[i + 1 + n] == b':') {
                    return Some((i + 1, "did not find expected ',' or '}'"));
                }
            }
            i += 1;
            continue;
        }
        let after_blank = i == 0 || matches!(b[i - 1], b' ' | b'\t');
        match c {
            b' ' | b'\t' => {
                i += 1;
                continue;
            }
            b'#' if after_blank => {
                ends_plain = false;
                break;
            }
            b'[' | b'{' => {
                st.flow += 1;
                ends_plain = false;
            }
            // A flow collection's end ends the plain scalar in it: the next line continues nothing.
            b']' | b'}' => {
                st.flow = st.flow.saturating_sub(1);
                ends_plain = false;
            }
            b',' if st.flow > 0 => {}
            b'-' | b'?' | b':' if is_blank(b.get(i + 1)) => {
                let leading = i == line_start
                    || b[line_start..i]
                        .split(|&c| c == b' ')
                        .all(|t| t.is_empty() || t == b"-" || t == b"?");
                if c == b':'
                    && let Some(t) = token_start.take()
                {
                    indent = Some(t);
                }
                if st.flow == 0 && (c != b':' || leading) {
                    if c != b':' {
                        indent = Some(i);
                    }
                    let ws = b[i + 1..].iter().take_while(|&&c| c == b' ' || c == b'\t');
                    if let Some(k) = ws.clone().position(|&c| c == b'\t') {
                        return Some((i + 1 + k, NO_TOKEN));
                    }
                }
                ends_plain = false;
                token_start = None;
            }
            // A value indicator in a flow collection needs no blank after it (`"a":"b"`).
            b':' if st.flow > 0 => {
                token_start = None;
                ends_plain = false;
            }
            b'"' | b'\'' => {
                st.quote = Some(c);
                st.quote_spans_lines = false;
                token_start = Some(i);
                ends_plain = false;
            }
            // In a flow collection these cannot start a token (nor a plain scalar) for libyaml.
            b'|' | b'>' if st.flow > 0 => return Some((i, NO_TOKEN)),
            b'|' | b'>' => {
                st.block_scalar = Some(indent.unwrap_or(line_start));
                st.plain = None;
                return None;
            }
            b'&' | b'*' | b'!' => {
                while i < b.len() && !matches!(b[i], b' ' | b'\t') {
                    i += 1;
                }
                ends_plain = false;
                continue;
            }
            _ => {
                // A plain scalar: to a `: `, a ` #`, or (in a flow) a flow indicator.
                token_start = Some(i);
                // The first character is the scalar's whatever it is: the scan always moves on.
                i += 1;
                while i < b.len() {
                    let c = b[i];
                    if c == b':' && (is_blank(b.get(i + 1)) || st.flow > 0) {
                        break;
                    }
                    if c == b'#' && matches!(b[i - 1], b' ' | b'\t') {
                        break;
                    }
                    if st.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}') {
                        break;
                    }
                    i += 1;
                }
                ends_plain = true;
                continue;
            }
        }
        i += 1;
    }
    st.plain = (ends_plain && st.flow == 0 && st.quote.is_none()).then(|| match indent {
        Some(col) => col + 1,
        None if line_start == 0 => 0,
        None => 1,
    });
    None
}
