//! What `kubeadm upgrade apply` does after the control plane is upgraded (upstream's
//! `phases/upgrade/postupgrade.go`): the 1.25 removal of the legacy control-plane taint, then
//! nearly what `kubeadm init` uploads: the `kubeadm-config` and `kubelet-config` ConfigMaps, the
//! node's kubelet configuration on disk, its CRI socket annotation, the bootstrap-token and
//! cluster-info RBAC rules, and the CoreDNS and kube-proxy addons (each only when its ConfigMap
//! exists: a cluster initialised without one did not want it). Every task runs; their errors are
//! reported together.

use std::path::Path;

use kubeadm_api::internal::InitConfig;
use kubeadm_core::cluster::{bootstrap_token, cluster_info, node, upload_config};
use kubeadm_core::patches::PatchManager;
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use serde_json::Value;

use crate::addons::{ensure_coredns, ensure_kube_proxy};
use crate::upload_config::{apply_rbac, resource_of};

/// The legacy taint 1.25 removes, as Go's `Taint.String()` prints it.
const OLD_TAINT_KEY: &str = "node-role.kubernetes.io/master";
const OLD_TAINT_TEXT: &str =
    "&Taint{Key:node-role.kubernetes.io/master,Value:,Effect:NoSchedule,TimeAdded:<nil>,}";
const NEW_TAINT_TEXT: &str =
    "&Taint{Key:node-role.kubernetes.io/control-plane,Value:,Effect:NoSchedule,TimeAdded:<nil>,}";
/// The label every kubeadm control-plane node carries.
const CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/control-plane";

/// Why the old control-plane taint could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum TaintError {
    /// The control-plane Nodes could not be listed.
    #[error("could not list nodes labeled with {label:?}: {source}", label = CONTROL_PLANE_LABEL)]
    List {
        /// Why.
        source: ClusterError,
    },
    /// A Node could not be patched.
    #[error(transparent)]
    Patch(ClusterError),
}

