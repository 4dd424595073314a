//! The CoreDNS addon: its manifest text as `init phase addon coredns --print-manifest` prints it
//! (upstream's templates, rendered), and the typed objects `init` creates from those templates.

use kubeadm_api::dynamic::{ResolvedCluster, go_ip_string};
use kubeadm_api::v1beta3::ClusterConfiguration;
use serde_json::{Value, json};

use super::AddonError;
use crate::cluster::meta::{NAMESPACE_SYSTEM, object, object_meta, service_account, string_map};
use crate::cluster::rbac::{Subject, binding, role, rule};
use crate::manifests::image_settings;

/// `CoreDNSDeploymentName`, also the ConfigMap, ServiceAccount and container name.
pub const COREDNS: &str = "coredns";
/// The Service name kept from kube-dns days.
pub const KUBE_DNS_SERVICE: &str = "kube-dns";
/// `coreDNSReplicas`: replicas of a new deployment (an existing one keeps its count).
pub const DEFAULT_REPLICAS: i32 = 2;
/// The ClusterRole and ClusterRoleBinding name.
pub const COREDNS_CLUSTER_ROLE: &str = "system:coredns";
/// `LabelNodeRoleOldControlPlane`, still tolerated in 1.25.
const OLD_CONTROL_PLANE_TAINT: &str = "node-role.kubernetes.io/master";
/// `LabelNodeRoleControlPlane`.
const CONTROL_PLANE_TAINT: &str = "node-role.kubernetes.io/control-plane";

const DEPLOYMENT_TEMPLATE: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .DeploymentName }}
  namespace: kube-system
  labels:
    k8s-app: kube-dns
spec:
  replicas: {{ .Replicas }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  selector:
    matchLabels:
      k8s-app: kube-dns
  template:
    metadata:
      labels:
        k8s-app: kube-dns
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchExpressions:
                - key: k8s-app
                  operator: In
                  values: ["kube-dns"]
              topologyKey: kubernetes.io/hostname
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - key: {{ .OldControlPlaneTaintKey }}
        effect: NoSchedule
      - key: {{ .ControlPlaneTaintKey }}
        effect: NoSchedule
      nodeSelector:
        kubernetes.io/os: linux
      containers:
      - name: coredns
        image: {{ .Image }}
        imagePullPolicy: IfNotPresent
        resources:
          limits:
            memory: 170Mi
          requests:
            cpu: 100m
            memory: 70Mi
        args: [ "-conf", "/etc/coredns/Corefile" ]
        volumeMounts:
        - name: config-volume
          mountPath: /etc/coredns
          readOnly: true
        ports:
        - containerPort: 53
          name: dns
          protocol: UDP
        - containerPort: 53
          name: dns-tcp
          protocol: TCP
        - containerPort: 9153
          name: metrics
          protocol: TCP
        livenessProbe:
          httpGet:
            path: /health
            port: 8080
            scheme: HTTP
          initialDelaySeconds: 60
          timeoutSeconds: 5
          successThreshold: 1
          failureThreshold: 5
        readinessProbe:
          httpGet:
            path: /ready
            port: 8181
            scheme: HTTP
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            add:
            - NET_BIND_SERVICE
            drop:
            - all
          readOnlyRootFilesystem: true
      dnsPolicy: Default
      volumes:
        - name: config-volume
          configMap:
            name: coredns
            items:
            - key: Corefile
              path: Corefile
"#;

const CONFIG_MAP_HEAD: &str = "
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
";

const SERVICE_TEMPLATE: &str = r#"
apiVersion: v1
kind: Service
metadata:
  labels:
    k8s-app: kube-dns
    kubernetes.io/cluster-service: "true"
    kubernetes.io/name: "CoreDNS"
  name: kube-dns
  namespace: kube-system
  annotations:
    prometheus.io/port: "9153"
    prometheus.io/scrape: "true"
  # Without this resourceVersion value, an update of the Service between versions will yield:
  #   Service "kube-dns" is invalid: metadata.resourceVersion: Invalid value: "": must be specified for an update
  resourceVersion: "0"
spec:
  clusterIP: {{ .DNSIP }}
  ports:
  - name: dns
    port: 53
    protocol: UDP
    targetPort: 53
  - name: dns-tcp
    port: 53
    protocol: TCP
    targetPort: 53
  - name: metrics
    port: 9153
    protocol: TCP
    targetPort: 9153
  selector:
    k8s-app: kube-dns
"#;

const CLUSTER_ROLE_TEXT: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups:
  - ""
  resources:
  - endpoints
  - services
  - pods
  - namespaces
  verbs:
  - list
  - watch
- apiGroups:
  - ""
  resources:
  - nodes
  verbs:
  - get
- apiGroups:
  - discovery.k8s.io
  resources:
  - endpointslices
  verbs:
  - list
  - watch
"#;

const CLUSTER_ROLE_BINDING_TEXT: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: kube-system
";

const SERVICE_ACCOUNT_TEXT: &str = "
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
";

/// The Corefile for the cluster DNS domain.
pub fn corefile(dns_domain: &str) -> String {
    format!(
        ".:53 {{
    errors
    health {{
       lameduck 5s
    }}
    ready
    kubernetes {dns_domain} in-addr.arpa ip6.arpa {{
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }}
    prometheus :9153
    forward . /etc/resolv.conf {{
       max_concurrent 1000
    }}
    cache 30
    loop
    reload
    loadbalance
}}
"
    )
}

