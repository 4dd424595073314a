//! Host names and addresses as upstream parses them: `ParseIPSloppy` (IPv4 parts may carry leading
//! zeros), RFC 1123 subdomain checks, `host[:port]` splitting and `https://host:port` URLs.

use std::net::{IpAddr, Ipv4Addr};

use kubeadm_api::validation::HostPortError;

/// Go's `netutils.ParseIPSloppy`: like `net.ParseIP` before Go 1.17, IPv4 parts may have leading
/// zeros (read as decimal). IPv6 zones are not IPs.
pub fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let mut octets = [0u8; 4];
    let mut parts = s.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse::<u16>().ok().filter(|v| *v <= 255)? as u8;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

fn is_dns1123_label(label: &str) -> bool {
    let b = label.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// apimachinery's `IsDNS1123Subdomain` (lowercase labels, at most 253 characters).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// apimachinery's `IsWildcardDNS1123Subdomain`: `*.` followed by a subdomain.
pub fn is_wildcard_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.strip_prefix("*.")
            .is_some_and(|rest| rest.split('.').all(is_dns1123_label))
}

/// Go's `net.SplitHostPort`; `None` where it fails (its caller does not say why).
fn split_host_port(hostport: &str) -> Option<(String, String)> {
    if let Some(rest) = hostport.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &rest[..end];
        let port = rest[end + 1..].strip_prefix(':')?;
        if port.contains(':') || host.contains('[') {
            return None;
        }
        return Some((host.to_string(), port.to_string()));
    }
    let colon = hostport.rfind(':')?;
    let host = &hostport[..colon];
    if host.contains(':') || host.contains('[') || host.contains(']') {
        return None;
    }
    Some((host.to_string(), hostport[colon + 1..].to_string()))
}

/// kubeadm's `ParseHostPort`: the host must be an IP or an RFC 1123 subdomain, the port (when
/// present) a number in 1..=65535. Errors carry upstream's text.
pub fn parse_host_port(hostport: &str) -> Result<(String, String), HostPortError> {
    let (host, port) = split_host_port(hostport).unwrap_or_else(|| (hostport.to_string(), String::new()));
    if !port.is_empty() && !port.parse::<u16>().is_ok_and(|p| p >= 1) {
        return Err(HostPortError::Port {
            hostport: hostport.to_string(),
            port,
        });
    }
    if parse_ip_sloppy(&host).is_some() || is_dns1123_subdomain(&host) {
        return Ok((host, port));
    }
    Err(HostPortError::Host {
        hostport: hostport.to_string(),
        host,
    })
}

/// `https://` + Go's `net.JoinHostPort` (IPv6 literals bracketed).
pub fn https_url(host: &str, port: &str) -> String {
    if host.contains(':') {
        format!("https://[{host}]:{port}")
    } else {
        format!("https://{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_ipv4_accepts_leading_zeros() {
        assert_eq!(parse_ip_sloppy("010.001.0.9"), "10.1.0.9".parse().ok());
        assert_eq!(parse_ip_sloppy("1.2.3"), None);
        assert_eq!(parse_ip_sloppy("256.1.1.1"), None);
        assert_eq!(parse_ip_sloppy("fd00::1"), "fd00::1".parse().ok());
    }

    #[test]
    fn host_port_follows_go() {
        assert_eq!(
            parse_host_port("lb.example.com:6443"),
            Ok(("lb.example.com".into(), "6443".into()))
        );
        assert_eq!(
            parse_host_port("lb.example.com"),
            Ok(("lb.example.com".into(), String::new()))
        );
        assert_eq!(
            parse_host_port("[fd00::1]:443"),
            Ok(("fd00::1".into(), "443".into()))
        );
        assert_eq!(parse_host_port("fd00::1"), Ok(("fd00::1".into(), String::new())));
        assert!(parse_host_port("Bad_Host:1").is_err());
        assert!(parse_host_port("host:0").is_err());
    }

    #[test]
    fn dns_checks() {
        assert!(is_dns1123_subdomain("a.b-c.d"));
        assert!(!is_dns1123_subdomain("A.b"));
        assert!(is_wildcard_dns1123_subdomain("*.example.com"));
        assert!(!is_dns1123_subdomain("*.example.com"));
    }
}
