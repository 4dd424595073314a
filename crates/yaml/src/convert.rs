//! Turning a document's node tree into JSON as `sigs.k8s.io/yaml.YAMLToJSON` does: yaml.v2's
//! YAML 1.1 scalar resolution and tag handling, alias and `<<` merge expansion, keys converted to
//! strings, and floats that JSON cannot hold rejected. Records each node's position by JSON
//! pointer along the way.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::number::{format_go_float32, json_number_from_go_float};
use crate::resolve::{Resolved, resolve_plain};
use crate::tree::Node;
use crate::{MAX_DEPTH, ParseError, Position, too_deep};

const CORE_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// How a mapping key set twice is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Duplicates {
    /// An error, as yaml.v2's strict mode reports it.
    Reject,
    /// The later value wins (yaml.v2's default); each occurrence is reported.
    Collect,
}

pub(crate) struct Converter {
    pub(crate) positions: BTreeMap<String, Position>,
    pub(crate) duplicates: Vec<ParseError>,
    mode: Duplicates,
    /// The non-finite floats (`.inf`, `.nan`) of the values kept so far, by JSON pointer: Go's
    /// JSON encoder refuses them only once the whole document is decoded, so one a later
    /// duplicate key replaces is no error.
    non_finite: BTreeMap<String, ParseError>,
    /// The same refusals for a top-level `apiVersion` or `kind`, which are read (as `+Inf`, …)
    /// where a decoder looks the type up, and refused where it decodes the whole document.
    pub(crate) type_meta_non_finite: BTreeMap<String, String>,
    /// yaml.v2's guard against alias bombs: nodes decoded, how many of them under an alias, and
    /// how deep in aliases we are.
    decode_count: u64,
    alias_count: u64,
    alias_depth: u32,
    /// How many collections (and `<<` merges) the node being converted is in: aliases can nest
    /// deeper than the tree the reader limited, so the limit is checked again here.
    depth: usize,
}

impl Converter {
    pub(crate) fn new(mode: Duplicates) -> Self {
        Converter {
            positions: BTreeMap::new(),
            duplicates: Vec::new(),
            mode,
            non_finite: BTreeMap::new(),
            type_meta_non_finite: BTreeMap::new(),
            decode_count: 0,
            alias_count: 0,
            alias_depth: 0,
            depth: 0,
        }
    }

    /// Counts one decoded node and fails like yaml.v2 when aliases expand into too large a share
    /// of the document ("billion laughs").
    fn count(&mut self, position: Position) -> Result<(), ParseError> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        let allowed = match self.decode_count {
            0..=400_000 => 0.99,
            4_000_000.. => 0.10,
            n => 0.99 - 0.89 * ((n - 400_000) as f64 / 3_600_000.0),
        };
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64 > allowed
        {
            return Err(ParseError::Invalid {
                position,
                message: "document contains excessive aliasing".to_owned(),
            });
        }
        Ok(())
    }

    /// Enters a collection (or a merge) at `position`, refused past [`MAX_DEPTH`] levels.
    fn enter(&mut self, position: Position) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(position));
        }
        Ok(())
    }

    /// Converts `node`, found at JSON pointer `pointer`.
    pub(crate) fn value(&mut self, node: &Node, pointer: &mut String) -> Result<Value, ParseError> {
        self.count(node.position())?;
        self.positions.entry(pointer.clone()).or_insert(node.position());
        match node {
            Node::Alias { target, .. } => {
                self.alias_depth += 1;
                let v = self.value(target, pointer);
                self.alias_depth -= 1;
                v
            }
            Node::Scalar { .. } => match scalar(node) {
                // Kubernetes decodes every document into an object whose apiVersion and kind are
                // strings, and sigs.k8s.io/yaml formats a float bound for a string field as Go's
                // `FormatFloat` does: `.inf` there is "+Inf", not an error.
                Err(ParseError::Invalid { message, .. })
                    if matches!(pointer.as_str(), "/apiVersion" | "/kind")
                        && message.starts_with(UNSUPPORTED) =>
                {
                    let shown = message[UNSUPPORTED.len()..].to_string();
                    self.type_meta_non_finite.insert(pointer.clone(), message);
                    Ok(Value::String(shown))
                }
                Err(ParseError::Invalid { position, message }) if message.starts_with(UNSUPPORTED) => {
                    let e = ParseError::Invalid { position, message };
                    self.non_finite.insert(pointer.clone(), e);
                    Ok(Value::Null)
                }
                other => other,
            },
            Node::Sequence { items, .. } => {
                self.enter(node.position())?;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    out.push(self.value(item, pointer)?);
                    pointer.truncate(len);
                }
                self.depth -= 1;
                Ok(Value::Array(out))
            }
            Node::Mapping { .. } => {
                self.enter(node.position())?;
                let mut out = Map::new();
                self.entries(node, &mut out, pointer)?;
                self.depth -= 1;
                Ok(Value::Object(out))
            }
        }
    }

    /// Adds the entries of mapping `node` to `out`, expanding merge keys in place.
    fn entries(
        &mut self,
        node: &Node,
        out: &mut Map<String, Value>,
        pointer: &mut String,
    ) -> Result<(), ParseError> {
        let Node::Mapping { entries, .. } = node.resolved() else {
            return Err(merge_error(node.position()));
        };
        for (key, value) in entries {
            if is_merge_key(key) {
                self.merge(value, out, pointer)?;
                continue;
            }
            self.count(key.position())?;
            let name = key_string(key)?;
            let len = pointer.len();
            pointer.push('/');
            push_pointer_token(pointer, &name);
            let key_pos = key.position();
            if out.contains_key(&name) {
                // yaml.v2 reports the line of the value; we point at the repeated key.
                let err = ParseError::DuplicateKey {
                    position: key_pos,
                    key: name.clone(),
                };
                match self.mode {
                    Duplicates::Reject => return Err(err),
                    Duplicates::Collect => self.duplicates.push(err),
                }
            }
            // A value set again replaces the earlier one, with its non-finite floats.
            let under = format!("{pointer}/");
            self.non_finite
                .retain(|p, _| p != pointer.as_str() && !p.starts_with(&under));
            let v = self.value(value, pointer)?;
            // Keep the key's position for the entry (not the value's).
            self.positions.insert(pointer.clone(), key_pos);
            out.insert(name, v);
            pointer.truncate(len);
        }
        Ok(())
    }

    /// yaml.v2's `merge`: a mapping (or alias of one) is merged; a sequence of them is merged
    /// from last to first, so that earlier ones win in its non-strict mode.
    fn merge(
        &mut self,
        value: &Node,
        out: &mut Map<String, Value>,
        pointer: &mut String,
    ) -> Result<(), ParseError> {
        // A merged mapping may merge another: a chain of them nests calls as collections do.
        self.enter(value.position())?;
        match value.resolved() {
            Node::Mapping { .. } => self.entries(value, out, pointer)?,
            Node::Sequence { items, .. } if !matches!(value, Node::Alias { .. }) => {
                for item in items.iter().rev() {
                    if !matches!(item.resolved(), Node::Mapping { .. }) {
                        return Err(merge_error(item.position()));
                    }
                    self.entries(item, out, pointer)?;
                }
            }
            _ => return Err(merge_error(value.position())),
        }
        self.depth -= 1;
        Ok(())
    }
}

