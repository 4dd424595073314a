//! The container runtime as kubeadm uses it: the CRI operations behind preflight (`CRI`, `ImagePull`),
//! `config images pull` and `reset` (removing the pod sandboxes), as a small synchronous trait with plain
//! data types. The gRPC client lives in kubeadm-host; this module owns the data, the errors and the retry
//! policy upstream applies on top of the single CRI calls.
//!
//! Upstream kubeadm v1.25 runs `crictl -r <socket> …` for each of these (`util/runtime/runtime.go`):
//!
//! | upstream                       | crictl                 | CRI call(s)                         | here                            |
//! |--------------------------------|------------------------|-------------------------------------|---------------------------------|
//! | `IsRunning`                    | `info`                 | `Status` (after a `Version` check)  | [`Runtime::is_running`]         |
//! | `ImageExists`                  | `inspecti IMAGE`       | `ImageStatus`, image unset = absent | [`Runtime::image_exists`]       |
//! | `PullImage`, 5 attempts        | `pull IMAGE`           | `PullImage` (no deadline)           | [`Runtime::pull_image`]         |
//! | `ListKubeContainers`           | `pods -q`              | `ListPodSandbox`, **no filter**     | [`Runtime::list_pod_sandboxes`] |
//! | `RemoveContainers`, 5 attempts | `stopp ID`, `rmp ID`   | `StopPodSandbox`, `RemovePodSandbox`| [`Runtime::remove_pod_sandboxes`] |
//!
//! Notes from reading upstream:
//! - `ListKubeContainers` does not filter on the `io.kubernetes.pod.namespace` label or anything else:
//!   `crictl pods -q` prints every sandbox in every state, and `reset` stops and removes them all.
//! - `ImageExists` never reports an error: any `crictl inspecti` failure counts as "absent", and the
//!   `ImagePull` check then pulls (and reports the pull's error). [`Runtime::image_exists`] returns the
//!   error so callers can log it; a caller that wants upstream's behaviour treats `Err` as `false`.
//! - kubeadm 1.25 never asks the runtime for its sandbox (pause) image: there is no `crictl info` parsing
//!   for it (that arrived in later releases). [`RuntimeStatus::info`] keeps the verbose `Status` map
//!   should a caller want it.
//! - Pull retries are immediate, as upstream's loop is. Sandbox removal retries are immediate in
//!   upstream's loop too, but each of its attempts spawns two `crictl` processes, which spaces them out;
//!   a runtime spoken to over its socket answers in milliseconds, so five attempts could all land inside
//!   one short window (a container the stopped kubelet left "in starting state" refuses removal for
//!   about that long). [`Runtime::removal_retry_pause`] says how long to wait before each further attempt:
//!   nothing by default, [`REMOVAL_RETRY_PAUSE`] doubling from the second attempt on the real client.
//!
//! Depends on nothing but std and thiserror.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// How many times `pull_image` tries (upstream `constants.PullImageRetry`).
pub const PULL_IMAGE_RETRY: u32 = 5;
/// How many times a pod sandbox is stopped and removed before giving up (upstream
/// `constants.RemoveContainerRetry`).
pub const REMOVE_CONTAINER_RETRY: u32 = 5;
/// The pause before the second attempt at removing a sandbox on a runtime that wants one; each further
/// attempt waits twice as long as the one before (100, 200, 400, 800 ms: 1.5 s before giving up).
pub const REMOVAL_RETRY_PAUSE: Duration = Duration::from_millis(100);

/// The pause before removal attempt `attempt` (2 to [`REMOVE_CONTAINER_RETRY`]) when the first pause
/// is `first`, doubling each time.
pub fn doubling_pause(first: Duration, attempt: u32) -> Duration {
    first * 2u32.pow(attempt.saturating_sub(2).min(16))
}

/// The default CRI endpoint on Linux (upstream `constants.DefaultCRISocket`).
pub const DEFAULT_CRI_SOCKET: &str = "unix:///var/run/containerd/containerd.sock";

/// The CRI API version the runtime answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    /// `runtime.v1`, preferred.
    V1,
    /// `runtime.v1alpha2`, the fallback crictl 1.25 uses when `v1` is not implemented.
    V1Alpha2,
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApiVersion::V1 => "v1",
            ApiVersion::V1Alpha2 => "v1alpha2",
        })
    }
}

