//! YAML exactly as Kubernetes' Go code reads and writes it.
//!
//! Kubernetes marshals objects to JSON and converts the JSON to YAML with `sigs.k8s.io/yaml` over
//! `gopkg.in/yaml.v2`: keys sorted, YAML 1.1 scalar resolution, yaml.v2's quoting and indentation.
//! [`to_string`] reproduces that byte for byte. [`parse_documents`] reads (multi-document) YAML or JSON
//! into JSON values the way `sigs.k8s.io/yaml.YAMLToJSON` does, keeping the source position of every
//! node so that callers can point errors at a line and column, and rejecting duplicate keys
//! ([`parse_documents_lenient`] keeps the last value and reports them instead).
//!
//! Modules: `emit` (the writer), `keyorder` (yaml.v2's key order), `resolve` (YAML 1.1 scalar
//! resolution), `number` (Go float formatting), `stream` (kubeadm's document split), `tabs` (libyaml's tab rules), `tree` (events
//! to nodes, over `saphyr-parser`), `convert` (nodes to JSON with positions). The expected behaviour
//! is pinned by golden files produced by the Go libraries themselves (`tests/golden/README.md`).
//!
//! Known differences from yaml.v2 when reading, all in input Kubernetes never writes: the parser
//! underneath is YAML 1.2, so it accepts the `\/` escape and `:` in anchor names; syntax error
//! messages are worded differently (positions are given). yaml.v2's reader (`reader`: the
//! characters it refuses, its other line breaks) is reproduced, and so are its scanner's rules for
//! tabs in block context (`tabs`, a line-based approximation).
//!
//! Depends on nothing internal; no I/O.

use std::collections::BTreeMap;

mod convert;
mod emit;
mod keyorder;
mod number;
mod reader;
mod resolve;
mod stream;
mod tabs;
mod tree;

/// A line and column in the source, both 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// One document of a (multi-document) YAML or JSON stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The document as JSON, as `sigs.k8s.io/yaml.YAMLToJSON` would give it.
    pub value: serde_json::Value,
    /// Position of each node, keyed by JSON pointer (RFC 6901, `""` for the root). For a mapping entry
    /// the position is that of its key.
    pub positions: BTreeMap<String, Position>,
    /// Why Kubernetes' decoders cannot read the document though its apiVersion and kind can be
    /// looked up: their message. Either it looks like JSON and is not: they read a document whose bytes start
    /// (after white space) with `{` as JSON, not YAML, so YAML there (a comment, a `...` end
    /// marker, an unquoted key) fails their decoding though the YAML reading here, and upstream's
    /// own apiVersion and kind lookup, succeed. Or its apiVersion or kind is `.inf` or `.nan`: read
    /// as the text `+Inf` (`NaN`) into a type's string field, refused by Go's JSON encoder when
    /// the whole document is converted (`json: unsupported value: +Inf`).
    pub json_error: Option<String>,
}

impl Document {
    /// The position of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn position(&self, pointer: &str) -> Option<Position> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

/// Why a YAML or JSON stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is not well-formed YAML or JSON.
    #[error("line {}, column {}: {message}", .position.line, .position.column)]
    Syntax {
        /// Where the problem is.
        position: Position,
        /// What is wrong.
        message: String,
    },
    /// The text is well-formed but cannot be turned into JSON (a tag that does not fit its value,
    /// a key that JSON cannot hold, `.nan`/`.inf` values, a bad merge).
    #[error("line {}, column {}: {message}", .position.line, .position.column)]
    Invalid {
        /// Where the offending node is.
        position: Position,
        /// What is wrong, worded as the Go libraries word it where possible.
        message: String,
    },
    /// A mapping has the same key twice.
    #[error("line {}, column {}: key {key:?} already set in map", .position.line, .position.column)]
    DuplicateKey {
        /// Where the second occurrence is.
        position: Position,
        /// The key.
        key: String,
    },
}

/// How many collections (mappings and sequences) deep a document may nest, aliases and `<<`
/// merges expanded. Kubernetes objects nest a few dozen levels at most; yaml.v2 allows 10 000,
/// which a recursive reader (this crate's, and every walk of the JSON it gives) cannot take on a
/// thread's stack. A deeper document is refused ([`ParseError::Syntax`], "exceeded max depth of
/// 200"), in the words of yaml.v2's own limit.
pub const MAX_DEPTH: usize = 200;

/// The refusal of a collection that starts at `position`, [`MAX_DEPTH`] levels deep.
pub(crate) fn too_deep(position: Position) -> ParseError {
    ParseError::Syntax {
        position,
        message: format!("exceeded max depth of {MAX_DEPTH}"),
    }
}

/// Renders `value` as `sigs.k8s.io/yaml.Marshal` renders the same JSON.
pub fn to_string(value: &serde_json::Value) -> String {
    emit::emit(value)
}

impl ParseError {
    /// Where the problem is.
    pub fn position(&self) -> Position {
        match self {
            ParseError::Syntax { position, .. }
            | ParseError::Invalid { position, .. }
            | ParseError::DuplicateKey { position, .. } => *position,
        }
    }
}

