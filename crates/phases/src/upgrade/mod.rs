//! `kubeadm upgrade` (upstream's `cmd/upgrade/` and `phases/upgrade/`): [`apply`], the workflow of
//! `kubeadm upgrade apply` once its flags are read; [`common`], what the
//! upgrade commands share (the output printer, the configuration, the registry move, the CRI socket
//! repair, the root and CoreDNS checks); [`diff`], `upgrade diff`; [`health`], the cluster health checks run before planning
//! or applying an upgrade; [`versions`], the versions a cluster runs; [`plan`], how `upgrade plan`
//! prints an upgrade; [`component_configs`], the state of the component configs it reports;
//! [`staticpods`], the static-pod upgrade of a control-plane node (with its backups and rollback);
//! [`postupgrade`], what `upgrade apply` uploads and applies afterwards; and [`node`], the
//! workflow of `kubeadm upgrade node`. The version skew policy of `apply` is
//! `kubeadm_core::upgrade::policy`.

pub mod apply;
pub mod common;
pub mod component_configs;
pub mod diff;
pub mod health;
pub mod node;
pub mod plan;
pub mod postupgrade;
pub mod staticpods;
pub mod versions;

/// Why an upgrade command (`apply`, and what `plan` shares with it) failed, in upstream's words.
/// [`UpgradeError::is_preflight`] and [`UpgradeError::is_bad_input`] tell the kinds the command
/// line gives exit codes of their own (2 and 3).
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    /// A preflight check failed.
    #[error(transparent)]
    Preflight(#[from] crate::preflight::PreflightError),
    /// More than one version argument.
    #[error("too many arguments. Required arguments: [version]")]
    TooManyArguments,
    /// No version argument.
    #[error("missing one or more required arguments. Required arguments: [version]")]
    MissingVersion,
    /// `--ignore-preflight-errors`, with the configuration's list, is not valid.
    #[error(transparent)]
    IgnorePreflightErrors(#[from] kubeadm_api::validation::ErrorList),
    /// `--feature-gates` is not valid.
    #[error("[upgrade/config] FATAL: {0}")]
    FeatureGates(#[source] kubeadm_api::features::FeatureGateError),
    /// The target version cannot be resolved.
    #[error(transparent)]
    Version(#[from] kubeadm_api::dynamic::DynamicError),
    /// The resolved version is not a semantic version.
    #[error("unable to parse normalized version {0:?} as a semantic version")]
    UnparsableVersion(String),
    /// The upgrade timeout from the environment is not a duration.
    #[error(transparent)]
    Timeout(crate::TimeoutEnvError),
    /// The configuration could not be read or fetched.
    #[error("[upgrade/config] FATAL: {0}")]
    Config(#[source] ConfigFailure),
    /// The Node's CRI socket annotation could not be updated (upstream names the socket where it
    /// means the Node; kept for identical output).
    #[error("error updating the CRI socket for Node {socket:?}: {source}")]
    CriSocket {
        /// The socket.
        socket: String,
        /// Why.
        source: kubeadm_effects::cluster::ClusterError,
    },
    /// The cluster is not healthy.
    #[error("[upgrade/health] FATAL: {0}")]
    Health(#[source] crate::preflight::PreflightError),
    /// The version skew policy forbids the upgrade.
    #[error(
        "[upgrade/version] FATAL: the --version argument is invalid due to these {}errors:\n\n{}\n{}",
        if *mandatory { "fatal " } else { "" },
        kubeadm_core::upgrade::policy::format_errors(errors),
        if *mandatory {
            "Please fix the misalignments highlighted above and try upgrading again"
        } else {
            "Can be bypassed if you pass the --force flag"
        }
    )]
    VersionSkew {
        /// The policy's errors.
        errors: Vec<String>,
        /// Whether `--force` cannot bypass them.
        mandatory: bool,
    },
    /// No client for the API server's version; the opener's error.
    #[error("{0}")]
    ServerVersion(crate::SuppliedError),
    /// The user did not confirm.
    #[error("won't proceed; the user didn't answer (Y|y) in order to continue")]
    Declined,
    /// The answer could not be read.
    #[error("couldn't read from standard input: {0}")]
    Stdin(#[source] std::io::Error),
    /// `--patches` could not be read.
    #[error("[upgrade/apply] FATAL: {}", .0.detailed())]
    Patches(#[source] kubeadm_core::patches::PatchError),
    /// The static pods could not be upgraded.
    #[error("[upgrade/apply] FATAL: {0}")]
    StaticPods(#[source] staticpods::StaticPodUpgradeError),
    /// The old control-plane taint could not be removed.
    #[error(transparent)]
    Taint(postupgrade::TaintError),
    /// What follows the upgrade failed.
    #[error("[upgrade/postupgrade] FATAL post-upgrade error: {0}")]
    PostUpgrade(#[source] postupgrade::PostUpgradeErrors),
    /// The upgrade plan could not be made.
    #[error(transparent)]
    Plan(#[from] kubeadm_core::upgrade::plan::PlanError),
}

impl UpgradeError {
    /// Whether a preflight check failed (exit code 2).
    pub fn is_preflight(&self) -> bool {
        matches!(self, UpgradeError::Preflight(_))
    }

    /// Whether the fault is in the flags, the arguments or the environment (exit code 3).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            UpgradeError::TooManyArguments
                | UpgradeError::MissingVersion
                | UpgradeError::IgnorePreflightErrors(_)
                | UpgradeError::FeatureGates(_)
                | UpgradeError::Version(_)
                | UpgradeError::Timeout(_)
        )
    }
}

/// Why the configuration of an upgrade could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFailure {
    /// `--config` could not be read.
    #[error(
        "unable to load config from file {path:?}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--config` does not load.
    #[error(transparent)]
    Load(#[from] kubeadm_api::internal::ConfigError),
    /// The cluster has no kubeadm-config ConfigMap.
    #[error(
        "the ConfigMap \"kubeadm-config\" in the kube-system namespace used for getting configuration information was not found"
    )]
    NoConfigMap,
    /// The ConfigMap could not be read (a refused connection in client-go's words).
    #[error(
        "failed to get config map: {}",
        common::go_transport_error(.0).unwrap_or_else(|| .0.to_string())
    )]
    ConfigMap(#[source] kubeadm_effects::cluster::ClusterError),
    /// The cluster's configuration does not load.
    #[error(transparent)]
    Fetch(#[from] crate::config_from_cluster::FetchConfigError),
    /// The image repository could not be moved.
    #[error(transparent)]
    ImageRepository(common::ImageRepositoryError),
}

/// The rule between the sections of `kubeadm upgrade plan`'s text output.
pub const SEPARATOR: &str = "_____________________________________________________________________\n\n";
