//! The versions running in a cluster, as `kubeadm upgrade plan` reads them (upstream's
//! `KubeVersionGetter`, plus the etcd version from its static Pod manifest and the CoreDNS version
//! from its Deployment).

use std::collections::BTreeMap;
use std::path::Path;

use kubeadm_api::version::{KUBEADM_VERSION, VersionError, offline, resolve};
use kubeadm_core::upgrade::plan::VersionGetter;
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::fs::Fs;
use serde_json::Value;

/// Why [`ClusterVersions`] could not read a version, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum VersionsError {
    /// The API server's `/version` could not be read.
    #[error("Couldn't fetch cluster version from the API Server: {0}")]
    ServerVersion(#[source] ClusterError),
    /// A release label could not be resolved.
    #[error("Couldn't fetch latest {description} from the internet: {source}")]
    Label {
        /// What the label names.
        description: String,
        /// Why.
        source: VersionError,
    },
    /// The Nodes could not be listed (upstream drops the cause).
    #[error("couldn't list all nodes in cluster")]
    Nodes(#[source] ClusterError),
    /// The etcd manifest could not be read.
    #[error(
        "failed to read manifest for {path:?}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    ReadManifest {
        /// The manifest.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The etcd manifest has no container image.
    #[error("failed to unmarshal manifest for {path:?}")]
    UnmarshalManifest {
        /// The manifest.
        path: String,
    },
    /// The DNS addon's version could not be read.
    #[error(transparent)]
    Dns(#[from] DnsVersionError),
}

/// Why the DNS addon's version could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DnsVersionError {
    /// The Deployments could not be listed.
    #[error("couldn't retrieve DNS addon deployments: {0}")]
    List(#[source] ClusterError),
    /// More than one DNS Deployment.
    #[error("multiple DNS addon deployments found: {0} deployments")]
    Multiple(usize),
}

/// The versions of a live cluster (upstream's `KubeVersionGetter` plus the etcd and DNS lookups).
pub struct ClusterVersions<'a> {
    /// The cluster.
    pub cluster: &'a dyn Cluster,
    /// Where the etcd manifest is read.
    pub fs: &'a dyn Fs,
    /// The static Pod manifests' folder.
    pub manifests_dir: &'a str,
    /// The API server's `/version` (a non-resource GET, which [`Cluster`] does not have).
    pub server_version: &'a dyn Fn() -> Result<Value, ClusterError>,
}

impl std::fmt::Debug for ClusterVersions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterVersions")
            .field("manifests_dir", &self.manifests_dir)
            .finish_non_exhaustive()
    }
}

impl VersionGetter for ClusterVersions<'_> {
    type Error = VersionsError;

    fn cluster_version(&mut self) -> Result<String, VersionsError> {
        let info = (self.server_version)().map_err(VersionsError::ServerVersion)?;
        Ok(info
            .get("gitVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    fn kubeadm_version(&mut self) -> String {
        KUBEADM_VERSION.to_string()
    }

    fn version_from_label(
        &mut self,
        label: &str,
        description: &str,
    ) -> Result<(String, Vec<String>), VersionsError> {
        let resolved = resolve(label, &offline).map_err(|source| VersionsError::Label {
            description: description.to_string(),
            source,
        })?;
        Ok((resolved.version, resolved.warnings))
    }

    fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, VersionsError> {
        let nodes = self
            .cluster
            .list(&Resource::nodes(), "", &ListOptions::default())
            .map_err(VersionsError::Nodes)?;
        let mut versions = BTreeMap::new();
        for node in &nodes {
            let v = node
                .pointer("/status/nodeInfo/kubeletVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            *versions.entry(v.to_string()).or_insert(0u16) += 1;
        }
        Ok(versions)
    }

    fn etcd_version(&mut self) -> Result<String, VersionsError> {
        let path = format!("{}/etcd.yaml", self.manifests_dir);
        let text = self
            .fs
            .read(Path::new(&path))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|source| VersionsError::ReadManifest {
                path: path.clone(),
                source,
            })?;
        let image = kubeadm_yaml::parse_documents(&text)
            .ok()
            .and_then(|docs| docs.into_iter().next())
            .and_then(|d| {
                d.value
                    .pointer("/spec/containers/0/image")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or(VersionsError::UnmarshalManifest { path })?;
        // Registries cannot hold `+` in tags; Kubernetes writes build metadata with `_` instead.
        Ok(image_tag(&image).replacen('_', "+", 1))
    }

    fn dns_version(&mut self) -> Result<String, VersionsError> {
        Ok(dns_version(self.cluster)?)
    }
}

/// The CoreDNS version deployed: the image tag of the one `k8s-app=kube-dns` Deployment, empty
/// when there is none.
pub fn dns_version(cluster: &dyn Cluster) -> Result<String, DnsVersionError> {
    let deployments = cluster
        .list(
            &Resource::new("apps", "v1", "deployments"),
            "kube-system",
            &ListOptions {
                label_selector: "k8s-app=kube-dns".into(),
                ..ListOptions::default()
            },
        )
        .map_err(DnsVersionError::List)?;
    match deployments.as_slice() {
        [] => Ok(String::new()),
        [d] => {
            let image = d
                .pointer("/spec/template/spec/containers/0/image")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Ok(image.rsplit(':').next().unwrap_or_default().to_string())
        }
        many => Err(DnsVersionError::Multiple(many.len())),
    }
}

/// The tag of an image reference (upstream's `image.TagFromImage`): what follows the last `:`
/// after the last `/`, without a digest; empty when there is none.
pub(crate) fn image_tag(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let last = image.rsplit('/').next().unwrap_or(image);
    last.rsplit_once(':').map_or("", |(_, tag)| tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_as_upstream_reads_them() {
        assert_eq!(image_tag("registry.k8s.io/etcd:3.5.9-0"), "3.5.9-0");
        assert_eq!(image_tag("localhost:5000/etcd:3.5.9-0"), "3.5.9-0");
        assert_eq!(image_tag("localhost:5000/etcd"), "");
        assert_eq!(image_tag("etcd:3.5.9-0@sha256:abc"), "3.5.9-0");
    }
}
