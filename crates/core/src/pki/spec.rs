//! The certificate table: every certificate kubeadm issues, with its file base name, signing CA,
//! subject, key usages and SAN rule, plus the inputs the SAN rules read. One table drives `certs all`,
//! the per-certificate phases, CSR generation, the existing-file checks and `check-expiration`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::keys::KeyAlgorithm;
use super::names::{is_dns1123_subdomain, is_wildcard_dns1123_subdomain, parse_host_port, parse_ip_sloppy};

/// Validity of CA certificates: ten 365-day years.
pub const CA_VALIDITY_SECS: i64 = 10 * 365 * 86_400;
/// Validity of every signed certificate: one 365-day year (`CertificateValidity`).
pub const CERT_VALIDITY_SECS: i64 = 365 * 86_400;
/// How far a new CA's NotBefore is moved into the past (`CertificateBackdate`).
pub const CA_BACKDATE_SECS: i64 = 5 * 60;
/// Mode of `.crt` files (client-go `certutil.WriteCert`).
pub const CERT_FILE_MODE: u32 = 0o644;
/// Mode of `.key` files and of `sa.pub` (client-go `keyutil.WriteKey` writes both).
pub const KEY_FILE_MODE: u32 = 0o600;
/// Mode of `.csr` files.
pub const CSR_FILE_MODE: u32 = 0o600;
/// Mode of kubeconfig files.
pub const KUBECONFIG_FILE_MODE: u32 = 0o600;
/// Mode of directories created for certificates and keys (`etcd/` included).
pub const PKI_DIR_MODE: u32 = 0o755;
/// Base name of the service-account key pair (`sa.key`, `sa.pub`).
pub const SA_KEY_BASE_NAME: &str = "sa";

/// How kubeadm runs etcd, as far as certificates care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtcdMode {
    /// Stacked etcd: kubeadm issues the etcd CA and certificates, with these extra SANs.
    Local {
        /// `etcd.local.serverCertSANs`.
        server_cert_sans: Vec<String>,
        /// `etcd.local.peerCertSANs`.
        peer_cert_sans: Vec<String>,
    },
    /// External etcd: no etcd certificates are issued.
    External,
}

/// Everything the certificate and kubeconfig builders read from the configuration. The phases fill it
/// from the internal config model; it is kept plain so the PKI code does not depend on the API crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PkiInputs {
    /// `nodeRegistration.name`.
    pub node_name: String,
    /// `localAPIEndpoint.advertiseAddress`, as written.
    pub advertise_address: String,
    /// `localAPIEndpoint.bindPort`.
    pub bind_port: u16,
    /// `controlPlaneEndpoint`, empty when unset.
    pub control_plane_endpoint: String,
    /// `networking.serviceSubnet` (possibly two CIDRs separated by a comma).
    pub service_subnet: String,
    /// `networking.dnsDomain`.
    pub dns_domain: String,
    /// `apiServer.certSANs`.
    pub cert_sans: Vec<String>,
    /// `clusterName`.
    pub cluster_name: String,
    /// Local or external etcd.
    pub etcd: EtcdMode,
    /// RSA unless the `PublicKeysECDSA` feature gate is on.
    pub key_algorithm: KeyAlgorithm,
}

/// Identifies one entry of the certificate table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CertId {
    /// The cluster CA.
    Ca,
    /// The API server serving certificate.
    ApiServer,
    /// The API server's client certificate towards kubelets.
    ApiServerKubeletClient,
    /// The front-proxy CA.
    FrontProxyCa,
    /// The front-proxy client certificate.
    FrontProxyClient,
    /// The etcd CA.
    EtcdCa,
    /// The etcd serving certificate.
    EtcdServer,
    /// The etcd peer certificate.
    EtcdPeer,
    /// The etcd healthcheck client certificate.
    EtcdHealthcheckClient,
    /// The API server's client certificate towards etcd.
    ApiServerEtcdClient,
}

/// An extended key usage kubeadm sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtKeyUsage {
    /// TLS Web Server Authentication.
    ServerAuth,
    /// TLS Web Client Authentication.
    ClientAuth,
}

/// Where a certificate's subject common name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommonName {
    /// A fixed name.
    Fixed(&'static str),
    /// `nodeRegistration.name` (etcd server and peer).
    NodeName,
}

/// Which subject alternative names a certificate carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanRule {
    /// None (client certificates).
    None,
    /// A CA: its own common name as the only DNS name (client-go's self-signed CA template).
    CaCommonName,
    /// The API server rule.
    ApiServer,
    /// The etcd server rule (extra SANs from `etcd.local.serverCertSANs`).
    EtcdServer,
    /// The etcd peer rule (extra SANs from `etcd.local.peerCertSANs`).
    EtcdPeer,
}

