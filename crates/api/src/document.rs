//! One document of a config file: its GroupVersionKind, and decoding it into a typed object the way
//! upstream's codec does (case-sensitive names, `null` as absent), with the strict pass that upstream
//! runs only to warn (unknown fields), and errors that point at file, line, column and field path.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::json;

use kubeadm_yaml::{Document, Position};

/// `group/version, Kind=kind`, as upstream identifies a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionKind {
    /// API group (`kubeadm.k8s.io`); empty for the core group.
    pub group: String,
    /// Version (`v1beta3`).
    pub version: String,
    /// Kind (`InitConfiguration`).
    pub kind: String,
}

impl GroupVersionKind {
    /// Splits an `apiVersion` as upstream does: `a/b` is group `a`, version `b`; `v1` is version only.
    pub fn new(api_version: &str, kind: &str) -> Self {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        GroupVersionKind {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// `group/version` (or `version` for the core group).
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Go's `%#v` of a `schema.GroupVersionKind`, which upstream prints in its warnings.
    pub fn go_syntax(&self) -> String {
        format!(
            "schema.GroupVersionKind{{Group:{}, Version:{}, Kind:{}}}",
            crate::gofmt::quote(&self.group),
            crate::gofmt::quote(&self.version),
            crate::gofmt::quote(&self.kind)
        )
    }
}

impl fmt::Display for GroupVersionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// A place in an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given by the user.
    pub file: String,
    /// Line and column, when known.
    pub position: Option<Position>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}:{}:{}", self.file, p.line, p.column),
            None => write!(f, "{}", self.file),
        }
    }
}

/// A field that does not exist in the target type; upstream warns and ignores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// Where it is.
    pub location: Location,
    /// Dotted path with `[i]` indices, as upstream prints it (`networking.bogus`).
    pub path: String,
    /// The document's kind.
    pub gvk: GroupVersionKind,
}

impl fmt::Display for UnknownField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: unknown field {} in {}",
            self.location,
            crate::gofmt::quote(&self.path),
            self.gvk
        )
    }
}

/// A value of the wrong type, or one that its type rejects (a bad duration or token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {kind} field {path}: {message}")]
pub struct FieldError {
    /// Where it is.
    pub location: Location,
    /// Dotted field path (`networking.serviceSubnet`).
    pub path: String,
    /// The document's kind.
    pub kind: String,
    /// What is wrong.
    pub message: String,
}

/// One path segment, for building both the dotted path and the JSON pointer.
#[derive(Clone)]
enum Segment {
    Key(String),
    Index(usize),
}

fn dotted(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        match s {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn pointer(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Segment::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

fn ignored_segments(path: &serde_ignored::Path<'_>, out: &mut Vec<Segment>) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            ignored_segments(parent, out);
            out.push(Segment::Index(*index));
        }
        Path::Map { parent, key } => {
            ignored_segments(parent, out);
            out.push(Segment::Key(key.to_string()));
        }
        Path::Some { parent } | Path::NewtypeStruct { parent } | Path::NewtypeVariant { parent } => {
            ignored_segments(parent, out)
        }
    }
}

fn error_segments(path: &serde_path_to_error::Path) -> Vec<Segment> {
    use serde_path_to_error::Segment as S;
    path.iter()
        .filter_map(|s| match s {
            S::Seq { index } => Some(Segment::Index(*index)),
            S::Map { key } => Some(Segment::Key(key.clone())),
            S::Enum { variant } => Some(Segment::Key(variant.clone())),
            S::Unknown => None,
        })
        .collect()
}

/// Go decodes `null` into a field by leaving it at its zero value, which is what an absent field
/// gives too; dropping `null` members makes serde agree (it would reject `null` for a string).
/// The paths of the members dropped go to `dropped`.
fn strip_nulls(v: &mut serde_json::Value, at: &mut Vec<Segment>, dropped: &mut Vec<Vec<Segment>>) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|k, v| {
                if v.is_null() {
                    let mut path = at.clone();
                    path.push(Segment::Key(k.clone()));
                    dropped.push(path);
                }
                !v.is_null()
            });
            for (k, v) in map.iter_mut() {
                at.push(Segment::Key(k.clone()));
                strip_nulls(v, at, dropped);
                at.pop();
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                at.push(Segment::Index(i));
                strip_nulls(v, at, dropped);
                at.pop();
            }
        }
        _ => {}
    }
}

