//! What the `kubeadm upgrade` commands share (upstream's `cmd/upgrade/common.go`): the output
//! printer, the configuration from the cluster or `--config`, the 1.25 move of the legacy image
//! registry, the repair of a doubled CRI socket scheme, and the root and CoreDNS checks run first.

use std::path::Path;

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_api::version::offline;
use kubeadm_effects::cluster::{Cluster, ClusterError, Resource};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::report::Reporter;

use crate::config_from_cluster::{FetchConfigError, fetch_init_config};
use crate::log_config_warnings;
use crate::preflight::{IgnoreSet, collect_findings};
use crate::upgrade::versions::dns_version;
use crate::upgrade::{ConfigFailure, UpgradeError};

/// How the plan is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text tables (the default).
    Text,
    /// One `UpgradePlan` per upgrade, as JSON.
    Json,
    /// One `UpgradePlan` per upgrade, as YAML.
    Yaml,
}

/// Upstream's output printer: in text mode it prints what it is given; in JSON/YAML mode it
/// drops all text and prints only the plans.
pub struct Printer<'a> {
    /// The output format.
    pub format: Format,
    /// Where everything goes.
    pub rep: &'a dyn Reporter,
}

impl std::fmt::Debug for Printer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Printer")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl Printer<'_> {
    /// Prints `text` in text mode only.
    pub fn print(&self, text: &str) {
        if self.format == Format::Text {
            self.rep.out(text);
        }
    }
}

/// Upstream's `loadConfig`: the configuration from the cluster, or from `--config`. A file
/// holding kubeadm types is a (discouraged) reconfiguration: all of it comes from the file, and
/// `true` is returned; a file of only component configs changes nothing plan shows.
/// `with_components` (apply) reads the kubelet's and kube-proxy's configurations from the cluster
/// too; plan skips them.
#[allow(clippy::too_many_arguments)]
pub fn load_config(
    path: &str,
    with_components: bool,
    cluster: &dyn Cluster,
    fs: &dyn Fs,
    host: &HostFacts,
    kubelet_conf: &Path,
    new_token: &mut dyn FnMut() -> BootstrapTokenString,
    printer: &Printer<'_>,
) -> Result<(InitConfig, bool), UpgradeError> {
    let fatal = UpgradeError::Config;
    let mut inputs = DynamicInputs {
        host,
        new_token,
        fetch_version: &offline,
    };
    if !path.is_empty() {
        let text = fs
            .read(Path::new(path))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|source| {
                fatal(ConfigFailure::Read {
                    path: path.to_string(),
                    source,
                })
            })?;
        let kubeadm_types = text.lines().any(|l| {
            l.trim_start()
                .strip_prefix("apiVersion:")
                .is_some_and(|v| v.trim().trim_matches(['"', '\'']).starts_with("kubeadm.k8s.io/"))
        });
        if kubeadm_types {
            printer.rep.warn(
                "common.go",
                "WARNING: Usage of the --config flag with kubeadm config types for reconfiguring the cluster during upgrade is not recommended!",
            );
            let cfg = load_init_config(path, &text, &mut inputs).map_err(|e| fatal(e.into()))?;
            log_config_warnings(printer.rep, &cfg.warnings);
            return Ok((cfg, true));
        }
    }
    // A file of component configurations only: they replace the cluster's (apply).
    let local_components = if path.is_empty() {
        String::new()
    } else {
        String::from_utf8_lossy(&fs.read(Path::new(path)).unwrap_or_default()).into_owned()
    };
    printer.print("[upgrade/config] Reading configuration from the cluster...\n");
    printer.print("[upgrade/config] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n");
    let mut warnings = Vec::new();
    let fetched = if with_components {
        crate::config_from_cluster::fetch_init_config_with_components(
            cluster,
            fs,
            kubelet_conf,
            &mut inputs,
            &mut warnings,
            &local_components,
        )
    } else {
        fetch_init_config(cluster, fs, kubelet_conf, &mut inputs, &mut warnings)
    };
    if with_components {
        log_config_warnings(printer.rep, &warnings);
    } else {
        log_config_warnings(printer.rep, &inputs_warnings(&warnings));
    }
    match fetched {
        Ok(mut cfg) => {
            log_config_warnings(printer.rep, &cfg.warnings);
            if with_components && !local_components.is_empty() {
                // Upstream defaults the component configurations once more after merging the
                // file's (`componentconfigs.Default`), and the kubelet's defaulting logs again.
                let again: Vec<String> = cfg
                    .warnings
                    .iter()
                    .filter(|w| w.starts_with("cannot determine if systemd-resolved is active"))
                    .cloned()
                    .collect();
                log_config_warnings(printer.rep, &again);
            }
            if path.is_empty() {
                mutate_image_repository(&mut cfg, cluster, printer.rep)
                    .map_err(|e| fatal(ConfigFailure::ImageRepository(e)))?;
            }
            Ok((cfg, false))
        }
        Err(FetchConfigError::ConfigMap(e)) if e.is_not_found() => {
            printer.print(
                "[upgrade/config] In order to upgrade, a ConfigMap called \"kubeadm-config\" in the kube-system namespace must exist.\n\
                 [upgrade/config] Without this information, 'kubeadm upgrade' won't know how to configure your upgraded cluster.\n\n\
                 [upgrade/config] Next steps:\n\
                 \t- OPTION 1: Run 'kubeadm config upload from-flags' and specify the same CLI arguments you passed to 'kubeadm init' when you created your control-plane.\n\
                 \t- OPTION 2: Run 'kubeadm config upload from-file' and specify the same config file you passed to 'kubeadm init' when you created your control-plane.\n\
                 \t- OPTION 3: Pass a config file to 'kubeadm upgrade' using the --config flag.\n\n",
            );
            Err(fatal(ConfigFailure::NoConfigMap))
        }
        Err(FetchConfigError::ConfigMap(e)) => Err(fatal(ConfigFailure::ConfigMap(e))),
        Err(e) => Err(fatal(e.into())),
    }
}

