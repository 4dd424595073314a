//! `kubeadm upgrade plan [version]`: loads the cluster's configuration, runs the checks upgrade
//! runs first (root, cluster health), reads the versions running in the cluster (API server,
//! kubelets, local etcd from its manifest, CoreDNS from its Deployment), lets
//! `kubeadm_core::upgrade::plan` compute the upgrades on offer, and prints them as upstream does:
//! text tables, or one `output.kubeadm.k8s.io/v1alpha2` `UpgradePlan` per upgrade with `-o json|yaml`.
//!
//! Release labels (`stable`, `stable-1.25`) are resolved offline, never over the network:
//! upstream's fetch fails on a machine without internet and it falls back to its own version,
//! which is what the offline resolution returns.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use kubeadm_api::dynamic::DynamicInputs;
use kubeadm_api::gofmt::tabwrite;
use kubeadm_api::internal::{InitConfig, load_init_config};
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_api::version::{KUBEADM_VERSION, offline, resolve};
use kubeadm_core::layout::{KUBELET_CONF, MANIFESTS_DIR};
use kubeadm_core::upgrade::plan::{
    Message, PlanOptions, Upgrade, VersionGetter, available_upgrades, component_plan,
};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::KubeCluster;
use kubeadm_host::fs::RealFs;
use kubeadm_host::host_probe::RealHostProbe;
use kubeadm_phases::preflight::{IgnoreSet, collect_findings};

use crate::cobra::execute::Invocation;
use crate::commands::config_load::image_settings;
use crate::error::{CommandError, Output};
use crate::setup::reporter;
use kubeadm_phases::upgrade::SEPARATOR;
use kubeadm_phases::upgrade::component_configs::{component_config_states, config_states_text};
use kubeadm_phases::upgrade::health::check_cluster_health;

/// How the plan is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Yaml,
}

/// Upstream's output printer: in text mode it prints what it is given; in JSON/YAML mode it
/// drops all text and prints only the plans.
struct Printer<'a> {
    format: Format,
    rep: &'a dyn Reporter,
}

impl Printer<'_> {
    fn print(&self, text: &str) {
        if self.format == Format::Text {
            self.rep.out(text);
        }
    }
}

