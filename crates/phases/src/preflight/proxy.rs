//! Whether a request would go through a proxy, as the API server's HTTP transport decides it:
//! apimachinery's `NewProxierWithNoProxyCIDR` (CIDRs in `NO_PROXY`) around Go's
//! `http.ProxyFromEnvironment` (`HTTPS_PROXY`, `NO_PROXY` hosts, domains, IPs and ports, loopback never
//! proxied). Used by the `HTTPProxy` and `HTTPProxyCIDR` checks.
//!
//! `HTTPProxyCIDR` builds `https://[10.96.0.1]:1234/` for an IPv4 CIDR too (upstream formats the
//! 16-byte form of the address as if it were IPv6). The Go release that built kubeadm v1.25.16 parses
//! that URL; newer Go rejects it (`invalid IP-literal`), so a kubeadm v1.25.16 rebuilt with a recent Go
//! fails the check. We behave like the release: host `10.96.0.1`, port `1234`.

use std::net::IpAddr;

use kubeadm_api::dynamic::{go_ip_string, parse_ip_sloppy};
use kubeadm_api::validation::parse_cidr;
use kubeadm_effects::host_probe::ProxyEnv;

/// `ip` with its host bits (beyond `prefix`) cleared.
fn masked(ip: IpAddr, prefix: u32) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - prefix.min(32)).unwrap_or(0);
            IpAddr::from(std::net::Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - prefix.min(128)).unwrap_or(0);
            IpAddr::from(std::net::Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// Go's `IPNet.Contains` for a network `net/prefix` of the same family as `ip`.
fn cidr_contains((net, prefix): (IpAddr, u32), ip: IpAddr) -> bool {
    net.is_ipv4() == ip.is_ipv4() && masked(net, prefix) == masked(ip, prefix)
}

/// Go's `url.Parse` + `String()` of a proxy setting, with `httpproxy`'s retry as `http://…` when the
/// value has no scheme or no host.
fn proxy_url(raw: &str) -> String {
    if let Some((scheme, rest)) = raw.split_once("://") {
        let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or("");
        if scheme_ok && !host.is_empty() {
            return format!("{}://{rest}", scheme.to_ascii_lowercase());
        }
    }
    format!("http://{raw}")
}

/// Go's `httpproxy` `useProxy` for `host:port` against the `NO_PROXY` list.
fn use_proxy(no_proxy: &str, host: &str, port: &str) -> bool {
    if host == "localhost" {
        return false;
    }
    let ip: Option<IpAddr> = host.parse().ok();
    if ip.is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    let host = host.trim().to_ascii_lowercase();
    for rule in no_proxy.split(',') {
        let rule = rule.trim().to_ascii_lowercase();
        if rule.is_empty() {
            continue;
        }
        if rule == "*" {
            return false;
        }
        if let Some((addr, bits)) = rule.split_once('/')
            && let (Ok(addr), Ok(prefix)) = (addr.parse::<IpAddr>(), bits.parse::<u32>())
        {
            if ip.is_some_and(|ip| cidr_contains((addr, prefix), ip)) {
                return false;
            }
            continue;
        }
        let (mut rhost, rport) = match kubeadm_api::validation::go_split_host_port(&rule) {
            Ok((h, p)) => {
                if h.is_empty() {
                    continue;
                }
                (h, p)
            }
            Err(_) => (rule.clone(), String::new()),
        };
        if rhost.starts_with('[') && rhost.ends_with(']') {
            rhost = rhost[1..rhost.len() - 1].to_string();
        }
        let port_ok = rport.is_empty() || rport == port;
        if let Ok(rip) = rhost.parse::<IpAddr>() {
            if ip == Some(rip) && port_ok {
                return false;
            }
            continue;
        }
        // `foo.com` matches foo.com and its subdomains; `.foo.com` and `*.foo.com` only subdomains.
        let rhost = rhost
            .strip_prefix('*')
            .filter(|r| r.starts_with('.'))
            .unwrap_or(&rhost);
        let (suffix, match_host) = match rhost.strip_prefix('.') {
            Some(_) => (rhost.to_string(), false),
            None => (format!(".{rhost}"), true),
        };
        if (host.ends_with(&suffix) || (match_host && host == suffix[1..])) && port_ok {
            return false;
        }
    }
    true
}

/// The proxy a request to `scheme://host:port` would use, as its URL text; `None` for a direct
/// connection. `host` is bare (no brackets).
pub fn proxy_for(env: &ProxyEnv, scheme: &str, host: &str, port: &str) -> Option<String> {
    // apimachinery's wrapper: CIDRs in NO_PROXY (parsed sloppily, not trimmed) bypass the proxy.
    if let Some(ip) = parse_ip_sloppy(host)
        && env
            .no_proxy
            .split(',')
            .filter_map(parse_cidr)
            .any(|cidr| cidr_contains((cidr.ip, cidr.prefix), ip))
    {
        return None;
    }
    let proxy = match scheme {
        "https" => &env.https_proxy,
        "http" if !env.cgi => &env.http_proxy,
        _ => return None,
    };
    if proxy.is_empty() || !use_proxy(&env.no_proxy, host, port) {
        return None;
    }
    Some(proxy_url(proxy))
}

fn default_port(scheme: &str) -> &'static str {
    match scheme {
        "http" => "80",
        _ => "443",
    }
}

