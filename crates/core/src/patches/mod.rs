//! `--patches`: reading a patch directory and applying its patches to the static pod manifests and
//! the kubelet configuration, as upstream kubeadm v1.25 does (`util/patches`).
//!
//! Pure: the directory's listing and file contents come in as [`PatchFile`] values. Patches are
//! JSON patches (RFC 6902), merge patches (RFC 7386) or strategic merge patches (Kubernetes'
//! own, with the merge keys of `v1.Pod`), applied per target in file order. The messages upstream
//! prints (`[patches] …`) are returned for the caller to print.

mod directory;
mod gotext;
mod json_patch;
mod merge_patch;
mod pod_shape;
mod quantity;
mod schema;
mod strategic;

use serde_json::Value;

use crate::manifests::StaticPod;

pub use directory::{KNOWN_TARGETS, PatchFile};

/// The target name of the kubelet configuration.
pub const KUBELET_CONFIGURATION: &str = "kubeletconfiguration";

/// A patch type, named in file names after `+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 (`+json`).
    Json,
    /// RFC 7386 (`+merge`).
    Merge,
    /// Kubernetes' strategic merge patch (`+strategic`, the default).
    Strategic,
}

impl PatchType {
    /// The media type upstream prints for it.
    pub fn media_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
        }
    }
}

/// Why a patch does not apply to its document, or a patched document does not read back as upstream
/// reads it; the texts are those of the libraries upstream uses (`evanphx/json-patch`,
/// apimachinery's `strategicpatch`, Go's `encoding/json`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// A value does not decode as the Go type upstream reads it into: `json: cannot unmarshal
    /// string into Go struct field Pod.spec of type struct`, `expected a map, but received a
    /// string`.
    #[error("{0}")]
    Decode(String),
    /// A path, key or index the document does not have: `Unable to remove nonexistent key: b:
    /// missing value`.
    #[error("{0}")]
    Missing(String),
    /// The patch itself is malformed: an unknown operation or directive, an element without its
    /// merge key, lists that cannot merge.
    #[error("{0}")]
    Invalid(String),
    /// A JSON patch `test` operation found another value at its path.
    #[error("testing value {0} failed: test failed")]
    TestFailed(String),
    /// One of the above, with the operation that failed put before it (`error in add for path:
    /// '/a/5': …`).
    #[error("{context}: {source}")]
    Context {
        /// The operation, in upstream's words.
        context: String,
        /// Why it failed.
        source: Box<ApplyError>,
    },
}

impl ApplyError {
    /// The error with upstream's words for the failed operation put before it.
    pub(crate) fn context(self, context: impl Into<String>) -> Self {
        ApplyError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }
}

/// Why patches could not be read or applied. The texts are upstream's; the fields also name the
/// file the patch came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The directory listing has a file upstream refuses (a `+` without a known patch type).
    #[error("could not list patch files for path {}: {message}", kubeadm_api::gofmt::quote(.dir))]
    Directory {
        /// The patch directory.
        dir: String,
        /// The offending file, relative to the directory.
        file: String,
        /// Why.
        message: String,
    },
    /// A document of a patch file is not valid YAML or JSON.
    #[error("could not list patch files for path {}: could not convert patch to JSON:\n{patch}\n: {reason}", kubeadm_api::gofmt::quote(.dir))]
    Convert {
        /// The patch directory.
        dir: String,
        /// The offending file, relative to the directory.
        file: String,
        /// The document's text.
        patch: String,
        /// The parser's complaint.
        reason: String,
    },
    /// The target is not one upstream knows.
    #[error("unknown patch target name {}, must be one of [{}]", kubeadm_api::gofmt::quote(.0), KNOWN_TARGETS.join(" "))]
    UnknownTarget(String),
    /// A patch does not apply to its target.
    #[error("could not apply the following patch of type {} to target {}:\n{patch}\n: {reason}", kubeadm_api::gofmt::quote(.patch_type.media_type()), kubeadm_api::gofmt::quote(.target))]
    Apply {
        /// The target.
        target: String,
        /// The patch type.
        patch_type: PatchType,
        /// The file the patch came from, relative to the directory.
        file: String,
        /// The patch as compact JSON.
        patch: String,
        /// Why it does not apply.
        reason: ApplyError,
    },
    /// The patched manifest is no longer a valid Pod.
    #[error("failed to unmarshal patched manifest from YAML: {0}")]
    NotAPod(ApplyError),
}

