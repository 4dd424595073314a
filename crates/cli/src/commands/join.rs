//! `kubeadm join` and `kubeadm join phase …`, for workers and control planes: the options as
//! upstream's `newJoinData` reads them (the `--config` mixing rule, `--token` filling both tokens,
//! the positional API server endpoint, the control-plane flags, the config file or the flags, the
//! preflight-errors set, the node name and CRI socket overrides, `admin.conf` standing in for
//! discovery when it exists), the join context with the real effects, the workflow, and the
//! closing message.
//!
//! `--dry-run` swaps in the dry-run effects: files land in an overlay (the kubelet's files and a
//! control plane's manifests are printed), the init system only says what it would do; the
//! cluster is read (discovery, the configuration) but not written, and etcd is not contacted.

use std::path::{Path, PathBuf};

use kubeadm_api::internal::{InitConfig, JoinConfig, defaulted_join_config, load_join_config};
use kubeadm_api::v1beta3::{
    ApiEndpoint, BootstrapTokenDiscovery, FileDiscovery, JoinConfiguration, JoinControlPlane,
};
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{ADMIN_CONF, Layout};
use kubeadm_effects::Effects;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::report::Reporter;
use kubeadm_host::cluster::KubeCluster;
use kubeadm_phases::join::kubelet_start::{TLS_BOOTSTRAP_TIMEOUT, TLS_BOOTSTRAP_TIMEOUT_ENV};
use kubeadm_phases::{ClientSource, InitData, JoinData};

use crate::cobra::execute::Invocation;
use crate::error::{BadInput, CommandError, JoinError};
use crate::options::config_load::{config_error, log_warnings, read_config};
use crate::options::mixed_args;
use crate::setup::{self, host_facts};

/// `DefaultAPIBindPort`, the default of `--apiserver-bind-port`.
const DEFAULT_BIND_PORT: i64 = 6443;

/// Upstream's `joinWorkerNodeDoneMsg`.
const WORKER_DONE: &str = "
This node has joined the cluster:
* Certificate signing request was sent to apiserver and a response was received.
* The Kubelet was informed of the new secure connection details.

Run 'kubectl get nodes' on the control-plane to see this node join the cluster.

";

/// Upstream's `joinControPlaneDoneTemp`, with the etcd line (empty for external etcd).
fn control_plane_done(etcd_message: &str) -> String {
    format!(
        "
This node has joined the cluster and a new control plane instance was created:

* Certificate signing request was sent to apiserver and approval was received.
* The Kubelet was informed of the new secure connection details.
* Control plane label and taint were applied to the new node.
* The Kubernetes control plane instances scaled up.
{etcd_message}

To start administering your cluster from this node, you need to run the following as a regular user:

\tmkdir -p $HOME/.kube
\tsudo cp -i {ADMIN_CONF} $HOME/.kube/config
\tsudo chown $(id -u):$(id -g) $HOME/.kube/config

Run 'kubectl get nodes' to see this node join the cluster.

"
    )
}

/// Runs the join workflow: all of it (`filter` empty) or the phase `filter` names.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    mixed_args::validate(&inv.flags).map_err(BadInput::from)?;
    // The run's effects, chosen once; loading the configuration reports through their reporter.
    let effects = setup::effects(inv, inv.flags.bool("dry-run"));
    let cfg = load(inv, &*effects.reporter)?;
    let mut skip = inv.flags.strings("skip-phases");
    if skip.is_empty() {
        skip = cfg.join.skip_phases.clone();
    }
    let workflow = kubeadm_phases::join::workflow();
    let mut data = context(inv, cfg, effects)?;
    // A failed preflight check exits 2 (see `CommandError::exit_code`).
    workflow.run(&mut data, filter, &skip)?;
    if filter.is_empty() {
        if data.cfg.control_plane.is_some() {
            let external = data
                .init_cfg
                .as_ref()
                .is_some_and(|c| c.cluster.etcd.external.is_some());
            let etcd = if external {
                ""
            } else {
                "* A new etcd member was added to the local/stacked etcd cluster."
            };
            data.effects.reporter.out(&control_plane_done(etcd));
        } else {
            data.effects.reporter.out(WORKER_DONE);
        }
    }
    Ok(())
}