/// The answer to the CRI `Version` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeVersion {
    /// The kubelet runtime API version the runtime speaks (`version`, e.g. `0.1.0`).
    pub version: String,
    /// e.g. `containerd`.
    pub runtime_name: String,
    /// e.g. `1.6.20~ds1`.
    pub runtime_version: String,
    /// As the runtime reports it, e.g. `v1`.
    pub runtime_api_version: String,
    /// The CRI API version this client negotiated.
    pub api: ApiVersion,
}

/// One condition of the runtime (`RuntimeReady`, `NetworkReady`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeCondition {
    /// The condition type, e.g. `RuntimeReady`.
    pub kind: String,
    /// Whether the condition holds.
    pub status: bool,
    /// A machine-readable reason when it does not, e.g. `NetworkPluginNotReady`.
    pub reason: String,
    /// A human-readable message.
    pub message: String,
}

/// The answer to the CRI `Status` call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeStatus {
    /// The runtime's conditions, in its order.
    pub conditions: Vec<RuntimeCondition>,
    /// The verbose information map (for containerd: `config`, `cniconfig`, `golang`, … as JSON text).
    pub info: BTreeMap<String, String>,
}

/// The condition type of the runtime itself.
pub const RUNTIME_READY: &str = "RuntimeReady";
/// The condition type of the pod network.
pub const NETWORK_READY: &str = "NetworkReady";

impl RuntimeStatus {
    /// The condition of the given type, if the runtime reported it.
    pub fn condition(&self, kind: &str) -> Option<&RuntimeCondition> {
        self.conditions.iter().find(|c| c.kind == kind)
    }

    /// Whether `RuntimeReady` is reported and true.
    pub fn runtime_ready(&self) -> bool {
        self.condition(RUNTIME_READY).is_some_and(|c| c.status)
    }

    /// Whether `NetworkReady` is reported and true (false until a CNI configuration exists).
    pub fn network_ready(&self) -> bool {
        self.condition(NETWORK_READY).is_some_and(|c| c.status)
    }
}

/// An image the runtime holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// The image id (for containerd, the config digest `sha256:…`).
    pub id: String,
    /// Tags, e.g. `registry.k8s.io/pause:3.8`.
    pub repo_tags: Vec<String>,
    /// Digests, e.g. `registry.k8s.io/pause@sha256:…`.
    pub repo_digests: Vec<String>,
    /// Size in bytes as the runtime reports it.
    pub size: u64,
    /// Whether the runtime will never garbage-collect it.
    pub pinned: bool,
}

/// State of a pod sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxState {
    /// `SANDBOX_READY`.
    Ready,
    /// `SANDBOX_NOTREADY` (or a value this client does not know).
    NotReady,
}

/// A container as `ListContainers` and `ContainerStatus` return it (what a diagnosis needs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Container {
    /// The container id.
    pub id: String,
    /// The container's name in its pod (the kubelet's `io.kubernetes.container.name`).
    pub name: String,
    /// How many times the kubelet has started it before.
    pub attempt: u32,
    /// `CONTAINER_CREATED`, `CONTAINER_RUNNING`, `CONTAINER_EXITED` or `CONTAINER_UNKNOWN`.
    pub state: String,
    /// Creation time in nanoseconds since the Unix epoch.
    pub created_at: i64,
    /// Labels (the kubelet's `io.kubernetes.pod.name`, `io.kubernetes.pod.namespace`, …).
    pub labels: BTreeMap<String, String>,
    /// From `ContainerStatus` only: the exit code of an exited container.
    pub exit_code: i32,
    /// From `ContainerStatus` only: why it is in its state (`Error`, `OOMKilled`, …).
    pub reason: String,
    /// From `ContainerStatus` only: the runtime's message.
    pub message: String,
    /// From `ContainerStatus` only: where the kubelet keeps its log (CRI log format).
    pub log_path: String,
}