/// `kubeadm upgrade plan`.
pub(crate) fn run(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let rep = reporter(inv);
    let format = match f.string("output").as_str() {
        "text" => Format::Text,
        "json" => Format::Json,
        "yaml" => Format::Yaml,
        other => {
            return Err(CommandError::Validation(format!(
                "could not construct output printer: unable to match a printer suitable for the output format {other:?}, allowed formats are: json,text,yaml"
            )));
        }
    };
    let printer = Printer { format, rep: &rep };

    let kubeconfig = f.string("kubeconfig");
    let client_error = |reason: String| {
        CommandError::Failed(format!(
            "couldn't create a Kubernetes client from file {kubeconfig:?}: {reason}"
        ))
    };
    if let Err(e) = RealFs.read(Path::new(&kubeconfig)) {
        return Err(client_error(format!(
            "failed to load admin kubeconfig: open {kubeconfig}: {}",
            kubeadm_api::gofmt::io_error(&e)
        )));
    }
    let cluster = KubeCluster::from_kubeconfig(Path::new(&kubeconfig)).map_err(|e| {
        client_error(format!(
            "failed to create API client configuration from kubeconfig: {e}"
        ))
    })?;

    printer.print("[upgrade/config] Making sure the configuration is correct:\n");
    let (mut cfg, legacy) = load_config(&f.string("config"), &cluster, &printer)?;
    let mut target = legacy.then(|| cfg.cluster.kubernetes_version.clone());
    if let [version] = inv.args.as_slice() {
        target = Some(version.clone());
    }

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.init.node_registration.ignore_preflight_errors,
    )
    .map_err(|e| CommandError::Validation(e.to_string()))?;
    let ignore = IgnoreSet::from(ignore);

    printer.print("[preflight] Running pre-flight checks.\n");
    root_check(&ignore, &rep)?;
    coredns_checks(&cluster, &ignore, &rep)?;

    let pause = image_settings(&cfg).pause_image();
    check_cluster_health(&cluster, &RealHostProbe, MANIFESTS_DIR, &pause, &ignore, &rep)
        .map_err(|e| CommandError::Failed(format!("[upgrade/health] FATAL: {e}")))?;

    let gates = f.string("feature-gates");
    if !gates.is_empty() {
        kubeadm_api::features::parse_feature_gates(&gates)
            .map_err(|e| CommandError::Validation(format!("[upgrade/config] FATAL: {e}")))?;
    }

    if f.bool("print-config") {
        // Upstream's `printConfiguration`: the ClusterConfiguration as uploaded, tab-indented.
        let yaml =
            kubeadm_core::cluster::upload_config::cluster_configuration_yaml(&cfg.cluster, &cfg.resolved);
        let mut text = String::from("[upgrade/config] Configuration used:\n");
        for line in yaml.lines() {
            text.push_str(&format!("\t{line}\n"));
        }
        printer.print(&text);
    }

    fix_cri_socket_scheme(&mut cfg, &cluster)?;

    let external_etcd = cfg.cluster.etcd.external.is_some();
    let options = PlanOptions {
        experimental: f.bool("allow-experimental-upgrades"),
        release_candidates: f.bool("allow-release-candidate-upgrades"),
        external_etcd,
    };
    let mut getter = ClusterVersions { cluster: &cluster };
    let mut sink = |m: Message| match m {
        Message::Print(text) => printer.print(&text),
        Message::Stdout(text) => rep.out(&text),
        // Our offline resolution never fetches, so it has no fetch failure to report.
        Message::Warning(text)
            if text.starts_with("could not fetch a Kubernetes version from the internet") =>
        {
            rep.info(1, "version.go", &text);
        }
        Message::Warning(text) => rep.warn("compute.go", &text),
    };
    let upgrades = available_upgrades(&mut getter, target.as_deref(), options, &mut sink).map_err(|e| {
        let msg = format!("[upgrade/versions] FATAL: {e}");
        // A target version that is not one is bad input (exit 3); upstream exits 1.
        let bad_target = target
            .as_deref()
            .is_some_and(|t| kubeadm_core::upgrade::version::SemanticVersion::parse(t).is_err());
        if bad_target {
            CommandError::Validation(msg)
        } else {
            CommandError::Failed(msg)
        }
    })?;

    let states = component_config_states(&cluster, &RealFs, &f.string("config"), &rep)
        .map_err(|e| CommandError::Failed(format!("[upgrade/versions] FATAL: {e}")))?;
    if upgrades.is_empty() {
        return Ok(());
    }
    for up in &upgrades {
        print_upgrade(up, external_etcd, &printer)?;
    }
    if format == Format::Text {
        rep.out(&config_states_text(&states));
    }
    Ok(())
}

/// Upstream's `loadConfig` for plan: the configuration from the cluster, or from `--config`. A
/// file holding kubeadm types is a (discouraged) reconfiguration: all of it comes from the file,
/// and `true` is returned; a file of only component configs changes nothing plan shows.
fn load_config(
    path: &str,
    cluster: &KubeCluster,
    printer: &Printer<'_>,
) -> Result<(InitConfig, bool), CommandError> {
    let fatal = |e: String| CommandError::Failed(format!("[upgrade/config] FATAL: {e}"));
    let host = crate::setup::host_facts::gather();
    let mut token = || kubeadm_api::v1beta3::BootstrapTokenString::generate(rand::random::<u8>);
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &offline,
    };
    if !path.is_empty() {
        let text = read_text(path).map_err(|e| {
            fatal(format!(
                "unable to load config from file {path:?}: open {path}: {}",
                kubeadm_api::gofmt::io_error(&e)
            ))
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
            let cfg = load_init_config(path, &text, &mut inputs).map_err(|e| fatal(e.to_string()))?;
            crate::commands::config_load::log_warnings(printer.rep, &cfg.warnings);
            return Ok((cfg, true));
        }
    }
    printer.print("[upgrade/config] Reading configuration from the cluster...\n");
    printer.print("[upgrade/config] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n");
    let mut warnings = Vec::new();
    let fetched = kubeadm_phases::reset::cluster::fetch_init_config(
        cluster,
        &kubeadm_host::fs::RealFs,
        Path::new(KUBELET_CONF),
        &mut inputs,
        &mut warnings,
    );
    crate::commands::config_load::log_warnings(printer.rep, &inputs_warnings(&warnings));
    match fetched {
        Ok(mut cfg) => {
            crate::commands::config_load::log_warnings(printer.rep, &cfg.warnings);
            if path.is_empty() {
                mutate_image_repository(&mut cfg, cluster, printer.rep).map_err(fatal)?;
            }
            Ok((cfg, false))
        }
        Err(kubeadm_phases::reset::cluster::FetchConfigError::ConfigMap(e)) if e.is_not_found() => {
            printer.print(
                "[upgrade/config] In order to upgrade, a ConfigMap called \"kubeadm-config\" in the kube-system namespace must exist.\n\
                 [upgrade/config] Without this information, 'kubeadm upgrade' won't know how to configure your upgraded cluster.\n\n\
                 [upgrade/config] Next steps:\n\
                 \t- OPTION 1: Run 'kubeadm config upload from-flags' and specify the same CLI arguments you passed to 'kubeadm init' when you created your control-plane.\n\
                 \t- OPTION 2: Run 'kubeadm config upload from-file' and specify the same config file you passed to 'kubeadm init' when you created your control-plane.\n\
                 \t- OPTION 3: Pass a config file to 'kubeadm upgrade' using the --config flag.\n\n",
            );
            Err(fatal(
                "the ConfigMap \"kubeadm-config\" in the kube-system namespace used for getting configuration information was not found"
                    .into(),
            ))
        }
        Err(kubeadm_phases::reset::cluster::FetchConfigError::ConfigMap(e)) => {
            let reason = go_transport_error(&e).unwrap_or_else(|| e.to_string());
            Err(fatal(format!("failed to get config map: {reason}")))
        }
        Err(e) => Err(fatal(e.to_string())),
    }
}

