//! What `kubeadm upgrade plan` offers: from the versions found in the cluster and the target
//! versions its release labels name, the list of upgrades (upstream's `GetAvailableUpgrades` in
//! `phases/upgrade/compute.go`), and for each the component table it prints
//! (`genUpgradePlan` in `cmd/upgrade/plan.go`).
//!
//! The versions come through [`VersionGetter`], so the caller decides where they come from (the
//! API server, the static Pod manifests, offline label resolution); messages upstream prints on
//! the way are handed to a sink in order, tagged by where they go.

use std::collections::BTreeMap;

use super::version::SemanticVersion;
use crate::images::{COREDNS_VERSION, etcd_version_for};

/// Where the versions of a plan come from (upstream's `VersionGetter`, plus the etcd and DNS
/// lookups `GetAvailableUpgrades` makes itself). Errors display as complete messages.
pub trait VersionGetter {
    /// Why a version could not be had; its Display is upstream's complete message.
    type Error: std::fmt::Display;
    /// The API server's version string (`v1.25.16`).
    fn cluster_version(&mut self) -> Result<String, Self::Error>;
    /// This kubeadm's version.
    fn kubeadm_version(&mut self) -> String;
    /// The version a release label (`stable`, `stable-1.25`, `latest`) names, with warnings
    /// upstream logs while resolving it; `description` names it in errors.
    fn version_from_label(
        &mut self,
        label: &str,
        description: &str,
    ) -> Result<(String, Vec<String>), Self::Error>;
    /// How many Nodes run each kubelet version.
    fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, Self::Error>;
    /// The tag of the local etcd's image, from its static Pod manifest.
    fn etcd_version(&mut self) -> Result<String, Self::Error>;
    /// The tag of the DNS addon's image, empty when there is no DNS Deployment.
    fn dns_version(&mut self) -> Result<String, Self::Error>;
}

/// A message upstream prints while computing the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Through the output printer: shown in text output only.
    Print(String),
    /// Straight to stdout (`fmt.Printf`), whatever the output format.
    Stdout(String),
    /// A klog warning.
    Warning(String),
}

/// The versions of a cluster, before or after an upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterState {
    /// The control plane's Kubernetes version.
    pub kube_version: String,
    /// The DNS addon's version.
    pub dns_version: String,
    /// The kubeadm version.
    pub kubeadm_version: String,
    /// Node count per kubelet version (empty after an upgrade).
    pub kubelet_versions: BTreeMap<String, u16>,
    /// The local etcd's version, empty with external etcd.
    pub etcd_version: String,
}

/// One upgrade on offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// `version in the v1.25 series`, `stable version`, `release candidate version`, `experimental version`.
    pub description: String,
    /// The cluster now.
    pub before: ClusterState,
    /// The cluster after the upgrade.
    pub after: ClusterState,
}

impl Upgrade {
    /// Whether any kubelet is on another version than the target.
    pub fn can_upgrade_kubelets(&self) -> bool {
        match self.before.kubelet_versions.len() {
            0 => false,
            1 => !self
                .before
                .kubelet_versions
                .contains_key(&self.after.kube_version),
            _ => true,
        }
    }
}

/// What the flags allow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// `--allow-experimental-upgrades`.
    pub experimental: bool,
    /// `--allow-release-candidate-upgrades`.
    pub release_candidates: bool,
    /// The cluster uses external etcd.
    pub external_etcd: bool,
}

/// Why no plan could be computed; the text is what upstream prints after `[upgrade/versions] FATAL: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// A getter's error as the plan's: its complete message.
fn getter_error(e: impl std::fmt::Display) -> PlanError {
    PlanError(e.to_string())
}

/// Upstream's `OfflineVersionGetter`: with a target version (the positional argument), every label
/// names it; without, the getter resolves the label.
fn label_version<G: VersionGetter + ?Sized>(
    getter: &mut G,
    target: Option<&str>,
    label: &str,
    description: &str,
    sink: &mut dyn FnMut(Message),
) -> Result<(String, SemanticVersion), PlanError> {
    match target {
        Some(t) => {
            let v = SemanticVersion::parse(t)
                .map_err(|e| PlanError(format!("Couldn't parse version {description}: {e}")))?;
            Ok((t.to_string(), v))
        }
        None => {
            let (text, warnings) = getter
                .version_from_label(label, description)
                .map_err(getter_error)?;
            for w in warnings {
                sink(Message::Warning(w));
            }
            let v = SemanticVersion::parse(&text)
                .map_err(|e| PlanError(format!("Couldn't parse latest {description}: {e}")))?;
            Ok((text, v))
        }
    }
}