/// A pod sandbox as `ListPodSandbox` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSandbox {
    /// The sandbox id, what `reset` stops and removes.
    pub id: String,
    /// Pod name from the sandbox metadata.
    pub name: String,
    /// Pod namespace from the sandbox metadata.
    pub namespace: String,
    /// Pod uid from the sandbox metadata.
    pub uid: String,
    /// Attempt number from the sandbox metadata.
    pub attempt: u32,
    /// Ready or not.
    pub state: SandboxState,
    /// Creation time in nanoseconds since the Unix epoch.
    pub created_at: i64,
    /// Labels (kubelet sets `io.kubernetes.pod.namespace` and friends).
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// The runtime handler, empty for the default one.
    pub runtime_handler: String,
}

/// The CRI call an error came from, with its subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CriCall {
    /// `Version`, also the first call on a new connection (API version negotiation).
    Version,
    /// `Status`.
    Status,
    /// `ListImages`.
    ListImages,
    /// `ImageStatus` of an image reference.
    ImageStatus(String),
    /// `PullImage` of an image reference.
    PullImage(String),
    /// `ListPodSandbox`.
    ListPodSandbox,
    /// `StopPodSandbox` of a sandbox id.
    StopPodSandbox(String),
    /// `RemovePodSandbox` of a sandbox id.
    RemovePodSandbox(String),
    /// `ListContainers`.
    ListContainers,
    /// `ContainerStatus` of a container id.
    ContainerStatus(String),
}

impl fmt::Display for CriCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CriCall::Version => f.write_str("Version"),
            CriCall::Status => f.write_str("Status"),
            CriCall::ListImages => f.write_str("ListImages"),
            CriCall::ImageStatus(i) => write!(f, "ImageStatus {i:?}"),
            CriCall::PullImage(i) => write!(f, "PullImage {i:?}"),
            CriCall::ListPodSandbox => f.write_str("ListPodSandbox"),
            CriCall::StopPodSandbox(id) => write!(f, "StopPodSandbox {id:?}"),
            CriCall::RemovePodSandbox(id) => write!(f, "RemovePodSandbox {id:?}"),
            CriCall::ListContainers => f.write_str("ListContainers"),
            CriCall::ContainerStatus(id) => write!(f, "ContainerStatus {id:?}"),
        }
    }
}

/// A failed CRI operation. Every variant names the endpoint; those past endpoint parsing name the call.
#[derive(Debug, thiserror::Error)]
pub enum CriError {
    /// The endpoint is not something kubeadm can dial (only `unix://` URLs and bare paths are).
    #[error("invalid CRI endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// Why it is rejected.
        reason: String,
    },
    /// Nothing answers on the socket: it does not exist, nothing listens, or the connection timed out.
    #[error("container runtime is not running: {call} on {endpoint}: cannot connect to {path}: {source}")]
    NotRunning {
        /// The endpoint as given.
        endpoint: String,
        /// The socket path dialled.
        path: String,
        /// The call that needed the connection.
        call: CriCall,
        /// The dial error (`No such file or directory`, `Connection refused`, a timeout).
        #[source]
        source: std::io::Error,
    },
    /// The runtime answered with a gRPC error status.
    #[error("{call} on {endpoint}: rpc error: code = {code} desc = {message}")]
    Rpc {
        /// The endpoint as given.
        endpoint: String,
        /// The call.
        call: CriCall,
        /// The gRPC code by its Go name (`Unknown`, `NotFound`, `Unimplemented`, …).
        code: String,
        /// The status message, as the runtime wrote it.
        message: String,
    },
    /// The call did not finish within its deadline.
    #[error("{call} on {endpoint}: no answer within {timeout:?}")]
    Timeout {
        /// The endpoint as given.
        endpoint: String,
        /// The call.
        call: CriCall,
        /// The deadline that passed.
        timeout: Duration,
    },
    /// Neither `runtime.v1` nor `runtime.v1alpha2` is served on the socket.
    #[error(
        "{endpoint} does not serve the CRI: runtime.v1 and runtime.v1alpha2 are both unimplemented ({message})"
    )]
    NotCri {
        /// The endpoint as given.
        endpoint: String,
        /// The runtime's message for the v1alpha2 attempt.
        message: String,
    },
    /// Anything else the client ran into (its own I/O runtime, an HTTP/2 failure mid-call).
    #[error("{call} on {endpoint}: {message}")]
    Client {
        /// The endpoint as given.
        endpoint: String,
        /// The call.
        call: CriCall,
        /// What went wrong.
        message: String,
    },
}

