//! The internal model: a v1beta3 configuration after loading, dynamic defaulting and validation,
//! with what upstream's internal types carry beyond the wire form (resolved CI version, component
//! configs). This is what the rest of kubeadm-rs works from.

use crate::componentconfig::ComponentConfigs;
use crate::defaults::{
    default_cluster_configuration, default_init_configuration, default_join_configuration,
};
use crate::dynamic::{
    DynamicError, DynamicInputs, HostFacts, ResolvedCluster, default_init_dynamic, default_join_dynamic,
};
use crate::load::{ConfigWarning, LoadError, LoadFailure, load_init, load_join, locate_errors};
use crate::v1beta3::{ClusterConfiguration, InitConfiguration, JoinConfiguration};
use crate::validation::{ErrorList, validate_init, validate_join};

/// A ready-to-use init configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct InitConfig {
    /// Node-local settings.
    pub init: InitConfiguration,
    /// Cluster-wide settings (version resolved).
    pub cluster: ClusterConfiguration,
    /// CI version and registry, when a CI build was asked for.
    pub resolved: ResolvedCluster,
    /// kubelet and kube-proxy configs, defaulted by kubeadm (always both present).
    pub component_configs: ComponentConfigs,
    /// Whether each component config came from the user's file (kubelet, kube-proxy).
    pub user_supplied: (bool, bool),
    /// Warnings upstream would print, in order.
    pub warnings: Vec<String>,
}

/// A ready-to-use join configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinConfig {
    /// The configuration.
    pub join: JoinConfiguration,
    /// Warnings upstream would print, in order.
    pub warnings: Vec<String>,
}

