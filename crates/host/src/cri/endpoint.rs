//! From a CRI endpoint string to the Unix socket path to dial, the way crictl 1.25 reads `-r` (kubelet's
//! `util.GetAddressAndDialer`): a `unix://` URL (scheme case-insensitive, host ignored, path
//! percent-decoded, query and fragment dropped), or a bare path, which is read as `unix://` + path
//! (deprecated upstream but accepted). `tcp://` and any other scheme are refused.
//!
//! One deliberate difference: an endpoint that yields an empty path (`unix://`, `containerd.sock`, which
//! Go parses as a host name) is refused here, where crictl would try to dial `""` and fail later.

use std::path::PathBuf;

use kubeadm_effects::cri::CriError;

/// Why the text of an endpoint is not a URL Go's `net/url` reads, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum UrlError {
    /// The text starts with `:`.
    #[error("missing protocol scheme")]
    MissingScheme,
    /// A malformed `%`-escape in the path (up to three bytes from the `%`).
    #[error("invalid URL escape {0:?}")]
    InvalidEscape(String),
    /// The decoded path is not UTF-8.
    #[error("the socket path is not UTF-8")]
    NotUtf8,
}

/// The socket path of a CRI endpoint.
pub(crate) fn socket_path(endpoint: &str) -> Result<PathBuf, CriError> {
    let invalid = |reason: String| CriError::InvalidEndpoint {
        endpoint: endpoint.to_string(),
        reason,
    };
    let bad_url = |e: UrlError| invalid(e.to_string());
    let (scheme, rest) = match split_scheme(endpoint).map_err(bad_url)? {
        Some(split) => split,
        // No scheme: kubelet retries with `unix://` in front.
        None => match split_scheme(&format!("unix://{endpoint}")).map_err(bad_url)? {
            Some((scheme, rest)) => (scheme, rest.to_string()),
            None => return Err(invalid("no URL scheme".to_string())),
        },
    };
    match scheme.as_str() {
        "unix" => {}
        "tcp" => return Err(invalid("only support unix socket endpoint".to_string())),
        other => return Err(invalid(format!("protocol {other:?} not supported"))),
    }
    let path = decode_path(url_path(&rest)).map_err(bad_url)?;
    if path.is_empty() {
        return Err(invalid("the endpoint names no socket path".to_string()));
    }
    Ok(PathBuf::from(path))
}

/// Go's `getScheme`: `Some((lowercased scheme, rest))`, `None` when the string has no scheme.
fn split_scheme(raw: &str) -> Result<Option<(String, String)>, UrlError> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err(UrlError::MissingScheme),
            ':' => return Ok(Some((raw[..i].to_ascii_lowercase(), raw[i + 1..].to_string()))),
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// The still-escaped path of what follows `scheme:`: fragment and query cut off, an authority after
/// `//` skipped; an opaque rest (no leading `/`) has no path, as in Go.
fn url_path(rest: &str) -> &str {
    let rest = rest.split('#').next().unwrap_or_default();
    let rest = rest.split('?').next().unwrap_or_default();
    if let Some(after) = rest.strip_prefix("//") {
        return after.find('/').map_or("", |i| &after[i..]);
    }
    if rest.starts_with('/') { rest } else { "" }
}

/// Percent-decoding as Go's `url.PathUnescape`, with its error for a bad escape.
fn decode_path(escaped: &str) -> Result<String, UrlError> {
    let bytes = escaped.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                    out.push(b);
                    i += 3;
                }
                _ => {
                    let bad = escaped.get(i..(i + 3).min(escaped.len())).unwrap_or("%");
                    return Err(UrlError::InvalidEscape(bad.to_string()));
                }
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UrlError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected paths come from kubelet's `parseEndpointWithFallbackProtocol` + `GetAddressAndDialer`
    /// (v1.25.16, `pkg/kubelet/util/util_unix.go`) run under Go's `net/url`; `None` = refused. The two
    /// empty-path cases are refused here on purpose (see the module doc); Go returned `""` for them.
    #[test]
    fn endpoints_parse_like_kubelet() {
        let table: &[(&str, Option<&str>)] = &[
            (
                "unix:///run/containerd/containerd.sock",
                Some("/run/containerd/containerd.sock"),
            ),
            (
                "/run/containerd/containerd.sock",
                Some("/run/containerd/containerd.sock"),
            ),
            ("unix:///var/run/crio/crio.sock", Some("/var/run/crio/crio.sock")),
            ("UNIX:///run/x.sock", Some("/run/x.sock")),
            ("unix:/run/x.sock", Some("/run/x.sock")),
            ("unix://run/x.sock", Some("/x.sock")),
            ("unix://localhost/run/x.sock", Some("/run/x.sock")),
            ("unix:///run/a%20b.sock", Some("/run/a b.sock")),
            ("unix:///run/x.sock?q=1#frag", Some("/run/x.sock")),
            ("unix://", None),
            ("containerd.sock", None),
            ("tcp://127.0.0.1:1234", None),
            ("npipe:////./pipe/containerd-containerd", None),
            ("http://localhost/x", None),
            ("unix:///run/%zz", None),
            ("", None),
        ];
        for (endpoint, want) in table {
            let got = socket_path(endpoint).ok();
            assert_eq!(
                got.as_deref(),
                want.map(std::path::Path::new),
                "endpoint {endpoint:?}"
            );
        }
    }

    #[test]
    fn refusals_say_why() {
        let msg = |e: &str| socket_path(e).expect_err("refused").to_string();
        assert_eq!(
            msg("tcp://127.0.0.1:1234"),
            "invalid CRI endpoint \"tcp://127.0.0.1:1234\": only support unix socket endpoint"
        );
        assert_eq!(
            msg("npipe:////./pipe/x"),
            "invalid CRI endpoint \"npipe:////./pipe/x\": protocol \"npipe\" not supported"
        );
        assert_eq!(
            msg("unix:///run/%zz"),
            "invalid CRI endpoint \"unix:///run/%zz\": invalid URL escape \"%zz\""
        );
    }
}
