//! The CRI client against a scripted runtime that serves only `runtime.v1alpha2` (as pre-1.7 runtimes
//! like cri-o 1.19 or containerd 1.4 did): the client must fall back from v1 like crictl 1.25, and the
//! retry policy must reach the server exactly as often as upstream's loops call crictl.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use k8s_cri::v1alpha2 as pb;
use kubeadm_effects::cri::{
    ApiVersion, CriCall, CriError, PULL_IMAGE_RETRY, REMOVE_CONTAINER_RETRY, Runtime, SandboxState,
};
use kubeadm_host::cri::CriClient;
use pb::image_service_server::{ImageService, ImageServiceServer};
use pb::runtime_service_server::{RuntimeService, RuntimeServiceServer};
use tonic::codegen::tokio_stream::wrappers::UnixListenerStream;
use tonic::{Request, Response, Status};

/// Counts of the calls the fake received.
#[derive(Debug, Default)]
struct Calls {
    version: AtomicU32,
    pull: AtomicU32,
    stop: AtomicU32,
    remove: AtomicU32,
}

#[derive(Debug, Clone, Default)]
struct Fake {
    calls: Arc<Calls>,
    /// How many `StopPodSandbox` calls fail before one succeeds.
    stop_failures: u32,
}

/// Methods the fake does not serve. Written in the shape `async_trait` expands to, because the
/// attribute runs before this macro does and would not rewrite `async fn`s it produced.
macro_rules! unimplemented_calls {
    ($($method:ident($request:ident) -> $response:ident;)*) => {
        $(
            fn $method<'life0, 'async_trait>(
                &'life0 self,
                _: Request<pb::$request>,
            ) -> Pin<Box<dyn Future<Output = Result<Response<pb::$response>, Status>> + Send + 'async_trait>>
            where
                'life0: 'async_trait,
                Self: 'async_trait,
            {
                Box::pin(async { Err(Status::unimplemented(stringify!($method))) })
            }
        )*
    };
}

#[tonic::async_trait]
impl RuntimeService for Fake {
    async fn version(&self, _: Request<pb::VersionRequest>) -> Result<Response<pb::VersionResponse>, Status> {
        self.calls.version.fetch_add(1, Ordering::SeqCst);
        Ok(Response::new(pb::VersionResponse {
            version: "0.1.0".into(),
            runtime_name: "fake".into(),
            runtime_version: "0.0.1".into(),
            runtime_api_version: "v1alpha2".into(),
        }))
    }

    async fn status(&self, _: Request<pb::StatusRequest>) -> Result<Response<pb::StatusResponse>, Status> {
        let condition = |kind: &str, status: bool| pb::RuntimeCondition {
            r#type: kind.into(),
            status,
            reason: if status {
                String::new()
            } else {
                "NetworkPluginNotReady".into()
            },
            message: String::new(),
        };
        Ok(Response::new(pb::StatusResponse {
            status: Some(pb::RuntimeStatus {
                conditions: vec![condition("RuntimeReady", true), condition("NetworkReady", false)],
            }),
            info: HashMap::from([("config".to_string(), "{}".to_string())]),
        }))
    }

    async fn list_pod_sandbox(
        &self,
        _: Request<pb::ListPodSandboxRequest>,
    ) -> Result<Response<pb::ListPodSandboxResponse>, Status> {
        let sandbox = |id: &str, namespace: &str, state: pb::PodSandboxState| pb::PodSandbox {
            id: id.into(),
            metadata: Some(pb::PodSandboxMetadata {
                name: format!("pod-{id}"),
                uid: format!("uid-{id}"),
                namespace: namespace.into(),
                attempt: 1,
            }),
            state: state as i32,
            created_at: 1_700_000_000_000_000_000,
            labels: HashMap::from([("io.kubernetes.pod.namespace".to_string(), namespace.to_string())]),
            annotations: HashMap::new(),
            runtime_handler: String::new(),
        };
        Ok(Response::new(pb::ListPodSandboxResponse {
            items: vec![
                sandbox("aaa", "kube-system", pb::PodSandboxState::SandboxReady),
                // Not a Kubernetes namespace label anyone filters on: upstream lists it too.
                sandbox("bbb", "", pb::PodSandboxState::SandboxNotready),
            ],
        }))
    }

    async fn stop_pod_sandbox(
        &self,
        _: Request<pb::StopPodSandboxRequest>,
    ) -> Result<Response<pb::StopPodSandboxResponse>, Status> {
        let n = self.calls.stop.fetch_add(1, Ordering::SeqCst) + 1;
        if n <= self.stop_failures {
            return Err(Status::deadline_exceeded(format!("stop attempt {n} timed out")));
        }
        Ok(Response::new(pb::StopPodSandboxResponse {}))
    }

