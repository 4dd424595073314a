//! Go's `net/url.Parse` as kubeadm v1.25.16 runs it (the release is built with go1.20): where a URL
//! is refused and why, in Go's words, and the parts kubeadm reads (scheme, host, path).
//!
//! kubeadm parses the CRI socket, `discovery.file.kubeConfigPath`, external etcd endpoints and
//! etcd's `listen-metrics-urls` with it. The refusals: an ASCII control byte anywhere, a scheme
//! that starts with `:`, a relative reference whose first segment has a colon, a malformed or (in
//! the host) ASCII `%`-escape, a host character outside RFC 3986's set, a port that is not digits,
//! a `[` without its `]`, and user information with characters it may not hold.
//!
//! Newer Go releases refuse more (a bracketed IPv4 address, a `[` inside a host, several colons in
//! an `http`/`https` host); the released kubeadm does not, and neither do we.

/// The parts of a parsed URL (`%`-escapes decoded; bytes that are not UTF-8 replaced).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoUrl {
    /// The scheme, lower-cased; empty for a relative reference.
    pub scheme: String,
    /// What follows `scheme:` when it does not start with `/` (`unix:x.sock`).
    pub opaque: String,
    /// The host with its port, as Go's `URL.Host`.
    pub host: String,
    /// The decoded path.
    pub path: String,
}

impl GoUrl {
    /// Go's `URL.Hostname()`: the host without port and brackets.
    pub fn hostname(&self) -> &str {
        self.split_host_port().0
    }

    /// Go's `URL.Port()`: the digits after the host's last colon, if any.
    pub fn port(&self) -> &str {
        self.split_host_port().1
    }

    fn split_host_port(&self) -> (&str, &str) {
        let mut host = self.host.as_str();
        let mut port = "";
        if let Some(colon) = host.rfind(':')
            && valid_optional_port(&host[colon..])
        {
            (host, port) = (&host[..colon], &host[colon + 1..]);
        }
        if host.starts_with('[') && host.ends_with(']') && host.len() >= 2 {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }
}

/// Why `url.Parse` refused a URL, as Go's `*url.Error` words it: `parse "unix://%00": invalid URL
/// escape "%00"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse {}: {reason}", crate::gofmt::quote(.url))]
pub struct UrlError {
    /// The URL refused (with its fragment when the fragment is at fault).
    pub url: String,
    /// What is wrong with it.
    pub reason: UrlErrorKind,
}

/// What is wrong with a URL Go's `url.Parse` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlErrorKind {
    /// An ASCII control byte anywhere.
    #[error("net/url: invalid control character in URL")]
    ControlCharacter,
    /// A scheme that is empty (the URL starts with `:`).
    #[error("missing protocol scheme")]
    MissingScheme,
    /// A relative reference whose first segment has a colon (`10.0.0.1:2379`).
    #[error("first path segment in URL cannot contain colon")]
    ColonInFirstSegment,
    /// User information with characters it may not hold.
    #[error("net/url: invalid userinfo")]
    InvalidUserinfo,
    /// A `[` without its `]` in the host.
    #[error("missing ']' in host")]
    MissingBracket,
    /// A port that is not digits (the text from its colon).
    #[error("invalid port {} after host", crate::gofmt::quote(.0))]
    InvalidPort(String),
    /// A malformed `%`-escape, or one a host may not hold (up to three bytes from the `%`).
    #[error("invalid URL escape {}", crate::gofmt::quote(.0))]
    InvalidEscape(String),
    /// A host character outside RFC 3986's set.
    #[error("invalid character {} in host name", crate::gofmt::quote(.0))]
    InvalidHostCharacter(String),
}

/// `url.Parse(raw)`; the error is Go's, e.g. `parse "unix://%00": invalid URL escape "%00"`.
pub fn parse(raw: &str) -> Result<GoUrl, UrlError> {
    let (before, fragment) = match raw.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (raw, None),
    };
    let url = parse_reference(before).map_err(|reason| UrlError {
        url: before.to_string(),
        reason,
    })?;
    if let Some(f) = fragment {
        unescape(f, Mode::Fragment).map_err(|reason| UrlError {
            url: raw.to_string(),
            reason,
        })?;
    }
    Ok(url)
}

/// Go's `parse(rawURL, viaRequest=false)`.
fn parse_reference(raw: &str) -> Result<GoUrl, UrlErrorKind> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err(UrlErrorKind::ControlCharacter);
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(r, _)| r)
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if rest
            .split('/')
            .next()
            .is_some_and(|segment| segment.contains(':'))
        {
            return Err(UrlErrorKind::ColonInFirstSegment);
        }
    }
    let mut path = rest;
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, tail) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        url.host = parse_authority(authority)?;
        path = tail;
    }
    url.path = unescape(path, Mode::Path)?;
    Ok(url)
}

