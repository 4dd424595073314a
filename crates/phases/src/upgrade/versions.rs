//! The versions running in a cluster, as `kubeadm upgrade plan` reads them (upstream's
//! `KubeVersionGetter`, plus the etcd version from its static Pod manifest and the CoreDNS version
//! from its Deployment).

use std::collections::BTreeMap;
use std::path::Path;

use kubeadm_api::version::{KUBEADM_VERSION, offline, resolve};
use kubeadm_core::upgrade::plan::VersionGetter;
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::fs::Fs;
use serde_json::Value;

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
    fn cluster_version(&mut self) -> Result<String, String> {
        let info = (self.server_version)()
            .map_err(|e| format!("Couldn't fetch cluster version from the API Server: {e}"))?;
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
    ) -> Result<(String, Vec<String>), String> {
        let resolved = resolve(label, &offline)
            .map_err(|e| format!("Couldn't fetch latest {description} from the internet: {e}"))?;
        Ok((resolved.version, resolved.warnings))
    }

    fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, String> {
        let nodes = self
            .cluster
            .list(&Resource::nodes(), "", &ListOptions::default())
            .map_err(|_| "couldn't list all nodes in cluster".to_string())?;
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

    fn etcd_version(&mut self) -> Result<String, String> {
        let path = format!("{}/etcd.yaml", self.manifests_dir);
        let text = self
            .fs
            .read(Path::new(&path))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| {
                format!(
                    "failed to read manifest for {path:?}: open {path}: {}",
                    kubeadm_api::gofmt::io_error(&e)
                )
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
            .ok_or_else(|| format!("failed to unmarshal manifest for {path:?}"))?;
        // Registries cannot hold `+` in tags; Kubernetes writes build metadata with `_` instead.
        Ok(image_tag(&image).replacen('_', "+", 1))
    }

    fn dns_version(&mut self) -> Result<String, String> {
        dns_version(self.cluster)
    }
}

/// The CoreDNS version deployed: the image tag of the one `k8s-app=kube-dns` Deployment, empty
/// when there is none.
pub fn dns_version(cluster: &dyn Cluster) -> Result<String, String> {
    let deployments = cluster
        .list(
            &Resource::new("apps", "v1", "deployments"),
            "kube-system",
            &ListOptions {
                label_selector: "k8s-app=kube-dns".into(),
                ..ListOptions::default()
            },
        )
        .map_err(|e| format!("couldn't retrieve DNS addon deployments: {e}"))?;
    match deployments.as_slice() {
        [] => Ok(String::new()),
        [d] => {
            let image = d
                .pointer("/spec/template/spec/containers/0/image")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Ok(image.rsplit(':').next().unwrap_or_default().to_string())
        }
        many => Err(format!(
            "multiple DNS addon deployments found: {} deployments",
            many.len()
        )),
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
