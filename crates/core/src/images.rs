//! The container images kubeadm uses, and their names.
//!
//! Mirrors upstream's rules: control-plane images and kube-proxy come from the control-plane image
//! repository (the CI repository for CI builds when the user kept the default repository), tagged with
//! the Kubernetes version (`+` and other characters Docker tags cannot hold become `_`); pause, etcd and
//! CoreDNS come from the user's repository, etcd tagged by the Kubernetes minor version, CoreDNS under
//! `coredns/coredns` when the default repository is used.

/// The default image repository.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "registry.k8s.io";
/// The repository CI builds are published to.
pub const DEFAULT_CI_IMAGE_REPOSITORY: &str = "gcr.io/k8s-staging-ci-images";
/// The pause image version kubeadm v1.25 uses.
pub const PAUSE_VERSION: &str = "3.8";
/// The CoreDNS version kubeadm v1.25 deploys.
pub const COREDNS_VERSION: &str = "v1.9.3";
/// The etcd version used when the Kubernetes version cannot be parsed.
pub const DEFAULT_ETCD_VERSION: &str = "3.5.9-0";

/// The etcd version kubeadm v1.25.16 pairs with each Kubernetes minor version.
const SUPPORTED_ETCD_VERSIONS: &[(u64, &str)] = &[
    (13, "3.2.24"),
    (14, "3.3.10"),
    (15, "3.3.10"),
    (16, "3.3.17-0"),
    (17, "3.4.3-0"),
    (18, "3.4.3-0"),
    (19, "3.4.13-0"),
    (20, "3.4.13-0"),
    (21, "3.4.13-0"),
    (22, "3.5.6-0"),
    (23, "3.5.6-0"),
    (24, "3.5.6-0"),
    (25, "3.5.9-0"),
];

/// What image names depend on, taken from a (defaulted, normalised) ClusterConfiguration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSettings {
    /// `imageRepository`.
    pub image_repository: String,
    /// The repository for control-plane images of CI builds, when one applies (upstream's internal
    /// `CIImageRepository`).
    pub ci_image_repository: Option<String>,
    /// The resolved Kubernetes version, e.g. `v1.25.16`.
    pub kubernetes_version: String,
    /// `etcd.local`: `None` when etcd is external.
    pub local_etcd: Option<ImageOverride>,
    /// `dns.imageRepository` / `dns.imageTag`.
    pub dns: ImageOverride,
}

/// A component's optional image repository and tag overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageOverride {
    /// Overrides the image repository when not empty.
    pub image_repository: String,
    /// Overrides the tag when not empty.
    pub image_tag: String,
}

/// A warning about an image choice, to be logged (upstream logs these with klog).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageWarning(pub String);

impl std::fmt::Display for ImageWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ImageSettings {
    fn control_plane_repository(&self) -> &str {
        self.ci_image_repository
            .as_deref()
            .unwrap_or(&self.image_repository)
    }

    /// The image of a control-plane component or kube-proxy (`kube-apiserver`, …, `kube-proxy`).
    pub fn kubernetes_image(&self, component: &str) -> String {
        format!(
            "{}/{}:{}",
            self.control_plane_repository(),
            component,
            version_to_tag(&self.kubernetes_version)
        )
    }

    /// The pause image.
    pub fn pause_image(&self) -> String {
        format!("{}/pause:{PAUSE_VERSION}", self.image_repository)
    }

    /// The CoreDNS image.
    pub fn dns_image(&self) -> String {
        let mut repo = if self.dns.image_repository.is_empty() {
            self.image_repository.clone()
        } else {
            self.dns.image_repository.clone()
        };
        // The official image moved from "<registry>/coredns" to "<registry>/coredns/coredns".
        if repo == DEFAULT_IMAGE_REPOSITORY {
            repo.push_str("/coredns");
        }
        let tag = if self.dns.image_tag.is_empty() {
            COREDNS_VERSION
        } else {
            &self.dns.image_tag
        };
        format!("{repo}/coredns:{tag}")
    }

    /// The etcd image, and a warning when the Kubernetes version has no etcd version of its own.
    /// `None` when etcd is external.
    pub fn etcd_image(&self) -> Option<(String, Option<ImageWarning>)> {
        let local = self.local_etcd.as_ref()?;
        let repo = if local.image_repository.is_empty() {
            &self.image_repository
        } else {
            &local.image_repository
        };
        let (mut tag, warning) = match etcd_version_for(&self.kubernetes_version) {
            Some((v, w)) => (v.to_string(), w),
            None => (DEFAULT_ETCD_VERSION.to_string(), None),
        };
        if !local.image_tag.is_empty() {
            tag = local.image_tag.clone();
        }
        Some((format!("{repo}/etcd:{tag}"), warning))
    }