/// The etcd version upstream suggests for `kubernetes_version` (empty with external etcd).
fn suggested_etcd(external: bool, kubernetes_version: &str, sink: &mut dyn FnMut(Message)) -> String {
    if external {
        return String::new();
    }
    match etcd_version_for(kubernetes_version) {
        Some((v, warning)) => {
            if let Some(w) = warning {
                sink(Message::Warning(format!("[upgrade/versions] {w}")));
            }
            v.to_string()
        }
        None => {
            sink(Message::Warning(format!(
                "[upgrade/versions] could not retrieve an etcd version for the target Kubernetes version: \
                 could not parse {kubernetes_version:?} as version"
            )));
            "N/A".to_string()
        }
    }
}

fn after(kube: &str, kubeadm: &str, external_etcd: bool, sink: &mut dyn FnMut(Message)) -> ClusterState {
    ClusterState {
        kube_version: kube.to_string(),
        dns_version: COREDNS_VERSION.to_string(),
        kubeadm_version: kubeadm.to_string(),
        kubelet_versions: BTreeMap::new(),
        etcd_version: suggested_etcd(external_etcd, kube, sink),
    }
}

/// Upstream's `GetAvailableUpgrades`: the upgrades on offer, in upstream's order, with the
/// messages it prints on the way. `target` is the positional version argument.
pub fn available_upgrades<G: VersionGetter + ?Sized>(
    getter: &mut G,
    target: Option<&str>,
    options: PlanOptions,
    sink: &mut dyn FnMut(Message),
) -> Result<Vec<Upgrade>, PlanError> {
    sink(Message::Print(
        "[upgrade] Fetching available versions to upgrade to\n".into(),
    ));
    let cluster_str = getter.cluster_version().map_err(getter_error)?;
    let cluster = SemanticVersion::parse(&cluster_str)
        .map_err(|e| PlanError(format!("Couldn't parse cluster version: {e}")))?;
    sink(Message::Print(format!(
        "[upgrade/versions] Cluster version: {cluster_str}\n"
    )));
    let kubeadm_str = getter.kubeadm_version();
    let kubeadm = SemanticVersion::parse(&kubeadm_str)
        .map_err(|e| PlanError(format!("Couldn't parse kubeadm version: {e}")))?;
    sink(Message::Print(format!(
        "[upgrade/versions] kubeadm version: {kubeadm_str}\n"
    )));

    let (stable_str, stable) = match label_version(getter, target, "stable", "stable version", sink) {
        Ok(found) => {
            sink(Message::Print(format!(
                "[upgrade/versions] Target version: {}\n",
                found.0
            )));
            found
        }
        Err(e) => {
            sink(Message::Warning(format!("[upgrade/versions] WARNING: {e}")));
            sink(Message::Warning(
                "[upgrade/versions] WARNING: Falling back to current kubeadm version as latest stable version".into(),
            ));
            (kubeadm_str.clone(), kubeadm.clone())
        }
    };

    let kubelet_versions = getter.kubelet_versions().map_err(getter_error)?;
    let etcd_version = if options.external_etcd {
        String::new()
    } else {
        getter.etcd_version().map_err(getter_error)?
    };
    let dns_version = getter.dns_version().map_err(getter_error)?;
    let before = ClusterState {
        kube_version: cluster_str.clone(),
        dns_version,
        kubeadm_version: kubeadm_str.clone(),
        kubelet_versions,
        etcd_version,
    };

    let mut upgrades = Vec::new();
    let mut can_do_minor = cluster.less_than(&stable);

    // A newer patch of the cluster's own minor is looked up whenever the stable line is not older.
    if stable.at_least(&cluster) {
        let branch = format!("{}.{}", cluster.major(), cluster.minor());
        let description = format!("version in the v{branch} series");
        match label_version(getter, target, &format!("stable-{branch}"), &description, sink) {
            Err(e) => sink(Message::Warning(format!("[upgrade/versions] WARNING: {e}"))),
            Ok((patch_str, patch)) => {
                sink(Message::Print(format!(
                    "[upgrade/versions] Latest {description}: {patch_str}\n"
                )));
                can_do_minor = patch.less_than(&stable);
                if cluster.less_than(&patch) {
                    let new_kubeadm = if kubeadm.at_least(&patch) {
                        kubeadm_str.clone()
                    } else {
                        patch_str.clone()
                    };
                    upgrades.push(Upgrade {
                        description,
                        before: before.clone(),
                        after: after(&patch_str, &new_kubeadm, options.external_etcd, sink),
                    });
                }
            }
        }
    }

    if can_do_minor {
        upgrades.push(Upgrade {
            description: "stable version".into(),
            before: before.clone(),
            after: after(&stable_str, &stable_str, options.external_etcd, sink),
        });
    }

    if options.experimental || options.release_candidates {
        let (latest_str, latest) = label_version(getter, target, "latest", "experimental version", sink)?;
        sink(Message::Stdout(format!(
            "[upgrade/versions] Latest experimental version: {latest_str}\n"
        )));
        // Upstream takes the previous branch of the latest minor, wrapping below zero as Go's uint.
        let previous_label = match latest.minor().checked_sub(1) {
            Some(m) => format!("latest-1.{m}"),
            None => format!("latest-1.{}", u64::MAX),
        };
        let (previous_str, previous) =
            label_version(getter, target, &previous_label, "previous version", sink)?;
        sink(Message::Stdout(format!(
            "[upgrade/versions] Latest previous version: {previous_str}\n"
        )));

        if options.release_candidates
            && previous.pre_release().starts_with("rc")
            && cluster.less_than(&previous)
        {
            upgrades.push(Upgrade {
                description: "release candidate version".into(),
                before: before.clone(),
                after: after(&previous_str, &previous_str, options.external_etcd, sink),
            });
        }
        if options.experimental && cluster.less_than(&latest) {
            // The first alpha of a new minor is cut with no changes: offer the previous branch instead.
            let unstable = if latest.pre_release() == "alpha.0" {
                previous_str
            } else {
                latest_str
            };
            upgrades.push(Upgrade {
                description: "experimental version".into(),
                before: before.clone(),
                after: after(&unstable, &unstable, options.external_etcd, sink),
            });
        }
    }

    sink(Message::Print("\n".into()));
    Ok(upgrades)
}

