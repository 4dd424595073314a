//! The `kubelet-start` phase of `kubeadm join` (upstream's `cmd/phases/join/kubelet.go`): writes
//! `bootstrap-kubelet.conf` and the cluster CA, refuses to go on when a Ready Node of this name
//! exists, writes the kubelet's configuration (from the cluster's `kubelet-config` ConfigMap) and
//! flags, restarts the kubelet, waits for it to finish the TLS bootstrap (`kubelet.conf` usable),
//! annotates the Node with the CRI socket, and always removes `bootstrap-kubelet.conf` at the end.

use std::path::Path;
use std::time::Duration;

use kubeadm_core::cluster::node;
use kubeadm_core::kubelet::{self, KubeletFlagsInputs};
use kubeadm_effects::cluster::{Cluster, ClusterError, Resource};
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::join::cluster_config::ensure_init_cfg;
use crate::join::discovery::kubeconfig as kc;
use crate::join::{ClientSource, JoinData};
use crate::kubelet::Step;

/// `KubeletBootstrapKubeConfigFileName`.
const BOOTSTRAP_KUBELET_CONF: &str = "bootstrap-kubelet.conf";
/// `KubeletKubeConfigFileName`.
const KUBELET_CONF: &str = "kubelet.conf";
/// `TLSBootstrapTimeout`.
pub const TLS_BOOTSTRAP_TIMEOUT: Duration = Duration::from_secs(300);
/// The environment variable that sets another TLS bootstrap timeout (a Go duration such as
/// `45s`): beyond upstream 1.25, which has none (later releases made it `timeouts.tlsBootstrap` of
/// their configuration). The testbed uses it to stage a join whose certificate nobody approves.
pub const TLS_BOOTSTRAP_TIMEOUT_ENV: &str = "KUBEADM_TLS_BOOTSTRAP_TIMEOUT";
/// How often `kubelet.conf` is looked for. Upstream's `TLSBootstrapRetryInterval` is 5 s, which makes
/// every join wait 2.5 s on average after the kubelet is done; a file lookup costs nothing, so it is
/// made every 100 ms (nothing is printed per attempt: the output is the same).
const TLS_BOOTSTRAP_INTERVAL: Duration = Duration::from_millis(100);

/// Why `kubelet-start` failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeletStartError {
    /// A file could not be written.
    #[error("{what}: {source}")]
    Write {
        /// Which file, in upstream's words.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bootstrap client could not be created.
    #[error("couldn't create client from kubeconfig file {0:?}")]
    BootstrapClient(String),
    /// The Node could not be read.
    #[error("cannot get Node {0:?}: {1}")]
    GetNode(String, #[source] ClusterError),
    /// A Ready Node of this name exists.
    #[error(
        "a Node with name {0:?} and status \"Ready\" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node"
    )]
    NodeExists(String),
    /// No kubelet component config came from the cluster.
    #[error("no kubelet component config found")]
    NoKubeletConfig,
    /// A patch could not be applied.
    #[error("could not apply patches to the KubeletConfiguration: {0}")]
    Patch(#[source] kubeadm_core::patches::PatchError),
    /// The kubelet did not bootstrap in time.
    #[error("timed out waiting for the condition")]
    Timeout,
    /// The CRI socket annotation could not be applied.
    #[error("error uploading crisocket: {0}")]
    CriSocket(#[source] ClusterError),
}

/// `kubelet-start`.
pub(crate) fn run_kubelet_start(data: &mut JoinData) -> Result<(), PhaseError> {
    ensure_init_cfg(data)?;
    let bootstrap = data.kubeconfig_dir.join(BOOTSTRAP_KUBELET_CONF);
    let result = kubelet_start(data, &bootstrap);
    // Upstream's deferred removal: the bootstrap token leaves the disk whatever happened.
    let _ = data.effects.fs.remove_file(&bootstrap);
    result
}

fn write(data: &JoinData, path: &Path, bytes: &[u8], mode: u32, what: &str) -> Result<(), KubeletStartError> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    data.effects
        .fs
        .create_dir_all(dir, 0o755)
        .and_then(|()| data.effects.fs.write(path, bytes, mode))
        .map_err(|source| KubeletStartError::Write {
            what: what.to_string(),
            source,
        })
}

