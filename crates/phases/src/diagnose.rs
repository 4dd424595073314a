//! Beyond upstream: when a wait fails (the control plane in `init`, the TLS bootstrap in `join`, a
//! static pod in `upgrade`), what this host shows about the cause, through the effects the run
//! already has: the kubelet's health endpoint and service, the kubelet's configuration against the
//! container runtime's, swap, and the containers the runtime knows with their last log lines. Each
//! finding is one line saying what is wrong and, where it can, what to do; findings that are
//! certain causes come first. Printed after upstream's text, never instead of it.

use std::path::Path;

use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::{Container, Runtime};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::host_probe::HostProbe;

use crate::kubelet::HEALTHZ_URL;

/// One thing seen on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// A cause on its own: a run with it cannot succeed.
    pub(crate) certain: bool,
    /// What is wrong and what to do, on one line.
    pub(crate) text: String,
}

impl Finding {
    fn cause(text: String) -> Self {
        Finding { certain: true, text }
    }
    fn fact(text: String) -> Self {
        Finding { certain: false, text }
    }
    /// The line as printed: a certain cause marked `CAUSE: `.
    pub(crate) fn marked(&self) -> String {
        let mark = if self.certain { "CAUSE: " } else { "" };
        format!("{mark}{}", self.text)
    }
}

/// What the kubelet's side of the host shows.
pub(crate) struct KubeletHost<'a> {
    pub(crate) probe: &'a dyn HostProbe,
    pub(crate) runtime: &'a dyn Runtime,
    pub(crate) fs: &'a dyn Fs,
    /// Where the kubelet's `config.yaml` is (`/var/lib/kubelet`).
    pub(crate) kubelet_dir: &'a Path,
}

/// The kubelet: its health endpoint, its service, its cgroup driver against the runtime's, swap.
pub(crate) fn kubelet(host: &KubeletHost<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let config = host
        .fs
        .read(&host.kubelet_dir.join("config.yaml"))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .ok();
    let healthy = match host.probe.http_get(HEALTHZ_URL) {
        Ok(200) => {
            out.push(Finding::fact(format!("the kubelet answers on {HEALTHZ_URL}")));
            true
        }
        Ok(code) => {
            out.push(Finding::fact(format!(
                "the kubelet answers on {HEALTHZ_URL} with HTTP code {code}: it runs but is not healthy"
            )));
            false
        }
        Err(e) => {
            out.push(Finding::fact(format!(
                "the kubelet does not answer on {HEALTHZ_URL} ({e}): it is not running, or it keeps exiting at start"
            )));
            // Its ports held by something else stop it at start.
            for port in [10248, 10250] {
                if !host.probe.port_free(port) {
                    out.push(Finding::fact(format!(
                        "port {port} (the kubelet's) is in use although the kubelet does not answer: another process may hold it (see 'ss -ltnp')"
                    )));
                }
            }
            false
        }
    };
    match host.probe.init_system() {
        None => out.push(Finding::fact(
            "no supported init system (systemd, OpenRC) was found to run the kubelet: start it yourself with the flags in kubeadm-flags.env".to_string(),
        )),
        Some(init) => {
            let state = host.probe.service(init, "kubelet");
            if !state.exists {
                out.push(Finding::cause(
                    "the kubelet service does not exist: install the kubelet package (and kubeadm's drop-in for it)".to_string(),
                ));
            } else if !state.active {
                let restarted = match state.restarts {
                    Some(n) if n > 0 => format!(" (restarted {n} times before it stopped)"),
                    _ => String::new(),
                };
                out.push(Finding::fact(format!(
                    "the kubelet service is not active{restarted}: see 'systemctl status kubelet' and 'journalctl -xeu kubelet'"
                )));
            } else if !healthy {
                out.push(Finding::fact(match state.restarts {
                    Some(n) if n > 0 => format!(
                        "the kubelet service is active but the kubelet is not healthy: it was restarted {n} times, so it exits soon after it starts; see 'journalctl -xeu kubelet'"
                    ),
                    _ => "the kubelet service is active but the kubelet is not healthy: it may be restarting in a loop; see 'journalctl -xeu kubelet'".to_string(),
                }));
            }
        }
    }
    if !healthy
        && let Some(line) = host
            .probe
            .service_log("kubelet", 200)
            .ok()
            .and_then(|log| fatal_line(&log))
    {
        out.push(Finding::fact(format!("the kubelet's log says: {line}")));
    }
    if !healthy && let Some(f) = cgroups(host.probe) {
        out.push(f);
    }
    if let Some(f) = node_ip(host) {
        out.push(f);
    }
    if let Some(f) = sandbox_image(host.runtime) {
        out.push(f);
    }
    if let Some(config) = &config {
        if let Some(f) = cgroup_driver(config, host.runtime) {
            out.push(f);
        }
        if let Some(f) = swap(config, host.probe) {
            out.push(f);
        }
    }
    out
}

