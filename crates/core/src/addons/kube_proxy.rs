//! The kube-proxy addon: its manifest text as `init phase addon kube-proxy --print-manifest` prints
//! it, and the typed objects `init` creates (ConfigMap with `config.conf` and `kubeconfig.conf`,
//! DaemonSet, ServiceAccount and RBAC).

use std::collections::BTreeMap;

use kubeadm_api::componentconfig::kube_proxy_yaml;
use kubeadm_api::componentconfig::kubeproxy::KubeProxyConfiguration;
use kubeadm_api::dynamic::{ResolvedCluster, go_ip_string};
use kubeadm_api::v1beta3::{ApiEndpoint, ClusterConfiguration};
use serde_json::{Value, json};

use super::AddonError;
use crate::cluster::meta::{NAMESPACE_SYSTEM, config_map, object, object_meta, service_account, string_map};
use crate::cluster::rbac::{NODE_BOOTSTRAP_TOKEN_AUTH_GROUP, Subject, binding, get_named_role_and_binding};
use crate::cluster::upload_config::sign_config_map;
use crate::manifests::image_settings;
use crate::pki::{https_url, parse_host_port, parse_ip_sloppy};

/// `KubeProxy`, also the ServiceAccount, Role, ConfigMap and DaemonSet name.
pub const KUBE_PROXY: &str = "kube-proxy";
/// `KubeProxyConfigMapKey`.
pub const CONFIG_KEY: &str = "config.conf";
/// The kubeconfig key of the ConfigMap.
pub const KUBECONFIG_KEY: &str = "kubeconfig.conf";
/// `KubeProxyClusterRoleBindingName`.
pub const NODE_PROXIER_BINDING: &str = "kubeadm:node-proxier";
/// `KubeProxyClusterRoleName`.
pub const NODE_PROXIER_ROLE: &str = "system:node-proxier";

const DAEMON_SET_TEMPLATE: &str = "
apiVersion: apps/v1
kind: DaemonSet
metadata:
  labels:
    k8s-app: kube-proxy
  name: kube-proxy
  namespace: kube-system
spec:
  selector:
    matchLabels:
      k8s-app: kube-proxy
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        k8s-app: kube-proxy
    spec:
      priorityClassName: system-node-critical
      containers:
      - name: kube-proxy
        image: {{ .Image }}
        imagePullPolicy: IfNotPresent
        command:
        - /usr/local/bin/kube-proxy
        - --config=/var/lib/kube-proxy/config.conf
        - --hostname-override=$(NODE_NAME)
        securityContext:
          privileged: true
        volumeMounts:
        - mountPath: /var/lib/kube-proxy
          name: kube-proxy
        - mountPath: /run/xtables.lock
          name: xtables-lock
          readOnly: false
        - mountPath: /lib/modules
          name: lib-modules
          readOnly: true
        env:
          - name: NODE_NAME
            valueFrom:
              fieldRef:
                fieldPath: spec.nodeName
      hostNetwork: true
      serviceAccountName: kube-proxy
      volumes:
      - name: kube-proxy
        configMap:
          name: kube-proxy
      - name: xtables-lock
        hostPath:
          path: /run/xtables.lock
          type: FileOrCreate
      - name: lib-modules
        hostPath:
          path: /lib/modules
      tolerations:
      - operator: Exists
      nodeSelector:
        kubernetes.io/os: linux
";

/// The in-cluster kubeconfig kube-proxy pods use (service-account token and CA), without a final
/// newline (it sits in a `|-` block).
pub fn kube_proxy_kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    server: {server}
  name: default
contexts:
- context:
    cluster: default
    namespace: default
    user: default
  name: default
current-context: default
users:
- name: default
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"
    )
}

/// The warning upstream logs (klog, from `endpoint.go`) when the control-plane endpoint's port
/// differs from the bind port.
pub const PORT_OVERRIDE_WARNING: &str = "[endpoint] WARNING: port specified in controlPlaneEndpoint overrides bindPort in the controlplane address";

