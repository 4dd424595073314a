//! Dynamic defaults (upstream's `SetInitDynamicDefaults`, `SetJoinDynamicDefaults` and friends):
//! defaults that depend on the host or on randomness. The host is described by [`HostFacts`], filled
//! in by the caller, so this module does no I/O.

use std::net::IpAddr;

use crate::componentconfig::ComponentConfigs;
use crate::componentconfig::kubelet::default_kubelet;
use crate::componentconfig::kubeproxy::default_kube_proxy;
use crate::defaults::{DEFAULT_CRI_SOCKET, KNOWN_CRI_SOCKETS};
use crate::v1beta3::{
    ApiEndpoint, BootstrapToken, BootstrapTokenString, ClusterConfiguration, InitConfiguration,
    JoinConfiguration, NodeRegistrationOptions, Taint,
};
use crate::version::{self, VersionError};

/// What dynamic defaulting needs to know about the host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostFacts {
    /// `os.Hostname()`.
    pub hostname: String,
    /// The address upstream's `ChooseHostInterface` finds when it tries IPv4: on the interfaces the
    /// default IPv4 routes transit (else on the loopback interface), or on any interface when there
    /// is no route table.
    pub default_route_ipv4: Option<IpAddr>,
    /// The same for IPv6. Upstream tries IPv4 then IPv6, or IPv6 first when the advertise address
    /// asked for is IPv6 (`::`).
    pub default_route_ipv6: Option<IpAddr>,
    /// Why that choice fails when neither family gives an address, in upstream's words; `None` when
    /// the route tables have no default route (upstream then warns and advertises 0.0.0.0).
    pub host_address_error: Option<String>,
    /// Upstream's `ChooseBindAddressForInterface("lo")`: the first global IPv4 address on the
    /// loopback interface when it is up, else its first global IPv6 one (used when the advertise
    /// address is a loopback address).
    pub loopback_address: Option<IpAddr>,
    /// Which of [`KNOWN_CRI_SOCKETS`] exist as sockets on the host.
    pub existing_cri_sockets: Vec<String>,
    /// Whether the systemd-resolved service is active (the kubelet then gets its resolv.conf).
    pub systemd_resolved_active: bool,
    /// Why that could not be asked, when neither `systemctl` nor `openrc` is on the PATH (upstream's
    /// `GetInitSystem` error, which it logs as a warning while defaulting the kubelet configuration).
    pub init_system_error: Option<String>,
}

/// Where randomness and release markers come from.
#[allow(missing_debug_implementations)]
pub struct DynamicInputs<'a> {
    /// The host.
    pub host: &'a HostFacts,
    /// A fresh random bootstrap token.
    pub new_token: &'a mut dyn FnMut() -> BootstrapTokenString,
    /// Fetches a release marker (see [`version::resolve`]); [`version::offline`] never connects.
    pub fetch_version: &'a dyn Fn(&str) -> Result<String, version::FetchError>,
}

/// Why dynamic defaulting failed; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DynamicError {
    /// The hostname is blank.
    #[error("empty hostname is invalid")]
    EmptyHostname,
    /// More than one CRI socket exists and none is configured.
    #[error(
        "Found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field in the kubeadm configuration file: {}",
        .0.join(", ")
    )]
    MultipleCriSockets(Vec<String>),
    /// The advertise address is not an IP address.
    #[error("couldn't use \"{0}\" as \"apiserver-advertise-address\", must be ipv4 or ipv6 address")]
    BadAdvertiseAddress(String),
    /// A loopback advertise address, but no global address on the loopback interface.
    #[error("unable to select an IP from lo network interface")]
    NoLoopbackAddress,
    /// No advertise address given and none found on the host (see [`HostFacts::host_address_error`]).
    #[error("{0}")]
    NoHostAddress(String),
    /// The Kubernetes version could not be resolved.
    #[error(transparent)]
    Version(#[from] VersionError),
    /// `controlPlaneEndpoint` is not `host[:port]`.
    #[error(transparent)]
    ControlPlaneEndpoint(crate::validation::HostPortError),
}

