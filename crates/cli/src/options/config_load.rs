//! The kubeadm configuration as the commands load it: reading `--config`, defaulting from flags
//! (upstream's `LoadOrDefaultInitConfiguration` and `DefaultedInitConfiguration`), the warnings
//! printed on the way, and the exit code a configuration error gives.

use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, InitConfig, defaulted_init_config, load_init_config};
use kubeadm_api::v1beta3::{BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_api::version;
use kubeadm_core::images::{ImageOverride, ImageSettings};
use kubeadm_effects::fs::Fs;
use kubeadm_host::fs::RealFs;
use kubeadm_host::report::TerminalReporter;

use crate::error::CommandError;

pub(crate) use kubeadm_phases::log_config_warnings as log_warnings;

/// A random bootstrap token, for the defaulting of configurations that have none.
pub(crate) fn new_token() -> BootstrapTokenString {
    BootstrapTokenString::generate(rand::random::<u8>)
}

/// Reads the kubeadm config at `path` the way upstream reports failures to do so.
pub(crate) fn read_config(path: &str) -> Result<String, CommandError> {
    let bytes = RealFs.read(Path::new(path)).map_err(|e| {
        CommandError::Failed(format!(
            "unable to read config from {path:?} : {}",
            kubeadm_api::gofmt::read_file_error(path, &e)
        ))
    })?;
    config_text(path, bytes)
}

/// The text of a kubeadm config read from `path`. Bytes that are not UTF-8 are refused as upstream's
/// YAML reader refuses them, naming the document's line and column (exit 3, bad input), unless an
/// earlier document fails first (upstream reads and checks one document at a time); when every
/// such byte is on a document separator line the reader never sees, the text is kept (lossily).
pub(crate) fn config_text(path: &str, bytes: Vec<u8>) -> Result<String, CommandError> {
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

/// Maps a configuration error to the exit code upstream gives it.
pub(crate) fn config_error(e: ConfigError, prefix: &str) -> CommandError {
    let rep = TerminalReporter::new(0, false);
    // Upstream logs its warnings as it goes, so those found before the error come first.
    let (warnings, e) = e.split();
    log_warnings(&rep, &warnings);
    let mut msg = format!("{prefix}{e}");
    // Upstream's message stays as it is; where each invalid field is in the user's file follows.
    if let ConfigError::Invalid(list) = &e {
        for fe in &list.0 {
            if let Some(loc) = fe.location.as_ref().filter(|l| l.position.is_some()) {
                msg.push_str(&format!("\n\t{loc}: {}", fe.field));
            }
        }
    }
    if is_bad_input(&e) {
        CommandError::Validation(msg)
    } else {
        CommandError::Failed(msg)
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
) -> Result<InitConfig, CommandError> {
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
) -> Result<InitConfig, CommandError> {
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    let loaded = if config_path.is_empty() {
        defaulted_init_config(init, cluster, &mut inputs)
    } else {
        let text = read_config(config_path).map_err(|e| match e {
            CommandError::Failed(m) => CommandError::Failed(format!("{prefix}{m}")),
            CommandError::Validation(m) => CommandError::Validation(format!("{prefix}{m}")),
            other => other,
        })?;
        load_init_config(config_path, &text, &mut inputs)
    };
    loaded.map_err(|e| config_error(e, prefix))
}

/// Upstream's `DefaultedInitConfiguration` for configurations built from flags.
pub(crate) fn defaulted_init(
    host: &HostFacts,
    init: InitConfiguration,
    cluster: ClusterConfiguration,
) -> Result<InitConfig, CommandError> {
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