/// The cluster DNS Service IP (`GetDNSIP`): the tenth address of the first service subnet.
pub fn dns_ip(cluster: &ClusterConfiguration) -> Result<String, AddonError> {
    kubeadm_api::componentconfig::kubelet::dns_ip(&cluster.networking.service_subnet)
        .map(go_ip_string)
        .ok_or_else(|| AddonError::DnsIp(cluster.networking.service_subnet.clone()))
}

/// What the CoreDNS templates are filled with.
struct Params {
    image: String,
    dns_ip: String,
    dns_domain: String,
    replicas: i32,
}

fn params(
    cluster: &ClusterConfiguration,
    resolved: &ResolvedCluster,
    replicas: i32,
) -> Result<Params, AddonError> {
    Ok(Params {
        image: image_settings(cluster, resolved).dns_image(),
        dns_ip: dns_ip(cluster)?,
        dns_domain: cluster.networking.dns_domain.clone(),
        replicas,
    })
}

/// The text `kubeadm init phase addon coredns --print-manifest` prints (a fresh deployment: two
/// replicas): Deployment, ConfigMap, Service, ClusterRole, ClusterRoleBinding, ServiceAccount, each
/// after a `---`.
pub fn coredns_manifest(
    cluster: &ClusterConfiguration,
    resolved: &ResolvedCluster,
) -> Result<String, AddonError> {
    let p = params(cluster, resolved, DEFAULT_REPLICAS)?;
    let deployment = DEPLOYMENT_TEMPLATE
        .replace("{{ .DeploymentName }}", COREDNS)
        .replace("{{ .Replicas }}", &p.replicas.to_string())
        .replace("{{ .OldControlPlaneTaintKey }}", OLD_CONTROL_PLANE_TAINT)
        .replace("{{ .ControlPlaneTaintKey }}", CONTROL_PLANE_TAINT)
        .replace("{{ .Image }}", &p.image);
    let mut config_map = CONFIG_MAP_HEAD.to_string();
    for line in corefile(&p.dns_domain).lines() {
        config_map.push_str("    ");
        config_map.push_str(line);
        config_map.push('\n');
    }
    let service = SERVICE_TEMPLATE.replace("{{ .DNSIP }}", &p.dns_ip);
    let mut out = String::new();
    for doc in [
        deployment.as_str(),
        &config_map,
        &service,
        CLUSTER_ROLE_TEXT,
        CLUSTER_ROLE_BINDING_TEXT,
        SERVICE_ACCOUNT_TEXT,
    ] {
        out.push_str("---");
        out.push_str(doc);
    }
    Ok(out)
}

