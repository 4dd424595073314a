//! Splitting a stream into documents the way kubeadm does (`SplitYAMLDocuments` over
//! apimachinery's `YAMLReader`), before each document is parsed on its own.
//!
//! The rule is textual: a line that starts with `---` ends the current document. Whatever follows
//! `---` on that line must be blank or a comment, or the stream is rejected. A separator met while
//! no document is open is kept as the first line of the next document (so `---\na: 1` is one
//! document, and `---\n---` one empty document); documents holding only separators, blank lines
//! or comments are kept and read as `null`. Lines end in `\n` whatever they ended in before.

use crate::{ParseError, Position};

/// One document's text and the 1-based source line it starts on.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub(crate) text: String,
    pub(crate) first_line: usize,
}

pub(crate) fn split(src: &str) -> Result<Vec<Chunk>, ParseError> {
    let mut chunks = Vec::new();
    let mut text = String::new();
    let mut first_line = 1;
    let body = src.strip_suffix('\n').unwrap_or(src);
    if src.is_empty() {
        return Ok(chunks);
    }
    for (n, raw) in body.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                return Err(ParseError::Syntax {
                    position: Position {
                        line: n + 1,
                        column: 1,
                    },
                    message: format!("invalid Yaml document separator: {trimmed}"),
                });
            }
            if !text.is_empty() {
                chunks.push(Chunk {
                    text: std::mem::take(&mut text),
                    first_line,
                });
                first_line = n + 2;
                continue;
            }
        }
        text.push_str(line);
        text.push('\n');
    }
    if !text.is_empty() {
        chunks.push(Chunk { text, first_line });
    }
    Ok(chunks)
}
