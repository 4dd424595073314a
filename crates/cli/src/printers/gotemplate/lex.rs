//! The lexer: a template's text as Go's `text/template/parse` lexer splits it (text, actions, trim
//! markers, comments, the tokens inside actions), and quoted strings' values.

#[allow(unused_imports)]
use super::*;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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

pub(super) struct Lexed {
    pub(super) toks: Vec<(Tok, usize)>,
}

pub(super) fn line_of(text: &str, pos: usize) -> usize {
    1 + text[..pos.min(text.len())].matches('\n').count()
}

pub(super) fn lex(text: &str) -> Result<Lexed, (usize, String)> {
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

pub(super) fn unquote(s: &str) -> Result<String, ValueError> {
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
