//! Reading a kubeadm config file (one or more YAML or JSON documents) into our model, with
//! upstream's rules: which documents are used, which are ignored with a warning, which apiVersions are
//! refused or deprecated, and what a missing or repeated kind means.
//!
//! Upstream only *warns* about unknown fields and duplicate keys and fails on wrong types; we do the
//! same, but every message names the file, line, column and field path.

use std::fmt;

use kubeadm_yaml::{Document, ParseError};

use crate::componentconfig::ComponentConfigs;
use crate::componentconfig::kubelet::{KUBELET_API_VERSION, KubeletConfiguration};
use crate::componentconfig::kubeproxy::{KUBE_PROXY_API_VERSION, KubeProxyConfiguration};
use crate::defaults::{
    DEFAULT_IMAGE_PULL_POLICY, default_cluster_configuration, default_init_configuration,
    default_join_configuration,
};
use crate::document::{FieldError, GroupVersionKind, Location, UnknownField, decode_typed, type_meta};
use crate::v1beta3::{ClusterConfiguration, InitConfiguration, JoinConfiguration};

const KUBELET_GROUP: &str = "kubelet.config.k8s.io";
const KUBE_PROXY_GROUP: &str = "kubeproxy.config.k8s.io";

/// Something upstream prints as a warning and goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWarning {
    /// A v1beta2 document.
    Deprecated {
        /// File name.
        file: String,
        /// The deprecated `group/version`.
        group_version: String,
    },
    /// A field the type does not have.
    UnknownField(UnknownField),
    /// A document of a kind no scheme knows.
    UnknownKind {
        /// File name.
        file: String,
        /// The document's kind.
        gvk: GroupVersionKind,
    },
    /// A key repeated in a mapping; the later value is used, as upstream does.
    DuplicateKey {
        /// File name.
        file: String,
        /// The reader's report (line, column, key).
        error: ParseError,
    },
    /// A document that is neither kubeadm's nor a component config, left out.
    Ignored {
        /// File name.
        file: String,
        /// The document's kind.
        gvk: GroupVersionKind,
    },
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWarning::Deprecated { file, group_version } => write!(
                f,
                "{file}: your configuration file uses a deprecated API spec: {}. Please use 'kubeadm config migrate --old-config old.yaml --new-config new.yaml', which will write the new, similar spec using a newer API version.",
                crate::gofmt::quote(group_version)
            ),
            ConfigWarning::UnknownField(u) => u.fmt(f),
            ConfigWarning::UnknownKind { file, gvk } => {
                write!(f, "{file}: unknown configuration {}", gvk.go_syntax())
            }
            ConfigWarning::DuplicateKey { file, error } => match error {
                // The key quoted as yaml.v2 quotes it (Go's %q).
                ParseError::DuplicateKey { position, key } => write!(
                    f,
                    "{file}: line {}, column {}: key {} already set in map",
                    position.line,
                    position.column,
                    crate::gofmt::quote(key)
                ),
                other => write!(f, "{file}: {other}"),
            },
            ConfigWarning::Ignored { file, gvk } => write!(
                f,
                "{file}: [config] WARNING: Ignored YAML document with GroupVersionKind {gvk}"
            ),
        }
    }
}