/// A sandbox that `reset` could not stop or remove, after [`REMOVE_CONTAINER_RETRY`] attempts.
/// The wording is upstream's (`RemoveContainers`).
#[derive(Debug, thiserror::Error)]
pub enum SandboxRemovalError {
    /// `StopPodSandbox` failed on the last attempt.
    #[error("failed to stop running pod {id}: {source}")]
    Stop {
        /// The sandbox id.
        id: String,
        /// The last error.
        #[source]
        source: Box<CriError>,
    },
    /// `RemovePodSandbox` failed on the last attempt.
    #[error("failed to remove running container {id}: {source}")]
    Remove {
        /// The sandbox id.
        id: String,
        /// The last error.
        #[source]
        source: Box<CriError>,
    },
}

/// Every sandbox that could not be removed. Displays as Go's error aggregate does: one message alone,
/// several as `[a, b]` with repeated messages shown once.
#[derive(Debug, thiserror::Error)]
#[error("{}", aggregate_message(.0))]
pub struct SandboxRemovalErrors(pub Vec<SandboxRemovalError>);

fn aggregate_message(errors: &[SandboxRemovalError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let msg = e.to_string();
        if !seen.contains(&msg) {
            seen.push(msg);
        }
    }
    if errors.len() <= 1 || seen.len() == 1 {
        seen.concat()
    } else {
        format!("[{}]", seen.join(", "))
    }
}

/// The container runtime behind a CRI endpoint. Synchronous: kubeadm's phases run one step after another.
///
/// Implementations provide the single CRI calls; upstream's policies (retries, what "exists" means) are
/// provided methods, so every implementation, fakes included, behaves the same.
pub trait Runtime: fmt::Debug {
    /// The endpoint as configured (`unix:///var/run/containerd/containerd.sock`).
    fn endpoint(&self) -> &str;

    /// CRI `Version`.
    fn version(&self) -> Result<RuntimeVersion, CriError>;

    /// CRI `Status` (verbose), with the `RuntimeReady` and `NetworkReady` conditions.
    fn status(&self) -> Result<RuntimeStatus, CriError>;

    /// CRI `ListImages` without a filter.
    fn list_images(&self) -> Result<Vec<Image>, CriError>;

    /// CRI `ImageStatus`: `None` when the runtime does not have the image.
    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError>;

    /// One CRI `PullImage` without credentials; returns the image reference the runtime reports.
    fn pull_image_once(&self, image: &str) -> Result<String, CriError>;

    /// CRI `ListPodSandbox` without a filter: every sandbox, ready or not (upstream's `crictl pods -q`).
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError>;

    /// One CRI `StopPodSandbox`.
    fn stop_pod_sandbox(&self, id: &str) -> Result<(), CriError>;

    /// One CRI `RemovePodSandbox`.
    fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError>;

