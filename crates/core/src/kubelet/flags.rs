//! `kubeadm-flags.env` (upstream `phases/kubelet/flags.go`): the CRI endpoint, the pause image,
//! `--hostname-override` when the node name is not the hostname, the taints when registering through
//! flags (join), all merged with `kubeletExtraArgs` and written `KUBELET_KUBEADM_ARGS="…"`.

use std::collections::BTreeMap;

use kubeadm_api::dynamic::ResolvedCluster;
use kubeadm_api::v1beta3::{ClusterConfiguration, NodeRegistrationOptions, Taint};

use crate::manifests::{argument_list, image_settings};

/// What the flags depend on.
#[derive(Debug, Clone, Copy)]
pub struct KubeletFlagsInputs<'a> {
    /// The cluster configuration (for the image repository).
    pub cluster: &'a ClusterConfiguration,
    /// How defaulting resolved the cluster (CI builds).
    pub resolved: &'a ResolvedCluster,
    /// This node's registration options.
    pub node_registration: &'a NodeRegistrationOptions,
    /// The host's name, as `os.Hostname()` gives it.
    pub hostname: &'a str,
    /// Pass the taints as `--register-with-taints` (upstream does so on `join`, not on `init`).
    pub register_taints_using_flags: bool,
}

/// `corev1.Taint.ToString()`: `key[=value]:effect`.
pub fn taint_to_string(t: &Taint) -> String {
    match (t.value.is_empty(), t.effect.is_empty()) {
        (true, true) => t.key.clone(),
        (false, true) => format!("{}={}:", t.key, t.value),
        (true, false) => format!("{}:{}", t.key, t.effect),
        (false, false) => format!("{}={}:{}", t.key, t.value, t.effect),
    }
}

/// The content of `kubeadm-flags.env`, with a trailing newline.
pub fn flags_env(inputs: &KubeletFlagsInputs<'_>) -> String {
    let nr = inputs.node_registration;
    let mut flags: BTreeMap<String, String> = BTreeMap::new();
    flags.insert("container-runtime-endpoint".into(), nr.cri_socket.clone());
    flags.insert("container-runtime".into(), "remote".into());
    let pause = image_settings(inputs.cluster, inputs.resolved).pause_image();
    flags.insert("pod-infra-container-image".into(), pause);
    if inputs.register_taints_using_flags
        && let Some(taints) = nr.taints.as_ref().filter(|t| !t.is_empty())
    {
        let list: Vec<String> = taints.iter().map(taint_to_string).collect();
        flags.insert("register-with-taints".into(), list.join(","));
    }
    // Upstream's node name: the configured name, else the hostname; `hostname-override` in the
    // extra args wins over both. The hostname is trimmed and lower-cased (`nodeutil.GetHostname`).
    let hostname = inputs.hostname.trim().to_lowercase();
    let mut node_name = if nr.name.is_empty() {
        hostname.clone()
    } else {
        nr.name.clone()
    };
    if let Some(o) = nr.kubelet_extra_args.get("hostname-override") {
        node_name = o.clone();
    }
    if node_name != hostname {
        flags.insert("hostname-override".into(), node_name);
    }
    let args = argument_list(&flags, &nr.kubelet_extra_args);
    format!("KUBELET_KUBEADM_ARGS={}\n", go_quote(&args.join(" ")))
}

/// Go's `%q` of a string: double-quoted with Go escapes, printable Unicode kept as is.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint` for characters beyond ASCII: control and format
/// characters and unassigned private ranges are escaped, the rest is printed.
fn is_go_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c as u32, 0x80..=0x9f | 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_render_like_go() {
        let t = |k: &str, v: &str, e: &str| Taint {
            key: k.into(),
            value: v.into(),
            effect: e.into(),
            time_added: None,
        };
        assert_eq!(taint_to_string(&t("a", "", "")), "a");
        assert_eq!(taint_to_string(&t("a", "b", "")), "a=b:");
        assert_eq!(taint_to_string(&t("a", "", "NoSchedule")), "a:NoSchedule");
        assert_eq!(taint_to_string(&t("a", "b", "NoExecute")), "a=b:NoExecute");
    }

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(go_quote("x\ty\u{1}é"), "\"x\\ty\\x01é\"");
    }
}
