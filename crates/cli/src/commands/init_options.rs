//! From `kubeadm init` (and `init phase …`) flags to a ready configuration, as upstream's
//! `newInitData` does: feature gates, the `--config` mixing rule, the bootstrap token flags, then the
//! config file or the flags, the preflight-errors set, the node-name override and the bind address check.

use std::collections::BTreeSet;

use kubeadm_api::duration::Duration;
use kubeadm_api::features;
use kubeadm_api::internal::InitConfig;
use kubeadm_api::v1beta3::{BootstrapToken, BootstrapTokenString, ClusterConfiguration, InitConfiguration};
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{ADMIN_CONF, KUBERNETES_DIR};

use crate::cobra::execute::Invocation;
use crate::commands::config_load::{load_or_default_init, log_warnings};
use crate::commands::mixed_args;
use crate::error::CommandError;
use crate::setup::host_facts;
use crate::setup::reporter;

/// What `kubeadm init` runs with, beyond the configuration itself.
#[derive(Debug)]
pub(crate) struct InitOptions {
    /// The loaded, defaulted and validated configuration.
    pub(crate) cfg: InitConfig,
    /// `--dry-run`.
    pub(crate) dry_run: bool,
    /// The checks whose errors become warnings (lower case).
    pub(crate) ignore_preflight_errors: BTreeSet<String>,
    /// `--kubeconfig-dir`.
    pub(crate) kubeconfig_dir: String,
    /// `--kubeconfig`: the admin kubeconfig the phases talk to the API server with.
    pub(crate) kubeconfig_path: String,
    /// `--patches` (or the config's `patches.directory`).
    pub(crate) patches_dir: String,
    /// `--upload-certs`.
    pub(crate) upload_certs: bool,
    /// `--skip-token-print`.
    pub(crate) skip_token_print: bool,
    /// `--skip-certificate-key-print`.
    pub(crate) skip_certificate_key_print: bool,
}

fn or_default(inv: &Invocation<'_>, name: &str, default: &str) -> String {
    let v = inv.flags.string(name);
    if v.is_empty() && inv.flags.value(name).is_none() {
        default.to_string()
    } else {
        v
    }
}

/// Builds the init options from the invocation's flags.
pub(crate) fn load(inv: &Invocation<'_>) -> Result<InitOptions, CommandError> {
    let f = &inv.flags;
    let feature_gates = features::parse_feature_gates(&f.string("feature-gates"))
        .map_err(|e| CommandError::Validation(e.to_string()))?;
    mixed_args::validate(f).map_err(|e| CommandError::Validation(e.to_string()))?;

    // The first and only bootstrap token when no config file is given.
    let mut token = BootstrapToken::default();
    let token_str = f.string("token");
    if !token_str.is_empty() {
        token.token = Some(
            BootstrapTokenString::parse(&token_str).map_err(|e| CommandError::Validation(e.to_string()))?,
        );
    }
    if f.value("token-ttl").is_some() {
        token.ttl = Some(Duration::from_nanos(f.duration_nanos("token-ttl")));
    }

    let mut init = InitConfiguration {
        bootstrap_tokens: vec![token],
        ..Default::default()
    };
    init.local_api_endpoint.advertise_address = f.string("apiserver-advertise-address");
    init.local_api_endpoint.bind_port = i32::try_from(f.int("apiserver-bind-port")).unwrap_or(0);
    init.node_registration.name = f.string("node-name");
    init.node_registration.cri_socket = f.string("cri-socket");
    init.certificate_key = f.string("certificate-key");

    let cluster = ClusterConfiguration {
        kubernetes_version: f.string("kubernetes-version"),
        image_repository: f.string("image-repository"),
        control_plane_endpoint: f.string("control-plane-endpoint"),
        certificates_dir: f.string("cert-dir"),
        feature_gates,
        networking: kubeadm_api::v1beta3::Networking {
            service_subnet: f.string("service-cidr"),
            pod_subnet: f.string("pod-network-cidr"),
            dns_domain: f.string("service-dns-domain"),
        },
        api_server: kubeadm_api::v1beta3::ApiServer {
            cert_sans: f.strings("apiserver-cert-extra-sans"),
            ..Default::default()
        },
        ..Default::default()
    };

    let host = host_facts::gather();
    let config_path = f.string("config");
    let mut cfg = if config_path.is_empty() {
        crate::commands::config_load::defaulted_init(&host, init.clone(), cluster)?
    } else {
        load_or_default_init(&host, &config_path, ClusterConfiguration::default(), "")?
    };
    log_warnings(&reporter(inv), &cfg.warnings);

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.init.node_registration.ignore_preflight_errors,
    )
    .map_err(|e| CommandError::Validation(e.to_string()))?;
    cfg.init.node_registration.ignore_preflight_errors = ignore.iter().cloned().collect();

    if !init.node_registration.name.is_empty() {
        cfg.init.node_registration.name = init.node_registration.name.clone();
    }
    verify_bind_address(&cfg.init.local_api_endpoint.advertise_address)?;

    let patches_dir = crate::commands::patches::patches_dir(f.string("patches"), cfg.init.patches.as_ref());
    Ok(InitOptions {
        dry_run: f.bool("dry-run"),
        ignore_preflight_errors: ignore,
        kubeconfig_dir: or_default(inv, "kubeconfig-dir", KUBERNETES_DIR),
        kubeconfig_path: or_default(inv, "kubeconfig", ADMIN_CONF),
        patches_dir,
        upload_certs: f.bool("upload-certs"),
        skip_token_print: f.bool("skip-token-print"),
        skip_certificate_key_print: f.bool("skip-certificate-key-print"),
        cfg,
    })
}

/// Upstream's `VerifyAPIServerBindAddress`: loopback is allowed (it is resolved later), anything else
/// must be a global unicast address.
fn verify_bind_address(address: &str) -> Result<(), CommandError> {
    let Some(ip) = kubeadm_api::dynamic::parse_ip_sloppy(address) else {
        return Err(CommandError::Validation(format!(
            "cannot parse IP address: {address}"
        )));
    };
    if ip.is_loopback() {
        return Ok(());
    }
    let global = match ip {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified() || v4.is_multicast() || v4.is_link_local() || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified() || v6.is_multicast() || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    };
    if global {
        Ok(())
    } else {
        Err(CommandError::Validation(format!(
            "cannot use {address:?} as the bind address for the API Server"
        )))
    }
}
