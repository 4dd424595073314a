//! The cluster health checks `kubeadm upgrade plan` (and later `apply`) runs before planning
//! (upstream's `CheckClusterHealth` in `phases/upgrade/health.go`): a Job that must complete,
//! control-plane Nodes that must be Ready, and the control plane's static Pod manifests that must
//! be on this machine. They report as preflight checks do and can be ignored by name.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Propagation, Resource};
use kubeadm_effects::host_probe::{HostProbe, PathKind};
use kubeadm_effects::report::Reporter;

use crate::preflight::{IgnoreSet, PreflightError, collect_findings};

/// The Job upstream creates to prove Pods can be scheduled and run.
const JOB_NAME: &str = "upgrade-health-check";
const NAMESPACE: &str = "kube-system";
/// How long each step of the Job check may take (upstream's value), and how often it is polled:
/// upstream every second, here five times a second (nothing is printed per poll), so a Job that
/// completes is seen sooner.
const JOB_TIMEOUT: Duration = Duration::from_secs(15);
const JOB_POLL: Duration = Duration::from_millis(200);
const CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/control-plane";
const OLD_CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/master";
/// Upstream's `ControlPlaneComponents`, whose manifests must exist.
const CONTROL_PLANE_COMPONENTS: [&str; 3] = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];
fn jobs() -> Resource {
    Resource::new("batch", "v1", "jobs")
}

/// Why a health check failed, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum HealthError {
    /// The health-check Job could not be deleted.
    #[error("could not delete Job {job:?} in the namespace {namespace:?}: {source}", job = JOB_NAME, namespace = NAMESPACE)]
    DeleteJob {
        /// Why.
        source: ClusterError,
    },
    /// The control-plane Nodes could not be listed.
    #[error("could not list nodes labeled with {label:?}: {source}", label = CONTROL_PLANE_LABEL)]
    ListNodes {
        /// Why.
        source: ClusterError,
    },
    /// Control-plane Nodes are not Ready.
    #[error("there are NotReady control-planes in the cluster: [{}]", .0.join(" "))]
    NotReady(Vec<String>),
    /// Static Pod manifests are missing.
    #[error(
        "The control plane seems to be Static Pod-hosted, but some of the manifests don't seem to exist on disk. \
         This probably means you're running 'kubeadm upgrade' on a remote machine, which is not supported for a \
         Static Pod-hosted cluster. Manifest files not found: [{}]",
        .0.join(" ")
    )]
    MissingManifests(Vec<String>),
}

/// One health check: `Err` tells why it failed.
type HealthCheck<'a> = Box<dyn Fn() -> Result<(), HealthError> + 'a>;

/// Runs the three checks in upstream's order: the warnings of ignored or demoted checks go to
/// stderr as they come, the errors are returned together.
/// In a dry run (`dry_run`), the Job is only announced, as upstream's fake client makes it.
pub fn check_cluster_health(
    cluster: &dyn Cluster,
    host: &dyn HostProbe,
    manifests_dir: &str,
    pause_image: &str,
    dry_run: bool,
    ignore: &IgnoreSet,
    rep: &dyn Reporter,
) -> Result<(), PreflightError> {
    rep.out("[upgrade] Running cluster health checks\n");
    let checks: [(&str, HealthCheck<'_>); 3] = [
        (
            "CreateJob",
            Box::new(|| {
                if dry_run {
                    rep.out(&format!(
                        "[upgrade/health] Would create the Job {JOB_NAME:?} in namespace {NAMESPACE:?} and wait until it completes\n"
                    ));
                    return Ok(());
                }
                create_job(cluster, pause_image)
            }),
        ),
        (
            "ControlPlaneNodesReady",
            Box::new(|| control_plane_nodes_ready(cluster)),
        ),
        (
            "StaticPodManifest",
            Box::new(|| static_pod_manifests(host, manifests_dir)),
        ),
    ];
    // Lazily, so that each check's warning is printed before the next check runs.
    collect_findings(
        checks
            .iter()
            .map(|(name, check)| (*name, check().err().map(|e| e.to_string()))),
        ignore,
        rep,
    )
}

/// The Job: the pause image run once as a non-root user, tolerating control-plane taints.
fn job(pause_image: &str) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB_NAME, "namespace": NAMESPACE, "creationTimestamp": null},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"creationTimestamp": null},
                "spec": {
                    "restartPolicy": "Never",
                    "securityContext": {"runAsUser": 999, "runAsGroup": 999, "runAsNonRoot": true},
                    "tolerations": [
                        {"key": OLD_CONTROL_PLANE_LABEL, "effect": "NoSchedule"},
                        {"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"},
                    ],
                    "containers": [{"name": JOB_NAME, "image": pause_image, "args": ["-v"], "resources": {}}],
                },
            },
        },
        "status": {},
    })
}