/// The controllers the kubelet cannot run without (upstream's system validator's required ones,
/// `devices` and `freezer` aside: on cgroup v2 they are implicit).
const KUBELET_CONTROLLERS: [&str; 4] = ["cpu", "cpuset", "memory", "pids"];

/// The host's cgroup version and the controllers the kubelet needs that it lacks (the cause),
/// or the version alone (a fact, for reading the kubelet's log and the runtime's configuration).
fn cgroups(probe: &dyn HostProbe) -> Option<Finding> {
    use kubeadm_effects::host_probe::Cgroups;
    let (version, enabled) = match probe.cgroups().ok()? {
        Cgroups::V1(enabled) => ("v1", enabled),
        Cgroups::V2(enabled) => ("v2 (the unified hierarchy)", enabled),
    };
    let missing: Vec<&str> = KUBELET_CONTROLLERS
        .iter()
        .copied()
        .filter(|c| !enabled.iter().any(|e| e == c))
        .collect();
    Some(if missing.is_empty() {
        Finding::fact(format!(
            "this host uses cgroup {version}, with the controllers the kubelet needs"
        ))
    } else {
        Finding::cause(format!(
            "this host uses cgroup {version} without the {} controller{} the kubelet needs: enable {} (kernel command line, or the cgroup.subtree_control of the parent cgroup)",
            missing.join(", "),
            if missing.len() == 1 { "" } else { "s" },
            if missing.len() == 1 { "it" } else { "them" }
        ))
    })
}

/// The kubelet's `--node-ip` (from `kubeadm-flags.env`, where kubeadm writes
/// `nodeRegistration.kubeletExtraArgs`) naming an address no interface of this host has: the
/// kubelet then cannot set the Node's addresses (its status updates fail).
fn node_ip(host: &KubeletHost<'_>) -> Option<Finding> {
    let flags = host.fs.read(&host.kubelet_dir.join("kubeadm-flags.env")).ok()?;
    let flags = String::from_utf8_lossy(&flags);
    let value = flags
        .split(|c: char| c.is_whitespace() || c == '"')
        .find_map(|word| word.strip_prefix("--node-ip="))?;
    let local = host.probe.local_addresses().ok()?;
    let foreign: Vec<&str> = value
        .split(',')
        .filter(|a| {
            a.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| !ip.is_unspecified() && !local.contains(&ip))
        })
        .collect();
    if foreign.is_empty() {
        return None;
    }
    let mut have: Vec<String> = local
        .iter()
        .filter(|ip| !ip.is_loopback())
        .map(ToString::to_string)
        .collect();
    have.dedup();
    Some(Finding::fact(format!(
        "the kubelet's --node-ip {} (kubeadm-flags.env, from nodeRegistration.kubeletExtraArgs) is not an address of this host ({}): the kubelet cannot set the node's addresses; name one this host has",
        foreign.join(","),
        if have.is_empty() {
            "it has none but loopback".to_string()
        } else {
            format!("it has {}", have.join(", "))
        }
    )))
}