/// What defaulting adds to a `ClusterConfiguration` beyond its wire form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedCluster {
    /// `ci/<version>` when a CI version was asked for.
    pub ci_kubernetes_version: Option<String>,
    /// The CI image registry, when a CI version is used with the default registry.
    pub ci_image_repository: Option<String>,
}

/// Applies dynamic defaults to an init configuration (upstream's `SetInitDynamicDefaults`),
/// including kubeadm's defaults of the component configs (both are created when absent); pushes
/// what upstream would log as warnings onto `warnings`, in its order, also those it logs before an
/// error.
pub fn default_init_dynamic(
    init: &mut InitConfiguration,
    cluster: &mut ClusterConfiguration,
    component_configs: &mut ComponentConfigs,
    inputs: &mut DynamicInputs<'_>,
    warnings: &mut Vec<String>,
) -> Result<ResolvedCluster, DynamicError> {
    default_bootstrap_tokens(&mut init.bootstrap_tokens, inputs.new_token);
    default_node_registration(&mut init.node_registration, true, inputs.host, warnings)?;
    default_api_endpoint(&mut init.local_api_endpoint, inputs.host, warnings)?;
    // Upstream defaults the component configs inside SetClusterDynamicDefaults, before resolving
    // the version, in the order of its handler list: kube-proxy, then the kubelet.
    let kp = component_configs.kube_proxy.get_or_insert_with(Default::default);
    warnings.extend(default_kube_proxy(kp, cluster, &init.local_api_endpoint));
    let kc = component_configs.kubelet.get_or_insert_with(Default::default);
    warnings.extend(default_kubelet(kc, cluster, inputs.host.systemd_resolved_active));
    // Upstream asks the init system last, and then has no resolv.conf to recommend.
    if let Some(e) = &inputs.host.init_system_error {
        warnings.push(format!("cannot determine if systemd-resolved is active: {e}"));
    }
    default_cluster_dynamic(cluster, &init.local_api_endpoint, inputs.fetch_version, warnings)
}

/// Applies dynamic defaults to a join configuration; returns upstream's warnings.
pub fn default_join_dynamic(
    join: &mut JoinConfiguration,
    host: &HostFacts,
) -> Result<Vec<String>, DynamicError> {
    let mut warnings = Vec::new();
    let control_plane = join.control_plane.is_some();
    default_node_registration(&mut join.node_registration, control_plane, host, &mut warnings)?;
    if let Some(cp) = &mut join.control_plane {
        default_api_endpoint(&mut cp.local_api_endpoint, host, &mut warnings)?;
    }
    Ok(warnings)
}

/// Gives every token without a value a fresh random one.
pub fn default_bootstrap_tokens(
    tokens: &mut [BootstrapToken],
    new_token: &mut dyn FnMut() -> BootstrapTokenString,
) {
    for bt in tokens {
        let has = bt.token.as_ref().is_some_and(|t| !t.to_string().is_empty());
        if !has {
            bt.token = Some(new_token());
        }
    }
}

/// Node name from the host, the control-plane taint, and the CRI socket.
pub fn default_node_registration(
    nr: &mut NodeRegistrationOptions,
    control_plane_taint: bool,
    host: &HostFacts,
    warnings: &mut Vec<String>,
) -> Result<(), DynamicError> {
    let name = if nr.name.is_empty() {
        &host.hostname
    } else {
        &nr.name
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(DynamicError::EmptyHostname);
    }
    nr.name = name.to_lowercase();
    if control_plane_taint && nr.taints.is_none() {
        nr.taints = Some(vec![Taint::control_plane()]);
    }
    if nr.cri_socket.is_empty() {
        let found: Vec<String> = KNOWN_CRI_SOCKETS
            .iter()
            .filter(|s| host.existing_cri_sockets.iter().any(|e| e == *s))
            .map(|s| s.to_string())
            .collect();
        nr.cri_socket = match found.len() {
            0 => DEFAULT_CRI_SOCKET.to_string(),
            1 => found[0].clone(),
            _ => return Err(DynamicError::MultipleCriSockets(found)),
        };
    } else if !nr.cri_socket.starts_with("unix") {
        warnings.push(format!(
            "Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. Automatically prepending scheme \"unix\" to the \"criSocket\" with value {}. Please update your configuration!",
            crate::gofmt::quote(&nr.cri_socket)
        ));
        nr.cri_socket = format!("unix://{}", nr.cri_socket);
    }
    Ok(())
}