/// One row of the certificate table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSpec {
    /// Which certificate.
    pub id: CertId,
    /// The phase and renewal name, e.g. `apiserver-etcd-client`.
    pub name: &'static str,
    /// The phase help text.
    pub long_name: &'static str,
    /// Path of `.crt`/`.key` under the certificates dir, without extension, e.g. `etcd/server`.
    pub base_name: &'static str,
    /// The signing CA; `None` for a CA.
    pub ca: Option<CertId>,
    /// Subject common name.
    pub common_name: CommonName,
    /// Subject organizations.
    pub organization: &'static [&'static str],
    /// Extended key usages (empty for CAs).
    pub ext_key_usages: &'static [ExtKeyUsage],
    /// SAN rule.
    pub sans: SanRule,
}

impl CertSpec {
    /// Whether this is a CA.
    pub fn is_ca(&self) -> bool {
        self.ca.is_none()
    }

    /// Whether this certificate belongs to kubeadm-managed etcd.
    pub fn is_etcd(&self) -> bool {
        matches!(
            self.id,
            CertId::EtcdCa
                | CertId::EtcdServer
                | CertId::EtcdPeer
                | CertId::EtcdHealthcheckClient
                | CertId::ApiServerEtcdClient
        )
    }

    /// The subject common name for these inputs.
    pub fn subject_common_name<'a>(&self, inputs: &'a PkiInputs) -> &'a str {
        match self.common_name {
            CommonName::Fixed(cn) => cn,
            CommonName::NodeName => inputs.node_name.as_str(),
        }
    }

    /// Whether the certificate is a serving certificate (upstream then prints its names).
    pub fn has_server_auth(&self) -> bool {
        self.ext_key_usages.contains(&ExtKeyUsage::ServerAuth)
    }
}

const MASTERS: &[&str] = &["system:masters"];
const SERVER_CLIENT: &[ExtKeyUsage] = &[ExtKeyUsage::ServerAuth, ExtKeyUsage::ClientAuth];

/// The table, in upstream's `GetDefaultCertList` order (the order `certs all` runs in).
pub const CERT_SPECS: [CertSpec; 10] = [
    CertSpec {
        id: CertId::Ca,
        name: "ca",
        long_name: "self-signed Kubernetes CA to provision identities for other Kubernetes components",
        base_name: "ca",
        ca: None,
        common_name: CommonName::Fixed("kubernetes"),
        organization: &[],
        ext_key_usages: &[],
        sans: SanRule::CaCommonName,
    },
    CertSpec {
        id: CertId::ApiServer,
        name: "apiserver",
        long_name: "certificate for serving the Kubernetes API",
        base_name: "apiserver",
        ca: Some(CertId::Ca),
        common_name: CommonName::Fixed("kube-apiserver"),
        organization: &[],
        ext_key_usages: &[ExtKeyUsage::ServerAuth],
        sans: SanRule::ApiServer,
    },
    CertSpec {
        id: CertId::ApiServerKubeletClient,
        name: "apiserver-kubelet-client",
        long_name: "certificate for the API server to connect to kubelet",
        base_name: "apiserver-kubelet-client",
        ca: Some(CertId::Ca),
        common_name: CommonName::Fixed("kube-apiserver-kubelet-client"),
        organization: MASTERS,
        ext_key_usages: &[ExtKeyUsage::ClientAuth],
        sans: SanRule::None,
    },
    CertSpec {
        id: CertId::FrontProxyCa,
        name: "front-proxy-ca",
        long_name: "self-signed CA to provision identities for front proxy",
        base_name: "front-proxy-ca",
        ca: None,
        common_name: CommonName::Fixed("front-proxy-ca"),
        organization: &[],
        ext_key_usages: &[],
        sans: SanRule::CaCommonName,
    },
    CertSpec {
        id: CertId::FrontProxyClient,
        name: "front-proxy-client",
        long_name: "certificate for the front proxy client",
        base_name: "front-proxy-client",
        ca: Some(CertId::FrontProxyCa),
        common_name: CommonName::Fixed("front-proxy-client"),
        organization: &[],
        ext_key_usages: &[ExtKeyUsage::ClientAuth],
        sans: SanRule::None,
    },
    CertSpec {
        id: CertId::EtcdCa,
        name: "etcd-ca",
        long_name: "self-signed CA to provision identities for etcd",
        base_name: "etcd/ca",
        ca: None,
        common_name: CommonName::Fixed("etcd-ca"),
        organization: &[],
        ext_key_usages: &[],
        sans: SanRule::CaCommonName,
    },
    CertSpec {
        id: CertId::EtcdServer,
        name: "etcd-server",
        long_name: "certificate for serving etcd",
        base_name: "etcd/server",
        ca: Some(CertId::EtcdCa),
        common_name: CommonName::NodeName,
        organization: &[],
        ext_key_usages: SERVER_CLIENT,
        sans: SanRule::EtcdServer,
    },
    CertSpec {
        id: CertId::EtcdPeer,
        name: "etcd-peer",
        long_name: "certificate for etcd nodes to communicate with each other",
        base_name: "etcd/peer",
        ca: Some(CertId::EtcdCa),
        common_name: CommonName::NodeName,
        organization: &[],
        ext_key_usages: SERVER_CLIENT,
        sans: SanRule::EtcdPeer,
    },
    CertSpec {
        id: CertId::EtcdHealthcheckClient,
        name: "etcd-healthcheck-client",
        long_name: "certificate for liveness probes to healthcheck etcd",
        base_name: "etcd/healthcheck-client",
        ca: Some(CertId::EtcdCa),
        common_name: CommonName::Fixed("kube-etcd-healthcheck-client"),
        organization: MASTERS,
        ext_key_usages: &[ExtKeyUsage::ClientAuth],
        sans: SanRule::None,
    },
    CertSpec {
        id: CertId::ApiServerEtcdClient,
        name: "apiserver-etcd-client",
        long_name: "certificate the apiserver uses to access etcd",
        base_name: "apiserver-etcd-client",
        ca: Some(CertId::EtcdCa),
        common_name: CommonName::Fixed("kube-apiserver-etcd-client"),
        organization: MASTERS,
        ext_key_usages: &[ExtKeyUsage::ClientAuth],
        sans: SanRule::None,
    },
];