/// `GetControlPlaneEndpoint`: `https://` and the control-plane endpoint (with the bind port when it
/// has none), else the local advertise address and bind port.
pub fn control_plane_url(cluster: &ClusterConfiguration, local: &ApiEndpoint) -> Result<String, AddonError> {
    control_plane_url_with_warning(cluster, local).map(|(url, _)| url)
}

/// [`control_plane_url`], and [`PORT_OVERRIDE_WARNING`] when upstream would log it.
pub fn control_plane_url_with_warning(
    cluster: &ClusterConfiguration,
    local: &ApiEndpoint,
) -> Result<(String, Option<&'static str>), AddonError> {
    let port = local.bind_port.to_string();
    if !(1..=65535).contains(&local.bind_port) {
        return Err(AddonError::Endpoint(format!(
            "invalid value {port:?} given for api.bindPort: port must be a valid number between 1 and 65535, inclusive"
        )));
    }
    let ip = parse_ip_sloppy(&local.advertise_address).ok_or_else(|| {
        AddonError::Endpoint(format!(
            "invalid value `{}` given for api.advertiseAddress",
            local.advertise_address
        ))
    })?;
    if cluster.control_plane_endpoint.is_empty() {
        return Ok((https_url(&go_ip_string(ip), &port), None));
    }
    let (host, cpe_port) = parse_host_port(&cluster.control_plane_endpoint).map_err(|e| {
        AddonError::Endpoint(format!(
            "invalid value {:?} given for controlPlaneEndpoint: {e}",
            cluster.control_plane_endpoint
        ))
    })?;
    let warning = (!cpe_port.is_empty() && cpe_port != port).then_some(PORT_OVERRIDE_WARNING);
    let port = if cpe_port.is_empty() { port } else { cpe_port };
    Ok((https_url(&host, &port), warning))
}

/// Everything the kube-proxy addon depends on.
#[derive(Debug, Clone, Copy)]
pub struct KubeProxyInputs<'a> {
    /// The cluster configuration.
    pub cluster: &'a ClusterConfiguration,
    /// CI version and registry, when resolved.
    pub resolved: &'a ResolvedCluster,
    /// This node's API endpoint (used when there is no control-plane endpoint).
    pub local_api_endpoint: &'a ApiEndpoint,
    /// kube-proxy's component config, defaulted by kubeadm.
    pub config: &'a KubeProxyConfiguration,
}

