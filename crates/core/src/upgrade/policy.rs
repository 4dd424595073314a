//! The version skew policy of `kubeadm upgrade apply` (upstream's `phases/upgrade/policy.go`): which
//! target versions are refused outright (mandatory errors) and which only with `--force` (skippable).

use std::collections::BTreeMap;

use kubeadm_api::version::MINIMUM_CONTROL_PLANE_VERSION;

use crate::upgrade::plan::VersionGetter;
use crate::upgrade::version::SemanticVersion;

/// How many minor versions one upgrade (or downgrade) may move the control plane, and how far the
/// kubelets may trail it.
const MAX_MINOR_SKEW: u64 = 1;

/// What the policy found (upstream's `VersionSkewPolicyErrors`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SkewErrors {
    /// Errors `--force` cannot skip.
    pub mandatory: Vec<String>,
    /// Errors `--force` skips.
    pub skippable: Vec<String>,
}

impl SkewErrors {
    fn is_empty(&self) -> bool {
        self.mandatory.is_empty() && self.skippable.is_empty()
    }
}

/// The flags the policy reads.
#[derive(Debug, Default, Clone, Copy)]
pub struct PolicyFlags {
    /// `--allow-experimental-upgrades`.
    pub experimental: bool,
    /// `--allow-release-candidate-upgrades`.
    pub release_candidates: bool,
}

/// Upstream's `kubeadmutil.FormatErrMsg`: one `\t- error` line per error.
pub fn format_errors(errors: &[String]) -> String {
    errors.iter().map(|e| format!("\t- {e}\n")).collect()
}

/// Upstream's `EnforceVersionPolicies`: `None` when the target is fine. `print` gets the lines it
/// prints on the way (the cluster's and kubeadm's versions).
pub fn enforce_version_policies<G: VersionGetter + ?Sized>(
    getter: &mut G,
    target_text: &str,
    target: &SemanticVersion,
    flags: PolicyFlags,
    print: &mut dyn FnMut(&str),
) -> Option<SkewErrors> {
    let mut errs = SkewErrors::default();
    let cluster = match getter.cluster_version() {
        Ok(text) => SemanticVersion::parse(&text)
            .map(|v| (text, v))
            .map_err(|e| format!("Couldn't parse cluster version: {e}")),
        Err(e) => Err(e.to_string()),
    };
    let (cluster_text, cluster) = match cluster {
        Ok(found) => found,
        Err(e) => {
            errs.mandatory
                .push(format!("Unable to fetch cluster version: {e}"));
            return Some(errs);
        }
    };
    print(&format!("[upgrade/versions] Cluster version: {cluster_text}\n"));
    let kubeadm_text = getter.kubeadm_version();
    let kubeadm = match SemanticVersion::parse(&kubeadm_text) {
        Ok(v) => v,
        Err(e) => {
            errs.mandatory.push(format!(
                "Unable to fetch kubeadm version: Couldn't parse kubeadm version: {e}"
            ));
            return Some(errs);
        }
    };
    print(&format!("[upgrade/versions] kubeadm version: {kubeadm_text}\n"));

    let kubelets: Option<BTreeMap<String, u16>> = match getter.kubelet_versions() {
        Ok(v) => Some(v),
        Err(e) => {
            errs.skippable
                .push(format!("Unable to fetch kubelet version: {e}"));
            None
        }
    };

    let (major, minor, patch) = MINIMUM_CONTROL_PLANE_VERSION;
    let minimum = SemanticVersion::parse(&format!("v{major}.{minor}.{patch}"))
        .expect("the minimum control-plane version parses");
    if !target.at_least(&minimum) {
        // Upstream names the cluster's version where it means the minimum; kept for identical output.
        errs.mandatory.push(format!(
            "Specified version to upgrade to {target_text:?} is equal to or lower than the minimum supported version {cluster_text:?}. Please specify a higher version to upgrade to"
        ));
    }
    // A released target must obey the skew; a CI or pre-release one may pass with --force.
    let released = target.pre_release().is_empty();
    let by_release = |errs: &mut SkewErrors, e: String| {
        if released {
            errs.mandatory.push(e);
        } else {
            errs.skippable.push(e);
        }
    };
    if target.minor() > cluster.minor() + MAX_MINOR_SKEW {
        by_release(
            &mut errs,
            format!(
                "Specified version to upgrade to {target_text:?} is too high; kubeadm can upgrade only {MAX_MINOR_SKEW} minor version at a time"
            ),
        );
    }
    // Go's unsigned arithmetic: a cluster at minor 0 wraps around and never trips this.
    if target.minor() < cluster.minor().wrapping_sub(MAX_MINOR_SKEW) {
        by_release(
            &mut errs,
            format!(
                "Specified version to downgrade to {target_text:?} is too low; kubeadm can downgrade only {MAX_MINOR_SKEW} minor version at a time"
            ),
        );
    }
    if kubeadm.less_than(target) {
        if target.minor() > kubeadm.minor() {
            by_release(
                &mut errs,
                format!(
                    "Specified version to upgrade to {target_text:?} is at least one minor release higher than the kubeadm minor release ({} > {}). Such an upgrade is not supported",
                    target.minor(),
                    kubeadm.minor()
                ),
            );
        } else {
            errs.skippable.push(format!(
                "Specified version to upgrade to {target_text:?} is higher than the kubeadm version {kubeadm_text:?}. Upgrade kubeadm first using the tool you used to install kubeadm"
            ));
        }
    }
    if kubeadm.major() > target.major() || kubeadm.minor() > target.minor() {
        errs.skippable.push(format!(
            "Kubeadm version {kubeadm_text} can only be used to upgrade to Kubernetes version {}.{}",
            kubeadm.major(),
            kubeadm.minor()
        ));
    }
    if let Some(e) = unstable_version_error(target, target_text, flags) {
        errs.skippable.push(e);
    }
    if let Some(kubelets) = kubelets
        && let Some(e) = too_old_kubelets(target, &kubelets)
    {
        errs.skippable.push(e);
    }
    (!errs.is_empty()).then_some(errs)
}