/// Upstream's `newJoinData` up to the loaded configuration.
fn load(inv: &Invocation<'_>, rep: &dyn Reporter) -> Result<JoinConfig, CommandError> {
    let f = &inv.flags;
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
    let bind_port = if f.spec("apiserver-bind-port").is_some() {
        f.int("apiserver-bind-port")
    } else {
        DEFAULT_BIND_PORT
    };
    let control_plane = JoinControlPlane {
        local_api_endpoint: ApiEndpoint {
            advertise_address: f.string("apiserver-advertise-address"),
            bind_port: i32::try_from(bind_port).unwrap_or(i32::MAX),
        },
        certificate_key: f.string("certificate-key"),
    };
    if f.bool("control-plane") {
        external.control_plane = Some(control_plane);
    } else if !control_plane.certificate_key.is_empty()
        || !control_plane.local_api_endpoint.advertise_address.is_empty()
        || bind_port != DEFAULT_BIND_PORT
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
    if external
        .control_plane
        .as_ref()
        .is_some_and(|cp| cp.local_api_endpoint.advertise_address.is_empty())
    {
        rep.info(
            1,
            "join.go",
            "[preflight] found advertiseAddress empty; using default interface's IP address as advertiseAddress",
        );
    }
    // A phase without discovery flags (`control-plane-join …`) discovers from admin.conf.
    if f.spec("discovery-file").is_none() {
        if !crate::setup::stat_ok(Path::new(ADMIN_CONF)) {
            return Err(JoinError::NoAdminConf.into());
        }
        rep.info(
            1,
            "join.go",
            &format!("[preflight] found discovery flags missing for this command. using FileDiscovery: {ADMIN_CONF}"),
        );
        external.discovery.file = Some(FileDiscovery {
            kube_config_path: ADMIN_CONF.into(),
        });
        external.discovery.bootstrap_token = None;
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
    .map_err(BadInput::from)?;
    cfg.join.node_registration.ignore_preflight_errors = ignore.into_iter().collect();
    if !external.node_registration.name.is_empty() {
        cfg.join.node_registration.name = external.node_registration.name;
    }
    if !external.node_registration.cri_socket.is_empty() {
        cfg.join.node_registration.cri_socket = external.node_registration.cri_socket;
    }
    if let Some(cp) = &cfg.join.control_plane {
        crate::options::init_options::verify_bind_address(&cp.local_api_endpoint.advertise_address)?;
    }
    Ok(cfg)
}

/// Makes an API client for the join phases: the real kube client, TLS verified except for the one
/// anonymous read token discovery starts with.
fn connect(source: &ClientSource<'_>) -> Result<Box<dyn Cluster>, String> {
    let client = match source {
        ClientSource::InsecureAnonymous(server, within) => KubeCluster::insecure_anonymous(server, *within),
        ClientSource::Kubeconfig(text) => KubeCluster::from_kubeconfig_text("bootstrap kubeconfig", text),
        ClientSource::File(path) => KubeCluster::from_kubeconfig(path),
    };
    client
        .map(|c| Box::new(c) as Box<dyn Cluster>)
        .map_err(|e| e.to_string())
}

fn context(inv: &Invocation<'_>, cfg: JoinConfig, effects: Effects) -> Result<JoinData, CommandError> {
    let patches_dir =
        crate::options::patches::patches_dir(inv.flags.string("patches"), cfg.join.patches.as_ref());
    let patches = (!patches_dir.is_empty()).then(|| crate::options::patches::lazy_patches(&patches_dir));
    let rep = &effects.reporter;
    let ignore = cfg
        .join
        .node_registration
        .ignore_preflight_errors
        .iter()
        .cloned()
        .collect();
    let runtime = effects.runtime(&cfg.join.node_registration.cri_socket);
    // Upstream's `newJoinData`: a control plane whose admin.conf exists (phases run one by one)
    // reads the cluster with it instead of discovering.
    let tls_bootstrap = if inv.flags.bool("control-plane") && setup::stat_ok(Path::new(ADMIN_CONF)) {
        rep.info(
            1,
            "join.go",
            &format!("[preflight] found {ADMIN_CONF}. Use it for skipping discovery"),
        );
        let text = crate::options::config_load::read_config(ADMIN_CONF)?;
        let doc = kubeadm_yaml::parse_documents(&text)
            .ok()
            .and_then(|d| d.into_iter().next())
            .map(|d| d.value)
            .ok_or(JoinError::InvalidAdminConf)?;
        Some(doc)
    } else {
        None
    };
    let dry_run = inv.flags.bool("dry-run");
    Ok(JoinData {
        dry_run,
        ignore_preflight_errors: ignore,
        kubeconfig_dir: Layout::default().kubernetes_dir(),
        kubelet_dir: Layout::default().kubelet_dir(),
        hostname: setup::hostname(),
        host: host_facts::gather(),
        patches: patches.clone(),
        runtime,
        connect: Box::new(connect),
        fetch_url: Box::new(|url, timeout| kubeadm_host::https::get(url, timeout).map_err(|e| e.to_string())),
        tls_bootstrap,
        tls_bootstrap_timeout: kubeadm_phases::timeout_from_env(
            TLS_BOOTSTRAP_TIMEOUT_ENV,
            setup::env_var(TLS_BOOTSTRAP_TIMEOUT_ENV).as_deref(),
            TLS_BOOTSTRAP_TIMEOUT,
        )
        .map_err(BadInput::Timeout)?,
        init_cfg: None,
        // One set of effects for the join's phases and a control plane's: in a dry run, one
        // file-system overlay.
        control_plane_context: control_plane_context(effects.clone(), patches.clone(), dry_run),
        control_plane: None,
        cfg: cfg.join,
        effects,
    })
}

/// The context of a joining control plane's phases: `kubeadm init`'s, with the join's effects (the
/// dry-run overlay in a dry run), the API client from `admin.conf` and the join's patches (read
/// and announced once for both).
fn control_plane_context(
    effects: Effects,
    patches: Option<kubeadm_phases::patches::Patches>,
    dry_run: bool,
) -> kubeadm_phases::join::ControlPlaneContext {
    Box::new(move |cfg: InitConfig| {
        let fs = &effects.fs;
        let cert_dir = PathBuf::from(&cfg.cluster.certificates_dir);
        let external_ca = fs.exists(&cert_dir.join("ca.crt")) && !fs.exists(&cert_dir.join("ca.key"));
        let cluster = setup::cluster_access(PathBuf::from(ADMIN_CONF));
        let base = crate::setup::workflow_data::init_data(
            cfg,
            dry_run,
            effects.clone(),
            patches.clone(),
            Layout::default().kubernetes_dir(),
            cluster,
        );
        Ok(InitData {
            skip_token_print: true,
            skip_certificate_key_print: true,
            external_ca,
            ..base
        })
    })
}
