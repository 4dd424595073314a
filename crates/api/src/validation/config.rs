//! The checks of upstream's `ValidateInitConfiguration`, `ValidateClusterConfiguration` and
//! `ValidateJoinConfiguration`, in upstream's order and with its field paths and messages.

use super::network::{
    go_split_host_port, is_dns1123_subdomain_errors, is_wildcard_dns1123_subdomain_errors, parse_cidr,
    parse_host_port, url_scheme,
};
use super::{BadValue, ErrorList};
use crate::dynamic::parse_ip_sloppy;
use crate::v1beta3::{
    ApiEndpoint, BootstrapToken, ClusterConfiguration, Discovery, Etcd, InitConfiguration, JoinConfiguration,
    NodeRegistrationOptions,
};

/// Feature gates kubeadm 1.25 knows.
pub const KNOWN_FEATURE_GATES: [&str; 3] = [
    "PublicKeysECDSA",
    "RootlessControlPlane",
    "UnversionedKubeletConfigMap",
];

fn s(v: &str) -> BadValue {
    BadValue::Str(v.to_string())
}

/// Validates an init configuration together with its cluster configuration.
pub fn validate_init(init: &InitConfiguration, cluster: &ClusterConfiguration) -> ErrorList {
    let mut errs = ErrorList::default();
    errs.extend(validate_node_registration(
        &init.node_registration,
        "nodeRegistration",
        "/nodeRegistration",
    ));
    validate_bootstrap_tokens(&init.bootstrap_tokens, &mut errs);
    errs.extend(validate_cluster(cluster));
    validate_api_endpoint(
        &init.local_api_endpoint,
        "localAPIEndpoint",
        "/localAPIEndpoint",
        &mut errs,
    );
    errs
}

/// Validates a cluster configuration.
pub fn validate_cluster(c: &ClusterConfiguration) -> ErrorList {
    let mut errs = ErrorList::default();
    // v1beta3 has no DNS type, so upstream's kube-dns check cannot fire.
    validate_networking(c, &mut errs);
    validate_cert_sans(
        &c.api_server.cert_sans,
        "apiServer.certSANs",
        "/apiServer/certSANs",
        &mut errs,
    );
    validate_absolute_path(
        &c.certificates_dir,
        "certificatesDir",
        "/certificatesDir",
        &mut errs,
    );
    // Upstream walks a Go map here, so its order is random; ours is sorted.
    for name in c.feature_gates.keys() {
        if !KNOWN_FEATURE_GATES.contains(&name.as_str()) {
            errs.invalid(
                "featureGates",
                "/featureGates",
                BadValue::BoolMap(c.feature_gates.clone()),
                format!("{name} is not a valid feature name."),
            );
        }
    }
    if !c.control_plane_endpoint.is_empty() && parse_host_port(&c.control_plane_endpoint).is_err() {
        errs.invalid(
            "controlPlaneEndpoint",
            "/controlPlaneEndpoint",
            s(&c.control_plane_endpoint),
            "endpoint is not valid",
        );
    }
    validate_etcd(&c.etcd, &mut errs);
    validate_extra_volumes(&c.api_server.extra_volumes, "apiServer", &mut errs);
    validate_extra_volumes(
        &c.controller_manager.extra_volumes,
        "controllerManager",
        &mut errs,
    );
    validate_extra_volumes(&c.scheduler.extra_volumes, "scheduler", &mut errs);
    errs
}

/// The `type` values a hostPath volume accepts (core/v1 `HostPathType`).
const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "DirectoryOrCreate",
    "Directory",
    "FileOrCreate",
    "File",
    "Socket",
    "CharDevice",
    "BlockDevice",
];

/// Beyond upstream: extra volumes that would give a static pod the kubelet refuses to run (no name,
/// relative paths, an unknown hostPath type) are refused here, naming the field, instead of leaving a
/// control plane that never starts. Upstream v1.25 writes such manifests as they are.
fn validate_extra_volumes(volumes: &[crate::v1beta3::HostPathMount], component: &str, errs: &mut ErrorList) {
    for (i, v) in volumes.iter().enumerate() {
        let field = format!("{component}.extraVolumes[{i}]");
        let ptr = format!("/{component}/extraVolumes/{i}");
        if v.name.is_empty() {
            errs.required(&format!("{field}.name"), &format!("{ptr}/name"), "");
        } else if !is_dns1123_label(&v.name) {
            errs.invalid(
                &format!("{field}.name"),
                &format!("{ptr}/name"),
                s(&v.name),
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            );
        }
        for (name, value) in [("hostPath", &v.host_path), ("mountPath", &v.mount_path)] {
            if value.is_empty() {
                errs.required(&format!("{field}.{name}"), &format!("{ptr}/{name}"), "");
            } else {
                validate_absolute_path(value, &format!("{field}.{name}"), &format!("{ptr}/{name}"), errs);
            }
        }
        if !HOST_PATH_TYPES.contains(&v.path_type.as_str()) {
            errs.invalid(
                &format!("{field}.pathType"),
                &format!("{ptr}/pathType"),
                s(&v.path_type),
                format!(
                    "supported values: {}",
                    HOST_PATH_TYPES.map(|t| format!("{t:?}")).join(", ")
                ),
            );
        }
    }
}