    async fn remove_pod_sandbox(
        &self,
        _: Request<pb::RemovePodSandboxRequest>,
    ) -> Result<Response<pb::RemovePodSandboxResponse>, Status> {
        self.calls.remove.fetch_add(1, Ordering::SeqCst);
        Ok(Response::new(pb::RemovePodSandboxResponse {}))
    }

    unimplemented_calls! {
        run_pod_sandbox(RunPodSandboxRequest) -> RunPodSandboxResponse;
        pod_sandbox_status(PodSandboxStatusRequest) -> PodSandboxStatusResponse;
        create_container(CreateContainerRequest) -> CreateContainerResponse;
        start_container(StartContainerRequest) -> StartContainerResponse;
        stop_container(StopContainerRequest) -> StopContainerResponse;
        remove_container(RemoveContainerRequest) -> RemoveContainerResponse;
        list_containers(ListContainersRequest) -> ListContainersResponse;
        container_status(ContainerStatusRequest) -> ContainerStatusResponse;
        update_container_resources(UpdateContainerResourcesRequest) -> UpdateContainerResourcesResponse;
        reopen_container_log(ReopenContainerLogRequest) -> ReopenContainerLogResponse;
        exec_sync(ExecSyncRequest) -> ExecSyncResponse;
        exec(ExecRequest) -> ExecResponse;
        attach(AttachRequest) -> AttachResponse;
        port_forward(PortForwardRequest) -> PortForwardResponse;
        container_stats(ContainerStatsRequest) -> ContainerStatsResponse;
        list_container_stats(ListContainerStatsRequest) -> ListContainerStatsResponse;
        pod_sandbox_stats(PodSandboxStatsRequest) -> PodSandboxStatsResponse;
        list_pod_sandbox_stats(ListPodSandboxStatsRequest) -> ListPodSandboxStatsResponse;
        update_runtime_config(UpdateRuntimeConfigRequest) -> UpdateRuntimeConfigResponse;
    }
}

#[tonic::async_trait]
impl ImageService for Fake {
    async fn image_status(
        &self,
        request: Request<pb::ImageStatusRequest>,
    ) -> Result<Response<pb::ImageStatusResponse>, Status> {
        let name = request.into_inner().image.map(|s| s.image).unwrap_or_default();
        let image = (name == "registry.k8s.io/pause:3.8").then(|| pb::Image {
            id: "sha256:0123".into(),
            repo_tags: vec![name],
            ..Default::default()
        });
        Ok(Response::new(pb::ImageStatusResponse {
            image,
            info: HashMap::new(),
        }))
    }

    async fn pull_image(
        &self,
        request: Request<pb::PullImageRequest>,
    ) -> Result<Response<pb::PullImageResponse>, Status> {
        let n = self.calls.pull.fetch_add(1, Ordering::SeqCst) + 1;
        let name = request.into_inner().image.map(|s| s.image).unwrap_or_default();
        Err(Status::unknown(format!(
            "attempt {n}: failed to resolve reference {name:?}"
        )))
    }

    unimplemented_calls! {
        list_images(ListImagesRequest) -> ListImagesResponse;
        remove_image(RemoveImageRequest) -> RemoveImageResponse;
        image_fs_info(ImageFsInfoRequest) -> ImageFsInfoResponse;
    }
}

/// Serves `fake` on a socket in a temp dir from a background runtime; the server lives as long as the
/// returned runtime.
fn serve(fake: Fake) -> (tokio::runtime::Runtime, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fake.sock");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let listener = runtime
        .block_on(async { tokio::net::UnixListener::bind(&path) })
        .expect("bind");
    runtime.spawn(
        tonic::transport::Server::builder()
            .add_service(RuntimeServiceServer::new(fake.clone()))
            .add_service(ImageServiceServer::new(fake))
            .serve_with_incoming(UnixListenerStream::new(listener)),
    );
    (runtime, dir, format!("unix://{}", path.display()))
}

