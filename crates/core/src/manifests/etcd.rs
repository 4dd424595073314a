//! The local etcd static pod (upstream `phases/etcd/local.go`): etcd listening on localhost and the
//! advertise address, client and peer TLS from the etcd CA, metrics on localhost:2381 (where the
//! probes look, unless `listen-metrics-urls` moves them), data in `dataDir`.

use std::collections::BTreeMap;

use kubeadm_api::v1beta3::{ApiEndpoint, ClusterConfiguration, LocalEtcd};
use serde_json::Value;

use super::args::{argument_list, is_ipv6, join, join_host_port};
use super::pod::{Container, HostPathMount, Probe, component_pod};

const CLIENT_PORT: u16 = 2379;
const PEER_PORT: u16 = 2380;
const METRICS_PORT: i64 = 2381;

/// A member of an existing etcd cluster (for a control-plane node joining one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdMember {
    /// Member name.
    pub name: String,
    /// Peer URL.
    pub peer_url: String,
}

/// `https://<advertise address>:2379`.
pub fn client_url(endpoint: &ApiEndpoint) -> String {
    format!(
        "https://{}",
        join_host_port(&endpoint.advertise_address, CLIENT_PORT)
    )
}

/// `https://<advertise address>:2380`.
pub fn peer_url(endpoint: &ApiEndpoint) -> String {
    format!(
        "https://{}",
        join_host_port(&endpoint.advertise_address, PEER_PORT)
    )
}

pub(crate) fn command(
    cfg: &ClusterConfiguration,
    local: &LocalEtcd,
    endpoint: &ApiEndpoint,
    node_name: &str,
    initial_cluster: &[EtcdMember],
) -> Vec<String> {
    let localhost = if is_ipv6(&endpoint.advertise_address) {
        "::1"
    } else {
        "127.0.0.1"
    };
    let certs = cfg.certificates_dir.as_str();
    let pki = |name: &str| join(certs, name);
    let pairs: Vec<(&str, String)> = vec![
        ("name", node_name.to_string()),
        ("experimental-initial-corrupt-check", "true".into()),
        (
            "listen-client-urls",
            format!(
                "https://{},{}",
                join_host_port(localhost, CLIENT_PORT),
                client_url(endpoint)
            ),
        ),
        ("advertise-client-urls", client_url(endpoint)),
        ("listen-peer-urls", peer_url(endpoint)),
        ("initial-advertise-peer-urls", peer_url(endpoint)),
        ("data-dir", local.data_dir.clone()),
        ("cert-file", pki("etcd/server.crt")),
        ("key-file", pki("etcd/server.key")),
        ("trusted-ca-file", pki("etcd/ca.crt")),
        ("client-cert-auth", "true".into()),
        ("peer-cert-file", pki("etcd/peer.crt")),
        ("peer-key-file", pki("etcd/peer.key")),
        ("peer-trusted-ca-file", pki("etcd/ca.crt")),
        ("peer-client-cert-auth", "true".into()),
        ("snapshot-count", "10000".into()),
        (
            "listen-metrics-urls",
            format!("http://{}", join_host_port(localhost, METRICS_PORT)),
        ),
        ("experimental-watch-progress-notify-interval", "5s".into()),
    ];
    let mut defaults: BTreeMap<String, String> = pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    if initial_cluster.is_empty() {
        defaults.insert(
            "initial-cluster".into(),
            format!("{node_name}={}", peer_url(endpoint)),
        );
    } else {
        let members: Vec<String> = initial_cluster
            .iter()
            .map(|m| format!("{}={}", m.name, m.peer_url))
            .collect();
        defaults.insert("initial-cluster".into(), members.join(","));
        defaults.insert("initial-cluster-state".into(), "existing".into());
    }
    let mut command = vec!["etcd".to_string()];
    command.extend(argument_list(&defaults, &local.extra_args));
    command
}

/// Where the probes look (`GetEtcdProbeEndpoint`): the first `listen-metrics-urls` entry when set.
fn probe_endpoint(local: &LocalEtcd, ipv6: bool) -> (String, i64, &'static str) {
    let localhost = if ipv6 { "::1" } else { "127.0.0.1" };
    let fallback = (localhost.to_string(), METRICS_PORT, "HTTP");
    let Some(arg) = local.extra_args.get("listen-metrics-urls") else {
        return fallback;
    };
    let first = arg.split(',').next().unwrap_or_default();
    let Some(url) = GoUrl::parse(first) else {
        return fallback;
    };
    let scheme = if url.scheme == "https" { "HTTPS" } else { "HTTP" };
    let host = if url.hostname.is_empty() {
        localhost.to_string()
    } else {
        url.hostname
    };
    let port = url
        .port
        .parse::<i64>()
        .ok()
        .filter(|p| (1..=65535).contains(p))
        .unwrap_or(METRICS_PORT);
    (host, port, scheme)
}

/// The parts of Go's `url.Parse` the probe needs: scheme, `Hostname()` and `Port()`.
struct GoUrl {
    scheme: String,
    hostname: String,
    port: String,
}

