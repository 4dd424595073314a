//! `kubeadm config migrate`: an old (v1beta2) or current config file, loaded, defaulted and
//! validated as upstream's `MigrateOldConfig` does, written back as v1beta3.
//!
//! Only kubeadm's kinds are written (component configs and foreign documents are dropped), and like
//! upstream the output holds defaulted values, including the host's node name and address where the
//! file leaves them out.

use crate::dynamic::DynamicInputs;
use crate::internal::{ConfigError, finish_init, finish_join};
use crate::load::{load_init, load_join, split_documents};
use crate::print::to_yaml;

/// What `config migrate` writes, and the warnings upstream prints on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The new file's text.
    pub text: String,
    /// Warnings, in upstream's order.
    pub warnings: Vec<String>,
}

/// Migrates `text` (read from `file`). `file_exists` answers the join discovery-file check.
pub fn migrate(
    file: &str,
    text: &str,
    inputs: &mut DynamicInputs<'_>,
    file_exists: &dyn Fn(&str) -> bool,
) -> Result<Migrated, ConfigError> {
    let docs = split_documents(file, text).map_err(Box::new)?;
    let has = |kind: &str| docs.iter().any(|d| d.gvk.kind == kind);
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    if has("InitConfiguration") || has("ClusterConfiguration") {
        let loaded = load_init(file, text, true)?;
        let w = loaded.warnings.iter().map(ToString::to_string).collect();
        let cfg = finish_init(loaded.init, loaded.cluster, loaded.component_configs, w, inputs)?;
        warnings.extend(cfg.warnings);
        out.push(to_yaml(&cfg.init, "InitConfiguration"));
        out.push(to_yaml(&cfg.cluster, "ClusterConfiguration"));
    }
    if has("JoinConfiguration") {
        let loaded = load_join(file, text, true).map_err(|e| ConfigError::from(e).after(warnings.clone()))?;
        let mut w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        let join = finish_join(loaded.join, &mut w, inputs.host, file_exists)
            .map_err(|e| e.after(warnings.clone()))?;
        warnings.extend(w);
        out.push(to_yaml(&join, "JoinConfiguration"));
    }
    Ok(Migrated {
        text: out.join("---\n"),
        warnings,
    })
}
