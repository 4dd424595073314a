//! The real container runtime client: CRI gRPC over the runtime's Unix socket, where upstream kubeadm
//! runs `crictl -r <socket>` (see `kubeadm_effects::cri` for the mapping of upstream calls to CRI calls).
//!
//! **Connections and async.** [`CriClient`] offers the synchronous `Runtime` trait. Each call builds a
//! current-thread tokio runtime, dials the socket, makes its RPC(s) and drops everything again, as each
//! `crictl` invocation does. kubeadm makes a handful of CRI calls per run, so the cost (well under a
//! millisecond for runtime and dial) does not matter, and there is no background thread, no connection
//! to go stale between phases, and nothing to shut down. When the caller is itself inside a tokio runtime
//! (where `block_on` would panic) the call runs on a short-lived scoped thread instead.
//!
//! **API version.** The first connection asks `runtime.v1` for its `Version`; if the runtime answers
//! `Unimplemented` it falls back to `runtime.v1alpha2`, as crictl 1.25 does. The answer is remembered for
//! the client's lifetime. containerd 1.6 serves both and gets v1.
//!
//! **Deadlines.** As crictl's default `--timeout` of 2 s: connecting and every call but `PullImage` get
//! [`DEFAULT_TIMEOUT`]; a pull has no deadline (an image may be large), which is also crictl's behaviour.
//! A pull that cannot succeed fails fast because the runtime reports the resolve or dial error.
//!
//! **Proxy variables.** Upstream gives crictl the process environment (`cmd.SetEnv(os.Environ())`, which
//! is what `exec.Cmd` does anyway), so `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` reach crictl. They have
//! no effect there: grpc-go only proxies TCP targets, never a `unix://` one, and a CRI `PullImage` is
//! executed by the runtime daemon, which fetches the image with *its own* environment (for containerd,
//! what its service unit sets). So kubeadm's environment never influenced image pulls, and this client
//! forwards nothing either: pulls go through whatever proxy the runtime is configured with. The client
//! itself dials the socket with a plain `UnixStream` connector, so no proxy setting can ever apply to it.

mod endpoint;
mod wire;

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use kubeadm_effects::cri::{
    ApiVersion, Container, CriCall, CriError, Image, PodSandbox, REMOVAL_RETRY_PAUSE, Runtime, RuntimeStatus,
    RuntimeVersion, doubling_pause,
};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

/// crictl's default `--timeout`: the connection deadline and the deadline of every call but `PullImage`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// A CRI client for one runtime endpoint.
#[derive(Debug)]
pub struct CriClient {
    endpoint: String,
    path: PathBuf,
    connect_timeout: Duration,
    call_timeout: Duration,
    /// The pause before the second attempt at removing a sandbox, doubling after (see
    /// [`Runtime::removal_retry_pause`]).
    removal_pause: Duration,
    /// The API version negotiated by the first successful `Version` call.
    api: Mutex<Option<ApiVersion>>,
}

impl CriClient {
    /// A client for `endpoint` (`unix:///run/containerd/containerd.sock` or a bare socket path). Nothing
    /// is dialled yet; an endpoint that is not a Unix socket is refused here.
    pub fn new(endpoint: &str) -> Result<Self, CriError> {
        Ok(CriClient {
            endpoint: endpoint.to_string(),
            path: endpoint::socket_path(endpoint)?,
            connect_timeout: DEFAULT_TIMEOUT,
            call_timeout: DEFAULT_TIMEOUT,
            removal_pause: REMOVAL_RETRY_PAUSE,
            api: Mutex::new(None),
        })
    }

    /// Replaces the pause before the second attempt at removing a sandbox (zero: upstream's back-to-back
    /// attempts).
    pub fn with_removal_pause(mut self, first: Duration) -> Self {
        self.removal_pause = first;
        self
    }

    /// Replaces the connection deadline and the per-call deadline (pulls never have one).
    pub fn with_timeouts(mut self, connect: Duration, call: Duration) -> Self {
        self.connect_timeout = connect;
        self.call_timeout = call;
        self
    }