/// A path as serde_path_to_error shows it (`a.b[0].c`).
fn path_text(path: &[Segment]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Segment::Key(k) if out.is_empty() => out.push_str(k),
            Segment::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The paths of the null items of every list in `v`.
fn null_items(v: &serde_json::Value) -> Vec<Vec<Segment>> {
    fn walk(v: &serde_json::Value, at: &mut Vec<Segment>, out: &mut Vec<Vec<Segment>>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    at.push(Segment::Key(k.clone()));
                    walk(v, at, out);
                    at.pop();
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    at.push(Segment::Index(i));
                    if v.is_null() {
                        out.push(at.clone());
                    }
                    walk(v, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// The first place where the input has a sequence and the decoded object (serialised back) an
/// object: a struct serde filled from a sequence.
fn sequence_for_struct(
    input: &serde_json::Value,
    decoded: &serde_json::Value,
    at: &mut Vec<Segment>,
) -> Option<Vec<Segment>> {
    use serde_json::Value;
    match (input, decoded) {
        (Value::Array(_), Value::Object(_)) => Some(at.clone()),
        (Value::Object(i), Value::Object(d)) => i.iter().find_map(|(k, v)| {
            let out = d.get(k)?;
            at.push(Segment::Key(k.clone()));
            let found = sequence_for_struct(v, out, at);
            at.pop();
            found
        }),
        (Value::Array(i), Value::Array(d)) => i.iter().zip(d).enumerate().find_map(|(n, (v, out))| {
            at.push(Segment::Index(n));
            let found = sequence_for_struct(v, out, at);
            at.pop();
            found
        }),
        _ => None,
    }
}

/// Sets the member at `path` (whose parent is an object) to `v`.
fn set(value: &mut serde_json::Value, path: &[Segment], v: serde_json::Value) {
    match (value.pointer_mut(&pointer(&path[..path.len() - 1])), path.last()) {
        (Some(serde_json::Value::Object(parent)), Some(Segment::Key(k))) => {
            parent.insert(k.clone(), v);
        }
        (Some(serde_json::Value::Array(items)), Some(Segment::Index(i))) if *i < items.len() => {
            items[*i] = v;
        }
        _ => {}
    }
}

/// Go's zero values, in the order they are tried for a value of unknown type.
fn zero_values() -> [serde_json::Value; 5] {
    [json!(""), json!(0), json!(false), json!({}), json!([])]
}

/// The zero value Go stores for a null map value at `path`, when the object holding `path` is a
/// map (`""` in a map of strings, `false` in feature gates): the first zero value a made-up key
/// takes there and keeps. `None` when that object is a struct (a null field is left alone).
fn map_zero_value<T: DeserializeOwned + serde::Serialize>(
    value: &serde_json::Value,
    path: &[Segment],
) -> Option<serde_json::Value> {
    const PROBE: &str = "kubeadm-rs-probe\u{0}";
    let mut at = path.to_vec();
    at.pop();
    at.push(Segment::Key(PROBE.to_string()));
    zero_values().into_iter().find(|zero| {
        let mut probe = value.clone();
        set(&mut probe, &at, zero.clone());
        let (result, ignored) = decode_noting_unknown::<T>(probe);
        let Ok(obj) = result else { return false };
        // Other unknown fields of the document do not matter; the made-up key must be kept.
        !ignored.iter().any(|segs| pointer(segs) == pointer(&at))
            && serde_json::to_value(&obj)
                .ok()
                .is_some_and(|out| out.pointer(&pointer(&at)).is_some())
    })
}

/// Decodes `value` into `T`, with the paths of the fields `T` does not have.
fn decode_noting_unknown<T: DeserializeOwned>(
    value: serde_json::Value,
) -> (
    Result<T, serde_path_to_error::Error<serde_json::Error>>,
    Vec<Vec<Segment>>,
) {
    let mut unknown = Vec::new();
    let result = {
        let mut on_ignored = |path: serde_ignored::Path<'_>| {
            let mut segs = Vec::new();
            ignored_segments(&path, &mut segs);
            unknown.push(segs);
        };
        let de = serde_ignored::Deserializer::new(value, &mut on_ignored);
        serde_path_to_error::deserialize(de)
    };
    (result, unknown)
}

/// Decodes `doc` into `T`. Unknown fields are returned (upstream only warns about them); a wrong
/// type is an error naming the field and where it is.
pub(crate) fn decode_typed<T: DeserializeOwned + serde::Serialize>(
    file: &str,
    doc: &Document,
    gvk: &GroupVersionKind,
) -> Result<(T, Vec<UnknownField>), FieldError> {
    let mut value = doc.value.clone();
    let mut nulls = Vec::new();
    strip_nulls(&mut value, &mut Vec::new(), &mut nulls);
    // A null map value is kept by Go as the zero value (`""` in a map of strings, `false` in a
    // map of booleans); only a field of a struct is left alone.
    for null in &nulls {
        if let Some(zero) = map_zero_value::<T>(&value, null) {
            set(&mut value, null, zero);
        }
    }
    // A null item of a list is the zero value of the item's type for Go (`""` in a list of
    // strings), where serde refuses it: the first zero value the type takes there stands in (in
    // document order, so a failure further on is another null's).
    for null in null_items(&value) {
        let at = path_text(&null);
        let zero = zero_values().into_iter().find(|zero| {
            let mut probe = value.clone();
            set(&mut probe, &null, zero.clone());
            match decode_noting_unknown::<T>(probe) {
                (Ok(_), _) => true,
                (Err(e), _) => {
                    let failed = e.path().to_string();
                    failed != at
                        && !failed.starts_with(&format!("{at}."))
                        && !failed.starts_with(&format!("{at}["))
                }
            }
        });
        if let Some(zero) = zero {
            set(&mut value, &null, zero);
        }
    }
    let (result, mut unknown) = decode_noting_unknown::<T>(value.clone());
    if result.is_ok() {
        // A field set to null is unknown too if the type has no such field (upstream's strict
        // pass names it): an empty object there is ignored, and so reported, only then.
        for null in nulls {
            let mut probe = value.clone();
            if let Some(serde_json::Value::Object(parent)) =
                probe.pointer_mut(&pointer(&null[..null.len() - 1]))
                && let Some(Segment::Key(k)) = null.last()
            {
                parent.insert(k.clone(), serde_json::json!({}));
            }
            let (_, ignored) = decode_noting_unknown::<T>(probe);
            if ignored.iter().any(|segs| pointer(segs) == pointer(&null)) {
                unknown.push(null);
            }
        }
        // In the order upstream names them: its JSON has every object's keys sorted.
        unknown.sort_by_key(|segs| {
            segs.iter()
                .map(|s| match s {
                    Segment::Key(k) => (k.clone(), 0),
                    Segment::Index(i) => (String::new(), *i),
                })
                .collect::<Vec<_>>()
        });
    }
    let location = |segs: &[Segment]| Location {
        file: file.to_string(),
        position: doc.position(&pointer(segs)),
    };
    // serde reads a sequence into a struct field by field; Go's decoder refuses it.
    if let Ok(obj) = &result
        && let Ok(out) = serde_json::to_value(obj)
        && let Some(segs) = sequence_for_struct(&value, &out, &mut Vec::new())
    {
        return Err(FieldError {
            location: location(&segs),
            path: dotted(&segs),
            kind: gvk.kind.clone(),
            message: "cannot unmarshal array into a struct".to_string(),
        });
    }
    match result {
        Ok(obj) => {
            let unknown = unknown
                .iter()
                .map(|segs| UnknownField {
                    location: location(segs),
                    path: dotted(segs),
                    gvk: gvk.clone(),
                })
                .collect();
            Ok((obj, unknown))
        }
        Err(e) => {
            let segs = error_segments(e.path());
            Err(FieldError {
                location: location(&segs),
                path: dotted(&segs),
                kind: gvk.kind.clone(),
                message: e.into_inner().to_string(),
            })
        }
    }
}

/// A key as Go's encoding/json compares it with a field name: Unicode simple case folding.
fn go_fold(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\u{17f}' { 's' } else { c })
        .collect()
}

/// Why `apiVersion` and `kind` could not be read from a document, as upstream words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeMetaError {
    /// The document is not a mapping (the JSON type Go names: `array`, `string`, …).
    #[error(
        "could not interpret GroupVersionKind; unmarshal error: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {0} into Go value of type runtime.TypeMeta"
    )]
    NotAMapping(&'static str),
    /// `apiVersion` or `kind` is a mapping or a list.
    #[error(
        "could not interpret GroupVersionKind; unmarshal error: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {json_type} into Go struct field TypeMeta.{field} of type string"
    )]
    FieldType {
        /// The field (`apiVersion`, `kind`).
        field: String,
        /// The JSON type Go names.
        json_type: &'static str,
    },
    /// `apiVersion` has more than one `/`.
    #[error("unexpected GroupVersion string: {0}")]
    GroupVersion(String),
}