/// RFC 1123 label: at most 63 lower-case alphanumerics or '-', starting and ending alphanumeric.
fn is_dns1123_label(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Validates a join configuration. `file_exists` answers upstream's `os.Stat` for file discovery.
pub fn validate_join(j: &JoinConfiguration, file_exists: &dyn Fn(&str) -> bool) -> ErrorList {
    let mut errs = ErrorList::default();
    validate_discovery(&j.discovery, file_exists, &mut errs);
    errs.extend(validate_node_registration(
        &j.node_registration,
        "nodeRegistration",
        "/nodeRegistration",
    ));
    if let Some(cp) = &j.control_plane {
        validate_api_endpoint(
            &cp.local_api_endpoint,
            "controlPlane.localAPIEndpoint",
            "/controlPlane/localAPIEndpoint",
            &mut errs,
        );
    }
    if !j.ca_cert_path.starts_with('/') || !j.ca_cert_path.ends_with(".crt") {
        errs.invalid(
            "caCertPath",
            "/caCertPath",
            s(&j.ca_cert_path),
            "the ca certificate path must be an absolute path",
        );
    }
    errs
}

/// Node name and CRI socket.
pub fn validate_node_registration(nro: &NodeRegistrationOptions, path: &str, pointer: &str) -> ErrorList {
    let mut errs = ErrorList::default();
    if nro.name.is_empty() {
        errs.required(path, pointer, "--node-name or .nodeRegistration.name in the config file is a required value. It seems like this value couldn't be automatically detected in your environment, please specify the desired value using the CLI or config file.");
    } else {
        for e in is_dns1123_subdomain_errors(&nro.name) {
            errs.invalid(
                &format!("{path}.name"),
                &format!("{pointer}/name"),
                s(&nro.name),
                e,
            );
        }
    }
    let (path, pointer) = (format!("{path}.criSocket"), format!("{pointer}/criSocket"));
    let socket = &nro.cri_socket;
    if socket.is_empty() {
        errs.invalid(&path, &pointer, s(socket), "empty CRI socket");
    } else {
        match url_scheme(socket) {
            Err(e) => errs.invalid(&path, &pointer, s(socket), format!("URL parsing error: {e}")),
            Ok(scheme) if scheme != "unix" => errs.invalid(
                &path,
                &pointer,
                s(socket),
                format!(
                    "only URL scheme \"unix\" is supported, got {}",
                    super::go_quote(&scheme)
                ),
            ),
            Ok(_) => {}
        }
    }
    errs
}

fn is_valid_token(t: &str) -> bool {
    crate::v1beta3::BootstrapTokenString::parse(t).is_ok()
}

fn validate_token(token: &str, path: &str, pointer: &str, errs: &mut ErrorList) {
    if !is_valid_token(token) {
        errs.invalid(path, pointer, s(token), "the bootstrap token is invalid");
    }
}

fn validate_bootstrap_tokens(bts: &[BootstrapToken], errs: &mut ErrorList) {
    for (i, bt) in bts.iter().enumerate() {
        let path = format!("bootstrapTokens.{i}");
        let pointer = format!("/bootstrapTokens/{i}");
        let token = bt.token.as_ref().map(|t| t.to_string()).unwrap_or_default();
        validate_token(
            &token,
            &format!("{path}.token"),
            &format!("{pointer}/token"),
            errs,
        );
        let mut invalid: Vec<&String> = bt
            .usages
            .iter()
            .filter(|u| !crate::defaults::DEFAULT_TOKEN_USAGES.contains(&u.as_str()))
            .collect();
        invalid.sort();
        invalid.dedup();
        if !invalid.is_empty() {
            let list: Vec<&str> = invalid.iter().map(|s| s.as_str()).collect();
            errs.invalid(
                &format!("{path}.usages"),
                &format!("{pointer}/usages"),
                BadValue::StrList(bt.usages.clone()),
                format!(
                    "invalid bootstrap token usage string: {}, valid usage options: signing,authentication",
                    list.join(",")
                ),
            );
        }
        let groups_path = format!("{path}.groups");
        let groups_pointer = format!("{pointer}/groups");
        if !bt.groups.is_empty() && !bt.usages.iter().any(|u| u == "authentication") {
            errs.invalid(
                &groups_path,
                &groups_pointer,
                BadValue::StrList(bt.groups.clone()),
                "token groups cannot be specified unless --usages includes \"authentication\"",
            );
        }
        for g in &bt.groups {
            if !is_bootstrap_group(g) {
                errs.invalid(
                    &groups_path,
                    &groups_pointer,
                    BadValue::StrList(bt.groups.clone()),
                    format!(
                        "bootstrap group {} is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{{0,255}}[a-z0-9]\\z)",
                        super::go_quote(g)
                    ),
                );
            }
        }
        if bt.expires.is_some() && bt.ttl.is_some() {
            errs.invalid(
                &path,
                &pointer,
                s(""),
                "the BootstrapToken .TTL and .Expires fields are mutually exclusive",
            );
        }
    }
}

/// `\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`.
fn is_bootstrap_group(g: &str) -> bool {
    let Some(rest) = g.strip_prefix("system:bootstrappers:") else {
        return false;
    };
    let b = rest.as_bytes();
    let Some((last, body)) = b.split_last() else {
        return false;
    };
    body.len() <= 255
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && body
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b':' || *c == b'-')
}

