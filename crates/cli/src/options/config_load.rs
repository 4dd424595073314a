//! The kubeadm configuration as the commands load it: reading `--config`, defaulting from flags
//! (upstream's `LoadOrDefaultInitConfiguration` and `DefaultedInitConfiguration`), the warnings
//! printed on the way, and the exit code a configuration error gives.

use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, InitConfig, defaulted_init_config, load_init_config};
use kubeadm_api::v1beta3::{ClusterConfiguration, InitConfiguration};
use kubeadm_api::version;
use kubeadm_core::images::{ImageOverride, ImageSettings};
use kubeadm_effects::fs::Fs;
use kubeadm_host::fs::RealFs;
use kubeadm_host::report::TerminalReporter;

pub(crate) use kubeadm_phases::log_config_warnings as log_warnings;

pub(crate) use crate::setup::secrets::new_token;

/// Why the kubeadm configuration could not be used; its text is upstream's, after the prefix the
/// command gives (upstream wraps these errors per command).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigLoadError {
    /// The file could not be read (exit code 1).
    #[error(
        "{prefix}unable to read config from {path:?} : {}",
        kubeadm_api::gofmt::read_file_error(path, source)
    )]
    Read {
        /// The command's prefix.
        prefix: String,
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Loading, converting, defaulting or validating the configuration failed (exit code 3 when
    /// the fault is in what the user gave, else 1); where each invalid field is in the user's file
    /// follows upstream's message.
    #[error("{prefix}{source}{}", field_locations(source))]
    Load {
        /// The command's prefix.
        prefix: String,
        /// Why.
        source: ConfigError,
    },
}

impl ConfigLoadError {
    /// The same error, after `prefix`.
    fn prefixed(self, prefix: &str) -> Self {
        match self {
            ConfigLoadError::Read {
                prefix: p,
                path,
                source,
            } => ConfigLoadError::Read {
                prefix: format!("{prefix}{p}"),
                path,
                source,
            },
            ConfigLoadError::Load { prefix: p, source } => ConfigLoadError::Load {
                prefix: format!("{prefix}{p}"),
                source,
            },
        }
    }

    /// Whether the fault is in what the user gave (see [`is_bad_input`]).
    pub(crate) fn is_bad_input(&self) -> bool {
        match self {
            ConfigLoadError::Read { .. } => false,
            ConfigLoadError::Load { source, .. } => is_bad_input(source),
        }
    }
}

/// Where each invalid field is in the user's file, one `\n\t<location>: <field>` line each.
fn field_locations(e: &ConfigError) -> String {
    let mut out = String::new();
    if let ConfigError::Invalid(list) = e {
        for fe in &list.0 {
            if let Some(loc) = fe.location.as_ref().filter(|l| l.position.is_some()) {
                out.push_str(&format!("\n\t{loc}: {}", fe.field));
            }
        }
    }
    out
}

/// Reads the kubeadm config at `path` the way upstream reports failures to do so.
pub(crate) fn read_config(path: &str) -> Result<String, ConfigLoadError> {
    let bytes = RealFs
        .read(Path::new(path))
        .map_err(|source| ConfigLoadError::Read {
            prefix: String::new(),
            path: path.to_string(),
            source,
        })?;
    config_text(path, bytes)
}

/// The text of a kubeadm config read from `path`. Bytes that are not UTF-8 are refused as upstream's
/// YAML reader refuses them, naming the document's line and column (exit 3, bad input), unless an
/// earlier document fails first (upstream reads and checks one document at a time); when every
/// such byte is on a document separator line the reader never sees, the text is kept (lossily).
pub(crate) fn config_text(path: &str, bytes: Vec<u8>) -> Result<String, ConfigLoadError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let bytes = e.into_bytes();
            match kubeadm_api::load::split_documents_bytes(path, &bytes) {
                Ok(_) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) => Err(config_error(ConfigError::Load(Box::new(e)), "")),
            }
        }
    }
}

