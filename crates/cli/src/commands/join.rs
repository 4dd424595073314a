//! `kubeadm join` and `kubeadm join phase …` for worker nodes: the options as upstream's
//! `newJoinData` reads them (the `--config` mixing rule, `--token` filling both tokens, the
//! positional API server endpoint, the config file or the flags, the preflight-errors set, the node
//! name and CRI socket overrides), the join context with the real effects, the workflow, and the
//! closing message.
//!
//! Not implemented yet, refused with one line before anything runs: joining a control-plane node
//! (`--control-plane`, or `controlPlane:` in the config), the control-plane phases, `--dry-run`.

use std::path::Path;

use kubeadm_api::internal::{JoinConfig, defaulted_join_config, load_join_config};
use kubeadm_api::v1beta3::{BootstrapTokenDiscovery, FileDiscovery, JoinConfiguration};
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::Layout;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::KubeCluster;
use kubeadm_host::fs::RealFs;
use kubeadm_phases::{ClientSource, JoinData};

use crate::cobra::execute::Invocation;
use crate::commands::config_load::{config_error, log_warnings, read_config};
use crate::commands::mixed_args;
use crate::error::CommandError;
use crate::setup::reporter;
use crate::setup::{self, host_facts};

/// `DefaultAPIBindPort`, the default of `--apiserver-bind-port`.
const DEFAULT_BIND_PORT: i64 = 6443;
/// The phases a worker join runs; the others belong to a control-plane join.
const WORKER_PHASES: [&str; 2] = ["preflight", "kubelet-start"];

/// Upstream's `joinWorkerNodeDoneMsg`.
const WORKER_DONE: &str = "
This node has joined the cluster:
* Certificate signing request was sent to apiserver and a response was received.
* The Kubelet was informed of the new secure connection details.

Run 'kubectl get nodes' on the control-plane to see this node join the cluster.

";

fn control_plane_refused() -> CommandError {
    CommandError::NotImplemented("kubeadm join --control-plane".into())
}

/// Runs the join workflow: all of it (`filter` empty) or the phase `filter` names.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    mixed_args::validate(&inv.flags).map_err(|e| CommandError::Validation(e.to_string()))?;
    if filter.iter().any(|p| !WORKER_PHASES.contains(&p.as_str())) {
        return Err(CommandError::NotImplemented(inv.command.path.clone()));
    }
    let rep = reporter(inv);
    let cfg = load(inv, &rep)?;
    let mut skip = inv.flags.strings("skip-phases");
    if skip.is_empty() {
        skip = cfg.join.skip_phases.clone();
    }
    let workflow = kubeadm_phases::join::workflow();
    let mut data = context(inv, cfg)?;
    // A failed preflight check exits 2 (see `CommandError::from`).
    workflow.run(&mut data, filter, &skip)?;
    if filter.is_empty() {
        data.reporter.out(WORKER_DONE);
    }
    Ok(())
}