/// The `HTTPProxy` check: a warning text when `proto://host` goes through a proxy.
pub(super) fn host_check(env: &ProxyEnv, proto: &str, host: &str) -> Option<String> {
    let v6 = host.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6());
    let (url, port) = if v6 {
        (format!("{proto}://[{host}]:1234"), "1234")
    } else {
        (format!("{proto}://{host}"), default_port(proto))
    };
    proxy_for(env, proto, host, port).map(|proxy| {
        format!(
            "Connection to \"{url}\" uses proxy \"{proxy}\". If that is not intended, adjust your proxy settings"
        )
    })
}

/// Why a CIDR has no first address, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FirstIpError {
    /// The CIDR does not parse.
    #[error("error parsing CIDR {0:?}: invalid CIDR address: {0}")]
    Parse(String),
    /// The subnet has no address after its network address.
    #[error(
        "unable to get first IP address from the given CIDR ({0}): can't generate IP with index 1 from subnet. subnet too small. subnet: \"{0}\""
    )]
    TooSmall(String),
}

/// The address upstream tests for a CIDR: its first address after the network address (index 1), or
/// upstream's error.
pub fn first_ip(cidr_text: &str) -> Result<IpAddr, FirstIpError> {
    let Some(cidr) = parse_cidr(cidr_text) else {
        return Err(FirstIpError::Parse(cidr_text.to_string()));
    };
    let network = cidr.network();
    let next = match network {
        IpAddr::V4(v4) => u32::from(v4)
            .checked_add(1)
            .map(|n| IpAddr::from(std::net::Ipv4Addr::from(n))),
        IpAddr::V6(v6) => u128::from(v6)
            .checked_add(1)
            .map(|n| IpAddr::from(std::net::Ipv6Addr::from(n))),
    };
    match next {
        Some(ip) if cidr_contains((cidr.ip, cidr.prefix), ip) => Ok(ip),
        _ => Err(FirstIpError::TooSmall(cidr.to_string())),
    }
}

/// The `HTTPProxyCIDR` check: a warning text when the CIDR's first address goes through a proxy.
pub(super) fn cidr_check(env: &ProxyEnv, proto: &str, cidr: &str) -> Result<Option<String>, FirstIpError> {
    if cidr.is_empty() {
        return Ok(None);
    }
    let ip = first_ip(cidr)?;
    Ok(proxy_for(env, proto, &go_ip_string(ip), "1234").map(|proxy| {
        format!(
            "connection to \"{cidr}\" uses proxy \"{proxy}\". This may lead to malfunctional cluster setup. Make sure that Pod and Services IP ranges specified correctly as exceptions in proxy configuration"
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(https: &str, no: &str) -> ProxyEnv {
        ProxyEnv {
            https_proxy: https.into(),
            no_proxy: no.into(),
            ..ProxyEnv::default()
        }
    }

    #[test]
    fn no_proxy_rules_as_go_reads_them() {
        let p = Some("http://p:3128".to_string());
        for (no, host, port, want) in [
            ("", "10.0.0.1", "443", p.clone()),
            ("*", "10.0.0.1", "443", None),
            ("10.0.0.0/8", "10.0.0.1", "443", None),
            (" 10.0.0.0/8", "10.0.0.1", "443", None),
            ("10.0.0.1", "10.0.0.1", "443", None),
            ("10.0.0.1:80", "10.0.0.1", "443", p.clone()),
            ("example.com", "api.example.com", "443", None),
            ("example.com", "example.com", "443", None),
            (".example.com", "example.com", "443", p.clone()),
            ("*.example.com", "a.example.com", "443", None),
            ("", "127.0.0.1", "443", None),
            ("", "localhost", "443", None),
            ("fd00::/8", "fd00::1", "1234", None),
        ] {
            assert_eq!(
                proxy_for(&env("p:3128", no), "https", host, port),
                want,
                "{no} {host}"
            );
        }
    }

    #[test]
    fn first_ip_of_cidrs() {
        assert_eq!(first_ip("10.96.0.0/12").map(go_ip_string), Ok("10.96.0.1".into()));
        assert_eq!(
            first_ip("fd00:10::/108").map(go_ip_string),
            Ok("fd00:10::1".into())
        );
        assert!(first_ip("10.0.0.5/32").is_err());
        assert!(first_ip("bogus").is_err());
    }
}
