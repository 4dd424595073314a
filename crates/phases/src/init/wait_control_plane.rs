//! The `wait-control-plane` phase: polls the API server's health endpoint with a short backoff until
//! it answers, within `apiServer.timeoutForControlPlane`. On timeout it prints upstream's
//! troubleshooting text, then what we can see ourselves ([`crate::diagnose`]): the kubelet's
//! health, service, cgroup driver and swap, and each control-plane container's state and last log
//! lines. The kubelet check runs beside the wait, as upstream's (see [`crate::kubelet::KubeletCheck`]).

use std::time::Duration;

use kubeadm_effects::cluster::ClusterError;
use kubeadm_workflow::PhaseError;

use crate::InitData;
use crate::kubelet::{BesideKubelet, Step};

/// Upstream's default `timeoutForControlPlane`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(240);

/// Why the control plane did not come up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WaitError {
    /// The client could not be created.
    #[error("cannot obtain client: {0}")]
    Client(#[source] crate::ClusterConnectError),
    /// The API server never became healthy (the text upstream returns after its template).
    #[error("couldn't initialize a Kubernetes cluster")]
    Timeout,
}

/// `wait-control-plane`.
pub(crate) fn run(data: &mut InitData) -> Result<(), PhaseError> {
    let timeout = data
        .cfg
        .cluster
        .api_server
        .timeout_for_control_plane
        .map(|d| Duration::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(0)))
        .unwrap_or(DEFAULT_TIMEOUT);
    let shown = data
        .cfg
        .cluster
        .api_server
        .timeout_for_control_plane
        .map_or_else(|| "4m0s".to_string(), |d| d.to_string());
    if data.dry_run {
        crate::dry_run::print_files(
            &*data.effects.fs,
            &*data.effects.reporter,
            Some(&data.manifest_dir),
            &data.kubelet_dir,
        );
    }
    data.effects.reporter.info(
        1,
        "waitcontrolplane.go",
        "[wait-control-plane] Waiting for the API server to be healthy",
    );
    let client = data.cluster.client().map_err(WaitError::Client)?;
    data.say(&format!(
        "[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory {:?}. This can take up to {shown}",
        data.manifest_dir.display().to_string()
    ));
    if data.dry_run {
        // Upstream's dry-run waiter returns at once.
        return Ok(());
    }
    match wait_for_kubelet_and_api(data, client, timeout) {
        Ok(waited) => {
            data.say(&format!(
                "[apiclient] All control plane components are healthy after {:.6} seconds",
                waited.as_secs_f64()
            ));
            Ok(())
        }
        Err(e) => {
            data.effects.reporter.out(&failure_text(
                &e.to_string(),
                &data.cfg.init.node_registration.cri_socket,
            ));
            data.effects.reporter.out(&diagnosis(data, client));
            Err(WaitError::Timeout.into())
        }
    }
}

/// The longest pause between two probes of the API server's health: upstream probes every 500 ms
/// (`APICallRetryInterval`); a refused connection costs next to nothing, so the API server is seen
/// up within 100 ms of it answering.
const MAX_HEALTH_POLL: Duration = Duration::from_millis(100);

/// Upstream's `WaitForKubeletAndFunc(WaitForAPI)`: the API server's health polled (50 ms, then
/// every [`MAX_HEALTH_POLL`]) until `timeout`, with the kubelet check beside it; the error is what upstream's
/// template prints.
fn wait_for_kubelet_and_api(
    data: &InitData,
    client: &dyn kubeadm_effects::cluster::Cluster,
    timeout: Duration,
) -> Result<Duration, BesideKubelet<ClusterError>> {
    let mut delay = Duration::from_millis(50);
    let mut last = None;
    let waited = crate::kubelet::wait_beside_kubelet_check(
        client,
        &*data.effects.host_probe,
        &|l| data.say(l),
        |elapsed| {
            match client.healthy() {
                Ok(true) => return Step::Done(elapsed),
                Ok(false) => {}
                Err(e) => last = Some(Box::new(e)),
            }
            if elapsed >= timeout {
                return Step::Failed(ClusterError::WaitTimeout { last: last.take() });
            }
            let pause = delay.min(timeout - elapsed);
            delay = (delay * 2).min(MAX_HEALTH_POLL);
            data.effects.reporter.progress(
                "[wait-control-plane] Waiting for the API server to answer /healthz",
                elapsed,
            );
            Step::Again(pause)
        },
    );
    data.effects.reporter.progress_end();
    waited
}

/// Upstream's `kubeletFailTempl`, filled in.
fn failure_text(error: &str, socket: &str) -> String {
    let kubelet = crate::kubelet::failure_text(error);
    format!(
        "{kubelet}
Additionally, a control plane component may have crashed or exited when started by the container runtime.
To troubleshoot, list all containers using your preferred container runtimes CLI.
Here is one example how you may list all running Kubernetes containers by using crictl:
\t- 'crictl --runtime-endpoint {socket} ps -a | grep kube | grep -v pause'
\tOnce you have found the failing container, you can inspect its logs with:
\t- 'crictl --runtime-endpoint {socket} logs CONTAINERID'
"
    )
}

/// The control-plane components kubeadm writes manifests for.
const CONTROL_PLANE: [&str; 4] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// Beyond upstream: what this host shows about the kubelet, the static pods, the API server's
/// readiness and etcd's health (see [`crate::diagnose`]), so the user knows where to look first:
/// an API server that answers but is not healthy is named with the checks that fail.
fn diagnosis(data: &InitData, client: &dyn kubeadm_effects::cluster::Cluster) -> String {
    let mut more = vec![crate::diagnose::api_server(client)];
    more.extend(crate::diagnose::etcd(
        &*data.effects.host_probe,
        &*data.effects.fs,
        &data.manifest_dir,
    ));
    crate::diagnose::static_pods(data, &CONTROL_PLANE, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template text as upstream renders it (from `waitcontrolplane.go`'s dedented template).
    #[test]
    fn failure_text_names_the_socket() {
        let t = failure_text("timed out waiting for the condition", "unix:///run/x.sock");
        assert!(
            t.starts_with("\nUnfortunately, an error has occurred:\n\ttimed out waiting for the condition\n")
        );
        assert!(t.contains("\t- 'crictl --runtime-endpoint unix:///run/x.sock logs CONTAINERID'\n"));
    }
}