    /// The socket this client dials.
    pub fn socket_path(&self) -> &Path {
        &self.path
    }

    /// The CRI API version in use, once a call has negotiated it.
    pub fn api_version(&self) -> Option<ApiVersion> {
        *self.api.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Dials the socket, negotiates the API version if not known yet, and runs `op` with a deadline.
    fn run<T, F, Fut>(&self, call: CriCall, deadline: Option<Duration>, op: F) -> Result<T, CriError>
    where
        T: Send,
        F: FnOnce(Channel, ApiVersion) -> Fut + Send,
        Fut: Future<Output = Result<T, tonic::Status>> + Send,
    {
        let work = async {
            let channel = self.connect(&call).await?;
            let api = match self.api_version() {
                Some(api) => api,
                None => self.negotiate(channel.clone()).await?.api,
            };
            self.finish(&call, deadline, op(channel, api)).await
        };
        block_on(work).map_err(|e| CriError::Client {
            endpoint: self.endpoint.clone(),
            call: call.clone(),
            message: format!("cannot start the client's I/O runtime: {e}"),
        })?
    }

    async fn connect(&self, call: &CriCall) -> Result<Channel, CriError> {
        let path = self.path.clone();
        let connector = tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move { UnixStream::connect(path).await.map(TokioIo::new) }
        });
        // The URI is only the HTTP/2 `:authority`; the connector ignores it and dials the socket.
        let target = Endpoint::from_static("http://localhost");
        let dial = target.connect_with_connector(connector);
        let not_running = |source: io::Error| CriError::NotRunning {
            endpoint: self.endpoint.clone(),
            path: self.path.display().to_string(),
            call: call.clone(),
            source,
        };
        match tokio::time::timeout(self.connect_timeout, dial).await {
            Ok(Ok(channel)) => Ok(channel),
            Ok(Err(e)) => match find_io_error(&e) {
                Some(io_error) => Err(not_running(io_error)),
                None => Err(CriError::Client {
                    endpoint: self.endpoint.clone(),
                    call: call.clone(),
                    message: error_chain(&e),
                }),
            },
            Err(_) => Err(not_running(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {:?}", self.connect_timeout),
            ))),
        }
    }

    /// `Version` on v1, then on v1alpha2 if v1 is unimplemented; remembers the version that answered.
    async fn negotiate(&self, channel: Channel) -> Result<RuntimeVersion, CriError> {
        let v1 = self.finish(
            &CriCall::Version,
            Some(self.call_timeout),
            wire::v1::version(channel.clone()),
        );
        let version = match v1.await {
            Err(CriError::Rpc { code, .. }) if code == "Unimplemented" => {
                let alpha = wire::v1alpha2::version(channel);
                match self
                    .finish(&CriCall::Version, Some(self.call_timeout), alpha)
                    .await
                {
                    Err(CriError::Rpc { code, message, .. }) if code == "Unimplemented" => {
                        return Err(CriError::NotCri {
                            endpoint: self.endpoint.clone(),
                            message,
                        });
                    }
                    other => other?,
                }
            }
            other => other?,
        };
        *self.api.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(version.api);
        Ok(version)
    }

    /// Awaits one RPC under an optional deadline and names its failure.
    async fn finish<T>(
        &self,
        call: &CriCall,
        deadline: Option<Duration>,
        rpc: impl Future<Output = Result<T, tonic::Status>>,
    ) -> Result<T, CriError> {
        let outcome = match deadline {
            Some(limit) => tokio::time::timeout(limit, rpc)
                .await
                .map_err(|_| CriError::Timeout {
                    endpoint: self.endpoint.clone(),
                    call: call.clone(),
                    timeout: limit,
                })?,
            None => rpc.await,
        };
        outcome.map_err(|status| self.status_error(call, status))
    }

    fn status_error(&self, call: &CriCall, status: tonic::Status) -> CriError {
        // A connection lost or refused mid-way shows up as `Unavailable` with the dial error inside.
        if status.code() == tonic::Code::Unavailable
            && let Some(source) = find_io_error(&status)
        {
            return CriError::NotRunning {
                endpoint: self.endpoint.clone(),
                path: self.path.display().to_string(),
                call: call.clone(),
                source,
            };
        }
        CriError::Rpc {
            endpoint: self.endpoint.clone(),
            call: call.clone(),
            code: wire::code_name(status.code()),
            message: status.message().to_string(),
        }
    }
}