/// The row for `id`.
pub fn cert_spec(id: CertId) -> &'static CertSpec {
    // The table is indexed in declaration order of `CertId`.
    &CERT_SPECS[id as usize]
}

/// The certificates kubeadm manages for this etcd mode, in table order (`GetDefaultCertList` or
/// `GetCertsWithoutEtcd`).
pub fn cert_list(etcd: &EtcdMode) -> impl Iterator<Item = &'static CertSpec> + '_ {
    CERT_SPECS
        .iter()
        .filter(move |s| !(matches!(etcd, EtcdMode::External) && s.is_etcd()))
}

/// Subject alternative names after upstream's `RemoveDuplicateAltNames`: DNS names sorted and
/// de-duplicated, IPs de-duplicated in first-seen order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AltNames {
    /// DNS names.
    pub dns_names: Vec<String>,
    /// IP addresses (IPv4-mapped IPv6 addresses are stored as IPv4, as Go encodes them).
    pub ips: Vec<IpAddr>,
    /// Extra SANs that were dropped, with upstream's warning text (klog prints it on stderr).
    pub warnings: Vec<String>,
}

impl AltNames {
    pub(crate) fn finish(mut self) -> Self {
        self.dns_names.sort();
        self.dns_names.dedup();
        let mut seen: Vec<IpAddr> = Vec::with_capacity(self.ips.len());
        for ip in self.ips.drain(..) {
            let ip = canonical_ip(ip);
            if !seen.contains(&ip) {
                seen.push(ip);
            }
        }
        self.ips = seen;
        self
    }

    /// Upstream's line after issuing a serving certificate:
    /// `{base} serving cert is signed for DNS names [a b] and IPs [1.2.3.4 ::1]` (without the
    /// `[certs] ` prefix).
    pub fn serving_message(&self, base_name: &str) -> String {
        let ips: Vec<String> = self.ips.iter().map(ToString::to_string).collect();
        format!(
            "{base_name} serving cert is signed for DNS names [{}] and IPs [{}]",
            self.dns_names.join(" "),
            ips.join(" ")
        )
    }
}

fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// Why SANs could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    /// The advertise address is not an IP.
    #[error(
        "error parsing LocalAPIEndpoint AdvertiseAddress {0}: is not a valid textual representation of an IP address"
    )]
    AdvertiseAddress(String),
    /// The service subnet has no usable first address.
    #[error("unable to get first IP address from the given CIDR: {0}")]
    ServiceSubnet(String),
    /// The control-plane endpoint is not `host[:port]`.
    #[error("error parsing cluster controlPlaneEndpoint {endpoint:?}: {reason}")]
    ControlPlaneEndpoint {
        /// The configured value.
        endpoint: String,
        /// Why it is not.
        reason: kubeadm_api::validation::HostPortError,
    },
}