/// Upstream's `detectUnstableVersionError`.
fn unstable_version_error(target: &SemanticVersion, text: &str, flags: PolicyFlags) -> Option<String> {
    let pre = target.pre_release();
    if pre.is_empty() || flags.experimental || (pre.starts_with("rc") && flags.release_candidates) {
        return None;
    }
    Some(format!(
        "Specified version to upgrade to {text:?} is an unstable version and such upgrades weren't allowed via setting the --allow-*-upgrades flags"
    ))
}

/// Upstream's `detectTooOldKubelets`: kubelets more than one minor behind the target.
fn too_old_kubelets(target: &SemanticVersion, kubelets: &BTreeMap<String, u16>) -> Option<String> {
    let mut too_old = Vec::new();
    for text in kubelets.keys() {
        let Ok(v) = SemanticVersion::parse(text) else {
            return Some(format!("couldn't parse kubelet version {text}"));
        };
        if target.minor() > v.minor() + MAX_MINOR_SKEW {
            too_old.push(text.clone());
        }
    }
    (!too_old.is_empty()).then(|| {
        format!(
            "There are kubelets in this cluster that are too old that have these versions [{}]",
            too_old.join(" ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Versions {
        cluster: &'static str,
        kubeadm: &'static str,
        kubelets: &'static [&'static str],
    }

    impl VersionGetter for Versions {
        type Error = std::convert::Infallible;
        fn cluster_version(&mut self) -> Result<String, Self::Error> {
            Ok(self.cluster.into())
        }
        fn kubeadm_version(&mut self) -> String {
            self.kubeadm.into()
        }
        fn version_from_label(&mut self, _: &str, _: &str) -> Result<(String, Vec<String>), Self::Error> {
            unreachable!("the policy resolves no label")
        }
        fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, Self::Error> {
            Ok(self.kubelets.iter().map(|k| (k.to_string(), 1)).collect())
        }
        fn etcd_version(&mut self) -> Result<String, Self::Error> {
            unreachable!()
        }
        fn dns_version(&mut self) -> Result<String, Self::Error> {
            unreachable!()
        }
    }

    fn check(v: Versions, target: &str, flags: PolicyFlags) -> (Option<SkewErrors>, String) {
        let mut v = v;
        let mut printed = String::new();
        let parsed = SemanticVersion::parse(target).expect("target");
        let errs = enforce_version_policies(&mut v, target, &parsed, flags, &mut |l| printed.push_str(l));
        (errs, printed)
    }

    const V1_25: Versions = Versions {
        cluster: "v1.25.15",
        kubeadm: "v1.25.16",
        kubelets: &["v1.25.16"],
    };

    #[test]
    fn a_patch_upgrade_within_kubeadms_release_passes_and_prints_the_versions() {
        let (errs, printed) = check(V1_25, "v1.25.16", PolicyFlags::default());
        assert_eq!(errs, None);
        assert_eq!(
            printed,
            "[upgrade/versions] Cluster version: v1.25.15\n[upgrade/versions] kubeadm version: v1.25.16\n"
        );
    }

    #[test]
    fn skipping_a_minor_is_mandatory_for_a_release_and_forceable_for_a_pre_release() {
        let v = Versions {
            cluster: "v1.23.5",
            ..V1_25
        };
        let (errs, _) = check(v, "v1.25.0", PolicyFlags::default());
        assert_eq!(
            errs.expect("errors").mandatory,
            [
                "Specified version to upgrade to \"v1.25.0\" is too high; kubeadm can upgrade only 1 minor version at a time"
            ]
        );
        let v = Versions {
            cluster: "v1.23.5",
            ..V1_25
        };
        let errs = check(v, "v1.25.0-rc.1", PolicyFlags::default())
            .0
            .expect("errors");
        assert!(errs.mandatory.is_empty());
        assert_eq!(errs.skippable.len(), 2, "{errs:?}");
    }

    #[test]
    fn a_newer_patch_than_kubeadm_and_an_older_minor_are_forceable() {
        let errs = check(V1_25, "v1.25.17", PolicyFlags::default())
            .0
            .expect("errors");
        assert!(errs.mandatory.is_empty());
        assert_eq!(
            errs.skippable,
            [
                "Specified version to upgrade to \"v1.25.17\" is higher than the kubeadm version \"v1.25.16\". Upgrade kubeadm first using the tool you used to install kubeadm"
            ]
        );
        let errs = check(V1_25, "v1.24.9", PolicyFlags::default()).0.expect("errors");
        assert_eq!(
            errs.skippable,
            ["Kubeadm version v1.25.16 can only be used to upgrade to Kubernetes version 1.25"]
        );
    }

    #[test]
    fn unstable_targets_need_their_flag() {
        let v = || Versions {
            kubeadm: "v1.26.0",
            ..V1_25
        };
        let errs = check(v(), "v1.26.0-alpha.1", PolicyFlags::default())
            .0
            .expect("errors");
        assert_eq!(errs.skippable.len(), 1, "{errs:?}");
        let rc = PolicyFlags {
            release_candidates: true,
            ..PolicyFlags::default()
        };
        assert_eq!(check(v(), "v1.26.0-rc.0", rc).0, None);
        assert!(check(v(), "v1.26.0-alpha.1", rc).0.is_some());
        let exp = PolicyFlags {
            experimental: true,
            ..PolicyFlags::default()
        };
        assert_eq!(check(v(), "v1.26.0-alpha.1", exp).0, None);
    }

    #[test]
    fn too_old_kubelets_and_too_old_targets() {
        let v = Versions {
            cluster: "v1.25.0",
            kubeadm: "v1.26.0",
            kubelets: &["v1.24.3", "v1.25.0"],
        };
        let errs = check(v, "v1.26.0", PolicyFlags::default()).0.expect("errors");
        assert_eq!(
            errs.skippable,
            ["There are kubelets in this cluster that are too old that have these versions [v1.24.3]"]
        );
        let errs = check(V1_25, "v1.23.0", PolicyFlags::default()).0.expect("errors");
        assert!(errs.mandatory[0].starts_with(
            "Specified version to upgrade to \"v1.23.0\" is equal to or lower than the minimum supported version \"v1.25.15\""
        ));
        assert_eq!(format_errors(&errs.mandatory[..1]).matches("\t- ").count(), 1);
    }
}