    /// CRI `ListContainers` without a filter. Default: none (for runtimes that never run any).
    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        Ok(Vec::new())
    }

    /// CRI `ContainerStatus` of one container. Default: what `list_containers` says of it.
    fn container_status(&self, id: &str) -> Result<Option<Container>, CriError> {
        Ok(self.list_containers()?.into_iter().find(|c| c.id == id))
    }

    /// Whether the runtime answers (upstream's `IsRunning`, the `CRI` preflight check): the `Status` call
    /// succeeds. Like `crictl info`, a runtime that answers but reports `RuntimeReady=false` still counts.
    fn is_running(&self) -> Result<(), CriError> {
        self.status().map(|_| ())
    }

    /// Whether the runtime has the image (upstream's `ImageExists`).
    fn image_exists(&self, image: &str) -> Result<bool, CriError> {
        Ok(self.image_status(image)?.is_some())
    }

    /// Pulls an image, trying [`PULL_IMAGE_RETRY`] times in a row; the last error is returned.
    fn pull_image(&self, image: &str) -> Result<String, CriError> {
        let mut attempt = 1;
        loop {
            match self.pull_image_once(image) {
                Ok(image_ref) => return Ok(image_ref),
                Err(e) if attempt >= PULL_IMAGE_RETRY => return Err(e),
                Err(_) => attempt += 1,
            }
        }
    }

    /// How long to wait before removal attempt `attempt` (2 and up) of one sandbox; nothing unless the
    /// runtime says otherwise (see the module notes).
    fn removal_retry_pause(&self, attempt: u32) -> Duration {
        let _ = attempt;
        Duration::ZERO
    }

    /// Stops then removes one sandbox, trying the pair [`REMOVE_CONTAINER_RETRY`] times; a failed stop
    /// skips the remove of that attempt, as upstream does. Waits [`Runtime::removal_retry_pause`]
    /// before each attempt after the first.
    fn stop_and_remove_pod_sandbox(&self, id: &str) -> Result<(), SandboxRemovalError> {
        let mut attempt = 1;
        loop {
            if attempt > 1 {
                let pause = self.removal_retry_pause(attempt);
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                }
            }
            let result = self
                .stop_pod_sandbox(id)
                .map_err(|source| SandboxRemovalError::Stop {
                    id: id.to_string(),
                    source: Box::new(source),
                })
                .and_then(|()| {
                    self.remove_pod_sandbox(id)
                        .map_err(|source| SandboxRemovalError::Remove {
                            id: id.to_string(),
                            source: Box::new(source),
                        })
                });
            match result {
                Ok(()) => return Ok(()),
                Err(e) if attempt >= REMOVE_CONTAINER_RETRY => return Err(e),
                Err(_) => attempt += 1,
            }
        }
    }

    /// Stops and removes every given sandbox (upstream's `RemoveContainers`), going on past failures and
    /// reporting them all at the end.
    fn remove_pod_sandboxes(&self, ids: &[String]) -> Result<(), SandboxRemovalErrors> {
        let errors: Vec<SandboxRemovalError> = ids
            .iter()
            .filter_map(|id| self.stop_and_remove_pod_sandbox(id).err())
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(SandboxRemovalErrors(errors))
        }
    }
}

/// Beyond upstream: a [`Runtime`] that shows each image pull of `runtime` as progress on `reporter`
/// (`[<prefix>] Pulling <image>` and its seconds so far, on a terminal only; see
/// [`crate::report::with_progress`]); every other call goes straight through.
pub struct PullProgress<'a> {
    /// The runtime that does the work.
    pub runtime: &'a dyn Runtime,
    /// Where the progress goes.
    pub reporter: &'a dyn crate::report::Reporter,
    /// The output prefix of the command (`preflight`, `upgrade/prepull`, `config/images`).
    pub prefix: &'a str,
}

impl fmt::Debug for PullProgress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PullProgress")
            .field("runtime", &self.runtime)
            .finish_non_exhaustive()
    }
}