/// The last line of a kubelet's log that reads as why it stopped: klog's `command failed` or
/// `failed to run Kubelet`, else the last error line (`E…`).
fn fatal_line(log: &[String]) -> Option<String> {
    let fatal = |l: &&String| l.contains("failed to run Kubelet") || l.contains("\"command failed\"");
    log.iter()
        .rev()
        .find(fatal)
        .or_else(|| {
            log.iter()
                .rev()
                .find(|l| l.starts_with('E') && l.chars().nth(1).is_some_and(|c| c.is_ascii_digit()))
        })
        .map(|l| l.trim().to_string())
}

/// A top-level scalar of the kubelet's `config.yaml` (as kubeadm writes it: `key: value` lines).
fn top_level<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .map(|v| v.trim().trim_matches('"'))
    })
}

/// The cgroup driver the container runtime uses, from containerd's `Status` verbose information:
/// its default runtime handler's `SystemdCgroup` option (containerd 1.x), `cgroupfs` when unset.
/// `None` when the runtime does not say (another runtime, or no answer).
pub(crate) fn runtime_cgroup_driver(runtime: &dyn Runtime) -> Option<(String, String)> {
    let status = runtime.status().ok()?;
    let config: serde_json::Value = serde_json::from_str(status.info.get("config")?).ok()?;
    let containerd = config.get("containerd")?;
    let handler = containerd
        .get("defaultRuntimeName")
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("runc");
    let runtime_cfg = containerd.get("runtimes")?.get(handler)?;
    let systemd = runtime_cfg
        .pointer("/options/SystemdCgroup")
        .and_then(serde_json::Value::as_bool)
        .or_else(|| config.get("systemdCgroup").and_then(serde_json::Value::as_bool))
        .unwrap_or(false);
    let driver = if systemd { "systemd" } else { "cgroupfs" };
    Some((driver.to_string(), handler.to_string()))
}

fn cgroup_driver(config: &str, runtime: &dyn Runtime) -> Option<Finding> {
    // The kubelet's own default is cgroupfs; kubeadm writes the field (systemd by default).
    let kubelet = top_level(config, "cgroupDriver").unwrap_or("cgroupfs");
    let (theirs, handler) = runtime_cgroup_driver(runtime)?;
    if kubelet == theirs {
        return None;
    }
    let option = if theirs == "systemd" { "false" } else { "true" };
    Some(Finding::cause(format!(
        "cgroup driver mismatch: the kubelet is configured for {kubelet:?} (cgroupDriver in the KubeletConfiguration) but the container runtime's {handler:?} handler uses {theirs:?}, so the kubelet exits at start; set cgroupDriver: {theirs} in the KubeletConfiguration (then 'kubeadm reset' and init again), or set SystemdCgroup = {option} for {handler:?} in containerd's config and restart containerd"
    )))
}

/// containerd's sandbox ("pause") image, which every Pod needs before its containers: missing from
/// the runtime, no Pod starts (and the kubelet cannot pull it when the registry is out of reach).
fn sandbox_image(runtime: &dyn Runtime) -> Option<Finding> {
    let status = runtime.status().ok()?;
    let config: serde_json::Value = serde_json::from_str(status.info.get("config")?).ok()?;
    let image = config.get("sandboxImage")?.as_str().filter(|s| !s.is_empty())?;
    match runtime.image_status(image) {
        Ok(None) => Some(Finding::cause(format!(
            "the container runtime's sandbox (pause) image {image:?} is not present, so no Pod can start: pull it (crictl pull {image}), or set sandbox_image in containerd's config to the pause image kubeadm pulled ('kubeadm config images list') and restart containerd"
        ))),
        _ => None,
    }
}