/// Runs a future to completion on a fresh current-thread runtime, on a scoped thread when the caller
/// already runs inside a tokio runtime.
fn block_on<F>(future: F) -> io::Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let run = move || -> io::Result<F::Output> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(runtime.block_on(future))
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return run();
    }
    std::thread::scope(|scope| match scope.spawn(run).join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// The first `io::Error` in an error's source chain, copied (the chain only lends it).
fn find_io_error(error: &(dyn std::error::Error + 'static)) -> Option<io::Error> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(io_error) = e.downcast_ref::<io::Error>() {
            return Some(match io_error.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(io_error.kind(), io_error.to_string()),
            });
        }
        current = e.source();
    }
    None
}

/// An error and its sources, joined by `: `.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        text.push_str(": ");
        text.push_str(&e.to_string());
        current = e.source();
    }
    text
}

/// Calls the function of the same name in the module of the negotiated API version.
macro_rules! by_api {
    ($api:expr, $function:ident ( $($arg:expr),* )) => {
        match $api {
            ApiVersion::V1 => wire::v1::$function($($arg),*).await,
            ApiVersion::V1Alpha2 => wire::v1alpha2::$function($($arg),*).await,
        }
    };
}

impl Runtime for CriClient {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn removal_retry_pause(&self, attempt: u32) -> Duration {
        doubling_pause(self.removal_pause, attempt)
    }

    fn version(&self) -> Result<RuntimeVersion, CriError> {
        let call = CriCall::Version;
        let work = async {
            let channel = self.connect(&call).await?;
            self.negotiate(channel).await
        };
        block_on(work).map_err(|e| CriError::Client {
            endpoint: self.endpoint.clone(),
            call: call.clone(),
            message: format!("cannot start the client's I/O runtime: {e}"),
        })?
    }

    fn status(&self) -> Result<RuntimeStatus, CriError> {
        self.run(CriCall::Status, Some(self.call_timeout), |ch, api| async move {
            by_api!(api, status(ch))
        })
    }

    fn list_images(&self) -> Result<Vec<Image>, CriError> {
        self.run(
            CriCall::ListImages,
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, list_images(ch)) },
        )
    }

    fn image_status(&self, image: &str) -> Result<Option<Image>, CriError> {
        let name = image.to_string();
        self.run(
            CriCall::ImageStatus(name.clone()),
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, image_status(ch, name)) },
        )
    }

    fn pull_image_once(&self, image: &str) -> Result<String, CriError> {
        let name = image.to_string();
        self.run(CriCall::PullImage(name.clone()), None, |ch, api| async move {
            by_api!(api, pull_image(ch, name))
        })
    }

    fn list_pod_sandboxes(&self) -> Result<Vec<PodSandbox>, CriError> {
        self.run(
            CriCall::ListPodSandbox,
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, list_pod_sandboxes(ch)) },
        )
    }

    fn list_containers(&self) -> Result<Vec<Container>, CriError> {
        self.run(
            CriCall::ListContainers,
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, list_containers(ch)) },
        )
    }

    fn container_status(&self, id: &str) -> Result<Option<Container>, CriError> {
        let id = id.to_string();
        self.run(
            CriCall::ContainerStatus(id.clone()),
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, container_status(ch, id)) },
        )
    }

    fn stop_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        let id = id.to_string();
        self.run(
            CriCall::StopPodSandbox(id.clone()),
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, stop_pod_sandbox(ch, id)) },
        )
    }

    fn remove_pod_sandbox(&self, id: &str) -> Result<(), CriError> {
        let id = id.to_string();
        self.run(
            CriCall::RemovePodSandbox(id.clone()),
            Some(self.call_timeout),
            |ch, api| async move { by_api!(api, remove_pod_sandbox(ch, id)) },
        )
    }
}