impl Runtime for PullProgress<'_> {
    fn endpoint(&self) -> &str {
        self.runtime.endpoint()
    }
    fn version(&self) -> Result<RuntimeVersion, CriError> {
        self.runtime.version()
    }
    fn status(&self) -> Result<RuntimeStatus, CriError> {
        self.runtime.status()
    }
    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        self.runtime.list_images()
    }
    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
        self.runtime.image_status(image)
    }
    fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
        let what = format!("[{}] Pulling {image}", self.prefix);
        crate::report::with_progress(self.reporter, &what, || self.runtime.pull_image_once(image))
    }
    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        self.runtime.list_pod_sandboxes()
    }
    fn stop_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        self.runtime.stop_pod_sandbox(id)
    }
    fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        self.runtime.remove_pod_sandbox(id)
    }
    fn removal_retry_pause(&self, attempt: u32) -> Duration {
        self.runtime.removal_retry_pause(attempt)
    }
    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        self.runtime.list_containers()
    }
    fn container_status(&self, id: &str) -> Result<Option<Container>, CriError> {
        self.runtime.container_status(id)
    }
    fn is_running(&self) -> Result<(), CriError> {
        self.runtime.is_running()
    }
    fn image_exists(&self, image: &str) -> Result<bool, CriError> {
        self.runtime.image_exists(image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A runtime whose single calls fail a scripted number of times, recording every call.
    #[derive(Debug, Default)]
    struct Scripted {
        pull_failures: u32,
        stop_failures: BTreeMap<String, u32>,
        remove_failures: BTreeMap<String, u32>,
        calls: RefCell<Vec<String>>,
    }

    fn rpc(call: CriCall, message: &str) -> CriError {
        CriError::Rpc {
            endpoint: "unix:///run/test.sock".into(),
            call,
            code: "Unknown".into(),
            message: message.into(),
        }
    }

    impl Scripted {
        fn count(&self, prefix: &str) -> u32 {
            let n = self
                .calls
                .borrow()
                .iter()
                .filter(|c| c.starts_with(prefix))
                .count();
            u32::try_from(n).expect("small")
        }
        fn fails(&self, table: &BTreeMap<String, u32>, prefix: &str, id: &str) -> bool {
            let done = self.count(&format!("{prefix} {id}"));
            table.get(id).is_some_and(|n| done <= *n)
        }
    }

    impl Runtime for Scripted {
        fn endpoint(&self) -> &str {
            "unix:///run/test.sock"
        }
        fn version(&self) -> Result<RuntimeVersion, CriError> {
            unimplemented!()
        }
        fn status(&self) -> Result<RuntimeStatus, CriError> {
            Ok(RuntimeStatus::default())
        }
        fn list_images(&self) -> Result<Vec<Image>, CriError> {
            Ok(Vec::new())
        }
        fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
            Ok((image == "present:1").then(Image::default))
        }
        fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
            self.calls.borrow_mut().push(format!("pull {image}"));
            if self.count("pull") <= self.pull_failures {
                Err(rpc(
                    CriCall::PullImage(image.into()),
                    &format!("attempt {}", self.count("pull")),
                ))
            } else {
                Ok(format!("sha256:{image}"))
            }
        }
        fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
            Ok(Vec::new())
        }
        fn stop_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
            self.calls.borrow_mut().push(format!("stop {id}"));
            if self.fails(&self.stop_failures, "stop", id) {
                return Err(rpc(CriCall::StopPodSandbox(id.into()), "stop refused"));
            }
            Ok(())
        }
        fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
            self.calls.borrow_mut().push(format!("remove {id}"));
            if self.fails(&self.remove_failures, "remove", id) {
                return Err(rpc(CriCall::RemovePodSandbox(id.into()), "remove refused"));
            }
            Ok(())
        }
        fn removal_retry_pause(&self, attempt: u32) -> Duration {
            self.calls.borrow_mut().push(format!("pause {attempt}"));
            Duration::ZERO
        }
    }

    /// What a terminal would show of the progress, and where it ended.
    #[derive(Default)]
    struct Shown(std::sync::Mutex<Vec<String>>);

    impl crate::report::Reporter for Shown {
        fn out(&self, text: &str) {
            self.0.lock().expect("lock").push(format!("out {text}"));
        }
        fn err(&self, text: &str) {
            self.0.lock().expect("lock").push(format!("err {text}"));
        }
        fn verbosity(&self) -> u8 {
            0
        }
        fn log(&self, _: crate::report::Severity, _: u8, _: &str, _: &str) {}
        fn progress(&self, what: &str, _: std::time::Duration) {
            self.0.lock().expect("lock").push(format!("progress {what}"));
        }
        fn progress_end(&self) {
            self.0.lock().expect("lock").push("end".into());
        }
    }

    #[test]
    fn pull_progress_shows_each_pull_attempt_and_passes_the_rest_through() {
        let rt = Scripted {
            pull_failures: 1,
            ..Default::default()
        };
        let shown = Shown::default();
        let wrapped = PullProgress {
            runtime: &rt,
            reporter: &shown,
            prefix: "preflight",
        };
        assert_eq!(
            wrapped.pull_image("img:1").expect("second attempt"),
            "sha256:img:1"
        );
        assert!(wrapped.image_exists("present:1").expect("status"));
        assert_eq!(wrapped.endpoint(), "unix:///run/test.sock");
        let mut shown = shown.0.into_inner().expect("lock");
        // A pull slower than a second would show its line again, with more seconds.
        shown.dedup();
        assert_eq!(
            shown,
            [
                "progress [preflight] Pulling img:1",
                "end",
                "progress [preflight] Pulling img:1",
                "end"
            ]
        );
        assert_eq!(rt.count("pull"), 2);
    }

    #[test]
    fn pull_retries_up_to_five_times_and_returns_the_last_error() {
        for (failures, ok, calls) in [(0, true, 1), (4, true, 5), (5, false, 5), (9, false, 5)] {
            let rt = Scripted {
                pull_failures: failures,
                ..Default::default()
            };
            let result = rt.pull_image("img:1");
            assert_eq!(result.is_ok(), ok, "failures={failures}");
            assert_eq!(rt.count("pull"), calls, "failures={failures}");
            if let Err(e) = result {
                assert!(e.to_string().ends_with("desc = attempt 5"), "{e}");
            }
        }
    }

    #[test]
    fn a_failed_stop_skips_the_remove_of_that_attempt() {
        let rt = Scripted {
            stop_failures: [("a".to_string(), 2)].into(),
            ..Default::default()
        };
        rt.stop_and_remove_pod_sandbox("a").expect("third attempt works");
        assert_eq!(
            *rt.calls.borrow(),
            ["stop a", "pause 2", "stop a", "pause 3", "stop a", "remove a"]
        );
    }

    #[test]
    fn removal_pauses_double_from_the_second_attempt() {
        let pauses: Vec<u128> = (2..=REMOVE_CONTAINER_RETRY)
            .map(|a| doubling_pause(REMOVAL_RETRY_PAUSE, a).as_millis())
            .collect();
        assert_eq!(pauses, [100, 200, 400, 800]);
        assert_eq!(doubling_pause(REMOVAL_RETRY_PAUSE, 1), REMOVAL_RETRY_PAUSE);
    }

    #[test]
    fn removal_goes_on_past_failures_and_aggregates_like_go() {
        let rt = Scripted {
            stop_failures: [("a".to_string(), 99)].into(),
            remove_failures: [("c".to_string(), 99)].into(),
            ..Default::default()
        };
        let ids = ["a", "b", "c"].map(String::from);
        let err = rt.remove_pod_sandboxes(&ids).expect_err("a and c fail");
        assert_eq!(rt.count("stop a"), REMOVE_CONTAINER_RETRY);
        assert_eq!(rt.count("remove a"), 0);
        assert_eq!(rt.count("stop b"), 1);
        assert_eq!(rt.count("remove c"), REMOVE_CONTAINER_RETRY);
        assert_eq!(
            err.to_string(),
            "[failed to stop running pod a: StopPodSandbox \"a\" on unix:///run/test.sock: rpc error: code = Unknown desc = stop refused, \
             failed to remove running container c: RemovePodSandbox \"c\" on unix:///run/test.sock: rpc error: code = Unknown desc = remove refused]"
        );
    }

    #[test]
    fn a_single_failure_is_shown_without_brackets() {
        let rt = Scripted {
            stop_failures: [("x".to_string(), 99)].into(),
            ..Default::default()
        };
        let err = rt.remove_pod_sandboxes(&["x".to_string()]).expect_err("x fails");
        assert!(
            err.to_string()
                .starts_with("failed to stop running pod x: StopPodSandbox"),
            "{err}"
        );
        assert!(rt.remove_pod_sandboxes(&[]).is_ok());
    }

    #[test]
    fn image_exists_reads_image_status() {
        let rt = Scripted::default();
        assert!(rt.image_exists("present:1").expect("ok"));
        assert!(!rt.image_exists("absent:1").expect("ok"));
    }

    #[test]
    fn conditions_are_found_by_type() {
        let status = RuntimeStatus {
            conditions: vec![
                RuntimeCondition {
                    kind: RUNTIME_READY.into(),
                    status: true,
                    reason: String::new(),
                    message: String::new(),
                },
                RuntimeCondition {
                    kind: NETWORK_READY.into(),
                    status: false,
                    reason: "NetworkPluginNotReady".into(),
                    message: "cni config uninitialized".into(),
                },
            ],
            info: BTreeMap::new(),
        };
        assert!(status.runtime_ready());
        assert!(!status.network_ready());
        assert_eq!(
            status.condition(NETWORK_READY).map(|c| c.reason.as_str()),
            Some("NetworkPluginNotReady")
        );
        assert!(!RuntimeStatus::default().runtime_ready());
    }
}