/// Reads `apiVersion` and `kind` of a document (upstream's `DefaultMetaFactory.Interpret`).
///
/// Upstream reads these two with their Go type as a hint, so a YAML number or boolean there is taken
/// as its text (`apiVersion: 5` is version `5`); a document that is not a mapping cannot be read.
pub(crate) fn type_meta(doc: &Document) -> Result<GroupVersionKind, TypeMetaError> {
    let map = match &doc.value {
        serde_json::Value::Object(map) => Some(map),
        serde_json::Value::Null => None,
        other => {
            return Err(TypeMetaError::NotAMapping(go_json_type(other)));
        }
    };
    let field = |name: &str| -> Result<String, TypeMetaError> {
        // Go's encoding/json matches field names without regard to case; of several matches in
        // its (sorted) object, the last wins.
        let found = map.and_then(|m| {
            let mut keys: Vec<&String> = m.keys().filter(|k| go_fold(k) == go_fold(name)).collect();
            keys.sort();
            keys.last().and_then(|k| m.get(*k))
        });
        match found {
            None | Some(serde_json::Value::Null) => Ok(String::new()),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
            Some(serde_json::Value::Bool(b)) => Ok(b.to_string()),
            Some(other) => Err(TypeMetaError::FieldType {
                field: name.to_string(),
                json_type: go_json_type(other),
            }),
        }
    };
    let api_version = field("apiVersion")?;
    let kind = field("kind")?;
    // apimachinery's `ParseGroupVersion`: `/` alone is empty, more than one `/` is refused.
    match api_version.matches('/').count() {
        0 | 1 if api_version != "/" => Ok(GroupVersionKind::new(&api_version, &kind)),
        0 | 1 => Ok(GroupVersionKind::new("", &kind)),
        _ => Err(TypeMetaError::GroupVersion(api_version)),
    }
}