/// The `image:` of each static Pod manifest in `manifest_dir` whose component has no container,
/// when the runtime does not have it: the kubelet could not pull it.
pub(crate) fn missing_images(
    runtime: &dyn Runtime,
    fs: &dyn Fs,
    manifest_dir: &Path,
    components: &[&str],
) -> Vec<Finding> {
    let running: Vec<String> = runtime
        .list_containers()
        .map(|all| all.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for component in components {
        if running.iter().any(|n| n == component) {
            continue;
        }
        let Ok(manifest) = fs.read(&manifest_dir.join(format!("{component}.yaml"))) else {
            continue;
        };
        let manifest = String::from_utf8_lossy(&manifest);
        let Some(image) = manifest.lines().find_map(|l| l.trim().strip_prefix("image: ")) else {
            continue;
        };
        if let Ok(None) = runtime.image_status(image) {
            out.push(Finding::cause(format!(
                "{component}'s image {image:?} is not in the container runtime and the kubelet could not pull it: check imageRepository and kubernetesVersion, and that the registry answers ('kubeadm config images pull')"
            )));
        }
    }
    out
}

/// Beyond upstream, for `join`'s TLS-bootstrap wait: the kubelet's certificate signing requests as
/// the bootstrap credentials see them (those of `user`, `system:bootstrap:<token id>`, when known):
/// none, pending (nobody approves them), denied, or approved.
pub(crate) fn tls_bootstrap(
    client: &dyn kubeadm_effects::cluster::Cluster,
    user: Option<&str>,
) -> Vec<Finding> {
    use kubeadm_effects::cluster::{ListOptions, Resource};
    let resource = Resource::new("certificates.k8s.io", "v1", "certificatesigningrequests");
    let csrs = match client.list(&resource, "", &ListOptions::default()) {
        Ok(csrs) => csrs,
        Err(e) => {
            let unauthorized = matches!(
                e.root(),
                kubeadm_effects::cluster::ClusterError::Api { code: 401, .. }
            );
            let forbidden = matches!(e.root(), kubeadm_effects::cluster::ClusterError::Forbidden { .. });
            return vec![if unauthorized {
                Finding::cause(format!(
                    "the API server does not accept the bootstrap credentials ({e}): the token has expired or was deleted; create one with 'kubeadm token create --print-join-command' on a control-plane node"
                ))
            } else if forbidden {
                Finding::cause(format!(
                    "the bootstrap credentials may not handle certificate signing requests ({e}): a token needs the group system:bootstrappers:kubeadm:default-node-token (the default of 'kubeadm token create'; a token made with --groups lacks it unless listed), which kubeadm's RBAC lets create CSRs"
                ))
            } else {
                Finding::fact(format!(
                    "the certificate signing requests could not be read with the bootstrap credentials: {e}"
                ))
            }];
        }
    };
    let str_at = |v: &serde_json::Value, p: &str| {
        v.pointer(p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut mine: Vec<&serde_json::Value> = csrs
        .iter()
        .filter(|c| str_at(c, "/spec/signerName") == "kubernetes.io/kube-apiserver-client-kubelet")
        .filter(|c| user.is_none_or(|u| str_at(c, "/spec/username") == u))
        .collect();
    mine.sort_by_key(|c| str_at(c, "/metadata/creationTimestamp"));
    let Some(newest) = mine.last() else {
        return vec![Finding::fact(format!(
            "no certificate signing request from {}: the kubelet did not reach the API server, or it was refused (see the kubelet's log)",
            user.unwrap_or("this node's kubelet")
        ))];
    };
    let name = str_at(newest, "/metadata/name");
    let conditions = newest
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str| conditions.iter().find(|c| c["type"] == kind);
    if let Some(c) = condition("Denied").or_else(|| condition("Failed")) {
        return vec![Finding::cause(format!(
            "the kubelet's certificate signing request {name} was {}: {}",
            str_at(c, "/type").to_lowercase(),
            str_at(c, "/message")
        ))];
    }
    if condition("Approved").is_none() {
        return vec![Finding::cause(format!(
            "the kubelet's certificate signing request {name} is pending: nothing approved it; kubeadm's ClusterRoleBinding kubeadm:node-autoapprove-bootstrap lets the controller-manager approve it ('kubeadm init phase bootstrap-token' recreates it), or approve it with 'kubectl certificate approve {name}'"
        ))];
    }
    if newest.pointer("/status/certificate").is_none() {
        return vec![Finding::cause(format!(
            "the kubelet's certificate signing request {name} is approved but no certificate was issued: is the controller-manager running, with --cluster-signing-cert-file and --cluster-signing-key-file?"
        ))];
    }
    vec![Finding::fact(format!(
        "the kubelet's certificate signing request {name} was approved and issued: the kubelet should have written kubelet.conf (see its log)"
    ))]
}

/// The API server as `client` reaches it: not answering, its certificate refused, or answering
/// with `/readyz` checks failing, which are then the cause of an unhealthy wait (etcd's among them
/// points at etcd: see [`etcd`]).
pub(crate) fn api_server(client: &dyn Cluster) -> Finding {
    match client.failing_readyz_checks() {
        Ok(failing) if failing.is_empty() => {
            Finding::fact("the API server answers and all its /readyz checks pass".to_string())
        }
        Ok(failing) => {
            // `etcd failed: reason withheld`: the name alone (the reason is in the API server's log).
            let named: Vec<String> = failing
                .iter()
                .map(|c| match c.split_once(" failed: ") {
                    Some((name, "reason withheld")) => name.to_string(),
                    Some((name, why)) => format!("{name} ({why})"),
                    None => c.clone(),
                })
                .collect();
            let etcd = named.iter().any(|c| c.starts_with("etcd"));
            Finding::cause(format!(
                "the API server answers but is not ready: its /readyz checks {} fail{}",
                named.join(", "),
                if etcd {
                    " (it cannot use etcd: see etcd's health and log)"
                } else {
                    " (its log says why: 'crictl logs' of the kube-apiserver container)"
                }
            ))
        }
        Err(e) if e.is_untrusted() => Finding::cause(format!(
            "{e}: the CA in the kubeconfig did not sign the certificate the API server serves; is apiserver.crt signed by the ca.crt of the certificates directory?"
        )),
        Err(e) if e.is_unavailable() => Finding::fact(format!("the API server does not answer: {e}")),
        Err(e) => Finding::fact(format!("the API server's /readyz could not be read: {e}")),
    }
}

/// etcd's health where its static Pod's startup probe looks (from the `etcd.yaml` manifest in
/// `manifest_dir`; none without one: external etcd), with the reason etcd gives when unhealthy
/// (`{"health":"false","reason":"RAFT NO LEADER"}`). The startup probe's check
/// (`/health?serializable=false`) is the one that asks for a leader, as the API server's reads do;
/// the liveness probe's (`serializable=true`) passes without one. The liveness probe's when a
/// manifest has no startup probe.
pub(crate) fn etcd(probe: &dyn HostProbe, fs: &dyn Fs, manifest_dir: &Path) -> Option<Finding> {
    let manifest = fs.read(&manifest_dir.join("etcd.yaml")).ok()?;
    let pod = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(&manifest))
        .ok()?
        .into_iter()
        .next()?
        .value;
    let get = pod
        .pointer("/spec/containers/0/startupProbe/httpGet")
        .or_else(|| pod.pointer("/spec/containers/0/livenessProbe/httpGet"))?;
    if get.get("scheme").and_then(serde_json::Value::as_str) == Some("HTTPS") {
        return None;
    }
    let host = get
        .get("host")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("127.0.0.1");
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let port = get.get("port").and_then(serde_json::Value::as_i64)?;
    let path = get
        .get("path")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("/health");
    let url = format!("http://{host}:{port}{path}");
    Some(match probe.http_get_text(&url) {
        Ok((200, _)) => Finding::fact(format!("etcd is healthy ({url} answers 200)")),
        Ok((code, body)) => {
            let reason = serde_json::from_str::<serde_json::Value>(body.trim())
                .ok()
                .and_then(|v| {
                    v.get("reason")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string)
                })
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| body.trim().to_string());
            let hint = if reason.contains("NO LEADER") {
                ": its members cannot elect a leader (a quorum of the members in --initial-cluster must run and reach each other on their peer URLs)"
            } else if reason.contains("ALARM") {
                ": an alarm is raised ('etcdctl alarm list'; NOSPACE: the database reached its quota, compact and defragment it)"
            } else {
                ""
            };
            Finding::cause(format!(
                "etcd is not healthy: {url} answers HTTP {code}{}{hint}",
                if reason.is_empty() {
                    String::new()
                } else {
                    format!(", {reason}")
                }
            ))
        }
        Err(e) => Finding::fact(format!(
            "etcd does not answer where its probes look ({e}): it is not running (see its container below)"
        )),
    })
}