/// Upstream's `MutateImageRepository` (1.25 only): a configuration naming the legacy registry is
/// moved to its successor, in memory and in the `kubeadm-config` ConfigMap (with its RBAC, as
/// `UploadConfiguration` writes them).
fn mutate_image_repository(
    cfg: &mut InitConfig,
    cluster: &dyn Cluster,
    rep: &dyn Reporter,
) -> Result<(), String> {
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
    let failed = |e: ClusterError| {
        format!(
            "could not mutate the ClusterConfiguration.ImageRepository field in the kube-system/kubeadm-config ConfigMap: {e}"
        )
    };
    let cm = upload::kubeadm_config_map(&cfg.cluster, &cfg.resolved);
    let value = cm["data"][upload::CLUSTER_CONFIGURATION_KEY].clone();
    cluster
        .create_or_mutate_config_map(&cm, &mut |existing| {
            existing["data"][upload::CLUSTER_CONFIGURATION_KEY] = value.clone();
            Ok(())
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
fn go_transport_error(e: &ClusterError) -> Option<String> {
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
fn fix_cri_socket_scheme(cfg: &mut InitConfig, cluster: &dyn Cluster) -> Result<(), CommandError> {
    const SCHEME: &str = "unix://";
    let reg = &mut cfg.init.node_registration;
    if !reg.cri_socket.starts_with(&format!("{SCHEME}{SCHEME}")) {
        return Ok(());
    }
    let socket = format!("{SCHEME}{}", reg.cri_socket.replace(SCHEME, ""));
    reg.cri_socket = socket.clone();
    let name = if reg.name.is_empty() {
        crate::setup::host_facts::gather().hostname
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
        .map_err(|e| CommandError::Failed(format!("error updating the CRI socket for Node {socket:?}: {e}")))
}

/// Upstream's `RunRootCheckOnly`.
fn root_check(ignore: &IgnoreSet, rep: &dyn Reporter) -> Result<(), CommandError> {
    use kubeadm_effects::host_probe::HostProbe;
    if kubeadm_host::host_probe::RealHostProbe.uid() == 0 {
        return Ok(());
    }
    let error = Some("user is not running as root".to_string());
    collect_findings([("IsPrivilegedUser", error)], ignore, rep)
        .map_err(|e| CommandError::Preflight(e.to_string()))
}

/// Upstream's `RunCoreDNSMigrationCheck`: can the deployed CoreDNS be migrated?
fn coredns_checks(cluster: &KubeCluster, ignore: &IgnoreSet, rep: &dyn Reporter) -> Result<(), CommandError> {
    use kubeadm_core::upgrade::coredns::{CoreDnsState, coredns_checks};
    let state = match cluster.get(&Resource::config_maps(), "kube-system", "coredns") {
        Err(e) if e.is_not_found() => Ok(CoreDnsState::Absent),
        Err(e) => Err(e.to_string()),
        Ok(cm) if cm.pointer("/data/Corefile").is_none() => Ok(CoreDnsState::NoCorefile),
        Ok(_) => ClusterVersions { cluster }
            .dns_version()
            .map(|version| CoreDnsState::Deployed { version }),
    };
    let (unsupported, migration) = match state {
        Ok(state) => coredns_checks(&state, kubeadm_core::images::COREDNS_VERSION),
        Err(e) => (Some(e.clone()), Some(e)),
    };
    collect_findings(
        [
            ("CoreDNSUnsupportedPlugins", unsupported),
            ("CoreDNSMigration", migration),
        ],
        ignore,
        rep,
    )
    .map_err(|e| CommandError::Preflight(e.to_string()))
}

/// The versions of a live cluster (upstream's `KubeVersionGetter` plus the etcd and DNS lookups).
struct ClusterVersions<'a> {
    cluster: &'a KubeCluster,
}

impl VersionGetter for ClusterVersions<'_> {
    fn cluster_version(&mut self) -> Result<String, String> {
        let info = self
            .cluster
            .server_version()
            .map_err(|e| format!("Couldn't fetch cluster version from the API Server: {e}"))?;
        Ok(info
            .get("gitVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    fn kubeadm_version(&mut self) -> String {
        KUBEADM_VERSION.to_string()
    }

    fn version_from_label(
        &mut self,
        label: &str,
        description: &str,
    ) -> Result<(String, Vec<String>), String> {
        let resolved = resolve(label, &offline)
            .map_err(|e| format!("Couldn't fetch latest {description} from the internet: {e}"))?;
        Ok((resolved.version, resolved.warnings))
    }

    fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, String> {
        let nodes = self
            .cluster
            .list(&Resource::nodes(), "", &ListOptions::default())
            .map_err(|_| "couldn't list all nodes in cluster".to_string())?;
        let mut versions = BTreeMap::new();
        for node in &nodes {
            let v = node
                .pointer("/status/nodeInfo/kubeletVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            *versions.entry(v.to_string()).or_insert(0u16) += 1;
        }
        Ok(versions)
    }

    fn etcd_version(&mut self) -> Result<String, String> {
        let path = format!("{MANIFESTS_DIR}/etcd.yaml");
        let text = read_text(&path).map_err(|e| {
            format!(
                "failed to read manifest for {path:?}: open {path}: {}",
                kubeadm_api::gofmt::io_error(&e)
            )
        })?;
        let image = kubeadm_yaml::parse_documents(&text)
            .ok()
            .and_then(|docs| docs.into_iter().next())
            .and_then(|d| {
                d.value
                    .pointer("/spec/containers/0/image")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or_else(|| format!("failed to unmarshal manifest for {path:?}"))?;
        // Registries cannot hold `+` in tags; Kubernetes writes build metadata with `_` instead.
        Ok(image_tag(&image).replacen('_', "+", 1))
    }

    fn dns_version(&mut self) -> Result<String, String> {
        let deployments = self
            .cluster
            .list(
                &Resource::new("apps", "v1", "deployments"),
                "kube-system",
                &ListOptions {
                    label_selector: "k8s-app=kube-dns".into(),
                    ..ListOptions::default()
                },
            )
            .map_err(|e| format!("couldn't retrieve DNS addon deployments: {e}"))?;
        match deployments.as_slice() {
            [] => Ok(String::new()),
            [d] => {
                let image = d
                    .pointer("/spec/template/spec/containers/0/image")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Ok(image.rsplit(':').next().unwrap_or_default().to_string())
            }
            many => Err(format!(
                "multiple DNS addon deployments found: {} deployments",
                many.len()
            )),
        }
    }
}

/// The tag of an image reference (upstream's `image.TagFromImage`): what follows the last `:`
/// after the last `/`, without a digest; empty when there is none.
fn image_tag(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let last = image.rsplit('/').next().unwrap_or(image);
    last.rsplit_once(':').map_or("", |(_, tag)| tag)
}

/// Upstream's `printUpgradePlan`: in text, the kubelets to upgrade by hand, the control plane's
/// table, the command to run and the kubeadm to get first; in JSON/YAML, the `UpgradePlan`.
fn print_upgrade(up: &Upgrade, external_etcd: bool, printer: &Printer<'_>) -> Result<(), CommandError> {
    let (rows, flag) = component_plan(up, external_etcd).map_err(|e| CommandError::Failed(e.to_string()))?;
    let mut shown = Vec::new();
    let mut text = String::new();
    let mut table: Vec<String> = Vec::new();
    let flush = |table: &mut Vec<String>, text: &mut String| {
        if !table.is_empty() {
            text.push_str(&tabwrite(table, 10, 3));
            text.push('\n');
            table.clear();
        }
    };
    let mut add_row = |table: &mut Vec<String>, name: &str, current: &str, new: &str| {
        if table.is_empty() {
            table.push("COMPONENT\tCURRENT\tTARGET".into());
        }
        table.push(format!("{name}\t{current}\t{new}"));
        shown.push(json!({"name": name, "currentVersion": current, "newVersion": new}));
    };
    let mut manual_header = true;
    let mut control_plane_header = true;
    for row in &rows {
        if external_etcd && row.name == "etcd" {
            continue;
        }
        if row.name == "kubelet" {
            // Only the first kubelet row is named.
            let name = if manual_header { "kubelet" } else { "" };
            if manual_header {
                text.push_str("Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':\n");
                manual_header = false;
            }
            add_row(&mut table, name, &row.current_version, &row.new_version);
        } else {
            if control_plane_header {
                flush(&mut table, &mut text);
                text.push_str(&format!("Upgrade to the latest {}:\n\n", up.description));
                control_plane_header = false;
            }
            add_row(&mut table, &row.name, &row.current_version, &row.new_version);
        }
    }
    flush(&mut table, &mut text);
    text.push_str(&format!(
        "You can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply {}{flag}\n\n",
        up.after.kube_version
    ));
    if up.before.kubeadm_version != up.after.kubeadm_version {
        text.push_str(&format!(
            "Note: Before you can perform this upgrade, you have to update kubeadm to {}.\n\n",
            up.after.kubeadm_version
        ));
    }
    text.push_str(SEPARATOR);
    match printer.format {
        Format::Text => printer.rep.out(&text),
        Format::Json => printer.rep.out(&plan_json(&shown)),
        Format::Yaml => printer.rep.out(&plan_yaml(&shown)),
    }
    Ok(())
}

/// The `UpgradePlan` as kube's JSON printer writes it: fields in Go's declaration order, four
/// spaces of indent. Upstream never fills in `configVersions` here, so it is always null.
fn plan_json(components: &[Value]) -> String {
    use serde::Serialize;
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Component<'a> {
        name: &'a str,
        current_version: &'a str,
        new_version: &'a str,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Plan<'a> {
        kind: &'a str,
        api_version: &'a str,
        components: Vec<Component<'a>>,
        config_versions: Option<()>,
    }
    let field = |c: &'_ Value, k: &str| -> String {
        c.get(k).and_then(Value::as_str).unwrap_or_default().to_string()
    };
    let owned: Vec<[String; 3]> = components
        .iter()
        .map(|c| {
            [
                field(c, "name"),
                field(c, "currentVersion"),
                field(c, "newVersion"),
            ]
        })
        .collect();
    let plan = Plan {
        kind: "UpgradePlan",
        api_version: "output.kubeadm.k8s.io/v1alpha2",
        components: owned
            .iter()
            .map(|[n, c, v]| Component {
                name: n,
                current_version: c,
                new_version: v,
            })
            .collect(),
        config_versions: None,
    };
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut buf,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    // Serializing plain strings into memory cannot fail.
    let _ = plan.serialize(&mut ser);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    text.push('\n');
    text
}

/// The `UpgradePlan` as kube's YAML printer writes it (keys sorted).
fn plan_yaml(components: &[Value]) -> String {
    kubeadm_yaml::to_string(&json!({
        "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
        "kind": "UpgradePlan",
        "components": components,
        "configVersions": null,
    }))
}

/// A whole file as text (invalid UTF-8 replaced), through the file-system effect.
fn read_text(path: &str) -> std::io::Result<String> {
    RealFs
        .read(Path::new(path))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_as_upstream_reads_them() {
        assert_eq!(image_tag("registry.k8s.io/etcd:3.5.9-0"), "3.5.9-0");
        assert_eq!(image_tag("localhost:5000/etcd:3.5.9-0"), "3.5.9-0");
        assert_eq!(image_tag("localhost:5000/etcd"), "");
        assert_eq!(image_tag("etcd:3.5.9-0@sha256:abc"), "3.5.9-0");
    }
}