/// Go's `getScheme`: `[a-zA-Z][a-zA-Z0-9+.-]*:`, else no scheme.
fn scheme(raw: &str) -> Result<(&str, &str), UrlErrorKind> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err(UrlErrorKind::MissingScheme),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => break,
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: `[userinfo@]host`, returning the host.
fn parse_authority(authority: &str) -> Result<String, UrlErrorKind> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    if let Some(userinfo) = userinfo {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
        if !userinfo.chars().all(allowed) {
            return Err(UrlErrorKind::InvalidUserinfo);
        }
        for part in userinfo.splitn(2, ':') {
            unescape(part, Mode::UserPassword)?;
        }
    }
    Ok(host)
}

/// go1.20's `parseHost`.
fn parse_host(host: &str) -> Result<String, UrlErrorKind> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err(UrlErrorKind::MissingBracket);
        };
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_string()));
        }
        if let Some(zone) = host[..close].find("%25") {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.push_str(&unescape(&host[zone..close], Mode::Zone)?);
            out.push_str(&unescape(&host[close..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(colon) = host.rfind(':') {
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_string()));
        }
    }
    unescape(host, Mode::Host)
}

/// Empty, or `:` followed by digits only.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    Fragment,
}

/// Go's `shouldEscape(c, encodeHost)` for ASCII: what a host may not hold unescaped.
fn host_must_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

/// Go's `unescape`: `%XX` decoded; a malformed escape refused everywhere, and in a host an escaped
/// ASCII byte (but `%25`) or a character a host may not hold.
fn unescape(s: &str, mode: Mode) -> Result<String, UrlErrorKind> {
    let b = s.as_bytes();
    let escape_error = |from: usize| {
        let end = (from + 3).min(b.len());
        UrlErrorKind::InvalidEscape(String::from_utf8_lossy(&b[from..end]).into_owned())
    };
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len() || !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                    return Err(escape_error(i));
                }
                let v = (hex(b[i + 1]) << 4) | hex(b[i + 2]);
                let is_25 = &b[i..i + 3] == b"%25";
                if mode == Mode::Host && hex(b[i + 1]) < 8 && !is_25 {
                    return Err(escape_error(i));
                }
                if mode == Mode::Zone && !is_25 && v != b' ' && (v >= 0x80 || host_must_escape(v)) {
                    return Err(escape_error(i));
                }
                out.push(v);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && host_must_escape(c) {
                    return Err(UrlErrorKind::InvalidHostCharacter(char::from(c).to_string()));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values are go1.20's `url.Parse` (the Go of the kubeadm v1.25.16 release); every
    /// refusal here is also go1.26's.
    #[test]
    fn refuses_like_go() {
        let cases: &[(&str, &str)] = &[
            ("unix://\x00", "net/url: invalid control character in URL"),
            ("unix:///run/x\x7f", "net/url: invalid control character in URL"),
            ("unix://%00", "invalid URL escape \"%00\""),
            ("unix:///%00x%zz", "invalid URL escape \"%zz\""),
            ("unix:///a%", "invalid URL escape \"%\""),
            ("unix:///a%4", "invalid URL escape \"%4\""),
            ("unix://a%41/x", "invalid URL escape \"%41\""),
            ("unix://a b/x", "invalid character \" \" in host name"),
            ("unix://a{b", "invalid character \"{\" in host name"),
            ("https://h:x", "invalid port \":x\" after host"),
            ("https://[::1", "missing ']' in host"),
            ("https://[::1]x", "invalid port \"x\" after host"),
            ("https://[fe80::1%25en%00]", "invalid URL escape \"%00\""),
            ("https://us er@h", "net/url: invalid userinfo"),
            ("https://u%zz@h", "invalid URL escape \"%zz\""),
            (":x", "missing protocol scheme"),
            ("10.0.0.1:2379", "first path segment in URL cannot contain colon"),
        ];
        for (raw, why) in cases {
            let want = format!("parse {}: {why}", crate::gofmt::quote(raw));
            assert_eq!(parse(raw).map_err(|e| e.to_string()), Err(want), "{raw:?}");
        }
        // The fragment is checked last and named with the whole URL.
        assert_eq!(
            parse("unix:///a#%zz").map_err(|e| e.to_string()),
            Err("parse \"unix:///a#%zz\": invalid URL escape \"%zz\"".into())
        );
    }

    #[test]
    fn parts_like_go() {
        let u = parse("UNIX:///run/a%20b.sock?q#f").expect("parses");
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.path.as_str()),
            ("unix", "", "/run/a b.sock")
        );
        let u = parse("https://u:p@[fe80::1%25en0]:2379/x").expect("parses");
        assert_eq!(
            (u.host.as_str(), u.hostname(), u.port()),
            ("[fe80::1%en0]:2379", "fe80::1%en0", "2379")
        );
        let u = parse("http://127.0.0.1:").expect("parses");
        assert_eq!((u.hostname(), u.port()), ("127.0.0.1", ""));
        assert_eq!(parse("unix:x.sock").expect("parses").opaque, "x.sock");
        assert_eq!(parse("/var/run/crio/crio.sock").expect("parses").scheme, "");
        // Control bytes are looked for before the fragment only.
        assert!(parse("unix:///a#\x01").is_ok());
        // Accepted by go1.20 (newer Go refuses them).
        for raw in ["https://[10.0.0.1]:2379", "https://a[b]", "https://a:1:2"] {
            assert!(parse(raw).is_ok(), "{raw}");
        }
    }
}