/// Reads an IP address as Go's `ParseIPSloppy` (IPv4 octets may have leading zeros).
pub fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse().ok();
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::from(octets))
}

/// Formats an IP as Go's `net.IP.String()` (IPv4-mapped IPv6 as dotted IPv4).
pub fn go_ip_string(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// Picks the advertise address as upstream's `SetAPIEndpointDynamicDefaults`: a loopback address
/// stands for the loopback interface's global address; an empty or unspecified one for the host's
/// address, of the unspecified address's family when the host has one (`::` prefers IPv6); any other
/// address is kept.
pub fn default_api_endpoint(
    ep: &mut ApiEndpoint,
    host: &HostFacts,
    warnings: &mut Vec<String>,
) -> Result<(), DynamicError> {
    let ip = parse_ip_sloppy(&ep.advertise_address);
    if ip.is_none() && !ep.advertise_address.is_empty() {
        return Err(DynamicError::BadAdvertiseAddress(ep.advertise_address.clone()));
    }
    // Go's `IsLoopback`, `IsUnspecified` and `To4` see an IPv4-mapped address as IPv4.
    let canonical = ip.map(|ip| ip.to_canonical());
    if canonical.is_some_and(|ip| ip.is_loopback()) {
        let lo = host.loopback_address.ok_or(DynamicError::NoLoopbackAddress)?;
        ep.advertise_address = go_ip_string(lo);
        return Ok(());
    }
    let chosen = match (ip, canonical) {
        (Some(ip), Some(c)) if !c.is_unspecified() => ip,
        _ => {
            let (ipv4, ipv6) = (host.default_route_ipv4, host.default_route_ipv6);
            let found = if canonical.is_some_and(|c| c.is_ipv6()) {
                ipv6.or(ipv4)
            } else {
                ipv4.or(ipv6)
            };
            match (found, &host.host_address_error) {
                (Some(ip), _) => ip,
                (None, Some(e)) => return Err(DynamicError::NoHostAddress(e.clone())),
                (None, None) => {
                    warnings.push("WARNING: could not obtain a bind address for the API Server: no default routes found in \"/proc/net/route\" or \"/proc/net/ipv6_route\"; using: 0.0.0.0".to_string());
                    IpAddr::from([0, 0, 0, 0])
                }
            }
        }
    };
    ep.advertise_address = go_ip_string(chosen);
    Ok(())
}

/// Version resolution, `controlPlaneEndpoint` port and lower-case SANs.
pub fn default_cluster_dynamic(
    cluster: &mut ClusterConfiguration,
    local: &ApiEndpoint,
    fetch: &dyn Fn(&str) -> Result<String, version::FetchError>,
    warnings: &mut Vec<String>,
) -> Result<ResolvedCluster, DynamicError> {
    let mut resolved = ResolvedCluster::default();
    if version::is_ci_version(&cluster.kubernetes_version)
        && cluster.image_repository == crate::defaults::DEFAULT_IMAGE_REPOSITORY
    {
        resolved.ci_image_repository = Some(crate::defaults::DEFAULT_CI_IMAGE_REPOSITORY.to_string());
    }
    let v = version::resolve(&cluster.kubernetes_version, fetch)?;
    warnings.extend(v.warnings);
    resolved.ci_kubernetes_version = v.ci_version;
    cluster.kubernetes_version = v.version;
    if !cluster.control_plane_endpoint.is_empty() {
        let (host, port) = crate::validation::parse_host_port(&cluster.control_plane_endpoint)
            .map_err(DynamicError::ControlPlaneEndpoint)?;
        if port.is_empty() {
            cluster.control_plane_endpoint = if host.contains(':') {
                format!("[{host}]:{}", local.bind_port)
            } else {
                format!("{host}:{}", local.bind_port)
            };
        }
    }
    for san in &mut cluster.api_server.cert_sans {
        *san = san.to_lowercase();
    }
    Ok(resolved)
}
