//! Reading a patch directory (upstream `util/patches`): which files are patches, for which target
//! and of which type, in which order, split into documents.
//!
//! File names are `target[suffix][+patchtype].{json,yaml}`: the target is one of the known targets
//! (`etcd`, `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`,
//! `kubeletconfiguration`), the suffix (anything without `.` or `+`) only orders files, and the
//! patch type is `strategic` (the default), `merge` or `json`. Files are taken in the order Go's
//! `filepath.Walk` visits them (lexical, subdirectories included), other extensions and unknown
//! targets are ignored with a message, and a `+` without a known type is an error.

use serde_json::Value;

use super::{PatchError, PatchType};

/// The targets upstream knows, in its order (used in its messages).
pub const KNOWN_TARGETS: [&str; 5] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubeletconfiguration",
];

/// A file found in the patch directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// Path relative to the patch directory, `/`-separated (files of subdirectories included).
    pub path: String,
    /// The file's content.
    pub content: Vec<u8>,
}

/// The patches of one file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PatchSet {
    pub(crate) target: String,
    pub(crate) patch_type: PatchType,
    /// The file's name (relative path), for error context.
    pub(crate) file: String,
    /// Each document of the file, as JSON, with the compact JSON text upstream prints in errors.
    pub(crate) patches: Vec<(Value, String)>,
}

/// What parsing a file name gives: a patch file, a file to ignore (with the reason), or an error.
enum Parsed {
    Patch(String, PatchType),
    Ignore(String),
}

/// Reads the patch sets of a directory listing; `messages` receives upstream's `[patches]` lines.
pub(crate) fn read(
    dir_display: &str,
    files: &[PatchFile],
    messages: &mut Vec<String>,
) -> Result<Vec<PatchSet>, PatchError> {
    messages.push(format!(
        "[patches] Reading patches from path {}",
        kubeadm_api::gofmt::quote(dir_display)
    ));
    let mut sorted: Vec<&PatchFile> = files.iter().collect();
    // filepath.Walk visits each directory's entries in lexical order, descending as it goes.
    sorted.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    let mut sets = Vec::new();
    let mut patch_files = Vec::new();
    let mut ignored = Vec::new();
    for f in sorted {
        let base = f.path.rsplit('/').next().unwrap_or_default().to_string();
        let wrap = |message: String| PatchError::Directory {
            dir: dir_display.to_string(),
            file: f.path.clone(),
            message,
        };
        let (target, patch_type) = match parse_file_name(&base).map_err(|e| wrap(e.to_string()))? {
            Parsed::Patch(t, p) => (t, p),
            Parsed::Ignore(reason) => {
                messages.push(format!(
                    "[patches] Ignoring file {}: {reason}",
                    kubeadm_api::gofmt::quote(&base)
                ));
                ignored.push(base);
                continue;
            }
        };
        if f.content.is_empty() {
            messages.push(format!(
                "[patches] Ignoring empty file: {}",
                kubeadm_api::gofmt::quote(&base)
            ));
            ignored.push(base);
            continue;
        }
        let text = String::from_utf8_lossy(&f.content);
        let mut patches = Vec::new();
        for doc in split_documents(&text) {
            let trimmed = doc.trim();
            if trimmed.is_empty() {
                continue;
            }
            let value = yaml_to_json(trimmed).map_err(|e| PatchError::Convert {
                dir: dir_display.to_string(),
                file: f.path.clone(),
                patch: trimmed.to_string(),
                reason: format!("yaml: {e}"),
            })?;
            let text = super::gotext::json(&value);
            patches.push((value, text));
        }
        patch_files.push(base);
        sets.push(PatchSet {
            target,
            patch_type,
            file: f.path.clone(),
            patches,
        });
    }
    if !patch_files.is_empty() {
        messages.push(format!(
            "[patches] Found the following patch files: [{}]",
            patch_files.join(" ")
        ));
    }
    if !ignored.is_empty() {
        messages.push(format!(
            "[patches] Ignored the following files: [{}]",
            ignored.join(" ")
        ));
    }
    Ok(sets)
}

