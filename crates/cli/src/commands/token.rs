//! `kubeadm token create|list|delete`: bootstrap tokens as Secrets in `kube-system`, through the
//! cluster named by `--kubeconfig` (or the standard kubeconfig locations), printed as upstream prints
//! them. With `--dry-run`, reads still go to that cluster and writes are only printed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use kubeadm_api::duration::Duration;
use kubeadm_api::gofmt::{short_human_duration, tabwrite};
use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_core::cluster::bootstrap_token::{token_from_secret, token_secret_name};
use kubeadm_core::layout::ADMIN_CONF;
use kubeadm_effects::cluster::{Cluster, DryRunCluster, ListOptions, Resource};
use kubeadm_effects::report::Reporter;
use kubeadm_host::fs::RealFs;
use kubeadm_phases::init::finish::{JoinInputs, ca_pins, current_cluster, join_command};

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, Output, TokenError};
use crate::options::config_load::{defaulted_init, go_json_indent, load_or_default_init, log_warnings};
use crate::options::mixed_args;
use crate::printers::sorted_json;
use crate::printers::{Printer, PrinterError};
use crate::setup::host_facts;
use crate::setup::reporter;

/// The namespace of bootstrap token Secrets.
const NAMESPACE: &str = "kube-system";
/// The `type` of bootstrap token Secrets, as `token list` selects them.
const TOKEN_SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// Output formats upstream's printer flags accept.
const OUTPUT_FORMATS: &str = "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,text,yaml";
/// `output.kubeadm.k8s.io`, the API of kubeadm's structured output.
const OUTPUT_API_VERSION: &str = "output.kubeadm.k8s.io/v1alpha2";