fn validate_discovery(d: &Discovery, file_exists: &dyn Fn(&str) -> bool, errs: &mut ErrorList) {
    if d.bootstrap_token.is_none() && d.file.is_none() {
        errs.invalid(
            "discovery",
            "/discovery",
            s(""),
            "bootstrapToken or file must be set",
        );
    }
    if d.bootstrap_token.is_some() && d.file.is_some() {
        errs.invalid(
            "discovery",
            "/discovery",
            s(""),
            "bootstrapToken and file cannot both be set",
        );
    }
    if let Some(b) = &d.bootstrap_token {
        let (path, pointer) = ("discovery.bootstrapToken", "/discovery/bootstrapToken");
        if b.api_server_endpoint.is_empty() {
            errs.required(path, pointer, "APIServerEndpoint is not set");
        }
        if b.ca_cert_hashes.is_empty() && !b.unsafe_skip_ca_verification {
            errs.invalid(path, pointer, s(""), "using token-based discovery without caCertHashes can be unsafe. Set unsafeSkipCAVerification as true in your kubeadm config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue");
        }
        validate_token(
            &b.token,
            "discovery.bootstrapToken.token",
            "/discovery/bootstrapToken/token",
            errs,
        );
        if let Err(e) = go_split_host_port(&b.api_server_endpoint) {
            errs.invalid(
                "discovery.bootstrapToken.apiServerEndpoint",
                "/discovery/bootstrapToken/apiServerEndpoint",
                s(&b.api_server_endpoint),
                e.to_string(),
            );
        }
        validate_token(
            &d.tls_bootstrap_token,
            "discovery.tlsBootstrapToken",
            "/discovery/tlsBootstrapToken",
            errs,
        );
    }
    if let Some(f) = &d.file {
        let (path, pointer) = ("discovery.file.kubeConfigPath", "/discovery/file/kubeConfigPath");
        let p = &f.kube_config_path;
        match url_scheme(p) {
            Err(_) => errs.invalid(path, pointer, s(p), "not a valid HTTPS URL or a file on disk"),
            Ok(scheme) if scheme.is_empty() => {
                if !file_exists(p) {
                    errs.invalid(path, pointer, s(p), "not a valid HTTPS URL or a file on disk");
                }
            }
            Ok(scheme) if scheme != "https" => {
                errs.invalid(path, pointer, s(p), "if a URL is used, the scheme must be https")
            }
            Ok(_) => {}
        }
        if !d.tls_bootstrap_token.is_empty() {
            validate_token(
                &d.tls_bootstrap_token,
                "discovery.tlsBootstrapToken",
                "/discovery/tlsBootstrapToken",
                errs,
            );
        }
    }
}

