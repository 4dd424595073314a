//! Kubeconfig files: which files kubeadm writes (admin, kubelet, controller-manager, scheduler), the
//! identity and API server URL of each, and the document itself in the shape client-go's
//! `clientcmd.Write` produces, as a JSON value for the Go-compatible YAML emitter; and reading one
//! back as a typed [`Config`] ([`document`]).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

pub mod document;
mod validate;

pub use document::{
    AuthInfo, AuthProviderConfig, Cluster, Config, Context, ExecConfig, ExecEnvVar, LookupError,
    NamedAuthInfo, NamedCluster, NamedContext, NamedExtension, Preferences,
};
pub use validate::InvalidConfig;

use crate::pki::{CertInfo, KeyAlgorithm, PkiInputs, https_url, parse_host_port, parse_ip_sloppy};

/// The key type of every kubeconfig client certificate. Upstream v1.25 never passes the
/// `PublicKeysECDSA` choice into the kubeconfig client-cert config, so these keys stay RSA even when
/// the gate is on (verified against the upstream binary).
pub const CLIENT_KEY_ALGORITHM: KeyAlgorithm = KeyAlgorithm::Rsa2048;

/// Which API server address a kubeconfig points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerChoice {
    /// `controlPlaneEndpoint` when set, else the local advertise address (admin, kubelet).
    ControlPlaneEndpoint,
    /// Always the local advertise address and bind port (controller-manager, scheduler).
    LocalEndpoint,
}

/// Where a kubeconfig's client name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientName {
    /// A fixed user.
    Fixed(&'static str),
    /// `system:node:<nodeName>`.
    Node,
}

/// One kubeconfig file kubeadm writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeconfigSpec {
    /// File name under the kubeconfig dir.
    pub file_name: &'static str,
    /// The phase name (`admin`, `kubelet`, …).
    pub phase: &'static str,
    /// The client certificate's common name.
    pub client_name: ClientName,
    /// The client certificate's organizations.
    pub organizations: &'static [&'static str],
    /// Which server URL.
    pub server: ServerChoice,
}

impl KubeconfigSpec {
    /// The user name / certificate CN for these inputs.
    pub fn client_name(&self, inputs: &PkiInputs) -> String {
        match self.client_name {
            ClientName::Fixed(n) => n.to_string(),
            ClientName::Node => format!("system:node:{}", inputs.node_name),
        }
    }
}

/// The four files of `init phase kubeconfig all`, in upstream's order.
pub const KUBECONFIG_SPECS: [KubeconfigSpec; 4] = [
    KubeconfigSpec {
        file_name: "admin.conf",
        phase: "admin",
        client_name: ClientName::Fixed("kubernetes-admin"),
        organizations: &["system:masters"],
        server: ServerChoice::ControlPlaneEndpoint,
    },
    KubeconfigSpec {
        file_name: "kubelet.conf",
        phase: "kubelet",
        client_name: ClientName::Node,
        organizations: &["system:nodes"],
        server: ServerChoice::ControlPlaneEndpoint,
    },
    KubeconfigSpec {
        file_name: "controller-manager.conf",
        phase: "controller-manager",
        client_name: ClientName::Fixed("system:kube-controller-manager"),
        organizations: &[],
        server: ServerChoice::LocalEndpoint,
    },
    KubeconfigSpec {
        file_name: "scheduler.conf",
        phase: "scheduler",
        client_name: ClientName::Fixed("system:kube-scheduler"),
        organizations: &[],
        server: ServerChoice::LocalEndpoint,
    },
];

/// Why an API server URL could not be formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The advertise address is not an IP.
    #[error("cannot parse advertise address {0:?}")]
    AdvertiseAddress(String),
    /// The control-plane endpoint is not `host[:port]`.
    #[error("invalid value {endpoint:?} given for controlPlaneEndpoint: {reason}")]
    ControlPlaneEndpoint {
        /// The configured value.
        endpoint: String,
        /// Why it is not.
        reason: kubeadm_api::validation::HostPortError,
    },
}

/// `GetLocalAPIEndpoint`: `https://<advertiseAddress>:<bindPort>`.
pub fn local_api_endpoint(inputs: &PkiInputs) -> Result<String, EndpointError> {
    let ip = parse_ip_sloppy(&inputs.advertise_address)
        .ok_or_else(|| EndpointError::AdvertiseAddress(inputs.advertise_address.clone()))?;
    Ok(https_url(&ip.to_string(), &inputs.bind_port.to_string()))
}

/// `GetControlPlaneEndpoint`: the control-plane endpoint (its port, else the bind port), or the local
/// endpoint when none is configured. A port differing from the bind port makes upstream print a
/// warning; this returns it as the second value.
pub fn control_plane_endpoint(inputs: &PkiInputs) -> Result<(String, Option<String>), EndpointError> {
    let local = local_api_endpoint(inputs)?;
    if inputs.control_plane_endpoint.is_empty() {
        return Ok((local, None));
    }
    let (host, port) = parse_host_port(&inputs.control_plane_endpoint).map_err(|reason| {
        EndpointError::ControlPlaneEndpoint {
            endpoint: inputs.control_plane_endpoint.clone(),
            reason,
        }
    })?;
    let bind = inputs.bind_port.to_string();
    let mut warning = None;
    let port = if port.is_empty() {
        bind
    } else {
        if port != bind {
            warning = Some(
                "[endpoint] WARNING: port specified in controlPlaneEndpoint overrides bindPort in the controlplane address"
                    .to_string(),
            );
        }
        port
    };
    Ok((https_url(&host, &port), warning))
}

