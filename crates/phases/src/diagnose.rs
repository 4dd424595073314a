//! Beyond upstream: when a wait fails (the control plane in `init`, the TLS bootstrap in `join`, a
//! static pod in `upgrade`), what this host shows about the cause, through the effects the run
//! already has: the kubelet's health endpoint and service, the kubelet's configuration against the
//! container runtime's, swap, and the containers the runtime knows with their last log lines. Each
//! finding is one line saying what is wrong and, where it can, what to do; findings that are
//! certain causes come first. Printed after upstream's text, never instead of it.

use std::path::Path;

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
                out.push(Finding::fact(
                    "the kubelet service is not active: see 'systemctl status kubelet' and 'journalctl -xeu kubelet'".to_string(),
                ));
            } else if !healthy {
                out.push(Finding::fact(
                    "the kubelet service is active but the kubelet is not healthy: it may be restarting in a loop; see 'journalctl -xeu kubelet'".to_string(),
                ));
            }
        }
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
        let mark = if f.certain { "CAUSE: " } else { "" };
        out.push_str(&format!("\t- {mark}{}\n", f.text));
    }
    for line in more {
        match line.strip_prefix("  ") {
            Some(log) => out.push_str(&format!("\t    {log}\n")),
            None => out.push_str(&format!("\t- {line}\n")),
        }
    }
    out
}

#[cfg(test)]
#[path = "diagnose_tests.rs"]
mod tests;