impl PatchError {
    /// The directory cannot be listed (missing, not a directory, unreadable): upstream's text with
    /// the I/O reason the caller observed, e.g. `lstat /patches: no such file or directory`.
    pub fn unreadable_directory(dir: &str, reason: &str) -> PatchError {
        PatchError::Directory {
            dir: dir.to_string(),
            file: String::new(),
            message: reason.to_string(),
        }
    }

    /// Upstream's message, followed by the patch file at fault when one is known (upstream's own
    /// messages do not always name it).
    pub fn detailed(&self) -> String {
        match self.file() {
            Some(file) => format!("{self}\n(in patch file {file:?})"),
            None => self.to_string(),
        }
    }

    /// The patch file at fault, when one is.
    pub fn file(&self) -> Option<&str> {
        match self {
            PatchError::Directory { file, .. }
            | PatchError::Convert { file, .. }
            | PatchError::Apply { file, .. } => Some(file.as_str()).filter(|f| !f.is_empty()),
            PatchError::UnknownTarget(_) | PatchError::NotAPod(_) => None,
        }
    }
}

/// The patches of a directory, ready to apply (upstream's `PatchManager`).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchManager {
    sets: Vec<directory::PatchSet>,
    messages: Vec<String>,
}

/// A patched document and the `[patches] Applied …` lines upstream prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    /// The document after all patches of its target.
    pub value: Value,
    /// Upstream's messages, one per applied patch.
    pub messages: Vec<String>,
}

impl PatchManager {
    /// Reads the patch files of `dir` (shown in messages as given). `files` lists every regular
    /// file under it, paths relative to it.
    pub fn from_files(dir: &str, files: &[PatchFile]) -> Result<PatchManager, PatchError> {
        let mut messages = Vec::new();
        let sets = directory::read(dir, files, &mut messages)?;
        Ok(PatchManager { sets, messages })
    }

    /// What upstream printed while reading the directory.
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    /// Whether any patch targets `target`.
    pub fn has_patches_for(&self, target: &str) -> bool {
        self.sets.iter().any(|s| s.target == target)
    }

    /// Applies every patch for `target` to `doc`, in file order.
    pub fn apply(&self, target: &str, doc: &Value) -> Result<Patched, PatchError> {
        if !KNOWN_TARGETS.contains(&target) {
            return Err(PatchError::UnknownTarget(target.to_string()));
        }
        let schema = if target == KUBELET_CONFIGURATION {
            schema::Schema::Plain
        } else {
            schema::Schema::Pod
        };
        let mut value = doc.clone();
        let mut messages = Vec::new();
        for set in self.sets.iter().filter(|s| s.target == target) {
            for (patch, text) in &set.patches {
                let result = match set.patch_type {
                    PatchType::Json => json_patch::apply(&value, patch),
                    PatchType::Merge => merge_patch::apply(&value, patch),
                    PatchType::Strategic => strategic::apply(&value, patch, schema),
                };
                value = result.map_err(|reason| PatchError::Apply {
                    target: target.to_string(),
                    patch_type: set.patch_type,
                    file: set.file.clone(),
                    patch: text.clone(),
                    reason,
                })?;
                messages.push(format!(
                    "[patches] Applied patch of type {} to target {}",
                    kubeadm_api::gofmt::quote(set.patch_type.media_type()),
                    kubeadm_api::gofmt::quote(target)
                ));
            }
        }
        Ok(Patched { value, messages })
    }

    /// Patches a static pod (`PatchStaticPod`): applies the patches for its component and reads the
    /// result back as a `v1.Pod` would be read (unknown fields and empty optional fields dropped).
    pub fn patch_static_pod(&self, pod: &StaticPod) -> Result<(StaticPod, Vec<String>), PatchError> {
        let patched = self.apply(&pod.name, &pod.pod)?;
        let value = pod_shape::read_back(&patched.value).map_err(PatchError::NotAPod)?;
        let out = StaticPod {
            name: pod.name.clone(),
            pod: value,
            warnings: pod.warnings.clone(),
        };
        Ok((out, patched.messages))
    }

    /// Patches the kubelet configuration (its JSON, as [`crate::kubelet::config_value`] gives it)
    /// and returns the `config.yaml` content: upstream writes the patched JSON as YAML directly.
    pub fn patch_kubelet_config(&self, config: &Value) -> Result<(String, Vec<String>), PatchError> {
        let patched = self.apply(KUBELET_CONFIGURATION, config)?;
        Ok((kubeadm_yaml::to_string(&patched.value), patched.messages))
    }
}