/// Splits a stream into documents and reads each one (YAML or JSON).
///
/// Documents are split as kubeadm splits them: at lines starting with `---` (anything after it
/// other than a comment is an error), skipping empty documents; a document of only comments or
/// blank lines reads as `null`. Each document is then read as `sigs.k8s.io/yaml.YAMLToJSON`
/// reads it, after yaml.v2's reader has checked its characters (control characters other than
/// tab, newline and carriage return are refused, as are U+FFFE and U+FFFF; a leading UTF-8 byte
/// order mark is dropped). A key repeated in a mapping is an error ([`ParseError::DuplicateKey`]), as in
/// yaml.v2's strict mode; [`parse_documents_lenient`] keeps the last value instead.
pub fn parse_documents(src: &str) -> Result<Vec<Document>, ParseError> {
    read_documents(src.as_bytes(), convert::Duplicates::Reject).map(|(docs, _)| docs)
}

/// Like [`parse_documents`], but a repeated key does not fail the read: the later value wins,
/// as with yaml.v2's default (non-strict) decoding, and each repetition is returned as a
/// [`ParseError::DuplicateKey`] for the caller to report (kubeadm prints them as warnings).
pub fn parse_documents_lenient(src: &str) -> Result<(Vec<Document>, Vec<ParseError>), ParseError> {
    read_documents(src.as_bytes(), convert::Duplicates::Collect)
}

/// Reads `src` one document at a time, as kubeadm's `SplitYAMLDocuments` does: each item is a
/// document with the keys repeated in it (see [`parse_documents_lenient`]), or the error that ends
/// the stream (a bad document separator, or a document that does not read); nothing follows an
/// error. A caller that checks each document as it comes reports what upstream reports first.
/// The bytes need not be UTF-8: each document is decoded as yaml.v2's reader decodes it (a byte
/// order mark picks UTF-16; malformed UTF-8 is refused with libyaml's message), so only the
/// document holding a bad byte fails, as upstream's reading does.
pub fn documents_lenient_bytes(
    src: &[u8],
) -> impl Iterator<Item = Result<(Document, Vec<ParseError>), ParseError>> + '_ {
    read_each(src, convert::Duplicates::Collect)
}

fn read_each(
    src: &[u8],
    mode: convert::Duplicates,
) -> impl Iterator<Item = Result<(Document, Vec<ParseError>), ParseError>> + '_ {
    let (chunks, bad_separator) = stream::split(src);
    let mut failed = false;
    chunks
        .into_iter()
        .map(move |chunk| read_chunk(&chunk, mode))
        .chain(bad_separator.map(Err))
        .take_while(move |item| {
            let go_on = !failed;
            failed |= item.is_err();
            go_on
        })
}

fn read_chunk(
    chunk: &stream::Chunk,
    mode: convert::Duplicates,
) -> Result<(Document, Vec<ParseError>), ParseError> {
    let mut converter = convert::Converter::new(mode);
    let text = reader::decode(&chunk.text, chunk.first_line)?;
    let (fixed, bad_tab) = tabs::check(&text, chunk.first_line);
    let text = fixed.unwrap_or(text);
    // The YAML 1.2 parser refuses a byte order mark inside a document; libyaml reads it as content.
    let (text, bom) = reader::stand_in_for_boms(text);
    // A refused tab counts where yaml.v2 reads that far: before a syntax error, or within what it
    // reads of the document (its first node, and the line that ends it).
    let root = match (tree::read(&text, chunk.first_line), bad_tab) {
        // The parser underneath may stop at the tab, or report it from where its scalar starts.
        (Err(e), Some(tab)) => {
            let tab_first = tab.position() <= e.position()
                || tab.position().line <= e.position().line + 1 && e.to_string().contains("tab");
            return Err(if tab_first { tab } else { e });
        }
        (Ok((_, last_line)), Some(tab)) if tab.position().line <= last_line => return Err(tab),
        (read, _) => read?.0,
    };
    // A key named in an error holds the byte order mark, not its stand-in.
    let restore = |e: ParseError| match (e, bom) {
        (ParseError::DuplicateKey { position, key }, Some(stand_in)) => ParseError::DuplicateKey {
            position,
            key: key.replace(stand_in, "\u{feff}"),
        },
        (e, _) => e,
    };
    let mut value = match root {
        Some(root) => converter.value(&root, &mut String::new()).map_err(restore)?,
        None => serde_json::Value::Null,
    };
    converter.duplicates = std::mem::take(&mut converter.duplicates)
        .into_iter()
        .map(restore)
        .collect();
    if let Some(e) = converter.non_finite_error(&value) {
        return Err(e);
    }
    let mut positions = converter.positions;
    if let Some(stand_in) = bom {
        reader::restore_boms(&mut value, stand_in);
        positions = positions
            .into_iter()
            .map(|(k, v)| (k.replace(stand_in, "\u{feff}"), v))
            .collect();
    }
    let document = Document {
        value,
        positions,
        // Go's JSON encoder meets `apiVersion` before `kind`, as the map's keys sort.
        json_error: json_error(&chunk.text).or_else(|| converter.type_meta_non_finite.into_values().next()),
    };
    Ok((document, converter.duplicates))
}

/// apimachinery's `IsJSONBuffer` (the bytes start with `{` after Unicode white space), and if so
/// whether they are one JSON value, as Go's decoder requires.
fn json_error(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_slice::<serde_json::Value>(bytes)
        .err()
        .map(|e| format!("couldn't get version/kind; json parse error: {e}"))
}

fn read_documents(
    src: &[u8],
    mode: convert::Duplicates,
) -> Result<(Vec<Document>, Vec<ParseError>), ParseError> {
    let mut docs = Vec::new();
    let mut duplicates = Vec::new();
    for item in read_each(src, mode) {
        let (doc, mut dups) = item?;
        duplicates.append(&mut dups);
        docs.push(doc);
    }
    Ok((docs, duplicates))
}