/// Beyond upstream, for a joining control plane's etcd wait: members of the etcd cluster that
/// carry this node's name with another peer URL (a node of the same name that left without
/// `kubeadm reset`, or another machine given this name): the new member's `--initial-cluster`
/// then names two members alike and it cannot join.
pub(crate) fn etcd_name_taken(
    members: &[kubeadm_effects::etcd::Member],
    name: &str,
    peer_url: &str,
) -> Option<Finding> {
    let others: Vec<&str> = members
        .iter()
        .filter(|m| m.name == name)
        .flat_map(|m| &m.peer_urls)
        .filter(|url| *url != peer_url)
        .map(String::as_str)
        .collect();
    (!others.is_empty()).then(|| {
        Finding::cause(format!(
            "etcd already has a member named {name:?} with the peer URL {} (this node's is {peer_url}): a node of this name left without 'kubeadm reset', or another machine has this name; remove that member ('etcdctl member remove', or 'kubeadm reset' on that node) or give this node another name (--node-name)",
            others.join(", ")
        ))
    })
}

/// Beyond upstream, for `join`'s TLS-bootstrap wait: a Node already registered under this node's
/// name by another machine (its addresses are none of this host's). The kubelet would take it
/// over; when that machine still runs, the two kubelets fight over one Node.
pub(crate) fn node_name_taken(
    client: &dyn Cluster,
    name: &str,
    local: &[std::net::IpAddr],
) -> Option<Finding> {
    let node = client
        .get(&kubeadm_effects::cluster::Resource::nodes(), "", name)
        .ok()?;
    let addresses: Vec<&str> = node
        .pointer("/status/addresses")
        .and_then(serde_json::Value::as_array)?
        .iter()
        .filter(|a| a["type"] == "InternalIP" || a["type"] == "ExternalIP")
        .filter_map(|a| a["address"].as_str())
        .collect();
    let ours = addresses
        .iter()
        .any(|a| a.parse::<std::net::IpAddr>().is_ok_and(|ip| local.contains(&ip)));
    if addresses.is_empty() || ours {
        return None;
    }
    let ready = node
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    let text = format!(
        "a Node named {name:?} is already registered with the address {} (none of this host's), {}: another machine has this name; give this node another name (--node-name), or delete that Node ('kubectl delete node {name}') if the machine is gone",
        addresses.join(", "),
        if ready { "and it is Ready" } else { "not Ready" }
    );
    Some(if ready {
        Finding::cause(text)
    } else {
        Finding::fact(text)
    })
}