/// The objects `init` creates for CoreDNS, in upstream's order: ConfigMap, ClusterRole,
/// ClusterRoleBinding, ServiceAccount, Deployment, Service. `replicas` is [`DEFAULT_REPLICAS`] for a
/// new cluster, or the count of the deployment already running.
pub fn coredns_objects(
    cluster: &ClusterConfiguration,
    resolved: &ResolvedCluster,
    replicas: i32,
) -> Result<Vec<Value>, AddonError> {
    let p = params(cluster, resolved, replicas)?;
    let config_map = object(
        "v1",
        "ConfigMap",
        object_meta(COREDNS, NAMESPACE_SYSTEM),
        [("data", json!({"Corefile": corefile(&p.dns_domain)}))],
    );
    let cluster_role = role(
        true,
        COREDNS_CLUSTER_ROLE,
        "",
        vec![
            rule(
                &["list", "watch"],
                &[""],
                &["endpoints", "services", "pods", "namespaces"],
                &[],
            ),
            rule(&["get"], &[""], &["nodes"], &[]),
            rule(
                &["list", "watch"],
                &["discovery.k8s.io"],
                &["endpointslices"],
                &[],
            ),
        ],
    );
    let cluster_role_binding = binding(
        true,
        COREDNS_CLUSTER_ROLE,
        "",
        "ClusterRole",
        COREDNS_CLUSTER_ROLE,
        &[Subject::ServiceAccount(COREDNS, NAMESPACE_SYSTEM)],
    );
    Ok(vec![
        config_map,
        cluster_role,
        cluster_role_binding,
        service_account(COREDNS, NAMESPACE_SYSTEM),
        deployment(&p),
        service(&p),
    ])
}

fn deployment(p: &Params) -> Value {
    let labels = string_map([("k8s-app", KUBE_DNS_SERVICE)]);
    let mut meta = object_meta(COREDNS, NAMESPACE_SYSTEM);
    meta.insert("labels".into(), labels.clone());
    let container = json!({
        "name": COREDNS,
        "image": p.image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"memory": "170Mi"},
            "requests": {"cpu": "100m", "memory": "70Mi"},
        },
        "args": ["-conf", "/etc/coredns/Corefile"],
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": true}],
        "ports": [
            {"containerPort": 53, "name": "dns", "protocol": "UDP"},
            {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
            {"containerPort": 9153, "name": "metrics", "protocol": "TCP"},
        ],
        "livenessProbe": {
            "httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"},
            "initialDelaySeconds": 60,
            "timeoutSeconds": 5,
            "successThreshold": 1,
            "failureThreshold": 5,
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["all"]},
            "readOnlyRootFilesystem": true,
        },
    });
    let pod_spec = json!({
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": COREDNS,
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100,
            "podAffinityTerm": {
                "labelSelector": {"matchExpressions": [
                    {"key": "k8s-app", "operator": "In", "values": [KUBE_DNS_SERVICE]},
                ]},
                "topologyKey": "kubernetes.io/hostname",
            },
        }]}},
        "tolerations": [
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            {"key": OLD_CONTROL_PLANE_TAINT, "effect": "NoSchedule"},
            {"key": CONTROL_PLANE_TAINT, "effect": "NoSchedule"},
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "containers": [container],
        "dnsPolicy": "Default",
        "volumes": [{
            "name": "config-volume",
            "configMap": {"name": COREDNS, "items": [{"key": "Corefile", "path": "Corefile"}]},
        }],
    });
    object(
        "apps/v1",
        "Deployment",
        meta,
        [
            (
                "spec",
                json!({
                    "replicas": p.replicas,
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"creationTimestamp": null, "labels": labels},
                        "spec": pod_spec,
                    },
                }),
            ),
            ("status", json!({})),
        ],
    )
}

fn service(p: &Params) -> Value {
    let mut meta = object_meta(KUBE_DNS_SERVICE, NAMESPACE_SYSTEM);
    meta.insert(
        "labels".into(),
        string_map([
            ("k8s-app", KUBE_DNS_SERVICE),
            ("kubernetes.io/cluster-service", "true"),
            ("kubernetes.io/name", "CoreDNS"),
        ]),
    );
    meta.insert(
        "annotations".into(),
        string_map([("prometheus.io/port", "9153"), ("prometheus.io/scrape", "true")]),
    );
    // Without it, updating the Service from an older kubeadm fails validation.
    meta.insert("resourceVersion".into(), "0".into());
    let port = |name: &str, port: u16, protocol: &str| json!({"name": name, "port": port, "protocol": protocol, "targetPort": port});
    object(
        "v1",
        "Service",
        meta,
        [
            (
                "spec",
                json!({
                    "clusterIP": p.dns_ip,
                    "ports": [port("dns", 53, "UDP"), port("dns-tcp", 53, "TCP"), port("metrics", 9153, "TCP")],
                    "selector": {"k8s-app": KUBE_DNS_SERVICE},
                }),
            ),
            ("status", json!({"loadBalancer": {}})),
        ],
    )
}