    /// Every image a control-plane node needs, in upstream's order, with any warnings.
    pub fn control_plane_images(&self) -> (Vec<String>, Vec<ImageWarning>) {
        let mut images: Vec<String> = [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-proxy",
        ]
        .iter()
        .map(|c| self.kubernetes_image(c))
        .collect();
        images.push(self.pause_image());
        let mut warnings = Vec::new();
        if let Some((etcd, warning)) = self.etcd_image() {
            images.push(etcd);
            warnings.extend(warning);
        }
        images.push(self.dns_image());
        (images, warnings)
    }
}

/// Turns a Kubernetes version into an image tag: characters a tag cannot hold become `_`.
pub fn version_to_tag(version: &str) -> String {
    version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The etcd version paired with a Kubernetes version, falling back to the nearest known minor with a
/// warning. `None` when the version is not semantic.
pub fn etcd_version_for(kubernetes_version: &str) -> Option<(&'static str, Option<ImageWarning>)> {
    let minor = semver_minor(kubernetes_version)?;
    if let Some((_, v)) = SUPPORTED_ETCD_VERSIONS.iter().find(|(m, _)| *m == minor) {
        return Some((v, None));
    }
    let (min, min_v) = SUPPORTED_ETCD_VERSIONS.first().copied()?;
    let (_, max_v) = SUPPORTED_ETCD_VERSIONS.last().copied()?;
    let nearest = if minor < min { min_v } else { max_v };
    let warning = ImageWarning(format!(
        "could not find officially supported version of etcd for Kubernetes {kubernetes_version}, \
         falling back to the nearest etcd version ({nearest})"
    ));
    Some((nearest, Some(warning)))
}

/// The minor number of a semantic version such as `v1.25.16` or `1.26.0-alpha.1+abc`, as upstream's
/// `version.ParseSemantic` accepts it (a leading `v` allowed, exactly three numeric components).
fn semver_minor(v: &str) -> Option<u64> {
    let v = v.strip_prefix('v').unwrap_or(v);
    let core = v.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let numbers: Vec<u64> = parts
        .by_ref()
        .take(3)
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if numbers.len() != 3 || parts.next().is_some() {
        return None;
    }
    Some(numbers[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(version: &str) -> ImageSettings {
        ImageSettings {
            image_repository: DEFAULT_IMAGE_REPOSITORY.into(),
            ci_image_repository: None,
            kubernetes_version: version.into(),
            local_etcd: Some(ImageOverride::default()),
            dns: ImageOverride::default(),
        }
    }

    #[test]
    fn tags_replace_characters_docker_rejects() {
        assert_eq!(version_to_tag("v1.26.0-alpha.1.5+abc"), "v1.26.0-alpha.1.5_abc");
    }

    #[test]
    fn etcd_falls_back_to_nearest_with_warning() {
        assert_eq!(etcd_version_for("v1.24.3").map(|x| x.0), Some("3.5.6-0"));
        let (v, w) = etcd_version_for("v1.27.0").expect("semantic");
        assert_eq!(v, "3.5.9-0");
        assert!(
            w.expect("warning")
                .0
                .contains("falling back to the nearest etcd version (3.5.9-0)")
        );
        assert_eq!(etcd_version_for("v1.2.0").map(|x| x.0), Some("3.2.24"));
        assert!(etcd_version_for("stable").is_none());
    }

    #[test]
    fn custom_repository_keeps_coredns_path_flat() {
        let mut s = settings("v1.25.16");
        s.image_repository = "my.reg/x".into();
        assert_eq!(s.dns_image(), "my.reg/x/coredns:v1.9.3");
        assert_eq!(s.pause_image(), "my.reg/x/pause:3.8");
        assert_eq!(
            settings("v1.25.16").dns_image(),
            "registry.k8s.io/coredns/coredns:v1.9.3"
        );
    }

    #[test]
    fn external_etcd_has_no_etcd_image() {
        let mut s = settings("v1.25.16");
        s.local_etcd = None;
        let (images, _) = s.control_plane_images();
        assert_eq!(images.len(), 6);
        assert!(!images.iter().any(|i| i.contains("/etcd:")));
    }
}
