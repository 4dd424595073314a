//! `kubeadm config print|migrate|images list`: the commands that need the configuration API only.

use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{ConfigError, InitConfig, defaulted_init_config, load_init_config};
use kubeadm_api::v1beta3::{BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_api::{features, migrate, print, version};
use kubeadm_core::images::{ImageOverride, ImageSettings};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_host::fs::RealFs;
use kubeadm_host::report::TerminalReporter;

use crate::dispatch::{CommandError, Output};
use crate::execute::Invocation;
use crate::host_facts;

/// The reporter for an invocation's `-v` and `--skip-headers`.
pub(crate) fn reporter(inv: &Invocation<'_>) -> TerminalReporter {
    let v = u8::try_from(inv.flags.int("v").clamp(0, 255)).unwrap_or(u8::MAX);
    TerminalReporter::new(v, inv.flags.bool("skip-headers"))
}

/// Prints defaulting and loading warnings as upstream logs them. Upstream first tries to fetch
/// release markers from the internet and warns when that fails; we resolve labels offline on purpose,
/// so those two warnings become a `-v=1` note.
pub(crate) fn log_warnings(rep: &dyn Reporter, warnings: &[String]) {
    for w in warnings {
        if w.starts_with("could not fetch a Kubernetes version from the internet")
            || w.starts_with("falling back to the local client version")
        {
            rep.info(
                1,
                "version.rs",
                &format!("[version] {w} (labels are resolved offline)"),
            );
        } else {
            rep.warn("config.rs", w);
        }
    }
}

fn new_token() -> BootstrapTokenString {
    BootstrapTokenString::generate(rand::random::<u8>)
}

/// Reads the kubeadm config at `path` the way upstream reports failures to do so.
fn read_config(path: &str) -> Result<String, CommandError> {
    let bytes = RealFs.read(Path::new(path)).map_err(|e| {
        CommandError::Failed(format!(
            "unable to read config from {path:?} : open {path}: {}",
            go_io_error(&e)
        ))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| CommandError::Failed(format!("unable to read config from {path:?} : not UTF-8 text")))
}

/// Go's wording of an OS error: its errno text in lower case, without Rust's "(os error N)".
pub(crate) fn go_io_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error ") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Maps a configuration error to the exit code upstream gives it.
pub(crate) fn config_error(e: ConfigError, prefix: &str) -> CommandError {
    let mut msg = format!("{prefix}{e}");
    // Upstream's message stays as it is; where each invalid field is in the user's file follows.
    if let ConfigError::Invalid(list) = &e {
        for fe in &list.0 {
            if let Some(loc) = fe.location.as_ref().filter(|l| l.position.is_some()) {
                msg.push_str(&format!("\n\t{loc}: {}", fe.field));
            }
        }
    }
    // Upstream exits 3 for field validation errors and for a kind given twice (both are
    // validation errors there), unless a command wraps the error, which loses its type.
    let validation = prefix.is_empty()
        && match &e {
            ConfigError::Invalid(_) => true,
            ConfigError::Load(l) => matches!(**l, kubeadm_api::load::LoadError::DuplicateKinds(_)),
            _ => false,
        };
    if validation {
        CommandError::Validation(msg)
    } else {
        CommandError::Failed(msg)
    }
}

fn component_configs(inv: &Invocation<'_>) -> Vec<String> {
    inv.flags.strings("component-configs")
}

/// `kubeadm config print init-defaults`.
pub(crate) fn print_init_defaults(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let host = host_facts::gather();
    let kinds = component_configs(inv);
    let refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let text = print::print_init_defaults(&host, &refs).map_err(|e| CommandError::Failed(e.to_string()))?;
    out.push_str(&text);
    Ok(())
}

/// `kubeadm config print join-defaults`.
pub(crate) fn print_join_defaults(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let host = host_facts::gather();
    let kinds = component_configs(inv);
    let refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let text = print::print_join_defaults(&host, &refs).map_err(|e| CommandError::Failed(e.to_string()))?;
    out.push_str(&text);
    Ok(())
}

/// `kubeadm config migrate`.
pub(crate) fn migrate(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let old = inv.flags.string("old-config");
    if old.is_empty() {
        return Err(CommandError::Failed("the --old-config flag is mandatory".into()));
    }
    let text = RealFs
        .read(Path::new(&old))
        .map_err(|e| CommandError::Failed(format!("open {old}: {}", go_io_error(&e))))
        .and_then(|b| {
            String::from_utf8(b).map_err(|_| CommandError::Failed(format!("{old}: not UTF-8 text")))
        })?;
    let host = host_facts::gather();
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    let exists = |p: &str| Path::new(p).exists();
    let migrated = migrate::migrate(&old, &text, &mut inputs, &exists).map_err(|e| config_error(e, ""))?;
    log_warnings(&reporter(inv), &migrated.warnings);
    let new = inv.flags.string("new-config");
    if new.is_empty() {
        out.push_str(&migrated.text);
        return Ok(());
    }
    RealFs
        .write(Path::new(&new), migrated.text.as_bytes(), 0o644)
        .map_err(|e| {
            CommandError::Failed(format!(
                "failed to write the new configuration to the file {new:?}: open {new}: {}",
                go_io_error(&e)
            ))
        })
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
    let mut token = new_token;
    let mut inputs = DynamicInputs {
        host,
        new_token: &mut token,
        fetch_version: &version::offline,
    };
    let loaded = if config_path.is_empty() {
        defaulted_init_config(InitConfiguration::default(), cluster, &mut inputs)
    } else {
        let text = read_config(config_path).map_err(|e| match e {
            CommandError::Failed(m) => CommandError::Failed(format!("{prefix}{m}")),
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

const OUTPUT_FORMATS: &str = "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,text,yaml";

/// `kubeadm config images list`.
pub(crate) fn images_list(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let gates = features::parse_feature_gates(&inv.flags.string("feature-gates"))
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    let format = inv.flags.string("experimental-output");
    match format.as_str() {
        "text" | "json" | "yaml" => {}
        "go-template" | "go-template-file" | "jsonpath" | "jsonpath-as-json" | "jsonpath-file"
        | "template" | "templatefile" => {
            return Err(CommandError::NotImplemented(format!(
                "{} -o {format}",
                inv.command.path
            )));
        }
        other => {
            return Err(CommandError::Failed(format!(
                "could not construct output printer: unable to match a printer suitable for the output format {other:?}, allowed formats are: {OUTPUT_FORMATS}"
            )));
        }
    }
    let mut cluster = ClusterConfiguration {
        kubernetes_version: inv.flags.string("kubernetes-version"),
        image_repository: inv.flags.string("image-repository"),
        feature_gates: gates,
        ..Default::default()
    };
    kubeadm_api::defaults::default_cluster_configuration(&mut cluster);
    let host = host_facts::gather();
    let cfg = load_or_default_init(
        &host,
        &inv.flags.string("config"),
        cluster,
        "could not convert cfg to an internal cfg: ",
    )?;
    let rep = reporter(inv);
    log_warnings(&rep, &cfg.warnings);
    let (images, warnings) = image_settings(&cfg).control_plane_images();
    for w in &warnings {
        rep.warn("images.rs", &w.0);
    }
    out.push_str(&render_images(&images, &format));
    Ok(())
}

/// Renders the `output.kubeadm.k8s.io/v1alpha2` `Images` object as upstream's printers do.
fn render_images(images: &[String], format: &str) -> String {
    match format {
        "json" => {
            let obj = serde_json::json!({
                "kind": "Images",
                "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
                "images": images,
            });
            let mut text = go_json_indent(&obj);
            text.push('\n');
            text
        }
        "yaml" => kubeadm_yaml::to_string(&serde_json::json!({
            "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
            "images": images,
            "kind": "Images",
        })),
        _ => images.iter().map(|i| format!("{i}\n")).collect(),
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