/// Upstream's `wait.PollImmediate`: `condition` now, then every `interval`, until it holds or
/// `timeout` has passed since the start (on the wall clock, or counted in pauses when pausing does
/// not sleep, as with the fakes: a fake API server that is down is given up on at once). Returns
/// whether it held.
fn poll(cluster: &dyn Cluster, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut paused = Duration::ZERO;
    loop {
        if condition() {
            return true;
        }
        if start.elapsed().max(paused) + JOB_POLL > JOB_TIMEOUT {
            return false;
        }
        cluster.pause(JOB_POLL);
        paused += JOB_POLL;
    }
}

fn delete_job(cluster: &dyn Cluster) -> Result<(), HealthError> {
    cluster
        .delete(&jobs(), NAMESPACE, JOB_NAME, Some(Propagation::Foreground))
        .map_err(|source| HealthError::DeleteJob { source })
}

/// Upstream's `createJob`: delete a leftover Job, create it, wait for it to complete, delete it.
/// As upstream, the final deletion decides the result: its deferred delete overwrites the error
/// of a Job that could not be created or did not complete.
fn create_job(cluster: &dyn Cluster, pause_image: &str) -> Result<(), HealthError> {
    if cluster.get(&jobs(), NAMESPACE, JOB_NAME).is_ok() {
        delete_job(cluster)?;
    }
    let object = job(pause_image);
    if poll(cluster, || cluster.create(&jobs(), &object).is_ok()) {
        poll(cluster, || {
            cluster.get(&jobs(), NAMESPACE, JOB_NAME).is_ok_and(|j| {
                j.pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| cs.iter().any(|c| c.get("type") == Some(&json!("Complete"))))
            })
        });
    }
    delete_job(cluster)
}

/// Upstream's `controlPlaneNodesReady`.
fn control_plane_nodes_ready(cluster: &dyn Cluster) -> Result<(), HealthError> {
    let nodes = cluster
        .list(
            &Resource::nodes(),
            "",
            &ListOptions {
                label_selector: CONTROL_PLANE_LABEL.to_string(),
                ..ListOptions::default()
            },
        )
        .map_err(|source| HealthError::ListNodes { source })?;
    let not_ready: Vec<String> = nodes
        .iter()
        .filter(|n| {
            n.pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.get("type") == Some(&json!("Ready")) && c.get("status") != Some(&json!("True"))
                    })
                })
        })
        .map(|n| {
            n.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    if not_ready.is_empty() {
        Ok(())
    } else {
        Err(HealthError::NotReady(not_ready))
    }
}

/// Upstream's `staticPodManifestHealth`.
fn static_pod_manifests(host: &dyn HostProbe, manifests_dir: &str) -> Result<(), HealthError> {
    let missing: Vec<String> = CONTROL_PLANE_COMPONENTS
        .iter()
        .map(|c| format!("{manifests_dir}/{c}.yaml"))
        .filter(|p| host.path_kind(p) == PathKind::Missing)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(HealthError::MissingManifests(missing))
}