#[test]
fn falls_back_to_v1alpha2_and_reads_its_answers() {
    let fake = Fake::default();
    let calls = Arc::clone(&fake.calls);
    let (_server, _dir, endpoint) = serve(fake);
    let client = CriClient::new(&endpoint).expect("valid");

    let version = client.version().expect("Version");
    assert_eq!(version.api, ApiVersion::V1Alpha2);
    assert_eq!(version.runtime_api_version, "v1alpha2");
    assert_eq!(client.api_version(), Some(ApiVersion::V1Alpha2));

    let status = client.status().expect("Status");
    assert!(status.runtime_ready() && !status.network_ready(), "{status:?}");
    assert_eq!(status.info.get("config").map(String::as_str), Some("{}"));
    // The negotiated version is remembered: Status did not ask for Version again.
    assert_eq!(calls.version.load(Ordering::SeqCst), 1);

    let sandboxes = client.list_pod_sandboxes().expect("ListPodSandbox");
    let summary: Vec<_> = sandboxes
        .iter()
        .map(|s| (s.id.as_str(), s.namespace.as_str(), s.state))
        .collect();
    assert_eq!(
        summary,
        [
            ("aaa", "kube-system", SandboxState::Ready),
            ("bbb", "", SandboxState::NotReady)
        ]
    );
    assert_eq!(sandboxes[0].name, "pod-aaa");
    assert_eq!(
        sandboxes[0]
            .labels
            .get("io.kubernetes.pod.namespace")
            .map(String::as_str),
        Some("kube-system")
    );

    assert!(
        client
            .image_exists("registry.k8s.io/pause:3.8")
            .expect("ImageStatus")
    );
    assert!(
        !client
            .image_exists("registry.k8s.io/pause:3.9")
            .expect("ImageStatus")
    );

    // Unimplemented on both API versions: the runtime's message comes through with Go's code name.
    let err = client.list_images().expect_err("unimplemented in the fake");
    assert!(
        matches!(&err, CriError::Rpc { call: CriCall::ListImages, code, .. } if code == "Unimplemented"),
        "{err:?}"
    );
}

#[test]
fn pulls_are_tried_five_times_then_the_last_error_is_returned() {
    let fake = Fake::default();
    let calls = Arc::clone(&fake.calls);
    let (_server, _dir, endpoint) = serve(fake);
    let client = CriClient::new(&endpoint).expect("valid");

    let err = client
        .pull_image("example.invalid/nothing:1")
        .expect_err("fake never pulls");
    assert_eq!(calls.pull.load(Ordering::SeqCst), PULL_IMAGE_RETRY);
    assert_eq!(PULL_IMAGE_RETRY, 5, "upstream constants.PullImageRetry");
    assert_eq!(
        err.to_string(),
        format!(
            "PullImage \"example.invalid/nothing:1\" on {endpoint}: rpc error: code = Unknown desc = \
             attempt 5: failed to resolve reference \"example.invalid/nothing:1\""
        )
    );
}

#[test]
fn sandbox_removal_retries_the_stop_then_removes() {
    let fake = Fake {
        stop_failures: 3,
        ..Fake::default()
    };
    let calls = Arc::clone(&fake.calls);
    let (_server, _dir, endpoint) = serve(fake);
    let client = CriClient::new(&endpoint).expect("valid");

    client
        .remove_pod_sandboxes(&["aaa".to_string()])
        .expect("the fourth attempt stops it");
    assert_eq!(calls.stop.load(Ordering::SeqCst), 4);
    assert_eq!(calls.remove.load(Ordering::SeqCst), 1);
}

#[test]
fn sandbox_removal_gives_up_after_five_attempts() {
    let fake = Fake {
        stop_failures: 99,
        ..Fake::default()
    };
    let calls = Arc::clone(&fake.calls);
    let (_server, _dir, endpoint) = serve(fake);
    // The real client waits between attempts (a lower bound only: sleeps never end early).
    let client = CriClient::new(&endpoint)
        .expect("valid")
        .with_removal_pause(Duration::from_millis(10));

    let started = Instant::now();
    let err = client
        .remove_pod_sandboxes(&["aaa".to_string(), "bbb".to_string()])
        .expect_err("never stops");
    assert!(
        started.elapsed() >= Duration::from_millis(2 * (10 + 20 + 40 + 80)),
        "four doubling pauses per sandbox"
    );
    assert_eq!(calls.stop.load(Ordering::SeqCst), 2 * REMOVE_CONTAINER_RETRY);
    assert_eq!(calls.remove.load(Ordering::SeqCst), 0);
    let text = err.to_string();
    assert!(
        text.starts_with("[failed to stop running pod aaa: StopPodSandbox \"aaa\" on unix://"),
        "{text}"
    );
    assert!(
        text.contains(
            "code = DeadlineExceeded desc = stop attempt 5 timed out, failed to stop running pod bbb"
        ),
        "{text}"
    );
    assert!(text.ends_with("desc = stop attempt 10 timed out]"), "{text}");
}