/// How Go's `encoding/json` names a JSON value's type in its errors.
fn go_json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1beta3::ClusterConfiguration;

    fn doc(v: serde_json::Value) -> Document {
        Document {
            value: v,
            positions: Default::default(),
            json_error: None,
        }
    }

    #[test]
    fn unknown_fields_are_reported_with_paths() {
        let d = doc(serde_json::json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "ClusterConfiguration",
            "foo": "bar",
            "networking": {"podSubnet": "10.0.0.0/8", "bogus": 1},
            "apiServer": {"extraVolumes": [{"name": "a", "hostPath": "/a", "mountPath": "/a", "x": 1}]},
            "etcd": {"local": {"Datadir": "/x"}},
        }));
        let gvk = GroupVersionKind::new("kubeadm.k8s.io/v1beta3", "ClusterConfiguration");
        let (cfg, unknown) = decode_typed::<ClusterConfiguration>("c.yaml", &d, &gvk).expect("decodes");
        assert_eq!(cfg.networking.pod_subnet, "10.0.0.0/8");
        let paths: Vec<&str> = unknown.iter().map(|u| u.path.as_str()).collect();
        // Names are case-sensitive, as in upstream's decoder; the order is that of its JSON, whose
        // keys are sorted.
        assert_eq!(
            paths,
            [
                "apiServer.extraVolumes[0].x",
                "etcd.local.Datadir",
                "foo",
                "networking.bogus",
            ]
        );
    }

    #[test]
    fn unknown_fields_set_to_null_are_reported() {
        let d = doc(serde_json::json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "ClusterConfiguration",
            "local": null,
            "etcd": null,
            "networking": {"bogus": null, "podSubnet": null},
        }));
        let gvk = GroupVersionKind::new("kubeadm.k8s.io/v1beta3", "ClusterConfiguration");
        let (_, unknown) = decode_typed::<ClusterConfiguration>("c.yaml", &d, &gvk).expect("decodes");
        let paths: Vec<&str> = unknown.iter().map(|u| u.path.as_str()).collect();
        assert_eq!(paths, ["local", "networking.bogus"]);
    }

    #[test]
    fn wrong_types_name_the_field() {
        let cases = [
            (
                serde_json::json!({"networking": {"serviceSubnet": 5}}),
                "networking.serviceSubnet",
            ),
            (
                serde_json::json!({"apiServer": {"timeoutForControlPlane": "4x"}}),
                "apiServer.timeoutForControlPlane",
            ),
            (
                serde_json::json!({"apiServer": {"certSANs": "a"}}),
                "apiServer.certSANs",
            ),
        ];
        let gvk = GroupVersionKind::new("kubeadm.k8s.io/v1beta3", "ClusterConfiguration");
        for (v, want) in cases {
            let err = decode_typed::<ClusterConfiguration>("c.yaml", &doc(v), &gvk).expect_err(want);
            assert_eq!(err.path, want);
        }
    }

    #[test]
    fn nulls_mean_absent() {
        let d = doc(serde_json::json!({"clusterName": null, "networking": null, "etcd": {"local": null}}));
        let gvk = GroupVersionKind::new("kubeadm.k8s.io/v1beta3", "ClusterConfiguration");
        let (cfg, unknown) = decode_typed::<ClusterConfiguration>("c.yaml", &d, &gvk).expect("decodes");
        assert_eq!(cfg, ClusterConfiguration::default());
        assert!(unknown.is_empty());
    }
}