/// One row of an upgrade plan (upstream's `ComponentUpgradePlan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentUpgrade {
    /// The component.
    pub name: String,
    /// Its version now (`1 x v1.24.9` for kubelets).
    pub current_version: String,
    /// Its version after the upgrade.
    pub new_version: String,
}

fn row(name: &str, current: &str, new: &str) -> ComponentUpgrade {
    ComponentUpgrade {
        name: name.to_string(),
        current_version: current.to_string(),
        new_version: new.to_string(),
    }
}

/// Upstream's `genUpgradePlan`: the component rows of `upgrade` and the flag `kubeadm upgrade
/// apply` needs for an unstable target (` --allow-release-candidate-upgrades` or
/// ` --allow-experimental-upgrades`, with its leading space; empty for a release).
pub fn component_plan(
    upgrade: &Upgrade,
    external_etcd: bool,
) -> Result<(Vec<ComponentUpgrade>, &'static str), PlanError> {
    let new = &upgrade.after.kube_version;
    let parsed = SemanticVersion::parse(new).map_err(|e| {
        PlanError(format!(
            "Unable to parse normalized version {new:?} as a semantic version: {e}"
        ))
    })?;
    let flag = match parsed.pre_release() {
        "" => "",
        pre if pre.starts_with("rc") => " --allow-release-candidate-upgrades",
        _ => " --allow-experimental-upgrades",
    };
    let mut rows = Vec::new();
    if upgrade.can_upgrade_kubelets() {
        // BTreeMap order is Go's sort.Strings order of the keys.
        for (version, count) in &upgrade.before.kubelet_versions {
            rows.push(row("kubelet", &format!("{count} x {version}"), new));
        }
    }
    let old = &upgrade.before.kube_version;
    for name in [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kube-proxy",
    ] {
        rows.push(row(name, old, new));
    }
    if !upgrade.before.dns_version.is_empty() || !upgrade.after.dns_version.is_empty() {
        rows.push(row(
            "CoreDNS",
            &upgrade.before.dns_version,
            &upgrade.after.dns_version,
        ));
    }
    if !external_etcd {
        rows.push(row(
            "etcd",
            &upgrade.before.etcd_version,
            &upgrade.after.etcd_version,
        ));
    }
    Ok((rows, flag))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