/// The server URL of `spec`.
pub fn server_url(spec: &KubeconfigSpec, inputs: &PkiInputs) -> Result<String, EndpointError> {
    match spec.server {
        ServerChoice::ControlPlaneEndpoint => Ok(control_plane_endpoint(inputs)?.0),
        ServerChoice::LocalEndpoint => local_api_endpoint(inputs),
    }
}

/// How the user authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserAuth {
    /// A client certificate and its key, both PEM.
    ClientCert {
        /// Certificate PEM.
        cert_pem: String,
        /// Key PEM (`RSA PRIVATE KEY` / `EC PRIVATE KEY`).
        key_pem: String,
    },
    /// A bearer token.
    Token(String),
    /// Only the key, certificate to come (`certs generate-csr` writes this next to `<file>.csr`).
    KeyOnly {
        /// Key PEM.
        key_pem: String,
    },
}

/// The kubeconfig document (`CreateWithCerts` / `CreateWithToken` then `clientcmd.Write`): one
/// cluster named `cluster_name`, one user, one context `<user>@<cluster>`; the CA embedded as
/// re-encoded PEM of the first certificate of `ca.crt` (absent in CSR mode, `ca: None`, where
/// client-go omits the empty field).
pub fn build_kubeconfig(
    server: &str,
    cluster_name: &str,
    user: &str,
    ca: Option<&CertInfo>,
    auth: &UserAuth,
) -> Value {
    let context = format!("{user}@{cluster_name}");
    let user_value = match auth {
        UserAuth::ClientCert { cert_pem, key_pem } => json!({
            "client-certificate-data": STANDARD.encode(cert_pem.as_bytes()),
            "client-key-data": STANDARD.encode(key_pem.as_bytes()),
        }),
        UserAuth::Token(token) => json!({ "token": token }),
        UserAuth::KeyOnly { key_pem } => {
            json!({ "client-key-data": STANDARD.encode(key_pem.as_bytes()) })
        }
    };
    let mut cluster = serde_json::Map::new();
    if let Some(ca) = ca {
        cluster.insert(
            "certificate-authority-data".to_string(),
            Value::String(STANDARD.encode(ca.to_pem().as_bytes())),
        );
    }
    cluster.insert("server".to_string(), Value::String(server.to_string()));
    json!({
        "apiVersion": "v1",
        "clusters": [{
            "cluster": cluster,
            "name": cluster_name,
        }],
        "contexts": [{
            "context": { "cluster": cluster_name, "user": user },
            "name": context,
        }],
        "current-context": context,
        "kind": "Config",
        "preferences": {},
        "users": [{ "name": user, "user": user_value }],
    })
}

/// What an existing kubeconfig file must match to be reused (`validateKubeConfig`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigCheckError {
    /// The file is not a kubeconfig with a usable current context.
    #[error("failed to find CurrentContext in Contexts of the kubeconfig file {0}")]
    NoCurrentContext(String),
    /// The current context's cluster is missing.
    #[error("failed to find the given CurrentContext Cluster in Clusters of the kubeconfig file {0}")]
    NoCluster(String),
    /// Embedded CA differs.
    #[error("a kubeconfig file {0:?} exists already but has got the wrong CA cert")]
    WrongCa(String),
}

/// Checks an existing kubeconfig (parsed into a JSON value by the caller) against the expected one:
/// the CA data must match; a different server only earns upstream's warning, returned as `Ok(Some)`.
pub fn check_existing_kubeconfig(
    path: &str,
    existing: &Value,
    expected: &Value,
) -> Result<Option<String>, KubeconfigCheckError> {
    let no_cluster = || KubeconfigCheckError::NoCluster(path.to_string());
    let (existing, expected) = (Config::from_value(existing), Config::from_value(expected));
    let current = existing.current_cluster().map_err(|e| match e {
        LookupError::Context(_) => KubeconfigCheckError::NoCurrentContext(path.to_string()),
        LookupError::Cluster(_) | LookupError::AuthInfo(_) => no_cluster(),
    })?;
    let wanted = expected.current_cluster().map_err(|_| no_cluster())?;
    let ca = |c: &Cluster| {
        STANDARD
            .decode(&c.certificate_authority_data)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
    };
    if ca(current) != ca(wanted) {
        return Err(KubeconfigCheckError::WrongCa(path.to_string()));
    }
    if current.server != wanted.server {
        return Ok(Some(format!(
            "a kubeconfig file {path:?} exists already but has an unexpected API Server URL: expected: {}, got: {}",
            wanted.server, current.server
        )));
    }
    Ok(None)
}

/// The client certificate embedded for the current context's user (what `certs check-expiration`
/// and renewal read from `admin.conf` and friends), or `None` when there is none.
pub fn embedded_client_certificate(doc: &Value) -> Option<CertInfo> {
    let config = Config::from_value(doc);
    let data = &config.current_auth_info().ok()?.client_certificate_data;
    let pem = STANDARD.decode(data).ok()?;
    CertInfo::from_pem(&String::from_utf8_lossy(&pem)).ok()
}
