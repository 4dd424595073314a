//! The CRI calls kubeadm makes, once per API version (`runtime.v1` and `runtime.v1alpha2` have the same
//! shape for these messages, so one macro writes both), and the translation of their answers into the
//! plain types of `kubeadm_effects::cri`.

use std::collections::{BTreeMap, HashMap};

use kubeadm_effects::cri::SandboxState;

fn sorted(map: HashMap<String, String>) -> BTreeMap<String, String> {
    map.into_iter().collect()
}

fn sandbox_state(ready: bool) -> SandboxState {
    if ready {
        SandboxState::Ready
    } else {
        SandboxState::NotReady
    }
}

/// Writes a module of async CRI calls over a `tonic` channel for one generated API version.
macro_rules! cri_calls {
    ($module:ident, $pb:path, $api:expr) => {
        pub(crate) mod $module {
            use pb::image_service_client::ImageServiceClient;
            use pb::runtime_service_client::RuntimeServiceClient;
            use tonic::Status;
            use tonic::transport::Channel;
            use $pb as pb;

            use kubeadm_effects::cri::{
                Container, Image, PodSandbox, RuntimeCondition, RuntimeStatus, RuntimeVersion,
            };

            use super::{sandbox_state, sorted};

            fn image(i: pb::Image) -> Image {
                Image {
                    id: i.id,
                    repo_tags: i.repo_tags,
                    repo_digests: i.repo_digests,
                    size: i.size,
                    pinned: i.pinned,
                }
            }

            fn spec(image: &str) -> Option<pb::ImageSpec> {
                Some(pb::ImageSpec {
                    image: image.to_string(),
                    ..Default::default()
                })
            }

            pub(crate) async fn version(channel: Channel) -> Result<RuntimeVersion, Status> {
                let v = RuntimeServiceClient::new(channel)
                    .version(pb::VersionRequest {
                        version: String::new(),
                    })
                    .await?
                    .into_inner();
                Ok(RuntimeVersion {
                    version: v.version,
                    runtime_name: v.runtime_name,
                    runtime_version: v.runtime_version,
                    runtime_api_version: v.runtime_api_version,
                    api: $api,
                })
            }

            pub(crate) async fn status(channel: Channel) -> Result<RuntimeStatus, Status> {
                let s = RuntimeServiceClient::new(channel)
                    .status(pb::StatusRequest { verbose: true })
                    .await?
                    .into_inner();
                let conditions = s
                    .status
                    .map(|st| st.conditions)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| RuntimeCondition {
                        kind: c.r#type,
                        status: c.status,
                        reason: c.reason,
                        message: c.message,
                    })
                    .collect();
                Ok(RuntimeStatus {
                    conditions,
                    info: sorted(s.info),
                })
            }

            pub(crate) async fn list_images(channel: Channel) -> Result<Vec<Image>, Status> {
                let r = ImageServiceClient::new(channel)
                    .list_images(pb::ListImagesRequest { filter: None })
                    .await?
                    .into_inner();
                Ok(r.images.into_iter().map(image).collect())
            }

            pub(crate) async fn image_status(
                channel: Channel,
                name: String,
            ) -> Result<Option<Image>, Status> {
                let r = ImageServiceClient::new(channel)
                    .image_status(pb::ImageStatusRequest {
                        image: spec(&name),
                        verbose: false,
                    })
                    .await?
                    .into_inner();
                Ok(r.image.map(image))
            }

            pub(crate) async fn pull_image(channel: Channel, name: String) -> Result<String, Status> {
                let r = ImageServiceClient::new(channel)
                    .pull_image(pb::PullImageRequest {
                        image: spec(&name),
                        auth: None,
                        sandbox_config: None,
                    })
                    .await?
                    .into_inner();
                Ok(r.image_ref)
            }

            pub(crate) async fn list_pod_sandboxes(channel: Channel) -> Result<Vec<PodSandbox>, Status> {
                let r = RuntimeServiceClient::new(channel)
                    .list_pod_sandbox(pb::ListPodSandboxRequest { filter: None })
                    .await?
                    .into_inner();
                let ready = pb::PodSandboxState::SandboxReady as i32;
                Ok(r.items
                    .into_iter()
                    .map(|p| {
                        let meta = p.metadata.unwrap_or_default();
                        PodSandbox {
                            id: p.id,
                            name: meta.name,
                            namespace: meta.namespace,
                            uid: meta.uid,
                            attempt: meta.attempt,
                            state: sandbox_state(p.state == ready),
                            created_at: p.created_at,
                            labels: sorted(p.labels),
                            annotations: sorted(p.annotations),
                            runtime_handler: p.runtime_handler,
                        }
                    })
                    .collect())
            }

            fn container_state(state: i32) -> String {
                pb::ContainerState::try_from(state)
                    .map(|s| s.as_str_name().to_string())
                    .unwrap_or_else(|_| "CONTAINER_UNKNOWN".to_string())
            }

            fn container(
                id: String,
                meta: Option<pb::ContainerMetadata>,
                state: i32,
                created_at: i64,
                labels: std::collections::HashMap<String, String>,
            ) -> Container {
                let meta = meta.unwrap_or_default();
                Container {
                    id,
                    name: meta.name,
                    attempt: meta.attempt,
                    state: container_state(state),
                    created_at,
                    labels: sorted(labels),
                    ..Container::default()
                }
            }

            pub(crate) async fn list_containers(channel: Channel) -> Result<Vec<Container>, Status> {
                let r = RuntimeServiceClient::new(channel)
                    .list_containers(pb::ListContainersRequest { filter: None })
                    .await?
                    .into_inner();
                Ok(r.containers
                    .into_iter()
                    .map(|c| container(c.id, c.metadata, c.state, c.created_at, c.labels))
                    .collect())
            }

            pub(crate) async fn container_status(
                channel: Channel,
                id: String,
            ) -> Result<Option<Container>, Status> {
                let r = RuntimeServiceClient::new(channel)
                    .container_status(pb::ContainerStatusRequest {
                        container_id: id,
                        verbose: false,
                    })
                    .await?
                    .into_inner();
                Ok(r.status.map(|c| Container {
                    exit_code: c.exit_code,
                    reason: c.reason,
                    message: c.message,
                    log_path: c.log_path,
                    ..container(c.id, c.metadata, c.state, c.created_at, c.labels)
                }))
            }

            pub(crate) async fn stop_pod_sandbox(channel: Channel, id: String) -> Result<(), Status> {
                RuntimeServiceClient::new(channel)
                    .stop_pod_sandbox(pb::StopPodSandboxRequest { pod_sandbox_id: id })
                    .await?;
                Ok(())
            }

            pub(crate) async fn remove_pod_sandbox(channel: Channel, id: String) -> Result<(), Status> {
                RuntimeServiceClient::new(channel)
                    .remove_pod_sandbox(pb::RemovePodSandboxRequest { pod_sandbox_id: id })
                    .await?;
                Ok(())
            }
        }
    };
}

cri_calls!(v1, k8s_cri::v1, kubeadm_effects::cri::ApiVersion::V1);
cri_calls!(
    v1alpha2,
    k8s_cri::v1alpha2,
    kubeadm_effects::cri::ApiVersion::V1Alpha2
);

/// Go's name of a gRPC code (`codes.Code.String()`), which users know from crictl's messages.
pub(crate) fn code_name(code: tonic::Code) -> String {
    match code {
        tonic::Code::Ok => "OK".to_string(),
        tonic::Code::Cancelled => "Canceled".to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_go_names() {
        assert_eq!(code_name(tonic::Code::Cancelled), "Canceled");
        assert_eq!(code_name(tonic::Code::Ok), "OK");
        assert_eq!(code_name(tonic::Code::NotFound), "NotFound");
        assert_eq!(code_name(tonic::Code::DeadlineExceeded), "DeadlineExceeded");
        assert_eq!(code_name(tonic::Code::Unimplemented), "Unimplemented");
    }
}
