//! The addons (upstream's `app/phases/addons`), applied by `kubeadm init`'s `addon` phases (bound in
//! `init/addon.rs`) and by `upgrade apply`: CoreDNS (keeping the replica count of a CoreDNS
//! already deployed, and a Corefile already there) and kube-proxy, object by object in upstream's
//! order and with its write policy for each kind. `--print-manifest` is handled by the CLI.

use kubeadm_core::addons::{self, KubeProxyInputs, coredns};
use kubeadm_effects::cluster::{Cluster, ClusterError, ListOptions, Resource};
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use kubeadm_api::internal::InitConfig;
use kubeadm_effects::report::Reporter;

use crate::ClusterConnectError;
use crate::InitData;
use crate::upload_config::resource_of;

/// Why an addon was not applied (upstream's texts).
#[derive(Debug, thiserror::Error)]
pub enum AddonPhaseError {
    /// No client.
    #[error(transparent)]
    Client(#[from] ClusterConnectError),
    /// The objects could not be built.
    #[error(transparent)]
    Build(#[from] addons::AddonError),
    /// The deployed CoreDNS could not be listed.
    #[error("couldn't retrieve DNS addon deployments: {0}")]
    ListDns(#[source] ClusterError),
    /// More than one CoreDNS deployment.
    #[error("multiple DNS addon deployments found: {0}")]
    ManyDns(String),
    /// An object could not be written.
    #[error(transparent)]
    Api(#[from] ClusterError),
}

/// Writes one addon object with the policy upstream uses for its kind.
fn apply(c: &dyn Cluster, is_coredns: bool, obj: &Value) -> Result<(), ClusterError> {
    let res = resource_of(obj);
    match res.plural.as_str() {
        "configmaps" if is_coredns => apply_corefile(c, &res, obj),
        "serviceaccounts" => c.create_or_keep(&res, obj),
        "roles" | "rolebindings" => c.create_or_update_with_retry(&res, obj),
        "services" if is_coredns => create_dns_service(c, &res, obj),
        _ => c.create_or_update(&res, obj),
    }
}

/// Upstream's handling of the CoreDNS ConfigMap (`GetCoreDNSInfo`, then its choice): absent, or
/// holding an empty or default Corefile, it is created or updated with the new one; a Corefile the
/// user edited is kept. (Upstream would migrate an edited Corefile whose plugins the new CoreDNS
/// version deprecates; no 1.8 or 1.9 release it can come from deprecates any, so it is kept too.)
fn apply_corefile(c: &dyn Cluster, res: &Resource, obj: &Value) -> Result<(), ClusterError> {
    let existing = match c.get(res, kubeadm_core::cluster::meta::NAMESPACE_SYSTEM, "coredns") {
        Err(e) if e.is_not_found() => return c.create_or_update(res, obj),
        Err(e) => return Err(e.context("unable to fetch CoreDNS current installed version and ConfigMap.")),
        Ok(cm) => cm,
    };
    let corefile = existing
        .pointer("/data/Corefile")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !corefile.is_empty() {
        // The installed version (upstream reads it here to decide on a migration).
        let options = ListOptions {
            label_selector: "k8s-app=kube-dns".into(),
            ..ListOptions::default()
        };
        c.list(
            &Resource::new("apps", "v1", "deployments"),
            kubeadm_core::cluster::meta::NAMESPACE_SYSTEM,
            &options,
        )
        .map_err(|e| e.context("unable to fetch CoreDNS current installed version and ConfigMap."))?;
    }
    let new = obj
        .pointer("/data/Corefile")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    if corefile.is_empty() || words(corefile) == words(new) {
        c.create_or_update(res, obj)
    } else {
        c.create_or_retain(res, obj)
    }
}

/// Upstream's `createDNSService`: a second CREATE of the Service fails as Invalid (its cluster IP
/// is taken) rather than AlreadyExists, and both mean "update it".
fn create_dns_service(c: &dyn Cluster, res: &Resource, obj: &Value) -> Result<(), ClusterError> {
    match c.create(res, obj) {
        Ok(_) => Ok(()),
        Err(e) if !e.is_already_exists() && !matches!(e.root(), ClusterError::Invalid { .. }) => {
            Err(e.context("unable to create a new DNS service"))
        }
        Err(_) => c
            .update(res, obj)
            .map(|_| ())
            .map_err(|e| e.context("unable to create/update the DNS service")),
    }
}

/// `deployedDNSReplicas`: the replicas of the one CoreDNS deployment, or the default for none.
fn deployed_dns_replicas(c: &dyn Cluster) -> Result<i32, AddonPhaseError> {
    let deployments = Resource::new("apps", "v1", "deployments");
    let options = ListOptions {
        label_selector: "k8s-app=kube-dns".into(),
        ..ListOptions::default()
    };
    let items = c
        .list(
            &deployments,
            kubeadm_core::cluster::meta::NAMESPACE_SYSTEM,
            &options,
        )
        .map_err(AddonPhaseError::ListDns)?;
    match items.as_slice() {
        [] => Ok(coredns::DEFAULT_REPLICAS),
        [one] => Ok(one
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1)),
        many => Err(AddonPhaseError::ManyDns(
            many.iter()
                .map(|d| kubeadm_effects::cluster::object_key(d).1.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

/// `addon coredns`.
pub(crate) fn run_coredns(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(AddonPhaseError::Client)?;
    ensure_coredns(c, &data.cfg, &*data.effects.reporter)?;
    Ok(())
}

/// Upstream's `EnsureDNSAddon`: the CoreDNS objects written, keeping the deployed replica count.
pub(crate) fn ensure_coredns(
    c: &dyn Cluster,
    cfg: &InitConfig,
    reporter: &dyn Reporter,
) -> Result<(), AddonPhaseError> {
    let replicas = deployed_dns_replicas(c)?;
    let objects =
        addons::coredns_objects(&cfg.cluster, &cfg.resolved, replicas).map_err(AddonPhaseError::Build)?;
    for obj in &objects {
        apply(c, true, obj).map_err(AddonPhaseError::Api)?;
    }
    reporter.out("[addons] Applied essential addon: CoreDNS\n");
    Ok(())
}

/// `addon kube-proxy`.
pub(crate) fn run_kube_proxy(data: &mut InitData) -> Result<(), PhaseError> {
    let c = data.cluster.client().map_err(AddonPhaseError::Client)?;
    ensure_kube_proxy(
        c,
        &data.cfg,
        &data.manifest_facts.environment,
        &*data.effects.reporter,
    )?;
    Ok(())
}

/// Upstream's `EnsureProxyAddon`: the kube-proxy objects written, with the host's proxy variables.
pub(crate) fn ensure_kube_proxy(
    c: &dyn Cluster,
    cfg: &InitConfig,
    environment: &[(String, String)],
    reporter: &dyn Reporter,
) -> Result<(), AddonPhaseError> {
    let config = cfg
        .component_configs
        .kube_proxy
        .as_ref()
        .ok_or(AddonPhaseError::Build(addons::AddonError::NoKubeProxyConfig))?;
    let inputs = KubeProxyInputs {
        cluster: &cfg.cluster,
        resolved: &cfg.resolved,
        local_api_endpoint: &cfg.init.local_api_endpoint,
        config,
    };
    // Upstream's `GetProxyEnvVars`: the host's `*_proxy` variables with a value, in order.
    let proxy_env: Vec<(String, String)> = environment
        .iter()
        .filter(|(k, v)| k.to_lowercase().ends_with("_proxy") && !v.is_empty())
        .cloned()
        .collect();
    let (_, warning) =
        addons::kube_proxy::control_plane_url_with_warning(&cfg.cluster, &cfg.init.local_api_endpoint)
            .map_err(AddonPhaseError::Build)?;
    if let Some(w) = warning {
        reporter.warn("proxy.go", w);
    }
    let objects = addons::kube_proxy_objects(&inputs, cfg.user_supplied.1, &proxy_env)
        .map_err(AddonPhaseError::Build)?;
    for obj in &objects {
        apply(c, false, obj).map_err(AddonPhaseError::Api)?;
    }
    reporter.out("[addons] Applied essential addon: kube-proxy\n");
    Ok(())
}
