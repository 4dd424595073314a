//! The address checks validation needs, with Go's parsing rules and upstream's messages: CIDRs,
//! `host:port`, RFC 1123 names and URL schemes.

use std::net::IpAddr;

use crate::dynamic::parse_ip_sloppy;

const DNS1123_SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// A parsed CIDR: the address as written and the prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address part.
    pub ip: IpAddr,
    /// Prefix length.
    pub prefix: u32,
}

impl Cidr {
    /// Address bits: 32 or 128.
    pub fn bits(&self) -> u32 {
        if self.ip.is_ipv4() { 32 } else { 128 }
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        match self.ip {
            IpAddr::V4(v4) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u32::MAX << (32 - self.prefix)
                };
                IpAddr::from(std::net::Ipv4Addr::from(u32::from(v4) & mask))
            }
            IpAddr::V6(v6) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u128::MAX << (128 - self.prefix)
                };
                IpAddr::from(std::net::Ipv6Addr::from(u128::from(v6) & mask))
            }
        }
    }

    /// Number of addresses, as `k8s.io/utils/net.RangeSize` counts them (0 for /31, /32, /127, /128).
    pub fn range_size(&self) -> i64 {
        let host_bits = self.bits() - self.prefix;
        if (self.bits() == 32 && host_bits >= 31) || (self.bits() == 128 && host_bits >= 127) {
            return 0;
        }
        if host_bits >= 63 {
            return i64::MAX;
        }
        1i64 << host_bits
    }
}

impl std::fmt::Display for Cidr {
    /// As Go's `IPNet.String()`: the network address and prefix.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}",
            crate::dynamic::go_ip_string(self.network()),
            self.prefix
        )
    }
}

/// Go's `ParseCIDRSloppy`: `ip/prefix`, IPv4 octets may have leading zeros.
pub fn parse_cidr(s: &str) -> Option<Cidr> {
    let (ip, prefix) = s.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) || prefix.len() > 3 {
        return None;
    }
    let prefix: u32 = prefix.parse().ok()?;
    let bits = if ip.is_ipv4() { 32 } else { 128 };
    (prefix <= bits).then_some(Cidr { ip, prefix })
}

/// Go's `*net.AddrError` as `net.SplitHostPort` returns it: `address ::1: too many colons in
/// address` (the address left out when it is empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", address_prefix(.addr))]
pub struct AddrError {
    /// The address refused.
    pub addr: String,
    /// Why (`missing port in address`).
    pub reason: &'static str,
}

/// `address <addr>: `, or nothing for an empty address, as Go's `AddrError.Error` words it.
fn address_prefix(addr: &str) -> String {
    if addr.is_empty() {
        String::new()
    } else {
        format!("address {addr}: ")
    }
}

/// Why kubeadm's `ParseHostPort` refused a `host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostPortError {
    /// The port is not a number in 1..=65535.
    #[error("hostport {hostport}: port {port} must be a valid number between 1 and 65535, inclusive")]
    Port {
        /// The value parsed.
        hostport: String,
        /// Its port.
        port: String,
    },
    /// The host is neither an IP address nor an RFC 1123 subdomain.
    #[error(
        "hostport {hostport}: host '{host}' must be a valid IP address or a valid RFC-1123 DNS subdomain"
    )]
    Host {
        /// The value parsed.
        hostport: String,
        /// Its host.
        host: String,
    },
}

/// Go's `net.SplitHostPort`, with its errors.
pub fn go_split_host_port(hostport: &str) -> Result<(String, String), AddrError> {
    let err = |reason: &'static str| {
        Err(AddrError {
            addr: hostport.to_string(),
            reason,
        })
    };
    let Some(i) = hostport.rfind(':') else {
        return err("missing port in address");
    };
    let (host, j, k);
    if hostport.starts_with('[') {
        let Some(end) = hostport.find(']') else {
            return err("missing ']' in address");
        };
        if end + 1 == hostport.len() {
            return err("missing port in address");
        }
        if end + 1 != i {
            if hostport.as_bytes()[end + 1] == b':' {
                return err("too many colons in address");
            }
            return err("missing port in address");
        }
        host = &hostport[1..end];
        j = 1;
        k = end + 1;
    } else {
        host = &hostport[..i];
        if host.contains(':') {
            return err("too many colons in address");
        }
        j = 0;
        k = 0;
    }
    if hostport[j..].contains('[') {
        return err("unexpected '[' in address");
    }
    if hostport[k..].contains(']') {
        return err("unexpected ']' in address");
    }
    Ok((host.to_string(), hostport[i + 1..].to_string()))
}

