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
    format!(
        "KUBELET_KUBEADM_ARGS={}\n",
        kubeadm_api::gofmt::quote(&args.join(" "))
    )
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
}