fn validate_etcd(e: &Etcd, errs: &mut ErrorList) {
    match (&e.local, &e.external) {
        (None, None) => errs.invalid(
            "etcd",
            "/etcd",
            s(""),
            "either .Etcd.Local or .Etcd.External is required",
        ),
        (Some(_), Some(_)) => errs.invalid(
            "etcd",
            "/etcd",
            s(""),
            ".Etcd.Local and .Etcd.External are mutually exclusive",
        ),
        (Some(local), None) => {
            validate_absolute_path(&local.data_dir, "etcd.local.dataDir", "/etcd/local/dataDir", errs);
            validate_cert_sans(
                &local.server_cert_sans,
                "etcd.local.serverCertSANs",
                "/etcd/local/serverCertSANs",
                errs,
            );
            validate_cert_sans(
                &local.peer_cert_sans,
                "etcd.local.peerCertSANs",
                "/etcd/local/peerCertSANs",
                errs,
            );
        }
        (None, Some(ext)) => {
            let (path, pointer) = ("etcd.external", "/etcd/external");
            let require_https =
                !(ext.ca_file.is_empty() && ext.cert_file.is_empty() && ext.key_file.is_empty());
            if ext.cert_file.is_empty() != ext.key_file.is_empty() {
                errs.invalid(
                    path,
                    pointer,
                    s(""),
                    "either both or none of .Etcd.External.CertFile and .Etcd.External.KeyFile must be set",
                );
            }
            if !ext.cert_file.is_empty() && !ext.key_file.is_empty() && ext.ca_file.is_empty() {
                errs.invalid(path, pointer, s(""), "setting .Etcd.External.CertFile and .Etcd.External.KeyFile requires .Etcd.External.CAFile");
            }
            for u in ext.endpoints.iter().flatten() {
                let (p, ptr) = ("etcd.external.endpoints", "/etcd/external/endpoints");
                match url_scheme(u) {
                    Err(e) => errs.invalid(p, ptr, s(u), format!("URL parse error: {e}")),
                    Ok(scheme) => {
                        if require_https && scheme != "https" {
                            errs.invalid(p, ptr, s(u), "the URL must be using the HTTPS scheme");
                        }
                        if scheme.is_empty() {
                            errs.invalid(p, ptr, s(u), "the URL without scheme is not allowed");
                        }
                    }
                }
            }
            for (v, p, ptr) in [
                (&ext.ca_file, "etcd.external.caFile", "/etcd/external/caFile"),
                (
                    &ext.cert_file,
                    "etcd.external.certFile",
                    "/etcd/external/certFile",
                ),
                (&ext.key_file, "etcd.external.keyFile", "/etcd/external/keyFile"),
            ] {
                if !v.is_empty() {
                    validate_absolute_path(v, p, ptr, errs);
                }
            }
        }
    }
}

fn validate_cert_sans(sans: &[String], path: &str, pointer: &str, errs: &mut ErrorList) {
    for san in sans {
        let e1 = is_dns1123_subdomain_errors(san);
        if e1.is_empty() {
            continue;
        }
        let e2 = is_wildcard_dns1123_subdomain_errors(san);
        if e2.is_empty() || parse_ip_sloppy(san).is_some() {
            continue;
        }
        errs.invalid(
            path,
            pointer,
            s(san),
            format!(
                "altname is not a valid IP address, DNS label or a DNS label with subdomain wildcards: {}; {}",
                e1.join("; "),
                e2.join("; ")
            ),
        );
    }
}

fn validate_absolute_path(p: &str, path: &str, pointer: &str, errs: &mut ErrorList) {
    if !p.starts_with('/') {
        errs.invalid(path, pointer, s(p), "path is not absolute");
    }
}

fn validate_api_endpoint(ep: &ApiEndpoint, path: &str, pointer: &str, errs: &mut ErrorList) {
    if parse_ip_sloppy(&ep.advertise_address).is_none() {
        errs.invalid(
            &format!("{path}.advertiseAddress"),
            &format!("{pointer}/advertiseAddress"),
            s(&ep.advertise_address),
            "ip address is not valid",
        );
    }
    if !(1..=65535).contains(&ep.bind_port) {
        errs.invalid(
            &format!("{path}.bindPort"),
            &format!("{pointer}/bindPort"),
            BadValue::Int(i64::from(ep.bind_port)),
            "port number is not valid",
        );
    }
}