/// A file name with a `+` not followed by a known patch type: upstream refuses the directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown or missing patch type after '+', must be one of [json merge strategic]")]
struct UnknownPatchType;

/// `parseFilename`: the extension must be `.json` or `.yaml`, the name must start with a known
/// target, and a `+` must be followed by a known patch type.
fn parse_file_name(name: &str) -> Result<Parsed, UnknownPatchType> {
    let ext_ok = ["json", "yaml"].iter().any(|e| {
        name.strip_suffix(e)
            .and_then(|s| s.strip_suffix('.'))
            .is_some_and(|stem| !stem.is_empty())
    });
    if !ext_ok {
        return Ok(Parsed::Ignore(
            "the file extension must be one of [json yaml]".to_string(),
        ));
    }
    // Go's regexp takes the first alternative that matches (leftmost-first).
    let Some(target) = KNOWN_TARGETS.iter().find(|t| name.starts_with(*t)) else {
        return Ok(Parsed::Ignore(format!(
            "unknown target, must be one of [{}]",
            KNOWN_TARGETS.join(" ")
        )));
    };
    let rest = &name[target.len()..];
    // `([^.+\n]*)?` then `(\+)?` then `(json|merge|strategic)?`.
    let suffix_end = rest.find(['.', '+', '\n']).unwrap_or(rest.len());
    let rest = &rest[suffix_end..];
    let patch_type = match rest.strip_prefix('+') {
        None => PatchType::Strategic,
        Some(after) => {
            if after.starts_with("json") {
                PatchType::Json
            } else if after.starts_with("merge") {
                PatchType::Merge
            } else if after.starts_with("strategic") {
                PatchType::Strategic
            } else {
                return Err(UnknownPatchType);
            }
        }
    };
    Ok(Parsed::Patch(target.to_string(), patch_type))
}

/// Splits a stream into documents as `k8s.io/apimachinery`'s YAML reader does: at lines that start
/// with `---` followed by nothing but white space.
fn split_documents(text: &str) -> Vec<String> {
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        if let Some(after) = line.strip_prefix("---")
            && after.trim_end().is_empty()
        {
            if !cur.is_empty() {
                docs.push(std::mem::take(&mut cur));
            }
            continue;
        }
        cur.push_str(line);
    }
    if !cur.is_empty() {
        docs.push(cur);
    }
    docs
}

/// `sigs.k8s.io/yaml.YAMLToJSON` of one document (upstream words its error `yaml: …`).
fn yaml_to_json(doc: &str) -> Result<Value, kubeadm_yaml::ParseError> {
    let mut docs = kubeadm_yaml::parse_documents(doc)?;
    match docs.len() {
        0 => Ok(Value::Null),
        _ => Ok(docs.swap_remove(0).value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(name: &str) -> Result<Option<(String, PatchType)>, UnknownPatchType> {
        parse_file_name(name).map(|p| match p {
            Parsed::Patch(t, p) => Some((t, p)),
            Parsed::Ignore(_) => None,
        })
    }

    #[test]
    fn file_names() {
        assert_eq!(
            parsed("etcd.yaml"),
            Ok(Some(("etcd".into(), PatchType::Strategic)))
        );
        assert_eq!(
            parsed("kube-apiserver0+merge.json"),
            Ok(Some(("kube-apiserver".into(), PatchType::Merge)))
        );
        assert_eq!(
            parsed("kube-scheduler-a+json.yaml"),
            Ok(Some(("kube-scheduler".into(), PatchType::Json)))
        );
        assert_eq!(parsed("kubeletconfiguration.yml"), Ok(None));
        assert_eq!(parsed("foo.yaml"), Ok(None));
        assert!(parsed("etcd+bogus.yaml").is_err());
        assert!(parsed("etcd+.yaml").is_err());
    }

    #[test]
    fn documents_split_on_separator_lines() {
        let docs = split_documents("a: 1\n---\nb: 2\n--- \n--- x\nc: 3\n");
        assert_eq!(
            docs,
            vec![
                "a: 1\n".to_string(),
                "b: 2\n".to_string(),
                "--- x\nc: 3\n".to_string()
            ]
        );
    }
}
