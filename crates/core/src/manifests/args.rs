//! Component command lines as upstream builds them (`util/arguments.go`): kubeadm's defaults and the
//! user's `extraArgs` merged into one map, the user winning, then written `--key=value` in byte order
//! of the keys. Also Go's path helpers (`filepath.Join`, `filepath.Dir`, `net.JoinHostPort`) that the
//! flag values are built with, since their cleaning rules show in the output.

use std::collections::BTreeMap;

/// Merges `defaults` and `overrides` (overrides win) and renders `--key=value` flags sorted by key.
pub fn argument_list(
    defaults: &BTreeMap<String, String>,
    overrides: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut merged = defaults.clone();
    for (k, v) in overrides {
        merged.insert(k.clone(), v.clone());
    }
    // BTreeMap iterates in byte order of the keys, which is Go's `sort.Strings` order.
    merged.into_iter().map(|(k, v)| format!("--{k}={v}")).collect()
}

/// Go's `path.Clean` for slash-separated paths.
pub(crate) fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Join` of two elements (empty elements are skipped, the result cleaned).
pub(crate) fn join(dir: &str, name: &str) -> String {
    match (dir.is_empty(), name.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean(name),
        (false, true) => clean(dir),
        (false, false) => clean(&format!("{dir}/{name}")),
    }
}

/// Go's `filepath.Dir`.
pub(crate) fn dir(path: &str) -> String {
    match path.rfind('/') {
        Some(i) => clean(&path[..=i]),
        None => ".".to_string(),
    }
}

/// Go's `net.JoinHostPort`: brackets around hosts that contain a colon.
pub(crate) fn join_host_port(host: &str, port: impl std::fmt::Display) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `k8s.io/utils/net.IsIPv6String`: an IP address that is not IPv4 (nor IPv4-mapped).
pub(crate) fn is_ipv6(s: &str) -> bool {
    match kubeadm_api::dynamic::parse_ip_sloppy(s) {
        Some(std::net::IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_none(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_rules() {
        assert_eq!(
            join("/etc/kubernetes/pki/", "ca.crt"),
            "/etc/kubernetes/pki/ca.crt"
        );
        assert_eq!(join("pki", "../ca.crt"), "ca.crt");
        assert_eq!(join("", "etcd/ca.crt"), "etcd/ca.crt");
        assert_eq!(dir("/etc/etcd/ca.crt"), "/etc/etcd");
        assert_eq!(dir("ca.crt"), ".");
        assert_eq!(dir(""), ".");
        assert_eq!(dir("/ca.crt"), "/");
        assert_eq!(clean("a//b/./c/.."), "a/b");
        assert_eq!(join_host_port("fd00::1", 2379), "[fd00::1]:2379");
    }

    #[test]
    fn overrides_win_and_keys_sort_bytewise() {
        let d: BTreeMap<String, String> = [("b", "1"), ("a-z", "2"), ("a", "3")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let o: BTreeMap<String, String> = [("b".to_string(), "x".to_string())].into_iter().collect();
        assert_eq!(argument_list(&d, &o), ["--a=3", "--a-z=2", "--b=x"]);
    }
}
