//! Splitting a stream into documents the way kubeadm does (`SplitYAMLDocuments` over
//! apimachinery's `YAMLReader`), before each document is parsed on its own.
//!
//! The rule is textual: a line that starts with `---` ends the current document. Whatever follows
//! `---` on that line must be blank or a comment, or the stream is rejected. A separator met while
//! no document is open is kept as the first line of the next document (so `---\na: 1` is one
//! document, and `---\n---` one empty document); documents holding only separators, blank lines
//! or comments are kept and read as `null`. Lines end in `\n` whatever they ended in before.
//! The split is on bytes, as upstream's: each document's bytes then go through yaml.v2's reader
//! (`reader`), so a byte that is not UTF-8 fails only the document it is in.
//!
//! Upstream reads a document, then decodes it, then reads the next: a bad separator is found only
//! after the documents before it were used. So the split gives the documents before a bad separator
//! along with its error.

use crate::{ParseError, Position};

/// One document's text and the 1-based source line it starts on.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub(crate) text: Vec<u8>,
    pub(crate) first_line: usize,
}

/// The documents of `src`, and the error of a bad separator that ended the split early.
pub(crate) fn split(src: &[u8]) -> (Vec<Chunk>, Option<ParseError>) {
    let mut chunks = Vec::new();
    let mut text = Vec::new();
    let mut first_line = 1;
    let body = src.strip_suffix(b"\n").unwrap_or(src);
    if src.is_empty() {
        return (chunks, None);
    }
    for (n, raw) in body.split(|&b| b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if let Some(rest) = line.strip_prefix(b"---") {
            let rest = String::from_utf8_lossy(rest);
            let trimmed = rest.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                let error = ParseError::Syntax {
                    position: Position {
                        line: n + 1,
                        column: 1,
                    },
                    message: format!("invalid Yaml document separator: {trimmed}"),
                };
                return (chunks, Some(error));
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
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    if !text.is_empty() {
        chunks.push(Chunk { text, first_line });
    }
    (chunks, None)
}