fn validate_networking(c: &ClusterConfiguration, errs: &mut ErrorList) {
    let n = &c.networking;
    // Upstream names these fields without the `networking.` prefix.
    for e in is_dns1123_subdomain_errors(&n.dns_domain) {
        errs.invalid("dnsDomain", "/networking/dnsDomain", s(&n.dns_domain), e);
    }
    if !n.service_subnet.is_empty() {
        let (p, ptr) = ("serviceSubnet", "/networking/serviceSubnet");
        validate_subnets(&n.service_subnet, 10, p, ptr, errs);
        for cidr in n.service_subnet.split(',').filter_map(parse_cidr) {
            let bits = cidr.bits();
            if bits - cidr.prefix > 20 {
                errs.invalid(
                    p,
                    ptr,
                    s(&cidr.to_string()),
                    format!("specified service subnet is too large; for {bits}-bit addresses, the mask must be >= {}", bits - 20),
                );
            }
        }
    }
    if !n.pod_subnet.is_empty() {
        let (p, ptr) = ("podSubnet", "/networking/podSubnet");
        validate_subnets(&n.pod_subnet, 14, p, ptr, errs);
        let allocate = c.controller_manager.extra_args.get("allocate-node-cidrs");
        if allocate.map(String::as_str) != Some("false") {
            let all: Option<Vec<_>> = n.pod_subnet.split(',').map(parse_cidr).collect();
            for cidr in all.unwrap_or_default() {
                let v6 = cidr.ip.is_ipv6();
                let arg = if v6 {
                    "node-cidr-mask-size-ipv6"
                } else {
                    "node-cidr-mask-size-ipv4"
                };
                let node_mask = match c.controller_manager.extra_args.get(arg).filter(|v| !v.is_empty()) {
                    Some(v) => match go_atoi(v) {
                        Some(m) => m,
                        None => {
                            errs.invalid(
                                p,
                                ptr,
                                s(&cidr.to_string()),
                                format!("could not parse the value of the kube-controller-manager flag {arg} as an integer: strconv.Atoi: parsing {}: invalid syntax", super::go_quote(v)),
                            );
                            continue;
                        }
                    },
                    None if v6 => 64,
                    None => 24,
                };
                let mask = i64::from(cidr.prefix);
                if mask > node_mask {
                    errs.invalid(p, ptr, s(&cidr.to_string()), format!("the size of pod subnet with mask {mask} is smaller than the size of node subnet with mask {node_mask}"));
                } else if node_mask - mask > 16 {
                    errs.invalid(p, ptr, s(&cidr.to_string()), format!("pod subnet mask ({mask}) and node-mask ({node_mask}) difference is greater than 16"));
                }
            }
        }
    }
}

fn go_atoi(v: &str) -> Option<i64> {
    let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// The warnings upstream's `ValidateIPNetFromString` logs as it validates the service subnet, then
/// the pod subnet: a subnet within, or holding, the IPv6 site-local range `fec0::/10` (deprecated
/// by RFC 3879). Nothing for a list that does not parse (validation refuses it).
pub fn subnet_warnings(c: &ClusterConfiguration) -> Vec<String> {
    let site_local = |ip: std::net::IpAddr| match ip {
        std::net::IpAddr::V6(v6) => u128::from(v6) >> 118 == 0xfec0u128 << 112 >> 118,
        std::net::IpAddr::V4(_) => false,
    };
    let mut out = Vec::new();
    for list in [&c.networking.service_subnet, &c.networking.pod_subnet] {
        if list.is_empty() {
            continue;
        }
        let Some(subnets) = list.split(',').map(parse_cidr).collect::<Option<Vec<_>>>() else {
            continue;
        };
        for cidr in subnets {
            let holds_it = match cidr.network() {
                std::net::IpAddr::V6(net) => {
                    let mask = u128::MAX.checked_shl(128 - cidr.prefix).unwrap_or(0);
                    0xfec0u128 << 112 & mask == u128::from(net)
                }
                std::net::IpAddr::V4(_) => false,
            };
            if site_local(cidr.network()) || holds_it {
                out.push(format!(
                    "the subnet {cidr} contains IPv6 site-local addresses that belong to fec0::/10 which has been deprecated by rfc3879"
                ));
            }
        }
    }
    out
}

/// Upstream's `ValidateIPNetFromString`.
fn validate_subnets(list: &str, min_addrs: i64, path: &str, pointer: &str, errs: &mut ErrorList) {
    let Some(subnets) = list.split(',').map(parse_cidr).collect::<Option<Vec<_>>>() else {
        errs.invalid(path, pointer, s(list), "couldn't parse subnet");
        return;
    };
    let dual_stack_msg =
        "expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking";
    let same_family = subnets.len() == 2 && subnets[0].ip.is_ipv4() == subnets[1].ip.is_ipv4();
    if subnets.len() > 2 || same_family {
        errs.invalid(path, pointer, s(list), dual_stack_msg);
    }
    for cidr in &subnets {
        let n = cidr.range_size();
        if n < min_addrs {
            errs.invalid(
                path,
                pointer,
                s(&cidr.to_string()),
                format!("subnet with {n} address(es) is too small, the minimum is {min_addrs}"),
            );
        }
    }
}