/// Upstream's `newJoinData` up to the loaded configuration.
fn load(inv: &Invocation<'_>, rep: &dyn Reporter) -> Result<JoinConfig, CommandError> {
    let f = &inv.flags;
    if f.bool("control-plane") {
        return Err(control_plane_refused());
    }
    if f.bool("dry-run") {
        return Err(CommandError::NotImplemented("kubeadm join --dry-run".into()));
    }
    let mut external = JoinConfiguration::default();
    external.node_registration.name = f.string("node-name");
    external.node_registration.cri_socket = f.string("cri-socket");
    external.discovery.tls_bootstrap_token = f.string("tls-bootstrap-token");
    let mut bootstrap = BootstrapTokenDiscovery {
        token: f.string("discovery-token"),
        ca_cert_hashes: f.strings("discovery-token-ca-cert-hash"),
        unsafe_skip_ca_verification: f.bool("discovery-token-unsafe-skip-ca-verification"),
        ..Default::default()
    };
    let token = f.string("token");
    if !token.is_empty() {
        if external.discovery.tls_bootstrap_token.is_empty() {
            external.discovery.tls_bootstrap_token = token.clone();
        }
        if bootstrap.token.is_empty() {
            bootstrap.token = token;
        }
    }
    let file = f.string("discovery-file");
    if !file.is_empty() {
        external.discovery.file = Some(FileDiscovery {
            kube_config_path: file,
        });
    }
    let config_path = f.string("config");
    if let Some(endpoint) = inv.args.first() {
        if config_path.is_empty() && inv.args.len() > 1 {
            rep.warn(
                "join.go",
                &format!(
                    "[preflight] WARNING: More than one API server endpoint supplied on command line [{}]. Using the first one.",
                    inv.args.join(" ")
                ),
            );
        }
        bootstrap.api_server_endpoint = endpoint.clone();
        external.discovery.bootstrap_token = Some(bootstrap);
    }
    let bind_port_set =
        f.spec("apiserver-bind-port").is_some() && f.int("apiserver-bind-port") != DEFAULT_BIND_PORT;
    if !f.string("certificate-key").is_empty()
        || !f.string("apiserver-advertise-address").is_empty()
        || bind_port_set
    {
        rep.warn("join.go", "[preflight] WARNING: --control-plane is also required when passing control-plane related flags such as [certificate-key, apiserver-advertise-address, apiserver-bind-port]");
    }
    if external.node_registration.name.is_empty() {
        rep.info(
            1,
            "join.go",
            "[preflight] found NodeName empty; using OS hostname as NodeName",
        );
    }

    let host = host_facts::gather();
    let exists = |p: &str| crate::setup::stat_ok(Path::new(p));
    let mut cfg = if config_path.is_empty() {
        defaulted_join_config(external.clone(), &host, &exists)
    } else {
        let text = read_config(&config_path)?;
        load_join_config(&config_path, &text, &host, &exists)
    }
    .map_err(|e| config_error(e, ""))?;
    log_warnings(rep, &cfg.warnings);

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.join.node_registration.ignore_preflight_errors,
    )
    .map_err(|e| CommandError::Validation(e.to_string()))?;
    cfg.join.node_registration.ignore_preflight_errors = ignore.into_iter().collect();
    if !external.node_registration.name.is_empty() {
        cfg.join.node_registration.name = external.node_registration.name;
    }
    if !external.node_registration.cri_socket.is_empty() {
        cfg.join.node_registration.cri_socket = external.node_registration.cri_socket;
    }
    if cfg.join.control_plane.is_some() {
        return Err(control_plane_refused());
    }
    Ok(cfg)
}

/// Makes an API client for the join phases: the real kube client, TLS verified except for the one
/// anonymous read token discovery starts with.
fn connect(source: &ClientSource<'_>) -> Result<Box<dyn Cluster>, String> {
    let client = match source {
        ClientSource::InsecureAnonymous(server) => KubeCluster::insecure_anonymous(server),
        ClientSource::Kubeconfig(text) => KubeCluster::from_kubeconfig_text("bootstrap kubeconfig", text),
        ClientSource::File(path) => KubeCluster::from_kubeconfig(path),
    };
    client
        .map(|c| Box::new(c) as Box<dyn Cluster>)
        .map_err(|e| e.to_string())
}

fn context(inv: &Invocation<'_>, cfg: JoinConfig) -> Result<JoinData, CommandError> {
    let patches_dir =
        crate::commands::patches::patches_dir(inv.flags.string("patches"), cfg.join.patches.as_ref());
    let patches = if patches_dir.is_empty() {
        None
    } else {
        Some(crate::commands::patches::read_patches(&RealFs, &patches_dir)?)
    };
    let rep = reporter(inv);
    if let Some(pm) = &patches {
        for m in pm.messages() {
            rep.out(&format!("{m}\n"));
        }
    }
    let ignore = cfg
        .join
        .node_registration
        .ignore_preflight_errors
        .iter()
        .cloned()
        .collect();
    let runtime = setup::runtime(&cfg.join.node_registration.cri_socket)
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    Ok(JoinData {
        ignore_preflight_errors: ignore,
        kubeconfig_dir: Layout::default().kubernetes_dir(),
        kubelet_dir: Layout::default().kubelet_dir(),
        hostname: setup::hostname(),
        host: host_facts::gather(),
        patches,
        // A worker join has no dry run yet: the real effects.
        init_system: setup::init_system(false),
        host_probe: setup::host_probe(),
        runtime: Box::new(runtime),
        fs: setup::fs(false),
        reporter: Box::new(rep),
        connect: Box::new(connect),
        tls_bootstrap: None,
        init_cfg: None,
        cfg: cfg.join,
    })
}