/// A configuration error as the commands report it, after `prefix`; the warnings found before
/// it are logged first, as upstream logs them as it goes.
pub(crate) fn config_error(e: ConfigError, prefix: &str) -> ConfigLoadError {
    let rep = TerminalReporter::new(0, false);
    let (warnings, e) = e.split();
    log_warnings(&rep, &warnings);
    ConfigLoadError::Load {
        prefix: prefix.to_string(),
        source: e,
    }
}

/// Whether a configuration error is about what the user gave (exit 3, this project's rule for
/// validation) rather than about this host (exit 1). Upstream v1.25.16 exits 3 only for field
/// validation errors and a kind given twice, and 1 for the rest of its bad-input errors (a YAML
/// syntax error, an unknown apiVersion, a version that is not one, a malformed token or address),
/// or for all of them when a command wraps the error; we give every one of them 3.
fn is_bad_input(e: &ConfigError) -> bool {
    use kubeadm_api::dynamic::DynamicError;
    match e {
        ConfigError::Load(_) | ConfigError::Invalid(_) => true,
        ConfigError::AfterWarnings { error, .. } => is_bad_input(error),
        ConfigError::Dynamic(d) => matches!(
            d,
            DynamicError::BadAdvertiseAddress(_)
                | DynamicError::Version(_)
                | DynamicError::ControlPlaneEndpoint(_)
        ),
    }
}

/// Loads the init configuration as upstream's `LoadOrDefaultInitConfiguration`: from `--config`
/// when given (flags are then ignored), else from defaults and the given cluster settings. Errors carry
/// `prefix`, as upstream wraps them per command.
pub(crate) fn load_or_default_init(
    host: &HostFacts,
    config_path: &str,
    cluster: ClusterConfiguration,
    prefix: &str,
) -> Result<InitConfig, ConfigLoadError> {
    load_or_default_init_with(host, config_path, InitConfiguration::default(), cluster, prefix)
}

/// [`load_or_default_init`] with an init configuration built from flags too (`--cri-socket`), used
/// only when no `--config` is given.
pub(crate) fn load_or_default_init_with(
    host: &HostFacts,
    config_path: &str,
    init: InitConfiguration,
    cluster: ClusterConfiguration,
    prefix: &str,
) -> Result<InitConfig, ConfigLoadError> {
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    let loaded = if config_path.is_empty() {
        defaulted_init_config(init, cluster, &mut inputs)
    } else {
        let text = read_config(config_path).map_err(|e| e.prefixed(prefix))?;
        load_init_config(config_path, &text, &mut inputs)
    };
    loaded.map_err(|e| config_error(e, prefix))
}

/// Upstream's `DefaultedInitConfiguration` for configurations built from flags.
pub(crate) fn defaulted_init(
    host: &HostFacts,
    init: InitConfiguration,
    cluster: ClusterConfiguration,
) -> Result<InitConfig, ConfigLoadError> {
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    defaulted_init_config(init, cluster, &mut inputs).map_err(|e| config_error(e, ""))
}

/// The image settings of a loaded configuration.
pub(crate) fn image_settings(cfg: &InitConfig) -> ImageSettings {
    let c = &cfg.cluster;
    ImageSettings {
        image_repository: c.image_repository.clone(),
        ci_image_repository: cfg.resolved.ci_image_repository.clone(),
        kubernetes_version: c.kubernetes_version.clone(),
        local_etcd: c.etcd.local.as_ref().map(|l| ImageOverride {
            image_repository: l.image_repository.clone(),
            image_tag: l.image_tag.clone(),
        }),
        dns: ImageOverride {
            image_repository: c.dns.image_repository.clone(),
            image_tag: c.dns.image_tag.clone(),
        },
    }
}

/// Go's `json.MarshalIndent(v, "", "    ")`, keeping the object's key order.
pub(crate) fn go_json_indent(v: &serde_json::Value) -> String {
    use serde::Serialize;
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    // Serialising a Value into memory cannot fail.
    let _ = v.serialize(&mut ser);
    // Go escapes HTML-significant characters in JSON strings.
    String::from_utf8_lossy(&buf)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