/// kubeadm's `ParsePort`: a decimal number in 1..=65535.
pub(crate) fn parse_port(port: &str) -> Option<u16> {
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    port.parse::<u16>().ok().filter(|p| *p >= 1)
}

/// kubeadm's `ParseHostPort`: `host[:port]` where host is an IP or an RFC 1123 subdomain.
pub fn parse_host_port(hostport: &str) -> Result<(String, String), HostPortError> {
    let (host, port) = go_split_host_port(hostport).unwrap_or_else(|_| (hostport.to_string(), String::new()));
    if !port.is_empty() && parse_port(&port).is_none() {
        return Err(HostPortError::Port {
            hostport: hostport.to_string(),
            port,
        });
    }
    if parse_ip_sloppy(&host).is_some() || is_dns1123_subdomain_errors(&host).is_empty() {
        return Ok((host, port));
    }
    Err(HostPortError::Host {
        hostport: hostport.to_string(),
        host,
    })
}

fn is_label(l: &str) -> bool {
    let b = l.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty() && alnum(&b[0]) && alnum(&b[b.len() - 1]) && b.iter().all(|c| alnum(c) || *c == b'-')
}

/// apimachinery's `IsDNS1123Subdomain`: the list of reasons `value` is not one.
pub fn is_dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !value.split('.').all(is_label) {
        errs.push(format!(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{DNS1123_SUBDOMAIN_FMT}')"
        ));
    }
    errs
}

/// apimachinery's `IsWildcardDNS1123Subdomain`.
pub(crate) fn is_wildcard_dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let ok = value
        .strip_prefix("*.")
        .is_some_and(|rest| rest.split('.').all(is_label));
    if !ok {
        errs.push(format!(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.{DNS1123_SUBDOMAIN_FMT}')"
        ));
    }
    errs
}

/// The scheme of a URL as Go's `url.Parse` finds it (lower-cased), or Go's error.
pub(crate) fn url_scheme(raw: &str) -> Result<String, crate::go_url::UrlError> {
    crate::go_url::parse(raw).map(|u| u.scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values from Go's `net.SplitHostPort`.
    #[test]
    fn splits_like_go() {
        type Case<'a> = (&'a str, Result<(&'a str, &'a str), &'a str>);
        let cases: &[Case] = &[
            ("a:1", Ok(("a", "1"))),
            ("[::1]:6443", Ok(("::1", "6443"))),
            ("a", Err("address a: missing port in address")),
            ("", Err("missing port in address")),
            ("::1", Err("address ::1: too many colons in address")),
            ("[::1]", Err("address [::1]: missing port in address")),
            ("[::1", Err("address [::1: missing ']' in address")),
            ("a]:1", Err("address a]:1: unexpected ']' in address")),
            ("kube-apiserver:6443", Ok(("kube-apiserver", "6443"))),
        ];
        for (input, want) in cases {
            let got = go_split_host_port(input).map_err(|e| e.to_string());
            let want = want
                .map(|(h, p)| (h.to_string(), p.to_string()))
                .map_err(str::to_string);
            assert_eq!(got, want, "{input}");
        }
    }

    #[test]
    fn cidrs_like_go() {
        let c = parse_cidr("10.1.2.3/8").expect("parses");
        assert_eq!(c.to_string(), "10.0.0.0/8");
        assert_eq!(c.range_size(), 1 << 24);
        assert_eq!(
            parse_cidr("fd00::1/64").map(|c| c.to_string()),
            Some("fd00::/64".to_string())
        );
        for bad in ["10.0.0.0/8x", "10.0.0.0", "10.0.0.0/33", "x/8", "10.0.0.0/-1"] {
            assert_eq!(parse_cidr(bad), None, "{bad}");
        }
    }

    #[test]
    fn url_schemes_like_go() {
        assert_eq!(
            url_scheme("unix:///var/run/containerd/containerd.sock"),
            Ok("unix".into())
        );
        assert_eq!(url_scheme("/var/run/crio/crio.sock"), Ok(String::new()));
        assert_eq!(url_scheme("HTTPS://x"), Ok("https".into()));
        assert!(url_scheme(":x").is_err());
        assert_eq!(
            url_scheme("10.0.0.1:2379").map_err(|e| e.to_string()),
            Err("parse \"10.0.0.1:2379\": first path segment in URL cannot contain colon".into())
        );
        assert_eq!(url_scheme("10.0.0.1/a:b"), Ok(String::new()));
    }
}