impl GoUrl {
    fn parse(s: &str) -> Option<GoUrl> {
        // Go rejects control characters and a leading colon (missing scheme) outright.
        if s.bytes().any(|b| b < 0x20 || b == 0x7f) || s.starts_with(':') {
            return None;
        }
        let (scheme, rest) = match s.split_once(':') {
            Some((sch, rest))
                if sch.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                    && sch
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
            {
                (sch.to_lowercase(), rest)
            }
            _ => (String::new(), s),
        };
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let Some(after) = rest.strip_prefix("//") else {
            return Some(GoUrl {
                scheme,
                hostname: String::new(),
                port: String::new(),
            });
        };
        let authority = after.split('/').next().unwrap_or_default();
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (hostname, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, tail) = v6.split_once(']')?;
            let port = match tail.strip_prefix(':') {
                Some(p) => p,
                None if tail.is_empty() => "",
                None => return None,
            };
            (h.to_string(), port.to_string())
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), p.to_string()),
                None => (hostport.to_string(), String::new()),
            }
        };
        if !port.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(GoUrl {
            scheme,
            hostname,
            port,
        })
    }
}

pub(crate) fn pod(
    cfg: &ClusterConfiguration,
    local: &LocalEtcd,
    endpoint: &ApiEndpoint,
    node_name: &str,
    initial_cluster: &[EtcdMember],
    image: String,
    timeout_nanos: i64,
) -> Value {
    let certs_dir = format!("{}/etcd", cfg.certificates_dir);
    let data = HostPathMount::new(
        "etcd-data",
        &local.data_dir,
        &local.data_dir,
        false,
        "DirectoryOrCreate",
    );
    let certs = HostPathMount::new("etcd-certs", &certs_dir, &certs_dir, false, "DirectoryOrCreate");
    let (host, port, scheme) = probe_endpoint(local, is_ipv6(&endpoint.advertise_address));
    let container = Container {
        name: "etcd".into(),
        image,
        command: command(cfg, local, endpoint, node_name, initial_cluster),
        env: Vec::new(),
        requests: vec![("cpu", "100m"), ("memory", "100Mi")],
        mounts: vec![data.volume_mount(), certs.volume_mount()],
        liveness: Some(Probe::liveness(
            &host,
            "/health?exclude=NOSPACE&serializable=true",
            port,
            scheme,
        )),
        readiness: None,
        startup: Some(Probe::startup(
            &host,
            "/health?serializable=false",
            port,
            scheme,
            timeout_nanos,
        )),
    };
    let volumes: BTreeMap<String, Value> = [&data, &certs]
        .into_iter()
        .map(|m| (m.name.clone(), m.volume()))
        .collect();
    component_pod(
        &container,
        &volumes,
        &[(
            "kubeadm.kubernetes.io/etcd.advertise-client-urls",
            client_url(endpoint),
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(addr: &str) -> ApiEndpoint {
        ApiEndpoint {
            advertise_address: addr.to_string(),
            bind_port: 6443,
        }
    }

    #[test]
    fn joining_members_use_the_existing_cluster() {
        let cfg = ClusterConfiguration {
            certificates_dir: "/etc/kubernetes/pki".into(),
            ..ClusterConfiguration::default()
        };
        let local = LocalEtcd {
            data_dir: "/var/lib/etcd".into(),
            ..LocalEtcd::default()
        };
        let members = [
            EtcdMember {
                name: "a".into(),
                peer_url: "https://10.0.0.1:2380".into(),
            },
            EtcdMember {
                name: "b".into(),
                peer_url: "https://[fd00::2]:2380".into(),
            },
        ];
        let cmd = command(&cfg, &local, &endpoint("fd00::2"), "b", &members);
        assert!(
            cmd.contains(&"--initial-cluster=a=https://10.0.0.1:2380,b=https://[fd00::2]:2380".to_string())
        );
        assert!(cmd.contains(&"--initial-cluster-state=existing".to_string()));
        assert!(cmd.contains(&"--listen-client-urls=https://[::1]:2379,https://[fd00::2]:2379".to_string()));
        assert!(cmd.contains(&"--listen-metrics-urls=http://[::1]:2381".to_string()));
    }

    #[test]
    fn probe_follows_the_first_metrics_url() {
        let with = |urls: &str| LocalEtcd {
            extra_args: [("listen-metrics-urls".to_string(), urls.to_string())]
                .into_iter()
                .collect(),
            ..LocalEtcd::default()
        };
        assert_eq!(
            probe_endpoint(&with("https://[::1]:2391,http://x"), false),
            ("::1".into(), 2391, "HTTPS")
        );
        assert_eq!(
            probe_endpoint(&with("http://10.0.0.1"), false),
            ("10.0.0.1".into(), 2381, "HTTP")
        );
        assert_eq!(
            probe_endpoint(&with("http://:99999"), true),
            ("::1".into(), 2381, "HTTP")
        );
        assert_eq!(
            probe_endpoint(&LocalEtcd::default(), false),
            ("127.0.0.1".into(), 2381, "HTTP")
        );
    }
}