fn swap(config: &str, probe: &dyn HostProbe) -> Option<Finding> {
    let fail_swap_on = top_level(config, "failSwapOn") != Some("false");
    let swaps = probe.swaps()?;
    let active: Vec<&str> = swaps
        .iter()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    (fail_swap_on && !active.is_empty()).then(|| {
        Finding::cause(format!(
            "swap is on ({}) and the kubelet refuses to run with swap (failSwapOn): turn it off with 'swapoff -a' (and in /etc/fstab), or set failSwapOn: false in the KubeletConfiguration",
            active.join(", ")
        ))
    })
}

/// What the runtime says of the newest container of each of `components` in `kube-system`: its
/// state (exit code, restarts) and, unless it runs and never restarted, its last log lines.
pub(crate) fn containers(runtime: &dyn Runtime, fs: &dyn Fs, components: &[&str]) -> Vec<String> {
    match runtime.list_containers() {
        Ok(all) => components
            .iter()
            .flat_map(|c| container(runtime, fs, &all, c))
            .collect(),
        Err(e) => vec![format!(
            "the container runtime could not list the containers: {e}"
        )],
    }
}

fn container(runtime: &dyn Runtime, fs: &dyn Fs, all: &[Container], component: &str) -> Vec<String> {
    let newest = all
        .iter()
        .filter(|c| {
            c.name == component
                && c.labels.get("io.kubernetes.pod.namespace").map(String::as_str) == Some("kube-system")
        })
        .max_by_key(|c| c.created_at)
        .cloned();
    let Some(newest) = newest else {
        return vec![format!(
            "the container runtime has no {component} container: the kubelet did not start its Pod (is the kubelet running? can it pull the image?)"
        )];
    };
    let status: Container = runtime
        .container_status(&newest.id)
        .ok()
        .flatten()
        .unwrap_or(newest);
    let short = &status.id[..status.id.len().min(13)];
    let state = match status.state.as_str() {
        "CONTAINER_EXITED" => {
            let why = if status.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", status.reason)
            };
            format!("exited with code {}{why}", status.exit_code)
        }
        "CONTAINER_RUNNING" => "is running".to_string(),
        other => other.trim_start_matches("CONTAINER_").to_lowercase(),
    };
    let mut out = vec![format!(
        "the newest {component} container {short} (restarted {} times) {state}",
        status.attempt
    )];
    // A container that runs and never restarted is not the story: its log is left out.
    let running = status.state == "CONTAINER_RUNNING";
    if status.log_path.is_empty() || (running && status.attempt == 0) {
        return out;
    }
    let Ok(bytes) = fs.read(Path::new(&status.log_path)) else {
        return out;
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    out.push(format!("its last log lines ({}):", status.log_path));
    for line in &lines[lines.len().saturating_sub(10)..] {
        // The CRI log format: `<time> <stream> <P|F> <message>`.
        out.push(format!("  {}", line.splitn(4, ' ').nth(3).unwrap_or(line)));
    }
    out
}

