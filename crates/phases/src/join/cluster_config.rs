//! What a joining node learns from the cluster before its phases act (upstream's `joinData`
//! `TLSBootstrapCfg` and `InitCfg`): discovery, once per run, then the cluster's configuration
//! fetched with the TLS bootstrap credentials (upstream's
//! `fetchInitConfigurationFromJoinConfiguration`).

use kubeadm_workflow::PhaseError;
use serde_json::{Value, json};

use crate::config_from_cluster::{FetchError, fetch_new_node_config, log_config_warnings};
use crate::join::discovery::kubeconfig as kc;
use crate::join::discovery::tls_bootstrap_config;
use crate::join::{ClientSource, JoinData};

/// Discovery, once per run (upstream's `TLSBootstrapCfg`).
fn ensure_discovered(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.tls_bootstrap.is_none() {
        data.effects
            .reporter
            .info(1, "join.go", "[preflight] Discovering cluster-info");
        data.tls_bootstrap = Some(tls_bootstrap_config(data)?);
    }
    Ok(())
}

/// The cluster's configuration, fetched once per run (upstream's `InitCfg`); renames the cluster of
/// the TLS bootstrap kubeconfig to the cluster's name, as upstream does.
pub(crate) fn ensure_init_cfg(data: &mut JoinData) -> Result<(), PhaseError> {
    if data.init_cfg.is_some() {
        return Ok(());
    }
    ensure_discovered(data)?;
    let mut tls = data.tls_bootstrap.clone().unwrap_or(Value::Null);
    data.effects
        .reporter
        .info(1, "join.go", "[preflight] Fetching init configuration");
    data.effects
        .reporter
        .info(1, "join.go", "[preflight] Retrieving KubeConfig objects");
    let client = data
        .client(&ClientSource::Kubeconfig(&kc::to_text(&tls)))
        .map_err(FetchError::Client)?;
    let mut cfg = fetch_new_node_config(&*client, &data.host, &*data.effects.reporter, "preflight")?;
    // What defaulting the cluster's configuration warned of, as upstream logs it (e.g. that the
    // init system cannot say whether systemd-resolved is active), as `upgrade` does.
    log_config_warnings(&*data.effects.reporter, &cfg.warnings);
    cfg.init.node_registration = data.cfg.node_registration.clone();
    if let Some(cp) = &data.cfg.control_plane {
        cfg.init.local_api_endpoint = cp.local_api_endpoint.clone();
    }
    let name = cfg.cluster.cluster_name.clone();
    let cluster = kc::current_cluster(&tls).cloned().unwrap_or(Value::Null);
    tls["clusters"] = json!([{"name": name, "cluster": cluster}]);
    let current = kubeadm_core::kubeconfig::Config::from_value(&tls).current_context;
    if let Some(contexts) = tls.get_mut("contexts").and_then(Value::as_array_mut) {
        for c in contexts.iter_mut().filter(|c| c["name"] == current.as_str()) {
            c["context"]["cluster"] = json!(name);
        }
    }
    data.tls_bootstrap = Some(tls);
    data.init_cfg = Some(cfg);
    Ok(())
}
