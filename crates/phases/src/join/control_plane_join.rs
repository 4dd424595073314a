//! The `control-plane-join` phases of `kubeadm join` (upstream's
//! `cmd/phases/join/controlplanejoin.go`): the new local etcd member announced and started, and the
//! node marked as a control plane. Each returns at once on a worker.

use std::path::Path;
use std::time::Duration;

use kubeadm_core::manifests;
use kubeadm_effects::etcd::Etcd;
use kubeadm_workflow::PhaseError;

use crate::ClusterConnectError;
use crate::InitData;
use crate::control_plane::write_static_pod;
use crate::etcd_cluster::{
    AddMemberError, EtcdClientError, EtcdConnector, EtcdMember, WaitEtcdError, add_joining_member,
    client_from_cluster, client_url, peer_url, wait_for_cluster_available,
};
use crate::join::JoinData;

/// Upstream's `etcdHealthyCheckInterval * etcdHealthyCheckRetries`: how long the new member has to
/// join. Upstream looks every 5 s; we look every second, so a healthy member is seen sooner.
const ETCD_JOIN_TIMEOUT: Duration = Duration::from_secs(40);
const ETCD_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Why the etcd phases of a control-plane join (`check-etcd`, `control-plane-join/etcd`) failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinEtcdError {
    /// No client from `admin.conf`.
    #[error("couldn't create Kubernetes client: {0}")]
    Client(#[from] ClusterConnectError),
    /// No etcd client.
    #[error(transparent)]
    EtcdClient(#[from] EtcdClientError),
    /// The cluster is not healthy before the join.
    #[error("etcd cluster is not healthy: {0}")]
    Unhealthy(kubeadm_effects::etcd::EtcdError),
    /// The data directory could not be created.
    #[error("failed to create etcd directory {path:?}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The member could not be added.
    #[error("error creating local etcd static pod manifest file: {0}")]
    Add(#[from] AddMemberError),
    /// The manifest could not be built.
    #[error("error creating local etcd static pod manifest file: {0}")]
    Manifest(#[from] manifests::ManifestError),
    /// The `RootlessControlPlane` users, groups or file owners could not be set up (upstream
    /// wraps it as every error of the manifest's creation).
    #[error("error creating local etcd static pod manifest file: {0}")]
    NonRoot(crate::users::NonRootError),
    /// The new member did not become available.
    #[error(
        "error creating local etcd static pod manifest file: {source}. The new etcd member on this node did not answer in {}s: \
         its static Pod is {manifest}; the kubelet's and the etcd container's logs say why (e.g. 'crictl logs' of the etcd container)",
        ETCD_JOIN_TIMEOUT.as_secs()
    )]
    Wait {
        /// The manifest written.
        manifest: String,
        /// The last error.
        #[source]
        source: WaitEtcdError,
    },
}

/// `control-plane-join/etcd`: upstream's `CreateStackedEtcdStaticPodManifestFile`. The member is
/// announced after the kubelet started, so the static pod runs as soon as its manifest exists.
pub(crate) fn run_etcd(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    data.control_plane_data()?;
    let dry_run = data.dry_run;
    let (Some(cp), connect) = (data.control_plane.as_mut(), &data.effects.etcd) else {
        return Ok(());
    };
    if !dry_run {
        cp.cluster.client().map_err(JoinEtcdError::Client)?;
    }
    let Some(local) = cp.cfg.cluster.etcd.local.clone() else {
        cp.say("[control-plane-join] Using external etcd - no local stacked instance added");
        return Ok(());
    };
    if dry_run {
        cp.say(&format!(
            "[control-plane-join] Would ensure that {:?} directory is present",
            local.data_dir
        ));
        return write_etcd_manifest(cp, &[], true);
    }
    // Upstream's CreateDataDirectory: mode 0700, as etcd itself insists on.
    cp.effects
        .fs
        .create_dir_all(Path::new(&local.data_dir), 0o700)
        .map_err(|source| JoinEtcdError::DataDir {
            path: local.data_dir.clone(),
            source,
        })?;
    let etcd = etcd_client(cp, connect)?;
    let endpoint = cp.cfg.init.local_api_endpoint.clone();
    let name = cp.cfg.init.node_registration.name.clone();
    let peer = peer_url(&endpoint);
    let (initial, existed) = add_joining_member(&*etcd, &name, &peer).map_err(JoinEtcdError::from)?;
    if existed {
        cp.effects.reporter.info(
            0,
            "etcd.go",
            &format!("[etcd] The etcd member {peer} was announced by an earlier attempt; using it"),
        );
    }
    cp.say("[etcd] Announced new etcd member joining to the existing etcd cluster");
    write_etcd_manifest(cp, &initial, false)?;
    cp.say(&format!(
        "[etcd] Waiting for the new etcd member to join the cluster. This can take up to {}s",
        ETCD_JOIN_TIMEOUT.as_secs()
    ));
    let mut endpoints = etcd.endpoints();
    let own = client_url(&endpoint);
    if !endpoints.contains(&own) {
        endpoints.push(own);
    }
    let retries = (ETCD_JOIN_TIMEOUT.as_secs() / ETCD_POLL_INTERVAL.as_secs()) as u32;
    let client = cp.cluster.client().map_err(JoinEtcdError::Client)?;
    // On a terminal, the wait and its seconds so far on one line (nothing anywhere else).
    let waited = std::cell::Cell::new(Duration::ZERO);
    let pause = |d: Duration| {
        cp.effects.reporter.progress(
            "[etcd] Waiting for the new etcd member to join the cluster",
            waited.get(),
        );
        client.pause(d);
        waited.set(waited.get() + d);
    };
    let available = wait_for_cluster_available(&*etcd, &endpoints, retries, ETCD_POLL_INTERVAL, &pause);
    cp.effects.reporter.progress_end();
    available.map_err(|source| {
        // Beyond upstream: the kubelet, etcd's health, a member already of this node's name, the
        // etcd image and container, its last log lines.
        let mut more: Vec<_> =
            crate::diagnose::etcd(&*cp.effects.host_probe, &*cp.effects.fs, &cp.manifest_dir)
                .into_iter()
                .collect();
        if let Ok(members) = etcd.list_members() {
            more.extend(crate::diagnose::etcd_name_taken(&members, &name, &peer));
        }
        cp.effects
            .reporter
            .out(&crate::diagnose::static_pods(cp, &["etcd"], more));
        JoinEtcdError::Wait {
            manifest: cp.manifest_dir.join("etcd.yaml").display().to_string(),
            source,
        }
    })?;
    Ok(())
}

/// Upstream's `NewFromCluster` through the API client of `admin.conf`, with the health-check
/// client certificate of this node.
pub(crate) fn etcd_client(cp: &InitData, connect: &EtcdConnector) -> Result<Box<dyn Etcd>, JoinEtcdError> {
    let client = cp.cluster.client()?;
    let log = |line: &str| cp.effects.reporter.info(1, "etcd.go", line);
    Ok(client_from_cluster(
        client,
        Path::new(&cp.cfg.cluster.certificates_dir),
        connect,
        &log,
    )?)
}

/// The etcd manifest of the joining member, with the `--initial-cluster` of `initial` (a dry run
/// announces nothing, so its manifest names this member alone, as upstream's).
fn write_etcd_manifest(cp: &mut InitData, initial: &[EtcdMember], dry_run: bool) -> Result<(), PhaseError> {
    let endpoint = cp.cfg.init.local_api_endpoint.clone();
    if dry_run {
        cp.say(&format!("[etcd] Would add etcd member: {}", peer_url(&endpoint)));
    }
    cp.say("[etcd] Creating static Pod manifest for \"etcd\"");
    let mut pod = manifests::etcd_pod(
        &cp.cfg.cluster,
        &endpoint,
        &cp.cfg.init.node_registration.name,
        initial,
        &cp.cfg.resolved,
    )
    .map_err(JoinEtcdError::from)?;
    crate::control_plane::as_non_root(cp, &mut pod, "[etcd]", "\"etcd\"").map_err(JoinEtcdError::NonRoot)?;
    write_static_pod(cp, pod)?;
    if dry_run {
        cp.say("[etcd] Would wait for the new etcd member to join the cluster");
    }
    Ok(())
}

/// `control-plane-join/update-status`: deprecated, does nothing but say so.
pub(crate) fn run_update_status(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_some() {
        data.say(
            "The 'update-status' phase is deprecated and will be removed in a future release. Currently it performs no operation",
        );
    }
    Ok(())
}

/// `control-plane-join/mark-control-plane`: the labels and taints of a control-plane node.
pub(crate) fn run_mark_control_plane(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.cfg.control_plane.is_none() {
        return Ok(());
    }
    let dry_run = data.dry_run;
    let cp = data.control_plane_data()?;
    if dry_run {
        cp.say(&format!(
            "[control-plane-join] Would mark node {} as a control-plane",
            cp.cfg.init.node_registration.name
        ));
        return Ok(());
    }
    crate::mark_control_plane::run(cp)
        .map_err(|e| -> PhaseError { format!("error applying control-plane label and taints: {e}").into() })
}
