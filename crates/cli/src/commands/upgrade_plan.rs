//! `kubeadm upgrade plan [version]`: loads the cluster's configuration, runs the checks upgrade
//! runs first (root, cluster health), reads the versions running in the cluster (API server,
//! kubelets, local etcd from its manifest, CoreDNS from its Deployment), lets
//! `kubeadm_core::upgrade::plan` compute the upgrades on offer, and prints them as upstream does:
//! text tables, or one `output.kubeadm.k8s.io/v1alpha2` `UpgradePlan` per upgrade with `-o json|yaml`.
//!
//! Release labels (`stable`, `stable-1.25`) are resolved offline, never over the network:
//! upstream's fetch fails on a machine without internet and it falls back to its own version,
//! which is what the offline resolution returns.

use std::path::{Path, PathBuf};

use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{KUBELET_CONF, MANIFESTS_DIR};
use kubeadm_core::upgrade::plan::{Message, PlanOptions, available_upgrades};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::KubeCluster;
use kubeadm_host::fs::RealFs;
use kubeadm_phases::preflight::IgnoreSet;
use kubeadm_phases::upgrade::common::{
    Format, Printer, fix_cri_socket_scheme, load_config, preflight_and_health, print_configuration,
};
use kubeadm_phases::upgrade::component_configs::{component_config_states, config_states_text};
use kubeadm_phases::upgrade::plan::print_upgrade;
use kubeadm_phases::upgrade::versions::ClusterVersions;

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, Output, UpgradePlanError};
use crate::options::config_load::image_settings;
use crate::printers::PrinterError;
use crate::setup::workflow_data::ClientError;
use crate::setup::{host_facts, reporter};

/// `kubeadm upgrade plan`.
pub(crate) fn run(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let rep = reporter(inv);
    let format = match f.string("output").as_str() {
        "text" => Format::Text,
        "json" => Format::Json,
        "yaml" => Format::Yaml,
        other => {
            return Err(PrinterError::UnknownFormat {
                format: other.to_string(),
                allowed: "json,text,yaml".to_string(),
            }
            .into());
        }
    };
    let printer = Printer { format, rep: &rep };

    let kubeconfig = f.string("kubeconfig");
    let client_error = |source: ClientError| CommandError::Client {
        kubeconfig: kubeconfig.clone(),
        source,
    };
    if let Err(source) = RealFs.read(Path::new(&kubeconfig)) {
        return Err(client_error(ClientError::Open {
            dry_run: false,
            path: PathBuf::from(&kubeconfig),
            source,
        }));
    }
    let cluster = KubeCluster::from_kubeconfig(Path::new(&kubeconfig))
        .map_err(|e| client_error(ClientError::ApiConfig(e)))?;

    printer.print("[upgrade/config] Making sure the configuration is correct:\n");
    let mut new_token = crate::setup::secrets::new_token;
    let (mut cfg, legacy) = load_config(
        &f.string("config"),
        false,
        &cluster,
        &RealFs,
        &host_facts::gather(),
        Path::new(KUBELET_CONF),
        &mut new_token,
        &printer,
    )?;
    let mut target = legacy.then(|| cfg.cluster.kubernetes_version.clone());
    if let [version] = inv.args.as_slice() {
        target = Some(version.clone());
    }

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.init.node_registration.ignore_preflight_errors,
    )
    .map_err(BadInput::from)?;
    let ignore = IgnoreSet::from(ignore);

    let pause = image_settings(&cfg).pause_image();
    preflight_and_health(
        &cluster,
        &*crate::setup::host_probe(),
        &pause,
        false,
        &ignore,
        &printer,
    )?;

    let gates = f.string("feature-gates");
    if !gates.is_empty() {
        kubeadm_api::features::parse_feature_gates(&gates).map_err(UpgradePlanError::FeatureGates)?;
    }

    if f.bool("print-config") {
        print_configuration(&printer, &cfg);
    }

    fix_cri_socket_scheme(&mut cfg, &cluster, &|| host_facts::gather().hostname)?;

    let external_etcd = cfg.cluster.etcd.external.is_some();
    let options = PlanOptions {
        experimental: f.bool("allow-experimental-upgrades"),
        release_candidates: f.bool("allow-release-candidate-upgrades"),
        external_etcd,
    };
    let server_version = || cluster.server_version();
    let mut getter = ClusterVersions {
        cluster: &cluster,
        fs: &RealFs,
        manifests_dir: MANIFESTS_DIR,
        server_version: &server_version,
    };
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
    let upgrades =
        available_upgrades(&mut getter, target.as_deref(), options, &mut sink).map_err(|source| {
            // A target version that is not one is bad input (exit 3); upstream exits 1.
            let bad_target = target
                .as_deref()
                .is_some_and(|t| kubeadm_core::upgrade::version::SemanticVersion::parse(t).is_err());
            UpgradePlanError::Versions { source, bad_target }
        })?;

    let states = component_config_states(&cluster, &RealFs, &f.string("config"), &rep)
        .map_err(UpgradePlanError::ComponentConfigs)?;
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