/// Upstream's `GetKubeConfigPath`: the flag when set (its shown default, `admin.conf`, is only a
/// hint), else the first existing file of `$KUBECONFIG`
/// (or `~/.kube/config`) and then `admin.conf`; when none exists, the first candidate.
fn kubeconfig_path(inv: &Invocation<'_>) -> PathBuf {
    let flag = inv.flags.string("kubeconfig");
    if inv.flags.changed("kubeconfig") && !flag.is_empty() {
        return PathBuf::from(flag);
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    match crate::setup::env_var("KUBECONFIG") {
        Some(list) if !list.is_empty() => {
            for p in list.split(':').map(PathBuf::from) {
                if !candidates.contains(&p) {
                    candidates.push(p);
                }
            }
        }
        _ => {
            let home = crate::setup::env_var("HOME").unwrap_or_default();
            candidates.push(Path::new(&home).join(".kube").join("config"));
        }
    }
    candidates.push(PathBuf::from(ADMIN_CONF));
    candidates
        .iter()
        .find(|p| !p.as_os_str().is_empty() && crate::setup::stat_ok(p))
        .unwrap_or(&candidates[0])
        .clone()
}

/// The cluster client (upstream's `GetClientset`): the real one, or with `--dry-run` the dry-run
/// decorator over it, which announces every action and sends only reads.
fn client(inv: &Invocation<'_>, path: &Path, dry_run: bool) -> Result<Box<dyn Cluster>, TokenError> {
    let real = crate::setup::workflow_data::real_client(path, dry_run)?;
    if !dry_run {
        return Ok(Box::new(real));
    }
    let rep: std::sync::Arc<dyn Reporter> = std::sync::Arc::new(reporter(inv));
    Ok(Box::new(
        DryRunCluster::new(rep, kubeadm_yaml::to_string).with_backend(Box::new(real)),
    ))
}

fn now() -> Result<Time, TokenError> {
    let secs = crate::setup::unix_now();
    Some(secs)
        .filter(|s| *s >= 0)
        .and_then(Time::from_unix_seconds)
        .ok_or(TokenError::Clock)
}

/// `kubeadm token create [token]`.
pub(crate) fn create(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    mixed_args::validate(f).map_err(BadInput::from)?;
    // The flags make the first and only token when no `--config` is given (upstream's `ApplyTo`).
    let mut token = BootstrapToken {
        description: f.string("description"),
        ttl: Some(Duration::from_nanos(f.duration_nanos("ttl"))),
        usages: f.strings("usages"),
        groups: f.strings("groups"),
        ..Default::default()
    };
    if let Some(arg) = inv.args.first() {
        token.token = Some(BootstrapTokenString::parse(arg).map_err(BadInput::from)?);
    }
    let path = kubeconfig_path(inv);
    let cluster = client(inv, &path, f.bool("dry-run"))?;

    let host = host_facts::gather();
    let config_path = f.string("config");
    let cfg = if config_path.is_empty() {
        let init = InitConfiguration {
            bootstrap_tokens: vec![token],
            ..Default::default()
        };
        defaulted_init(&host, init, ClusterConfiguration::default())?
    } else {
        load_or_default_init(&host, &config_path, ClusterConfiguration::default(), "")?
    };
    log_warnings(&reporter(inv), &cfg.warnings);
    let tokens = &cfg.init.bootstrap_tokens;
    kubeadm_phases::create_new_tokens(&*cluster, tokens, now()?).map_err(TokenError::from)?;

    let first = tokens
        .first()
        .and_then(|t| t.token.as_ref())
        .map(ToString::to_string)
        .unwrap_or_default();
    let certificate_key = f.string("certificate-key");
    if f.bool("print-join-command") {
        let join = join_line(&path, &first, &certificate_key).map_err(TokenError::JoinCommand)?;
        out.push_str(&join);
        out.push('\n');
    } else if !certificate_key.is_empty() {
        return Err(TokenError::CertificateKeyWithoutJoinCommand.into());
    } else {
        out.push_str(&first);
        out.push('\n');
    }
    Ok(())
}

/// The join command on one line, as `token create --print-join-command` prints it: for a control
/// plane when a certificate key is given.
fn join_line(
    kubeconfig: &Path,
    token: &str,
    certificate_key: &str,
) -> Result<String, kubeadm_phases::init::finish::JoinCommandError> {
    let cluster = current_cluster(&RealFs, kubeconfig)?;
    let pins = ca_pins(&cluster.ca_pem)?;
    let host_port = cluster.server.replace("https://", "");
    let inputs = JoinInputs {
        host_port: &host_port,
        token,
        pins: &pins,
        certificate_key,
    };
    Ok(join_command(&inputs, !certificate_key.is_empty())
        .replace("\\\n", "")
        .replace('\t', ""))
}

fn output_format(inv: &Invocation<'_>) -> Result<Printer, PrinterError> {
    crate::printers::printer(
        &inv.flags.string("experimental-output"),
        inv.flags.bool("allow-missing-template-keys"),
        OUTPUT_FORMATS,
    )
}

/// One row of the text table (upstream's `formatBootstrapToken`), its cells padded as upstream pads
/// them before the table aligns them.
fn text_row(token: &BootstrapToken, now_nanos: i128) -> String {
    let (ttl, expires) = match &token.expires {
        Some(t) => (
            short_human_duration(i128::from(t.unix_seconds()) * 1_000_000_000 - now_nanos),
            t.to_string(),
        ),
        None => ("<forever>".to_string(), "<never>".to_string()),
    };
    let or_none = |s: String| if s.is_empty() { "<none>".to_string() } else { s };
    format!(
        "{}\t{:<9}\t{}\t{:<22}\t{:<56}\t{}",
        token.token.as_ref().map(ToString::to_string).unwrap_or_default(),
        ttl,
        expires,
        or_none(token.usages.join(",")),
        or_none(token.description.clone()),
        or_none(token.groups.join(",")),
    )
}

/// A token as the `BootstrapToken` object of kubeadm's output API.
fn output_object(token: &BootstrapToken) -> serde_json::Value {
    let mut object = serde_json::json!({"kind": "BootstrapToken", "apiVersion": OUTPUT_API_VERSION});
    if let (Some(map), Ok(serde_json::Value::Object(fields))) =
        (object.as_object_mut(), serde_json::to_value(token))
    {
        map.extend(fields);
    }
    object
}

/// `kubeadm token list`.
pub(crate) fn list(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let path = kubeconfig_path(inv);
    let cluster = client(inv, &path, inv.flags.bool("dry-run"))?;
    let mut format = output_format(inv)?;
    let options = ListOptions {
        field_selector: format!("type={TOKEN_SECRET_TYPE}"),
        ..Default::default()
    };
    let secrets = cluster
        .list(&Resource::secrets(), NAMESPACE, &options)
        .map_err(TokenError::List)?;
    let now_nanos = crate::setup::unix_nanos_now();
    let mut printed = 0;
    for secret in &secrets {
        let token = match token_from_secret(secret) {
            Ok(t) => t,
            Err(e) => {
                // Upstream prints these without a newline and goes on.
                let _ = write!(std::io::stderr(), "{e}");
                continue;
            }
        };
        match &mut format {
            // Upstream flushes a table per token: the header aligns with the first row only.
            Printer::Text if printed == 0 => out.push_str(&tabwrite(
                &[
                    "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS".to_string(),
                    text_row(&token, now_nanos),
                ],
                10,
                3,
            )),
            Printer::Text => out.push_str(&tabwrite(&[text_row(&token, now_nanos)], 10, 3)),
            Printer::Json => {
                out.push_str(&go_json_indent(&output_object(&token)));
                out.push('\n');
            }
            Printer::Template(t) => {
                t.print(&output_object(&token), out)
                    .map_err(|reason| PrinterError::Print {
                        object: format!(
                            "token {}",
                            token.token.as_ref().map(ToString::to_string).unwrap_or_default()
                        ),
                        reason,
                    })?
            }
            Printer::Yaml => {
                if printed > 0 {
                    out.push_str("---\n");
                }
                out.push_str(&kubeadm_yaml::to_string(&sorted_json::sorted_keys(
                    &output_object(&token),
                )));
            }
        }
        printed += 1;
    }
    Ok(())
}

/// `kubeadm token delete [token-value] ...`: each argument a token id or a whole token.
pub(crate) fn delete(inv: &Invocation<'_>, _out: &mut Output) -> Result<(), CommandError> {
    if inv.args.is_empty() {
        return Err(TokenError::MissingToken.into());
    }
    let path = kubeconfig_path(inv);
    let cluster = client(inv, &path, inv.flags.bool("dry-run"))?;
    let rep = reporter(inv);
    for arg in &inv.args {
        let id = if is_token_id(arg) {
            arg.clone()
        } else {
            BootstrapTokenString::parse(arg)
                .map_err(|_| TokenError::BadToken)?
                .id
        };
        cluster
            .delete(&Resource::secrets(), NAMESPACE, &token_secret_name(&id), None)
            .map_err(|source| TokenError::Delete {
                id: id.clone(),
                source,
            })?;
        // Printed as each one goes, so that a later failure leaves the earlier ones reported.
        rep.out(&format!("bootstrap token {id:?} deleted\n"));
    }
    Ok(())
}

/// `[a-z0-9]{6}`.
fn is_token_id(s: &str) -> bool {
    s.len() == 6 && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}