fn kubelet_start(data: &mut JoinData, bootstrap: &Path) -> Result<(), PhaseError> {
    let tls = data.tls_bootstrap.clone().unwrap_or(Value::Null);
    let text = kc::to_text(&tls);
    data.effects.reporter.info(
        1,
        "kubelet.go",
        &format!(
            "[kubelet-start] writing bootstrap kubelet config file at {}",
            bootstrap.display()
        ),
    );
    write(
        data,
        bootstrap,
        text.as_bytes(),
        0o600,
        "couldn't save bootstrap-kubelet.conf to disk",
    )?;
    let ca_path = Path::new(&data.cfg.ca_cert_path);
    if !data.effects.fs.exists(ca_path) {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD
            .decode(kc::default_cluster(&tls).certificate_authority_data.trim())
            .unwrap_or_default();
        write(
            data,
            ca_path,
            &ca,
            0o644,
            "couldn't save the CA certificate to disk",
        )?;
    }
    let bootstrap_client = data
        .client(&ClientSource::Kubeconfig(&text))
        .map_err(|_| KubeletStartError::BootstrapClient(bootstrap.display().to_string()))?;

    let nr = &data.cfg.node_registration;
    let hostname = data.hostname.trim().to_lowercase();
    let node_name = nr
        .kubelet_extra_args
        .get("hostname-override")
        .cloned()
        .unwrap_or_else(|| {
            if nr.name.is_empty() {
                hostname.clone()
            } else {
                nr.name.clone()
            }
        });
    match bootstrap_client.get(&Resource::nodes(), "", &node_name) {
        Ok(node) if node_is_ready(&node) => {
            return Err(KubeletStartError::NodeExists(node_name).into());
        }
        Ok(_) => {}
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(KubeletStartError::GetNode(node_name, e).into()),
    }

    if data.dry_run {
        data.say("[kubelet-start] Would stop the kubelet");
    } else {
        data.effects
            .reporter
            .info(1, "kubelet.go", "[kubelet-start] Stopping the kubelet");
        crate::kubelet::try_stop(
            &*data.effects.init_system,
            &|l| data.say(l),
            &*data.effects.reporter,
        );
    }
    let Some(init_cfg) = data.init_cfg.as_ref() else {
        return Err(KubeletStartError::NoKubeletConfig.into());
    };
    let kc_cfg = init_cfg
        .component_configs
        .kubelet
        .as_ref()
        .ok_or(KubeletStartError::NoKubeletConfig)?;
    let patches = match &data.patches {
        Some(p) => Some(p.get(&|l| data.say(l)).map_err(KubeletStartError::Patch)?),
        None => None,
    };
    let (config_path, config_text) =
        crate::kubelet::config_file(kc_cfg, patches, &data.kubelet_dir, &|l| data.say(l))
            .map_err(KubeletStartError::Patch)?;
    crate::kubelet::write_file(
        &*data.effects.fs,
        &data.kubelet_dir,
        &config_path,
        config_text.as_bytes(),
        "error writing kubelet configuration to disk",
    )?;
    // A worker registers its taints through the kubelet's flags.
    let flags = kubelet::flags_env(&KubeletFlagsInputs {
        cluster: &init_cfg.cluster,
        resolved: &init_cfg.resolved,
        node_registration: &data.cfg.node_registration,
        hostname: &data.hostname,
        register_taints_using_flags: data.cfg.control_plane.is_none(),
    });
    let env_path = data.kubelet_dir.join("kubeadm-flags.env");
    data.say(&format!(
        "[kubelet-start] Writing kubelet environment file with flags to file {:?}",
        env_path.display().to_string()
    ));
    crate::kubelet::write_file(
        &*data.effects.fs,
        &data.kubelet_dir,
        &env_path,
        flags.as_bytes(),
        "error writing a dynamic environment file for the kubelet",
    )?;

    if data.dry_run {
        data.say("[kubelet-start] Would start the kubelet");
        // The files the run would have written; a control plane's manifests too.
        let manifests = data.kubeconfig_dir.join("manifests");
        let manifest_dir = data.cfg.control_plane.as_ref().map(|_| manifests.as_path());
        crate::dry_run::print_files(
            &*data.effects.fs,
            &*data.effects.reporter,
            manifest_dir,
            &data.kubelet_dir,
        );
        return Ok(());
    }
    data.say("[kubelet-start] Starting the kubelet");
    crate::kubelet::try_start(
        &*data.effects.init_system,
        &|l| data.say(l),
        &*data.effects.reporter,
    );

    data.say("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap...");
    let kubelet_conf = data.kubeconfig_dir.join(KUBELET_CONF);
    let client = match wait_for_kubelet_conf(data, &*bootstrap_client, &kubelet_conf) {
        Some(c) => c,
        None => {
            let e = KubeletStartError::Timeout;
            data.effects
                .reporter
                .out(&crate::kubelet::failure_text(&e.to_string()));
            // Beyond upstream: what the host shows (see crate::diagnose).
            let mut findings = crate::diagnose::kubelet(&crate::diagnose::KubeletHost {
                probe: &*data.effects.host_probe,
                runtime: &*data.runtime,
                fs: &*data.effects.fs,
                kubelet_dir: &data.kubelet_dir,
            });
            let token_id = data
                .cfg
                .discovery
                .tls_bootstrap_token
                .split('.')
                .next()
                .unwrap_or_default();
            let user = (!token_id.is_empty()).then(|| format!("system:bootstrap:{token_id}"));
            findings.extend(crate::diagnose::tls_bootstrap(
                &*bootstrap_client,
                user.as_deref(),
            ));
            let local = data.effects.host_probe.local_addresses().unwrap_or_default();
            findings.extend(crate::diagnose::node_name_taken(
                &*bootstrap_client,
                &node_name,
                &local,
            ));
            data.effects
                .reporter
                .out(&crate::diagnose::render(&findings, &[]));
            return Err(e.into());
        }
    };
    data.effects.reporter.info(
        1,
        "kubelet.go",
        "[kubelet-start] preserving the crisocket information for the node",
    );
    let socket = data.cfg.node_registration.cri_socket.clone();
    data.effects.reporter.info(
        1,
        "patchnode.go",
        &format!(
            "[patchnode] Uploading the CRI Socket information {socket:?} to the Node API object {:?} as an annotation",
            data.cfg.node_registration.name
        ),
    );
    client
        .patch_node(&data.cfg.node_registration.name, &mut |current| {
            let mut annotated = current.clone();
            node::annotate_cri_socket(&mut annotated, &socket);
            node::two_way_merge_patch(current, &annotated)
        })
        .map_err(KubeletStartError::CriSocket)?;
    Ok(())
}