impl Converter {
    /// The refusal Go's JSON encoder gives `value` (the converted document) if a non-finite float
    /// was kept in it: the first it meets, walking objects in key order and arrays in item order.
    pub(crate) fn non_finite_error(&mut self, value: &Value) -> Option<ParseError> {
        fn first(
            value: &Value,
            pointer: &mut String,
            found: &BTreeMap<String, ParseError>,
        ) -> Option<String> {
            if found.contains_key(pointer.as_str()) {
                return Some(pointer.clone());
            }
            let len = pointer.len();
            let hit = match value {
                Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                    pointer.truncate(len);
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    first(item, pointer, found)
                }),
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    keys.into_iter().find_map(|k| {
                        pointer.truncate(len);
                        pointer.push('/');
                        push_pointer_token(pointer, k);
                        first(&map[k], pointer, found)
                    })
                }
                _ => None,
            };
            pointer.truncate(len);
            hit
        }
        let at = first(value, &mut String::new(), &self.non_finite)?;
        self.non_finite.remove(&at)
    }
}

fn merge_error(position: Position) -> ParseError {
    ParseError::Invalid {
        position,
        message: "map merge requires map or sequence of maps as the value".to_owned(),
    }
}

/// RFC 6901 escaping of one reference token.
pub(crate) fn push_pointer_token(pointer: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// yaml.v2's `isMerge`: a plain `<<` (or one tagged `!!merge`).
fn is_merge_key(key: &Node) -> bool {
    match key {
        Node::Scalar {
            value, plain, tag, ..
        } => {
            value == "<<"
                && match tag {
                    None => *plain,
                    Some(t) => t.handle == CORE_TAG_PREFIX && t.suffix == "merge",
                }
        }
        _ => false,
    }
}

/// Go's JSON encoder's refusal of a non-finite float, before the value (`+Inf`, `-Inf`, `NaN`).
const UNSUPPORTED: &str = "json: unsupported value: ";

/// A scalar as yaml.v2 decodes it into an untyped value.
fn scalar(node: &Node) -> Result<Value, ParseError> {
    let Node::Scalar {
        value,
        plain,
        tag,
        pos,
    } = node
    else {
        return Ok(Value::Null);
    };
    let resolved = match tag {
        // Untagged: plain scalars are resolved, quoted and block scalars are strings.
        None if *plain => resolve_plain(value),
        None => return Ok(Value::String(value.clone())),
        Some(t) if t.handle == CORE_TAG_PREFIX => match t.suffix.as_str() {
            "str" => return Ok(Value::String(value.clone())),
            "binary" => return decode_binary(value, *pos).map(Value::String),
            "bool" | "int" | "float" | "null" | "timestamp" => {
                let r = resolve_plain(value);
                check_tag(&t.suffix, r, value, *pos)?
            }
            // Other core tags (`!!map` on a scalar, `!!python/...`) are not resolved.
            _ => return Ok(Value::String(value.clone())),
        },
        // Local and non-specific tags: yaml.v2 leaves the text alone.
        Some(_) => return Ok(Value::String(value.clone())),
    };
    resolved_to_json(resolved, value, *pos)
}

/// yaml.v2's check that an explicitly tagged scalar resolves to that tag (ints may be floats).
fn check_tag(tag: &str, r: Resolved, value: &str, position: Position) -> Result<Resolved, ParseError> {
    let got = tag_name(r);
    match (tag, r) {
        (t, _) if t == got => Ok(r),
        ("float", Resolved::Int(i)) => Ok(Resolved::Float(i as f64)),
        _ => Err(ParseError::Invalid {
            position,
            message: format!("cannot decode !!{got} `{value}` as a !!{tag}"),
        }),
    }
}

fn tag_name(r: Resolved) -> &'static str {
    match r {
        Resolved::Null => "null",
        Resolved::Bool(_) => "bool",
        Resolved::Int(_) | Resolved::Uint(_) => "int",
        Resolved::Float(_) => "float",
        Resolved::Timestamp => "timestamp",
        Resolved::Str => "str",
    }
}