/// Why a configuration cannot be used. Upstream exits 1 for all but `Invalid`, which exits 3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read as a configuration.
    #[error(transparent)]
    Load(#[from] Box<LoadError>),
    /// Dynamic defaulting failed.
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// Validation failed; every error is listed.
    #[error(transparent)]
    Invalid(#[from] ErrorList),
    /// `error`, found after the warnings upstream has already logged by then (an unknown field, a
    /// defaulting notice): callers print them before the error, as upstream does.
    #[error("{error}")]
    AfterWarnings {
        /// Warnings, in upstream's order.
        warnings: Vec<String>,
        /// The error (never itself `AfterWarnings`).
        error: Box<ConfigError>,
    },
}

impl From<Box<LoadFailure>> for ConfigError {
    /// The load error, after the warnings upstream logged before it.
    fn from(f: Box<LoadFailure>) -> Self {
        let warnings = f.warnings.iter().map(ConfigWarning::to_string).collect();
        ConfigError::Load(Box::new(f.error)).after(warnings)
    }
}

impl ConfigError {
    /// This error after `warnings` (the earlier ones first); itself when there are none.
    pub fn after(self, mut warnings: Vec<String>) -> ConfigError {
        let (later, error) = self.split();
        warnings.extend(later);
        if warnings.is_empty() {
            error
        } else {
            ConfigError::AfterWarnings {
                warnings,
                error: Box::new(error),
            }
        }
    }

    /// The warnings logged before the error, and the error itself.
    pub fn split(self) -> (Vec<String>, ConfigError) {
        match self {
            ConfigError::AfterWarnings { warnings, error } => (warnings, *error),
            other => (Vec::new(), other),
        }
    }

    /// The error itself, without the warnings before it.
    pub fn cause(&self) -> &ConfigError {
        match self {
            ConfigError::AfterWarnings { error, .. } => error,
            other => other,
        }
    }

    /// Applies `f` to the error itself, keeping the warnings before it.
    fn map_cause(self, f: impl FnOnce(ConfigError) -> ConfigError) -> ConfigError {
        let (warnings, error) = self.split();
        f(error).after(warnings)
    }
}

pub(crate) fn finish_init(
    mut init: InitConfiguration,
    mut cluster: ClusterConfiguration,
    mut component_configs: ComponentConfigs,
    mut warnings: Vec<String>,
    inputs: &mut DynamicInputs<'_>,
) -> Result<InitConfig, ConfigError> {
    let user_supplied = (
        component_configs.kubelet.is_some(),
        component_configs.kube_proxy.is_some(),
    );
    let resolved = match default_init_dynamic(
        &mut init,
        &mut cluster,
        &mut component_configs,
        inputs,
        &mut warnings,
    ) {
        Ok(r) => r,
        Err(e) => return Err(ConfigError::from(e).after(warnings)),
    };
    warnings.extend(crate::validation::subnet_warnings(&cluster));
    if let Err(e) = validate_init(&init, &cluster).into_result() {
        return Err(ConfigError::from(e).after(warnings));
    }
    Ok(InitConfig {
        init,
        cluster,
        resolved,
        component_configs,
        user_supplied,
        warnings,
    })
}

/// Upstream's `LoadInitConfigurationFromFile` after the read: decode, default, validate.
pub fn load_init_config(
    file: &str,
    text: &str,
    inputs: &mut DynamicInputs<'_>,
) -> Result<InitConfig, ConfigError> {
    let loaded = load_init(file, text, false)?;
    let warnings = loaded.warnings.iter().map(ConfigWarning::to_string).collect();
    finish_init(
        loaded.init,
        loaded.cluster,
        loaded.component_configs,
        warnings,
        inputs,
    )
    .map_err(|e| {
        e.map_cause(|e| match e {
            ConfigError::Invalid(mut errs) => {
                locate_errors(file, &loaded.sources, &mut errs);
                ConfigError::Invalid(errs)
            }
            other => other,
        })
    })
}

/// Upstream's `DefaultedInitConfiguration`: configurations built from flags, no file.
pub fn defaulted_init_config(
    mut init: InitConfiguration,
    mut cluster: ClusterConfiguration,
    inputs: &mut DynamicInputs<'_>,
) -> Result<InitConfig, ConfigError> {
    default_init_configuration(&mut init);
    default_cluster_configuration(&mut cluster);
    finish_init(init, cluster, ComponentConfigs::default(), Vec::new(), inputs)
}

/// Upstream's `LoadJoinConfigurationFromFile` after the read. `file_exists` answers the check of a
/// discovery file path.
pub fn load_join_config(
    file: &str,
    text: &str,
    host: &HostFacts,
    file_exists: &dyn Fn(&str) -> bool,
) -> Result<JoinConfig, ConfigError> {
    let loaded = load_join(file, text, false)?;
    let mut warnings: Vec<String> = loaded.warnings.iter().map(ConfigWarning::to_string).collect();
    let sources: Vec<_> = loaded.source.into_iter().collect();
    finish_join(loaded.join, &mut warnings, host, file_exists)
        .map(|join| JoinConfig { join, warnings })
        .map_err(|e| {
            e.map_cause(|e| match e {
                ConfigError::Invalid(mut errs) => {
                    locate_errors(file, &sources, &mut errs);
                    ConfigError::Invalid(errs)
                }
                other => other,
            })
        })
}

/// Upstream's `DefaultedJoinConfiguration`: a configuration built from flags, no file.
pub fn defaulted_join_config(
    mut join: JoinConfiguration,
    host: &HostFacts,
    file_exists: &dyn Fn(&str) -> bool,
) -> Result<JoinConfig, ConfigError> {
    default_join_configuration(&mut join);
    let mut warnings = Vec::new();
    finish_join(join, &mut warnings, host, file_exists).map(|join| JoinConfig { join, warnings })
}

pub(crate) fn finish_join(
    mut join: JoinConfiguration,
    warnings: &mut Vec<String>,
    host: &HostFacts,
    file_exists: &dyn Fn(&str) -> bool,
) -> Result<JoinConfiguration, ConfigError> {
    match default_join_dynamic(&mut join, host) {
        Ok(w) => warnings.extend(w),
        Err(e) => return Err(ConfigError::from(e).after(warnings.clone())),
    }
    if let Err(e) = validate_join(&join, file_exists).into_result() {
        return Err(ConfigError::from(e).after(warnings.clone()));
    }
    Ok(join)
}
