//! The `wait-control-plane` phase: polls the API server's health endpoint with a short backoff until
//! it answers, within `apiServer.timeoutForControlPlane`. On timeout it prints upstream's
//! troubleshooting text, then what we can see ourselves: whether the kubelet service exists and
//! which control-plane pods the container runtime knows.

use std::time::Duration;

use kubeadm_workflow::PhaseError;

use crate::InitData;

/// Upstream's default `timeoutForControlPlane`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(240);

/// Why the control plane did not come up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WaitError {
    /// The client could not be created.
    #[error("cannot obtain client: {0}")]
    Client(#[source] crate::init::ClusterConnectError),
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
            &*data.fs,
            &*data.reporter,
            Some(&data.manifest_dir),
            &data.kubelet_dir,
        );
    }
    data.reporter.info(
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
    match client.wait_for_api(timeout) {
        Ok(waited) => {
            data.say(&format!(
                "[apiclient] All control plane components are healthy after {:.6} seconds",
                waited.as_secs_f64()
            ));
            Ok(())
        }
        Err(e) => {
            data.reporter.out(&failure_text(
                &e.to_string(),
                &data.cfg.init.node_registration.cri_socket,
            ));
            data.reporter.out(&diagnosis(data));
            Err(Box::new(WaitError::Timeout))
        }
    }
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

/// The control-plane pods kubeadm writes manifests for.
const CONTROL_PLANE_PODS: [&str; 4] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// Beyond upstream: what this host shows about the kubelet and the static pods, so the user knows
/// where to look first.
fn diagnosis(data: &InitData) -> String {
    let mut out = String::from("\nWhat kubeadm could see on this host:\n");
    if data.init_system.kind().is_none() {
        out.push_str("\t- no supported init system was found to run the kubelet\n");
    } else if !data.init_system.service_exists("kubelet") {
        out.push_str("\t- the kubelet service does not exist\n");
    } else {
        out.push_str("\t- the kubelet service exists\n");
    }
    match data.runtime.list_pod_sandboxes() {
        Err(e) => out.push_str(&format!(
            "\t- the container runtime at {} could not be asked for pods: {e}\n",
            data.runtime.endpoint()
        )),
        Ok(pods) => {
            for name in CONTROL_PLANE_PODS {
                let found = pods
                    .iter()
                    .find(|p| p.namespace == "kube-system" && p.name.starts_with(&format!("{name}-")));
                match found {
                    Some(p) => out.push_str(&format!(
                        "\t- pod {} exists in the container runtime ({:?})\n",
                        p.name, p.state
                    )),
                    None => out.push_str(&format!(
                        "\t- no {name} pod exists in the container runtime: the kubelet has not started it\n"
                    )),
                }
            }
        }
    }
    out
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