/// The findings as the section printed after upstream's text: causes first.
pub(crate) fn render(findings: &[Finding], more: &[String]) -> String {
    let mut out = String::from("\nWhat kubeadm could see on this host:\n");
    let ordered = findings
        .iter()
        .filter(|f| f.certain)
        .chain(findings.iter().filter(|f| !f.certain));
    for f in ordered {
        out.push_str(&format!("\t- {}\n", f.marked()));
    }
    for line in more {
        match line.strip_prefix("  ") {
            Some(log) => out.push_str(&format!("\t    {log}\n")),
            None => out.push_str(&format!("\t- {line}\n")),
        }
    }
    out
}

/// The kubelet, and the images and newest containers of `components`' static pods, on the host
/// `data` sets up (also a joining control plane's etcd wait), with the `more` findings the caller
/// made.
pub(crate) fn static_pods(data: &crate::InitData, components: &[&str], more: Vec<Finding>) -> String {
    let mut findings = kubelet(&KubeletHost {
        probe: &*data.effects.host_probe,
        runtime: &*data.runtime,
        fs: &*data.effects.fs,
        kubelet_dir: &data.kubelet_dir,
    });
    findings.extend(missing_images(
        &*data.runtime,
        &*data.effects.fs,
        &data.manifest_dir,
        components,
    ));
    findings.extend(more);
    let containers = containers(&*data.runtime, &*data.effects.fs, components);
    render(&findings, &containers)
}

#[cfg(test)]
#[path = "diagnose_tests.rs"]
mod tests;