/// Why a config file was refused; messages start with upstream's and add where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Not well-formed YAML or JSON.
    #[error("{file}: {source}")]
    Parse {
        /// File name.
        file: String,
        /// The reader's error.
        #[source]
        source: ParseError,
    },
    /// `apiVersion` or `kind` is not a string.
    #[error("{location}: {message}")]
    TypeMeta {
        /// Where the document starts.
        location: Location,
        /// Why.
        message: crate::document::TypeMetaError,
    },
    /// `apiVersion` (with a group) or `kind` is missing.
    #[error(
        "{location}: invalid configuration for GroupVersionKind {gvk}: kind and apiVersion is mandatory information that must be specified"
    )]
    MissingTypeMeta {
        /// Where the document starts.
        location: Location,
        /// What was found.
        gvk: GroupVersionKind,
    },
    /// The same kind in two documents (all such are listed).
    #[error("{}", duplicate_kinds_message(.0))]
    DuplicateKinds(Vec<(Location, String)>),
    /// An apiVersion older than v1beta2.
    #[error(
        "{location}: your configuration file uses an old API spec: {}. Please use kubeadm {use_kubeadm} instead and run 'kubeadm config migrate --old-config old.yaml --new-config new.yaml', which will write the new, similar spec using a newer API version.",
        crate::gofmt::quote(group_version)
    )]
    OldApiVersion {
        /// Where the document starts.
        location: Location,
        /// The old `group/version`.
        group_version: String,
        /// The last kubeadm release that reads it.
        use_kubeadm: &'static str,
    },
    /// A kubeadm kind in a version (or group) that has no such kind.
    #[error(
        "{location}: no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:100\"",
        crate::gofmt::quote(kind),
        crate::gofmt::quote(group_version)
    )]
    NotRegistered {
        /// Where the document starts.
        location: Location,
        /// The kind.
        kind: String,
        /// The `group/version`.
        group_version: String,
    },
    /// A component config in a version kubeadm does not read.
    #[error(
        "{location}: unsupported apiVersion {}, you may have to do manual conversion to {} and run kubeadm again",
        crate::gofmt::quote(group_version),
        crate::gofmt::quote(current)
    )]
    UnsupportedComponentVersion {
        /// Where the document starts.
        location: Location,
        /// The given `group/version`.
        group_version: String,
        /// The one kubeadm reads.
        current: &'static str,
    },
    /// A document Kubernetes' decoders refuse though its apiVersion and kind could be read: it
    /// starts as JSON does and is not JSON, or its apiVersion or kind is `.inf` or `.nan`.
    #[error("{location}: {message}")]
    NotJson {
        /// Where the document starts.
        location: Location,
        /// The decoder's refusal.
        message: String,
    },
    /// A field of the wrong type or with a value its type rejects.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// Neither an InitConfiguration nor a ClusterConfiguration.
    #[error("{file}: no InitConfiguration or ClusterConfiguration kind was found in the YAML file")]
    NoInitOrCluster {
        /// File name.
        file: String,
    },
    /// No JoinConfiguration.
    #[error("{file}: no JoinConfiguration found in the supplied config")]
    NoJoin {
        /// File name.
        file: String,
    },
}

/// A config file that was refused, with what upstream has logged by then: it warns as it goes
/// through the documents (unknown fields, repeated keys, deprecated or unknown kinds, documents it
/// ignores), so the warnings of the documents before the failing one come before the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    /// The warnings logged before the error, in order.
    pub warnings: Vec<ConfigWarning>,
    /// Why the file was refused.
    pub error: LoadError,
}

fn duplicate_kinds_message(dups: &[(Location, String)]) -> String {
    // Upstream's aggregate drops repeated messages: a kind given three times is named once (here
    // with its first repetition's place).
    let mut kinds: Vec<&String> = Vec::new();
    let msgs: Vec<String> = dups
        .iter()
        .filter(|(_, kind)| {
            !kinds.contains(&kind) && {
                kinds.push(kind);
                true
            }
        })
        .map(|(loc, kind)| {
            format!(
                "{loc}: invalid configuration: kind {} is specified twice in YAML file",
                crate::gofmt::quote(kind)
            )
        })
        .collect();
    // Upstream aggregates several errors as `[a, b]`.
    if msgs.len() == 1 {
        msgs[0].clone()
    } else {
        format!("[{}]", msgs.join(", "))
    }
}

/// One document with its kind.
#[derive(Debug, Clone)]
pub struct KindedDocument {
    /// apiVersion and kind.
    pub gvk: GroupVersionKind,
    /// The parsed document.
    pub doc: Document,
    /// Keys the document repeats (the later value is used): upstream's strict pass warns of them
    /// when it decodes the document, so they are warned of there, not when the file is split.
    pub duplicates: Vec<ParseError>,
}

