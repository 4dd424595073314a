//! Component configs kubeadm carries for the kubelet and kube-proxy: their wire types and the
//! defaults kubeadm applies to them.

pub mod kubelet;
pub mod kubeproxy;
pub mod logging;

use crate::print::{ComponentConfigKind, PrintError};
use kubelet::{KUBELET_API_VERSION, KubeletConfiguration, default_kubelet};
use kubeproxy::{KUBE_PROXY_API_VERSION, KubeProxyConfiguration, default_kube_proxy};

/// The component configs of a cluster, as kubeadm holds them next to the ClusterConfiguration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComponentConfigs {
    /// The kubelet's, when present.
    pub kubelet: Option<KubeletConfiguration>,
    /// kube-proxy's, when present.
    pub kube_proxy: Option<KubeProxyConfiguration>,
}

/// Renders a component config as YAML with its apiVersion and kind.
fn render<T: serde::Serialize>(obj: &T, api_version: &str, kind: &str) -> String {
    let mut value = serde_json::to_value(obj).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_string(), api_version.into());
        map.insert("kind".to_string(), kind.into());
    }
    kubeadm_yaml::to_string(&value)
}

/// The kubelet configuration as kubeadm writes it (`/var/lib/kubelet/config.yaml`, the
/// `kubelet-config` ConfigMap).
pub fn kubelet_yaml(kc: &KubeletConfiguration) -> String {
    render(kc, KUBELET_API_VERSION, "KubeletConfiguration")
}

/// The kube-proxy configuration as kubeadm writes it (`config.conf` of the `kube-proxy` ConfigMap).
pub fn kube_proxy_yaml(kp: &KubeProxyConfiguration) -> String {
    render(kp, KUBE_PROXY_API_VERSION, "KubeProxyConfiguration")
}

/// The defaulted document `config print --component-configs` shows for `kind`.
pub(crate) fn default_document(
    kind: ComponentConfigKind,
    host: &crate::dynamic::HostFacts,
) -> Result<String, PrintError> {
    let (init, cluster) = crate::print::static_init_defaults();
    Ok(match kind {
        ComponentConfigKind::Kubelet => {
            let mut kc = KubeletConfiguration::default();
            default_kubelet(&mut kc, &cluster, host.systemd_resolved_active);
            kubelet_yaml(&kc)
        }
        ComponentConfigKind::KubeProxy => {
            let mut kp = KubeProxyConfiguration::default();
            default_kube_proxy(&mut kp, &cluster, &init.local_api_endpoint);
            kube_proxy_yaml(&kp)
        }
    })
}