/// The SANs of `spec` for these inputs (empty for client certificates).
pub fn alt_names(spec: &CertSpec, inputs: &PkiInputs) -> Result<AltNames, SanError> {
    match spec.sans {
        SanRule::None => Ok(AltNames::default()),
        SanRule::CaCommonName => Ok(AltNames {
            dns_names: vec![spec.subject_common_name(inputs).to_string()],
            ..AltNames::default()
        }),
        SanRule::ApiServer => api_server_alt_names(inputs),
        SanRule::EtcdServer | SanRule::EtcdPeer => {
            let advertise = advertise_ip(inputs)?;
            let mut alt = AltNames {
                dns_names: vec![inputs.node_name.clone(), "localhost".to_string()],
                ips: vec![
                    advertise,
                    IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(Ipv6Addr::LOCALHOST),
                ],
                warnings: Vec::new(),
            };
            if let EtcdMode::Local {
                server_cert_sans,
                peer_cert_sans,
            } = &inputs.etcd
            {
                let (extra, cert_name) = if spec.sans == SanRule::EtcdServer {
                    (server_cert_sans, "etcd/server.crt")
                } else {
                    (peer_cert_sans, "etcd/peer.crt")
                };
                append_sans(&mut alt, extra, cert_name);
            }
            Ok(alt.finish())
        }
    }
}

fn advertise_ip(inputs: &PkiInputs) -> Result<IpAddr, SanError> {
    parse_ip_sloppy(&inputs.advertise_address)
        .ok_or_else(|| SanError::AdvertiseAddress(inputs.advertise_address.clone()))
}

fn api_server_alt_names(inputs: &PkiInputs) -> Result<AltNames, SanError> {
    let advertise = advertise_ip(inputs)?;
    let service_ip = api_server_virtual_ip(&inputs.service_subnet)
        .ok_or_else(|| SanError::ServiceSubnet(inputs.service_subnet.clone()))?;
    let mut alt = AltNames {
        dns_names: vec![
            inputs.node_name.clone(),
            "kubernetes".to_string(),
            "kubernetes.default".to_string(),
            "kubernetes.default.svc".to_string(),
            format!("kubernetes.default.svc.{}", inputs.dns_domain),
        ],
        ips: vec![service_ip, advertise],
        warnings: Vec::new(),
    };
    if !inputs.control_plane_endpoint.is_empty() {
        let (host, _) = parse_host_port(&inputs.control_plane_endpoint).map_err(|reason| {
            SanError::ControlPlaneEndpoint {
                endpoint: inputs.control_plane_endpoint.clone(),
                reason,
            }
        })?;
        match parse_ip_sloppy(&host) {
            Some(ip) => alt.ips.push(ip),
            None => alt.dns_names.push(host),
        }
    }
    append_sans(&mut alt, &inputs.cert_sans, "apiserver.crt");
    Ok(alt.finish())
}

fn append_sans(alt: &mut AltNames, sans: &[String], cert_name: &str) {
    for san in sans {
        if let Some(ip) = parse_ip_sloppy(san) {
            alt.ips.push(ip);
        } else if is_dns1123_subdomain(san) || is_wildcard_dns1123_subdomain(san) {
            alt.dns_names.push(san.clone());
        } else {
            alt.warnings.push(format!(
                "[certificates] WARNING: '{san}' was not added to the '{cert_name}' SAN, because it is not a valid IP or RFC-1123 compliant DNS entry"
            ));
        }
    }
}

/// The first usable address of the first service CIDR, the `kubernetes` Service's ClusterIP
/// (`GetAPIServerVirtualIP`: network address + 1).
pub fn api_server_virtual_ip(service_subnet: &str) -> Option<IpAddr> {
    let first = service_subnet.split(',').next()?.trim();
    let (addr, prefix) = first.split_once('/')?;
    let prefix: u32 = prefix.parse().ok()?;
    match parse_ip_sloppy(addr)? {
        IpAddr::V4(v4) if prefix <= 32 => {
            let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
            let net = u32::from(v4) & mask;
            // Go's GetIndexedIP fails when the index does not fit in the range.
            if prefix >= 32 {
                return None;
            }
            Some(IpAddr::V4(Ipv4Addr::from(net.wrapping_add(1))))
        }
        IpAddr::V6(v6) if prefix <= 128 => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix)
            };
            let net = u128::from(v6) & mask;
            if prefix >= 128 {
                return None;
            }
            Some(canonical_ip(IpAddr::V6(Ipv6Addr::from(net.wrapping_add(1)))))
        }
        _ => None,
    }
}