/// The warnings of upstream's strict pass over a document that decoded: its repeated keys, then
/// its unknown fields (upstream prints them on one line, in that order).
fn strict_warnings(
    file: &str,
    d: &KindedDocument,
    unknown: Vec<UnknownField>,
    warnings: &mut Vec<ConfigWarning>,
) {
    warnings.extend(
        d.duplicates
            .iter()
            .cloned()
            .map(|error| ConfigWarning::DuplicateKey {
                file: file.to_string(),
                error,
            }),
    );
    warnings.extend(unknown.into_iter().map(ConfigWarning::UnknownField));
}

/// Points each validation error at its line in the document it came from: init-only fields in the
/// InitConfiguration (or JoinConfiguration), the rest in the ClusterConfiguration.
pub fn locate_errors(file: &str, sources: &[KindedDocument], errors: &mut crate::validation::ErrorList) {
    for e in &mut errors.0 {
        let node_local = ["/nodeRegistration", "/bootstrapTokens", "/localAPIEndpoint"]
            .iter()
            .any(|p| e.pointer.starts_with(p));
        let kind = if node_local {
            "InitConfiguration"
        } else {
            "ClusterConfiguration"
        };
        let doc = sources
            .iter()
            .find(|d| d.gvk.kind == kind || d.gvk.kind == "JoinConfiguration");
        if let Some(d) = doc {
            e.location = Some(Location {
                file: file.to_string(),
                position: d.doc.position(&e.pointer),
            });
        }
    }
}

/// Upstream's `SplitYAMLDocuments`: every document must have apiVersion (with a group) and kind,
/// and no kind may appear twice.
pub fn split_documents(file: &str, text: &str) -> Result<Vec<KindedDocument>, LoadError> {
    split_documents_bytes(file, text.as_bytes())
}

/// [`split_documents`] of bytes that need not be UTF-8. As upstream, each document is read and its
/// kind checked before the next is read, so a later document's bad byte or syntax is not reported
/// when an earlier one lacks its kind.
pub fn split_documents_bytes(file: &str, bytes: &[u8]) -> Result<Vec<KindedDocument>, LoadError> {
    let mut out: Vec<KindedDocument> = Vec::new();
    let mut dups = Vec::new();
    for item in kubeadm_yaml::documents_lenient_bytes(bytes) {
        // Upstream reads with yaml.v2's non-strict decoding: a repeated key keeps its last value,
        // and only the strict pass mentions it, as a warning (`strict_warnings`), for documents
        // it decodes.
        let (doc, duplicates) = item.map_err(|source| LoadError::Parse {
            file: file.to_string(),
            source,
        })?;
        // Empty documents are skipped by the reader; one of only comments reads as null and, as
        // upstream, fails below for lack of apiVersion and kind.
        let location = Location {
            file: file.to_string(),
            position: doc.position(""),
        };
        let gvk = type_meta(&doc).map_err(|message| LoadError::TypeMeta {
            location: location.clone(),
            message,
        })?;
        if gvk.group.is_empty() || gvk.version.is_empty() || gvk.kind.is_empty() {
            return Err(LoadError::MissingTypeMeta { location, gvk });
        }
        if out.iter().any(|d| d.gvk.kind == gvk.kind) {
            dups.push((location, gvk.kind.clone()));
            continue;
        }
        out.push(KindedDocument { gvk, doc, duplicates });
    }
    if !dups.is_empty() {
        return Err(LoadError::DuplicateKinds(dups));
    }
    Ok(out)
}

/// Upstream's `validateSupportedVersion`: refuses pre-v1beta2 kubeadm versions, warns on v1beta2.
fn check_version(
    file: &str,
    d: &KindedDocument,
    allow_deprecated: bool,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), LoadError> {
    let gv = d.gvk.group_version();
    let old = match gv.as_str() {
        "kubeadm.k8s.io/v1alpha1" => Some("v1.11"),
        "kubeadm.k8s.io/v1alpha2" => Some("v1.12"),
        "kubeadm.k8s.io/v1alpha3" => Some("v1.14"),
        "kubeadm.k8s.io/v1beta1" => Some("v1.15"),
        _ => None,
    };
    if let Some(use_kubeadm) = old {
        return Err(LoadError::OldApiVersion {
            location: Location {
                file: file.to_string(),
                position: d.doc.position(""),
            },
            group_version: gv,
            use_kubeadm,
        });
    }
    if gv == crate::v1beta2::API_VERSION && !allow_deprecated {
        warnings.push(ConfigWarning::Deprecated {
            file: file.to_string(),
            group_version: gv,
        });
    }
    Ok(())
}