fn resolved_to_json(r: Resolved, text: &str, position: Position) -> Result<Value, ParseError> {
    Ok(match r {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::from(i),
        Resolved::Uint(u) => Value::from(u),
        Resolved::Float(f) => match json_number_from_go_float(f) {
            Some(n) => Value::Number(n),
            None => {
                let shown = if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "+Inf"
                } else {
                    "-Inf"
                };
                return Err(ParseError::Invalid {
                    position,
                    message: format!("{UNSUPPORTED}{shown}"),
                });
            }
        },
        // yaml.v2 keeps timestamps as their text when decoding into an untyped value.
        Resolved::Timestamp | Resolved::Str => Value::String(text.to_owned()),
    })
}

/// A mapping key as sigs.k8s.io/yaml turns it into a JSON object key.
fn key_string(key: &Node) -> Result<String, ParseError> {
    let node = key.resolved();
    let position = key.position();
    if !matches!(node, Node::Scalar { .. }) {
        return Err(ParseError::Invalid {
            position,
            message: "invalid map key: mappings and sequences cannot be keys".to_owned(),
        });
    }
    let unsupported = |what: &str| ParseError::Invalid {
        position,
        message: format!("unsupported map key of type {what}"),
    };
    match scalar(node) {
        Ok(Value::String(s)) => Ok(s),
        Ok(Value::Bool(b)) => Ok(b.to_string()),
        Ok(Value::Null) => Err(unsupported("<nil>")),
        Ok(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                Ok(i.to_string())
            } else if n.is_u64() {
                // yaml.v2 decodes integers above i64 as uint64, which sigs.k8s.io/yaml rejects.
                Err(unsupported("uint64"))
            } else {
                Ok(format_go_float32(n.as_f64().unwrap_or(0.0)))
            }
        }
        Ok(_) => Err(unsupported("collection")),
        // `.nan` / `.inf` keys are fine: sigs.k8s.io/yaml spells them out.
        Err(_) => match node {
            Node::Scalar { value, .. } => match resolve_plain(value) {
                Resolved::Float(f) if f.is_nan() => Ok(".nan".to_owned()),
                Resolved::Float(f) if f > 0.0 => Ok(".inf".to_owned()),
                Resolved::Float(_) => Ok("-.inf".to_owned()),
                _ => Err(unsupported("unknown")),
            },
            _ => Err(unsupported("unknown")),
        },
    }
}

/// `!!binary`: standard base64 (line breaks ignored), decoded bytes taken as text the way Go's
/// JSON encoder does (invalid UTF-8 becomes U+FFFD).
fn decode_binary(text: &str, position: Position) -> Result<String, ParseError> {
    let invalid = || ParseError::Invalid {
        position,
        message: "!!binary value contains invalid base64 data".to_owned(),
    };
    let mut bits: u32 = 0;
    let mut nbits = 0;
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut padding = 0;
    let mut count = 0;
    for c in text.bytes() {
        let v = match c {
            b'\r' | b'\n' => continue,
            b'=' => {
                padding += 1;
                count += 1;
                continue;
            }
            _ if padding > 0 => return Err(invalid()),
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(invalid()),
        };
        count += 1;
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
        }
    }
    if count % 4 != 0 || padding > 2 {
        return Err(invalid());
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