fn node_is_ready(node: &Value) -> bool {
    node.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Upstream's `WaitForKubeletAndFunc(waitForTLSBootstrappedClient)`: polls every
/// [`TLS_BOOTSTRAP_INTERVAL`] until a client can be made from `kubelet.conf` (the file exists and so
/// do the certificate files it names), at most `tls_bootstrap_timeout` ([`TLS_BOOTSTRAP_TIMEOUT`]
/// unless [`TLS_BOOTSTRAP_TIMEOUT_ENV`] says otherwise), with the kubelet check
/// beside it. `None` when either gives up (both with upstream's `timed out waiting for the
/// condition`).
fn wait_for_kubelet_conf(data: &JoinData, pacer: &dyn Cluster, path: &Path) -> Option<Box<dyn Cluster>> {
    let timeout = data.tls_bootstrap_timeout;
    let client = crate::kubelet::wait_beside_kubelet_check(
        pacer,
        &*data.effects.host_probe,
        &|l| data.say(l),
        |elapsed| {
            if data.effects.fs.exists(path)
                && let Ok(c) = data.client(&ClientSource::File(path))
            {
                return Step::Done(c);
            }
            if elapsed >= timeout {
                return Step::Failed(());
            }
            data.effects.reporter.progress(
                "[kubelet-start] Waiting for the kubelet's TLS bootstrap (kubelet.conf)",
                elapsed,
            );
            Step::Again(TLS_BOOTSTRAP_INTERVAL.min(timeout - elapsed))
        },
    );
    data.effects.reporter.progress_end();
    client.ok()
}

#[cfg(test)]
#[path = "kubelet_start_tests.rs"]
mod tests;