/// One post-upgrade task's failure, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum PostUpgradeError {
    /// The `kubeadm-config` ConfigMap or its RBAC could not be written.
    #[error(transparent)]
    UploadConfig(ClusterError),
    /// The kubelet's ConfigMap could not be created.
    #[error("error creating kubelet configuration ConfigMap: {0}")]
    KubeletConfigMap(#[source] KubeletConfigError),
    /// The kubelet's `config.yaml` could not be written.
    #[error("error writing kubelet configuration to file: {0}")]
    WriteKubeletConfig(#[source] KubeletConfigError),
    /// The CRI socket annotation could not be uploaded.
    #[error("error uploading crisocket: {0}")]
    CriSocket(#[source] ClusterError),
    /// The bootstrap-token RBAC to get Nodes could not be applied.
    #[error("error allowing bootstrap tokens to get Nodes: {0}")]
    AllowGetNodes(#[source] ClusterError),
    /// The bootstrap-token RBAC to post CSRs could not be applied.
    #[error("error allowing bootstrap tokens to post CSRs: {0}")]
    AllowPostCsrs(#[source] ClusterError),
    /// The auto-approval RBAC of bootstrap-token CSRs could not be applied.
    #[error("error auto-approving node bootstrap tokens: {0}")]
    AutoApprove(#[source] ClusterError),
    /// The certificate-rotation or cluster-info RBAC could not be applied.
    #[error(transparent)]
    Rbac(ClusterError),
    /// CoreDNS or kube-proxy could not be upgraded.
    #[error(transparent)]
    Addon(Box<crate::addons::AddonPhaseError>),
}

/// Why the kubelet's configuration (its ConfigMap or its file) could not be written.
#[derive(Debug, thiserror::Error)]
pub enum KubeletConfigError {
    /// The configuration has no kubelet component config.
    #[error("no kubelet component config found")]
    Missing,
    /// The ConfigMap or its RBAC could not be written.
    #[error(transparent)]
    Cluster(ClusterError),
    /// `--patches` could not be applied.
    #[error("could not apply patches to the KubeletConfiguration: {}", .0.detailed())]
    Patches(#[source] kubeadm_core::patches::PatchError),
    /// The file could not be written.
    #[error("failed to write kubelet configuration to the file {path:?}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The post-upgrade tasks' failures together (Go's aggregate: one error as itself, several as
/// `[a, b]`); never empty.
#[derive(Debug, thiserror::Error)]
pub struct PostUpgradeErrors(pub Vec<PostUpgradeError>);

impl std::fmt::Display for PostUpgradeErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                let texts: Vec<String> = many.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", texts.join(", "))
            }
        }
    }
}

/// Upstream's message before [`remove_old_control_plane_taint`].
pub fn old_taint_message() -> String {
    format!(
        "[upgrade/postupgrade] Removing the old taint {OLD_TAINT_TEXT} from all control plane Nodes. After this step only the {NEW_TAINT_TEXT} taint will be present on control plane Nodes.\n"
    )
}

/// Upstream's `RemoveOldControlPlaneTaint`: on every node labelled as a control plane, the
/// `node-role.kubernetes.io/master:NoSchedule` taint (exactly that one) removed, other taints kept.
pub fn remove_old_control_plane_taint(cluster: &dyn Cluster) -> Result<(), TaintError> {
    let options = ListOptions {
        label_selector: CONTROL_PLANE_LABEL.to_string(),
        ..ListOptions::default()
    };
    let nodes = cluster
        .list(&Resource::core("nodes"), "", &options)
        .map_err(|source| TaintError::List { source })?;
    for n in nodes {
        let name = n
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let taints = n
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let kept: Vec<Value> = taints.iter().filter(|t| !is_old_taint(t)).cloned().collect();
        if kept.len() == taints.len() {
            continue;
        }
        cluster
            .patch_node(&name, &mut |current| {
                let mut changed = current.clone();
                changed["spec"]["taints"] = Value::Array(kept.clone());
                node::two_way_merge_patch(current, &changed)
            })
            .map_err(TaintError::Patch)?;
    }
    Ok(())
}

/// `Taint.String()` equality with the legacy taint: key, empty value, `NoSchedule`, no time added.
fn is_old_taint(t: &Value) -> bool {
    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
    s("key") == OLD_TAINT_KEY
        && s("value").is_empty()
        && s("effect") == "NoSchedule"
        && t.get("timeAdded").is_none_or(Value::is_null)
}

/// What the post-upgrade tasks work from.
pub struct PostUpgrade<'a> {
    /// The upgraded configuration.
    pub cfg: &'a InitConfig,
    /// The API server (the dry-run decorator in a dry run).
    pub cluster: &'a dyn Cluster,
    /// The file system (the dry-run overlay in a dry run).
    pub fs: &'a dyn Fs,
    /// Where the kubelet's configuration is written: `/var/lib/kubelet`, or a temporary folder in a
    /// dry run.
    pub kubelet_dir: &'a Path,
    /// `/var/lib/kubelet`, where a dry run says it would write.
    pub kubelet_run_dir: &'a Path,
    /// `--patches`, read.
    pub patches: Option<&'a PatchManager>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// The process environment (kube-proxy gets the `*_proxy` variables).
    pub environment: &'a [(String, String)],
    /// Where output goes.
    pub reporter: &'a dyn Reporter,
}

impl std::fmt::Debug for PostUpgrade<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostUpgrade")
            .field("kubelet_dir", &self.kubelet_dir)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl PostUpgrade<'_> {
    fn say(&self, line: &str) {
        self.reporter.out(&format!("{line}\n"));
    }

    /// Upstream's `PerformPostUpgradeTasks`: every task, then their errors together (Go's
    /// aggregate: one error as itself, several as `[a, b]`).
    pub fn run(&self) -> Result<(), PostUpgradeErrors> {
        let c = self.cluster;
        let mut errors: Vec<PostUpgradeError> = Vec::new();
        let mut keep = |r: Result<(), PostUpgradeError>| {
            if let Err(e) = r {
                errors.push(e);
            }
        };
        keep(
            self.upload_kubeadm_config()
                .map_err(PostUpgradeError::UploadConfig),
        );
        keep(
            self.kubelet_config_map()
                .map_err(PostUpgradeError::KubeletConfigMap),
        );
        keep(
            self.write_kubelet_config()
                .map_err(PostUpgradeError::WriteKubeletConfig),
        );
        let socket = &self.cfg.init.node_registration.cri_socket;
        let name = &self.cfg.init.node_registration.name;
        self.reporter.info(
            1,
            "patchnode.go",
            &format!("[patchnode] Uploading the CRI Socket information {socket:?} to the Node API object {name:?} as an annotation"),
        );
        keep(
            c.patch_node(name, &mut |current| {
                let mut annotated = current.clone();
                node::annotate_cri_socket(&mut annotated, socket);
                node::two_way_merge_patch(current, &annotated)
            })
            .map_err(PostUpgradeError::CriSocket),
        );
        self.say("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to get nodes");
        keep(apply_all(c, &bootstrap_token::allow_get_nodes()).map_err(PostUpgradeError::AllowGetNodes));
        self.say("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to post CSRs in order for nodes to get long term certificate credentials");
        keep(apply_all(c, &[bootstrap_token::allow_post_csrs()]).map_err(PostUpgradeError::AllowPostCsrs));
        self.say("[bootstrap-token] Configured RBAC rules to allow the csrapprover controller automatically approve CSRs from a Node Bootstrap Token");
        keep(
            apply_all(c, &[bootstrap_token::auto_approve_node_bootstrap_tokens()])
                .map_err(PostUpgradeError::AutoApprove),
        );
        self.say("[bootstrap-token] Configured RBAC rules to allow certificate rotation for all node client certificates in the cluster");
        keep(
            apply_all(c, &[bootstrap_token::auto_approve_node_certificate_rotation()])
                .map_err(PostUpgradeError::Rbac),
        );
        self.reporter.info(
            1,
            "clusterinfo.go",
            "creating the RBAC rules for exposing the cluster-info ConfigMap in the kube-public namespace",
        );
        keep(apply_rbac(c, &cluster_info::cluster_info_rbac()).map_err(PostUpgradeError::Rbac));

        if self.config_map_missing("coredns") {
            self.reporter.warn(
                "postupgrade.go",
                "the ConfigMaps \"coredns\" in the namespace \"kube-system\" were not found. Assuming that a DNS server was not deployed for this cluster. Note that once 'kubeadm upgrade apply' supports phases you will have to skip the DNS upgrade manually",
            );
        } else {
            keep(ensure_coredns(c, self.cfg, self.reporter).map_err(addon));
        }
        if self.config_map_missing("kube-proxy") {
            self.reporter.warn(
                "postupgrade.go",
                "the ConfigMap \"kube-proxy\" in the namespace \"kube-system\" was not found. Assuming that kube-proxy was not deployed for this cluster. Note that once 'kubeadm upgrade apply' supports phases you will have to skip the kube-proxy upgrade manually",
            );
        } else {
            keep(ensure_kube_proxy(c, self.cfg, self.environment, self.reporter).map_err(addon));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(PostUpgradeErrors(errors))
        }
    }

    /// Only a NotFound answer counts as missing, as upstream.
    fn config_map_missing(&self, name: &str) -> bool {
        matches!(self.cluster.get(&Resource::config_maps(), "kube-system", name), Err(e) if e.is_not_found())
    }

    /// Upstream's `UploadConfiguration`.
    fn upload_kubeadm_config(&self) -> Result<(), ClusterError> {
        self.say(&format!(
            "[upload-config] Storing the configuration used in ConfigMap {:?} in the {:?} Namespace",
            upload_config::KUBEADM_CONFIG_CONFIG_MAP,
            kubeadm_core::cluster::meta::NAMESPACE_SYSTEM
        ));
        let cm = upload_config::kubeadm_config_map(&self.cfg.cluster, &self.cfg.resolved);
        let value = cm["data"][upload_config::CLUSTER_CONFIGURATION_KEY].clone();
        self.cluster.create_or_mutate_config_map(&cm, &mut |existing| {
            existing["data"][upload_config::CLUSTER_CONFIGURATION_KEY] = value.clone();
        })?;
        apply_rbac(self.cluster, &upload_config::kubeadm_config_rbac())
    }

    /// Upstream's `kubeletphase.CreateConfigMap`.
    fn kubelet_config_map(&self) -> Result<(), KubeletConfigError> {
        let kubelet = self
            .cfg
            .component_configs
            .kubelet
            .as_ref()
            .ok_or(KubeletConfigError::Missing)?;
        self.say(&format!(
            "[kubelet] Creating a ConfigMap {:?} in namespace {} with the configuration for the kubelets in the cluster",
            upload_config::KUBELET_CONFIG_CONFIG_MAP,
            kubeadm_core::cluster::meta::NAMESPACE_SYSTEM
        ));
        let cm = upload_config::kubelet_config_map(kubelet, self.cfg.user_supplied.0);
        self.cluster
            .create_or_update(&Resource::config_maps(), &cm)
            .map_err(KubeletConfigError::Cluster)?;
        apply_rbac(self.cluster, &upload_config::kubelet_config_rbac()).map_err(KubeletConfigError::Cluster)
    }

    /// Upstream's `writeKubeletConfigFiles`: `config.yaml` from the cluster's kubelet configuration
    /// (patched), printed in a dry run.
    fn write_kubelet_config(&self) -> Result<(), KubeletConfigError> {
        let kc = self
            .cfg
            .component_configs
            .kubelet
            .as_ref()
            .ok_or(KubeletConfigError::Missing)?;
        let say = |l: &str| self.say(l);
        let (path, text) = crate::kubelet::config_file(kc, self.patches, self.kubelet_dir, &say)
            .map_err(KubeletConfigError::Patches)?;
        self.fs
            .create_dir_all(self.kubelet_dir, 0o700)
            .and_then(|()| self.fs.write(&path, text.as_bytes(), 0o644))
            .map_err(|source| KubeletConfigError::Write {
                path: path.display().to_string(),
                source,
            })?;
        if self.dry_run {
            let shown = self.kubelet_run_dir.join("config.yaml");
            crate::dry_run::print_file(self.fs, self.reporter, &path, &shown);
        }
        Ok(())
    }
}

/// An addon's failure as a post-upgrade task's.
fn addon(e: crate::addons::AddonPhaseError) -> PostUpgradeError {
    PostUpgradeError::Addon(Box::new(e))
}

fn apply_all(c: &dyn Cluster, objects: &[Value]) -> Result<(), ClusterError> {
    for obj in objects {
        c.create_or_update(&resource_of(obj), obj)?;
    }
    Ok(())
}