/// The `kubeadm-config` ConfigMap could not be written with the moved image repository.
#[derive(Debug, thiserror::Error)]
#[error(
    "could not mutate the ClusterConfiguration.ImageRepository field in the kube-system/kubeadm-config ConfigMap: {0}"
)]
pub struct ImageRepositoryError(#[source] pub ClusterError);

/// Upstream's `MutateImageRepository` (1.25 only): a configuration naming the legacy registry is
/// moved to its successor, in memory and in the `kubeadm-config` ConfigMap (with its RBAC, as
/// `UploadConfiguration` writes them).
pub fn mutate_image_repository(
    cfg: &mut InitConfig,
    cluster: &dyn Cluster,
    rep: &dyn Reporter,
) -> Result<(), ImageRepositoryError> {
    use kubeadm_core::cluster::upload_config as upload;
    if cfg.cluster.image_repository != "k8s.gcr.io" {
        return Ok(());
    }
    cfg.cluster.image_repository = "registry.k8s.io".to_string();
    rep.info(
        1,
        "uploadconfig.go",
        "updating the ClusterConfiguration.ImageRepository field in the kube-system/kubeadm-config ConfigMap \
         to be 'registry.k8s.io' instead of the legacy default of 'k8s.gcr.io'",
    );
    rep.out(&format!(
        "[upload-config] Storing the configuration used in ConfigMap {:?} in the {:?} Namespace\n",
        upload::KUBEADM_CONFIG_CONFIG_MAP,
        "kube-system"
    ));
    let failed = ImageRepositoryError;
    let cm = upload::kubeadm_config_map(&cfg.cluster, &cfg.resolved);
    let value = cm["data"][upload::CLUSTER_CONFIGURATION_KEY].clone();
    cluster
        .create_or_mutate_config_map(&cm, &mut |existing| {
            existing["data"][upload::CLUSTER_CONFIGURATION_KEY] = value.clone();
        })
        .map_err(failed)?;
    for obj in upload::kubeadm_config_rbac() {
        let resource = match kubeadm_core::cluster::meta::api_resource(&obj) {
            Some(api) => Resource::from_group_version(api.group_version, api.resource),
            None => Resource::config_maps(),
        };
        cluster
            .create_or_update_with_retry(&resource, &obj)
            .map_err(failed)?;
    }
    Ok(())
}

/// client-go's wording of a GET that found no server listening:
/// `Get "<url>?timeout=10s": dial tcp <host:port>: connect: connection refused`.
pub(crate) fn go_transport_error(e: &ClusterError) -> Option<String> {
    let ClusterError::Unavailable { message, .. } = e else {
        return None;
    };
    let (url, reason) = message.split_once(": ")?;
    if !reason.contains("Connection refused") {
        return None;
    }
    let authority = url.split("://").nth(1)?.split('/').next()?;
    Some(format!(
        "Get \"{url}?timeout=10s\": dial tcp {authority}: connect: connection refused"
    ))
}

/// Plan loads no component configs while reading the configuration (upstream's
/// `skipComponentConfigs`), so the missing-config warnings of that step are not its own.
fn inputs_warnings(warnings: &[String]) -> Vec<String> {
    warnings
        .iter()
        .filter(|w| !w.starts_with("Warning: No "))
        .cloned()
        .collect()
}

/// kubeadm v1.24.0-2 could store the Node's CRI socket as `unix://unix://…`; upstream 1.25
/// repairs the scheme and the Node's annotation whenever upgrade runs.
pub fn fix_cri_socket_scheme(
    cfg: &mut InitConfig,
    cluster: &dyn Cluster,
    hostname: &dyn Fn() -> String,
) -> Result<(), UpgradeError> {
    const SCHEME: &str = "unix://";
    let reg = &mut cfg.init.node_registration;
    if !reg.cri_socket.starts_with(&format!("{SCHEME}{SCHEME}")) {
        return Ok(());
    }
    let socket = format!("{SCHEME}{}", reg.cri_socket.replace(SCHEME, ""));
    reg.cri_socket = socket.clone();
    let name = if reg.name.is_empty() {
        hostname()
    } else {
        reg.name.clone()
    };
    cluster
        .patch_node(&name, &mut |current| {
            let mut annotated = current.clone();
            kubeadm_core::cluster::node::annotate_cri_socket(&mut annotated, &socket);
            kubeadm_core::cluster::node::two_way_merge_patch(current, &annotated)
        })
        // Upstream names the socket where it means the Node; kept for identical output.
        .map_err(|source| UpgradeError::CriSocket {
            socket: socket.clone(),
            source,
        })
}

/// Upstream's `printConfiguration` (`--print-config`): the ClusterConfiguration as uploaded,
/// tab-indented.
pub fn print_configuration(printer: &Printer<'_>, cfg: &InitConfig) {
    let yaml = kubeadm_core::cluster::upload_config::cluster_configuration_yaml(&cfg.cluster, &cfg.resolved);
    let mut text = String::from("[upgrade/config] Configuration used:\n");
    for line in yaml.lines() {
        text.push_str(&format!("\t{line}\n"));
    }
    printer.print(&text);
}

/// The checks `upgrade plan` and `apply` run before anything else (upstream's
/// `runPreflightChecks`, then `CheckClusterHealth`): root, CoreDNS, and the cluster's health, whose
/// Job a dry run only announces.
pub fn preflight_and_health(
    cluster: &dyn Cluster,
    host: &dyn HostProbe,
    pause_image: &str,
    dry_run: bool,
    ignore: &IgnoreSet,
    printer: &Printer<'_>,
) -> Result<(), UpgradeError> {
    printer.print("[preflight] Running pre-flight checks.\n");
    root_check(host, ignore, printer.rep)?;
    coredns_checks(cluster, ignore, printer.rep)?;
    crate::upgrade::health::check_cluster_health(
        cluster,
        host,
        kubeadm_core::layout::MANIFESTS_DIR,
        pause_image,
        dry_run,
        ignore,
        printer.rep,
    )
    .map_err(UpgradeError::Health)
}

/// Upstream's `RunRootCheckOnly`.
pub fn root_check(host: &dyn HostProbe, ignore: &IgnoreSet, rep: &dyn Reporter) -> Result<(), UpgradeError> {
    if host.uid() == 0 {
        return Ok(());
    }
    let error = Some("user is not running as root".to_string());
    collect_findings([("IsPrivilegedUser", error)], ignore, rep).map_err(UpgradeError::from)
}

/// Why the CoreDNS state the migration checks look at could not be read.
#[derive(Debug, thiserror::Error)]
enum CoreDnsStateError {
    /// The CoreDNS ConfigMap could not be read.
    #[error(transparent)]
    ConfigMap(kubeadm_effects::cluster::ClusterError),
    /// The deployed CoreDNS version could not be read.
    #[error(transparent)]
    Version(crate::upgrade::versions::DnsVersionError),
}

/// Upstream's `RunCoreDNSMigrationCheck`: can the deployed CoreDNS be migrated?
pub fn coredns_checks(
    cluster: &dyn Cluster,
    ignore: &IgnoreSet,
    rep: &dyn Reporter,
) -> Result<(), UpgradeError> {
    use kubeadm_core::upgrade::coredns::{CoreDnsState, coredns_checks};
    // Each check reads the ConfigMap and the Deployment itself, as upstream's do.
    let state = || match cluster.get(&Resource::config_maps(), "kube-system", "coredns") {
        Err(e) if e.is_not_found() => Ok(CoreDnsState::Absent),
        Err(e) => Err(CoreDnsStateError::ConfigMap(e)),
        Ok(cm) if cm.pointer("/data/Corefile").is_none() => Ok(CoreDnsState::NoCorefile),
        Ok(_) => dns_version(cluster)
            .map(|version| CoreDnsState::Deployed { version })
            .map_err(CoreDnsStateError::Version),
    };
    let check = |state: Result<CoreDnsState, CoreDnsStateError>| match state {
        Ok(state) => coredns_checks(&state, kubeadm_core::images::COREDNS_VERSION),
        Err(e) => (Some(e.to_string()), Some(e.to_string())),
    };
    let unsupported = check(state()).0;
    let migration = check(state()).1;
    collect_findings(
        [
            ("CoreDNSUnsupportedPlugins", unsupported),
            ("CoreDNSMigration", migration),
        ],
        ignore,
        rep,
    )
    .map_err(UpgradeError::from)
}