fn config_map_text(inputs: &KubeProxyInputs<'_>) -> Result<String, AddonError> {
    let server = control_plane_url(inputs.cluster, inputs.local_api_endpoint)?;
    let mut text = String::from(
        "
kind: ConfigMap
apiVersion: v1
metadata:
  name: kube-proxy
  namespace: kube-system
  labels:
    app: kube-proxy
data:
  kubeconfig.conf: |-
",
    );
    for line in kube_proxy_kubeconfig(&server).lines() {
        text.push_str("    ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("  config.conf: |-\n");
    for line in kube_proxy_yaml(inputs.config).lines() {
        text.push_str("    ");
        text.push_str(line);
        text.push('\n');
    }
    text.push('\n');
    Ok(text)
}

fn image(inputs: &KubeProxyInputs<'_>) -> String {
    image_settings(inputs.cluster, inputs.resolved).kubernetes_image(KUBE_PROXY)
}

/// The ServiceAccount, ClusterRoleBinding, Role and RoleBinding, in the order printed.
fn rbac_objects() -> [Value; 4] {
    let [role, role_binding] = get_named_role_and_binding(
        KUBE_PROXY,
        NAMESPACE_SYSTEM,
        "configmaps",
        KUBE_PROXY,
        &[Subject::Group(NODE_BOOTSTRAP_TOKEN_AUTH_GROUP)],
    );
    [
        service_account(KUBE_PROXY, NAMESPACE_SYSTEM),
        binding(
            true,
            NODE_PROXIER_BINDING,
            "",
            "ClusterRole",
            NODE_PROXIER_ROLE,
            &[Subject::ServiceAccount(KUBE_PROXY, NAMESPACE_SYSTEM)],
        ),
        role,
        role_binding,
    ]
}

/// The text `kubeadm init phase addon kube-proxy --print-manifest` prints: ServiceAccount,
/// ClusterRoleBinding, Role, RoleBinding (marshalled objects), then the ConfigMap and DaemonSet
/// templates, each after a `---`.
pub fn kube_proxy_manifest(inputs: &KubeProxyInputs<'_>) -> Result<String, AddonError> {
    let config_map = config_map_text(inputs)?;
    let mut out = String::new();
    for obj in rbac_objects() {
        out.push_str("---\n");
        out.push_str(&kubeadm_yaml::to_string(&obj));
    }
    out.push_str("---");
    out.push_str(&config_map);
    out.push_str("---");
    out.push_str(&DAEMON_SET_TEMPLATE.replace("{{ .Image }}", &image(inputs)));
    Ok(out)
}

/// The objects `init` creates for kube-proxy, in upstream's order: ConfigMap, DaemonSet,
/// ServiceAccount, ClusterRoleBinding, Role, RoleBinding.
///
/// A ConfigMap kubeadm generated (`user_supplied` false) carries the component-config hash.
/// `proxy_env` are the host's `*_proxy` environment variables (non-empty values, in environment
/// order), which upstream passes on to the kube-proxy container.
pub fn kube_proxy_objects(
    inputs: &KubeProxyInputs<'_>,
    user_supplied: bool,
    proxy_env: &[(String, String)],
) -> Result<Vec<Value>, AddonError> {
    let server = control_plane_url(inputs.cluster, inputs.local_api_endpoint)?;
    // A `|-` block keeps no final line break.
    let config = kube_proxy_yaml(inputs.config).trim_end_matches('\n').to_string();
    let data = BTreeMap::from([
        (CONFIG_KEY.to_string(), config),
        (KUBECONFIG_KEY.to_string(), kube_proxy_kubeconfig(&server)),
    ]);
    let mut meta = object_meta(KUBE_PROXY, NAMESPACE_SYSTEM);
    meta.insert("labels".into(), string_map([("app", KUBE_PROXY)]));
    let mut cm = config_map(meta, &data);
    if !user_supplied {
        sign_config_map(&mut cm);
    }
    let mut objects = vec![cm, daemon_set(&image(inputs), proxy_env)];
    objects.extend(rbac_objects());
    Ok(objects)
}

fn daemon_set(image: &str, proxy_env: &[(String, String)]) -> Value {
    let labels = string_map([("k8s-app", KUBE_PROXY)]);
    let mut meta = object_meta(KUBE_PROXY, NAMESPACE_SYSTEM);
    meta.insert("labels".into(), labels.clone());
    let mut env = vec![json!({
        "name": "NODE_NAME",
        "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
    })];
    env.extend(
        proxy_env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value})),
    );
    let container = json!({
        "name": KUBE_PROXY,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "/usr/local/bin/kube-proxy",
            "--config=/var/lib/kube-proxy/config.conf",
            "--hostname-override=$(NODE_NAME)",
        ],
        "env": env,
        // A struct, not a pointer: Go always writes it.
        "resources": {},
        "securityContext": {"privileged": true},
        // `readOnly: false` in the template is the zero value, dropped by omitempty.
        "volumeMounts": [
            {"mountPath": "/var/lib/kube-proxy", "name": KUBE_PROXY},
            {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
            {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": true},
        ],
    });
    let spec = json!({
        "selector": {"matchLabels": labels},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"creationTimestamp": null, "labels": labels},
            "spec": {
                "priorityClassName": "system-node-critical",
                "containers": [container],
                "hostNetwork": true,
                "serviceAccountName": KUBE_PROXY,
                "volumes": [
                    {"name": KUBE_PROXY, "configMap": {"name": KUBE_PROXY}},
                    {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}},
                ],
                "tolerations": [{"operator": "Exists"}],
                "nodeSelector": {"kubernetes.io/os": "linux"},
            },
        },
    });
    // DaemonSetStatus's counters have no omitempty.
    let status = json!({
        "currentNumberScheduled": 0,
        "desiredNumberScheduled": 0,
        "numberMisscheduled": 0,
        "numberReady": 0,
    });
    object("apps/v1", "DaemonSet", meta, [("spec", spec), ("status", status)])
}