fn is_kubeadm_kind(kind: &str) -> bool {
    matches!(
        kind,
        "InitConfiguration" | "ClusterConfiguration" | "JoinConfiguration"
    )
}

/// Refuses a document Kubernetes' decoders read as JSON that is not JSON.
fn not_json(file: &str, d: &KindedDocument) -> Result<(), LoadError> {
    match &d.doc.json_error {
        Some(message) => Err(LoadError::NotJson {
            location: Location {
                file: file.to_string(),
                position: d.doc.position(""),
            },
            message: message.clone(),
        }),
        None => Ok(()),
    }
}

/// Decodes a kubeadm kind (v1beta3, or v1beta2 rewritten) into its v1beta3 type.
fn decode_kubeadm<T: serde::de::DeserializeOwned + serde::Serialize>(
    file: &str,
    d: &KindedDocument,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<T, LoadError> {
    let location = |pointer: &str| Location {
        file: file.to_string(),
        position: d.doc.position(pointer),
    };
    let gv = d.gvk.group_version();
    let mut doc = d.doc.clone();
    if gv == crate::v1beta2::API_VERSION {
        let rewrite = crate::v1beta2::rewrite(&d.gvk.kind, &mut doc.value);
        if let Some((pointer, want)) = rewrite.type_error {
            let found = FieldError {
                location: location(&pointer),
                path: pointer.trim_start_matches('/').replace('/', "."),
                kind: d.gvk.kind.clone(),
                message: format!("expected {want}"),
            };
            // Go's decoder reports the first wrong type in the document's order: a field of the
            // rest of the document before this one is the error.
            let earlier = decode_typed::<T>(file, &doc, &d.gvk)
                .err()
                .filter(|e| e.location.position < found.location.position);
            return Err(LoadError::Field(earlier.unwrap_or(found)));
        }
        let unknown = rewrite
            .unknown
            .iter()
            .map(|pointer| UnknownField {
                location: location(pointer),
                path: pointer.trim_start_matches('/').replace('/', "."),
                gvk: d.gvk.clone(),
            })
            .collect();
        strict_warnings(file, d, unknown, warnings);
    } else if gv != crate::v1beta3::API_VERSION {
        warnings.push(ConfigWarning::UnknownKind {
            file: file.to_string(),
            gvk: d.gvk.clone(),
        });
        return Err(LoadError::NotRegistered {
            location: location(""),
            kind: d.gvk.kind.clone(),
            group_version: gv,
        });
    }
    // Upstream's strict pass reads the document as YAML (and warns); its decoding then fails on a
    // document that starts like JSON and is not, before any wrong type.
    let decoded = decode_typed::<T>(file, &doc, &d.gvk);
    if let Ok((_, unknown)) = &decoded {
        if gv == crate::v1beta2::API_VERSION {
            warnings.extend(unknown.iter().cloned().map(ConfigWarning::UnknownField));
        } else {
            strict_warnings(file, d, unknown.clone(), warnings);
        }
    }
    not_json(file, d)?;
    Ok(decoded?.0)
}

/// The kubeadm documents of an init config file, statically defaulted, with the user's component
/// configs (not yet defaulted by kubeadm: that needs the dynamic defaults first).
#[derive(Debug, Clone, Default)]
pub struct LoadedInit {
    /// The InitConfiguration (defaulted when the file has none).
    pub init: InitConfiguration,
    /// The ClusterConfiguration (defaulted when the file has none).
    pub cluster: ClusterConfiguration,
    /// Component configs given in the file.
    pub component_configs: ComponentConfigs,
    /// Warnings upstream would print.
    pub warnings: Vec<ConfigWarning>,
    /// The InitConfiguration and ClusterConfiguration documents as read, to locate later errors.
    pub sources: Vec<KindedDocument>,
}

/// Reads an init config file as upstream's `BytesToInitConfiguration` does, up to and including
/// static defaulting. `allow_deprecated` (as `config migrate` sets it) silences the v1beta2 warning.
pub fn load_init(file: &str, text: &str, allow_deprecated: bool) -> Result<LoadedInit, Box<LoadFailure>> {
    let mut warnings = Vec::new();
    match load_init_warning(file, text, allow_deprecated, &mut warnings) {
        Ok(loaded) => Ok(LoadedInit { warnings, ..loaded }),
        Err(error) => Err(Box::new(LoadFailure { warnings, error })),
    }
}

fn load_init_warning(
    file: &str,
    text: &str,
    allow_deprecated: bool,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<LoadedInit, LoadError> {
    let docs = split_documents(file, text)?;
    let mut init: Option<InitConfiguration> = None;
    let mut cluster: Option<ClusterConfiguration> = None;
    let mut component_docs = Vec::new();
    for d in &docs {
        check_version(file, d, allow_deprecated, warnings)?;
        match d.gvk.kind.as_str() {
            "InitConfiguration" => {
                let mut cfg: InitConfiguration = decode_kubeadm(file, d, warnings)?;
                default_init_configuration(&mut cfg);
                if d.gvk.group_version() == crate::v1beta2::API_VERSION {
                    cfg.node_registration.image_pull_policy = DEFAULT_IMAGE_PULL_POLICY.to_string();
                }
                init = Some(cfg);
            }
            "ClusterConfiguration" => {
                let mut cfg: ClusterConfiguration = decode_kubeadm(file, d, warnings)?;
                default_cluster_configuration(&mut cfg);
                cluster = Some(cfg);
            }
            _ => {
                // Known to the component configs' scheme: only the versions kubeadm reads.
                let gv = d.gvk.group_version();
                let known_component = (gv == KUBELET_API_VERSION && d.gvk.kind == "KubeletConfiguration")
                    || (gv == KUBE_PROXY_API_VERSION && d.gvk.kind == "KubeProxyConfiguration");
                // v1beta2 also registered ClusterStatus: known to the scheme, so no "unknown" warning.
                let kubeadm_known = d.gvk.group == crate::v1beta3::GROUP
                    && match d.gvk.version.as_str() {
                        "v1beta3" => is_kubeadm_kind(&d.gvk.kind),
                        "v1beta2" => is_kubeadm_kind(&d.gvk.kind) || d.gvk.kind == "ClusterStatus",
                        _ => false,
                    };
                if kubeadm_known && d.gvk.kind == "JoinConfiguration" {
                    // A JoinConfiguration next to init documents: strict-checked, then ignored.
                    let _: JoinConfiguration = decode_kubeadm(file, d, warnings).or_else(|e| match e {
                        LoadError::Field(_) | LoadError::NotJson { .. } => Ok(JoinConfiguration::default()),
                        other => Err(other),
                    })?;
                } else if known_component {
                    // Strict-checked here, as upstream does every document in turn (a wrong type
                    // fails later, when the component configs are read).
                    let unknown = if d.gvk.group == KUBELET_GROUP {
                        decode_typed::<KubeletConfiguration>(file, &d.doc, &d.gvk).map(|(_, u)| u)
                    } else {
                        decode_typed::<KubeProxyConfiguration>(file, &d.doc, &d.gvk).map(|(_, u)| u)
                    };
                    if let Ok(unknown) = unknown {
                        strict_warnings(file, d, unknown, warnings);
                    }
                } else if !kubeadm_known {
                    warnings.push(ConfigWarning::UnknownKind {
                        file: file.to_string(),
                        gvk: d.gvk.clone(),
                    });
                }
                if d.gvk.group == KUBELET_GROUP || d.gvk.group == KUBE_PROXY_GROUP {
                    component_docs.push(d);
                } else {
                    warnings.push(ConfigWarning::Ignored {
                        file: file.to_string(),
                        gvk: d.gvk.clone(),
                    });
                }
            }
        }
    }
    if init.is_none() && cluster.is_none() {
        return Err(LoadError::NoInitOrCluster {
            file: file.to_string(),
        });
    }
    let init = init.unwrap_or_else(|| {
        let mut cfg = InitConfiguration::default();
        default_init_configuration(&mut cfg);
        cfg
    });
    let cluster = cluster.unwrap_or_else(|| {
        let mut cfg = ClusterConfiguration::default();
        default_cluster_configuration(&mut cfg);
        cfg
    });
    let component_configs = decode_component_configs(file, &component_docs)?;
    let sources = docs
        .into_iter()
        .filter(|d| matches!(d.gvk.kind.as_str(), "InitConfiguration" | "ClusterConfiguration"))
        .collect();
    Ok(LoadedInit {
        init,
        cluster,
        component_configs,
        warnings: Vec::new(),
        sources,
    })
}

/// Reads the kubelet and kube-proxy documents (upstream's `FetchFromDocumentMap`); their unknown
/// fields were warned about when the documents were gone through.
fn decode_component_configs(file: &str, docs: &[&KindedDocument]) -> Result<ComponentConfigs, LoadError> {
    let mut out = ComponentConfigs::default();
    for d in docs {
        let gv = d.gvk.group_version();
        let location = Location {
            file: file.to_string(),
            position: d.doc.position(""),
        };
        let current = if d.gvk.group == KUBELET_GROUP {
            KUBELET_API_VERSION
        } else {
            KUBE_PROXY_API_VERSION
        };
        if gv != current {
            return Err(LoadError::UnsupportedComponentVersion {
                location,
                group_version: gv,
                current,
            });
        }
        let kind = if d.gvk.group == KUBELET_GROUP {
            "KubeletConfiguration"
        } else {
            "KubeProxyConfiguration"
        };
        // The decoder converts the document to JSON before it looks its kind up.
        not_json(file, d)?;
        if d.gvk.kind != kind {
            return Err(LoadError::NotRegistered {
                location,
                kind: d.gvk.kind.clone(),
                group_version: gv,
            });
        }
        if d.gvk.group == KUBELET_GROUP {
            let (kc, _) = decode_typed::<KubeletConfiguration>(file, &d.doc, &d.gvk)?;
            out.kubelet = Some(kc);
        } else {
            let (kp, _) = decode_typed::<KubeProxyConfiguration>(file, &d.doc, &d.gvk)?;
            out.kube_proxy = Some(kp);
        }
    }
    Ok(out)
}

/// A join config file, statically defaulted.
#[derive(Debug, Clone, Default)]
pub struct LoadedJoin {
    /// The JoinConfiguration.
    pub join: JoinConfiguration,
    /// Warnings upstream would print.
    pub warnings: Vec<ConfigWarning>,
    /// The JoinConfiguration document as read, to locate later errors.
    pub source: Option<KindedDocument>,
}

/// Reads a join config file as upstream's `LoadJoinConfigurationFromFile` does, up to static
/// defaulting. Documents of other kinds are skipped without a word, as upstream skips them.
pub fn load_join(file: &str, text: &str, allow_deprecated: bool) -> Result<LoadedJoin, Box<LoadFailure>> {
    let mut warnings = Vec::new();
    match load_join_warning(file, text, allow_deprecated, &mut warnings) {
        Ok(loaded) => Ok(LoadedJoin { warnings, ..loaded }),
        Err(error) => Err(Box::new(LoadFailure { warnings, error })),
    }
}

fn load_join_warning(
    file: &str,
    text: &str,
    allow_deprecated: bool,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<LoadedJoin, LoadError> {
    let docs = split_documents(file, text)?;
    let mut found = None;
    for d in docs.iter().filter(|d| d.gvk.kind == "JoinConfiguration") {
        check_version(file, d, allow_deprecated, warnings)?;
        found = Some(d);
    }
    let d = found.ok_or_else(|| LoadError::NoJoin {
        file: file.to_string(),
    })?;
    let mut join: JoinConfiguration = decode_kubeadm(file, d, warnings)?;
    default_join_configuration(&mut join);
    if d.gvk.group_version() == crate::v1beta2::API_VERSION {
        join.node_registration.image_pull_policy = DEFAULT_IMAGE_PULL_POLICY.to_string();
    }
    Ok(LoadedJoin {
        join,
        warnings: Vec::new(),
        source: Some(d.clone()),
    })
}
