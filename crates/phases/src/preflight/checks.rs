//! How each preflight check judges the host: the warnings and errors it returns, worded as upstream's
//! `Check()` methods word them.

use kubeadm_api::version::Semver;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::host_probe::{DirEntries, HostProbe, PathKind, enable_command};

use super::{Check, Findings, proxy, system};

/// `MinimumKubeletVersion` of kubeadm v1.25: one minor below the current version.
const MINIMUM_KUBELET_VERSION: (u64, u64, u64) = (1, 24, 0);

/// What upstream's `initsystem.GetInitSystem` returns when neither systemd nor OpenRC is found.
const NO_INIT_SYSTEM: &str = "no supported init system detected, skipping checking for services";

fn warn(msg: String) -> Findings {
    Findings {
        warnings: vec![msg],
        ..Findings::default()
    }
}

fn fail(msg: String) -> Findings {
    Findings {
        errors: vec![msg],
        ..Findings::default()
    }
}

fn pass() -> Findings {
    Findings::default()
}

/// Runs one check against the host and the runtime.
pub(super) fn evaluate(check: &Check, host: &dyn HostProbe, runtime: &dyn Runtime) -> Findings {
    match check {
        Check::IsPrivilegedUser => {
            if host.uid() != 0 {
                return fail("user is not running as root".into());
            }
            pass()
        }
        Check::NumCpu(required) => {
            let n = host.num_cpu();
            if n < *required {
                return fail(format!(
                    "the number of available CPUs {n} is less than the required {required}"
                ));
            }
            pass()
        }
        Check::Mem(required) => {
            let mut out = pass();
            // Upstream goes on with a zeroed sysinfo when the call fails, so both errors show.
            let actual = host.memory_mb().unwrap_or_else(|e| {
                out.errors.push(format!("failed to get system info: {e}"));
                0
            });
            if actual < *required {
                out.errors.push(format!(
                    "the system RAM ({actual} MB) is less than the minimum {required} MB"
                ));
            }
            out
        }
        Check::KubernetesVersion {
            kubeadm_version,
            kubernetes_version,
        } => kubernetes_version_check(kubeadm_version, kubernetes_version),
        Check::Firewalld(ports) => {
            let Some(init) = host.init_system() else {
                return warn(NO_INIT_SYSTEM.into());
            };
            let state = host.service(init, "firewalld");
            if state.exists && state.active {
                let ports: Vec<String> = ports.iter().map(i32::to_string).collect();
                return warn(format!(
                    "firewalld is active, please ensure ports [{}] are open or your cluster may not function correctly",
                    ports.join(" ")
                ));
            }
            pass()
        }
        Check::Port(port) => {
            if !host.port_free(*port) {
                return fail(format!("Port {port} is in use"));
            }
            pass()
        }
        Check::FileAvailable { path, .. } => match host.path_kind(path) {
            PathKind::File | PathKind::Dir => fail(format!("{path} already exists")),
            PathKind::Missing | PathKind::Unknown(_) => pass(),
        },
        Check::DirAvailable(path) => match host.path_kind(path) {
            PathKind::Missing => pass(),
            // Go opens a file fine, then fails to list it: any answer but EOF reads as "not empty".
            PathKind::File => fail(format!("{path} is not empty")),
            PathKind::Unknown(e) => fail(format!("unable to check if {path} is empty: {e}")),
            PathKind::Dir => match host.dir_entries(path) {
                DirEntries::Empty => pass(),
                DirEntries::NotEmpty => fail(format!("{path} is not empty")),
                DirEntries::Unreadable(e) => fail(format!("unable to check if {path} is empty: {e}")),
            },
        },
        Check::FileExisting { path, .. } => match host.path_kind(path) {
            PathKind::File | PathKind::Dir => pass(),
            PathKind::Missing | PathKind::Unknown(_) => fail(format!("{path} doesn't exist")),
        },
        Check::FileContent { path, content } => match host.read_prefix(path, content.len()) {
            None => fail(format!("{path} does not exist")),
            Some(got) if got != *content => fail(format!(
                "{path} contents are not set to {}",
                String::from_utf8_lossy(content)
            )),
            Some(_) => pass(),
        },
        Check::InPath { exe, mandatory } => {
            if host.look_path(exe).is_some() {
                return pass();
            }
            let msg = format!("{exe} not found in system path");
            if *mandatory { fail(msg) } else { warn(msg) }
        }
        // kubeadm-rs reaches the runtime over gRPC and never runs crictl (see the module documentation).
        Check::Crictl => pass(),
        Check::HttpProxy { proto, host: target } => {
            match proxy::host_check(&host.proxy_env(), proto, target) {
                None => pass(),
                Some(msg) => warn(msg),
            }
        }
        Check::HttpProxyCidr { proto, cidr } => match proxy::cidr_check(&host.proxy_env(), proto, cidr) {
            Ok(None) => pass(),
            Ok(Some(msg)) => warn(msg),
            Err(e) => fail(e.to_string()),
        },
        Check::Cri => match runtime.is_running() {
            Ok(()) => pass(),
            Err(e) => fail(e.to_string()),
        },
        Check::SystemVerification => system::verify(host),
        Check::Hostname(name) => hostname_check(host, name),
        Check::KubeletVersion(k8s) => kubelet_version_check(host, k8s),
        Check::Service {
            name,
            check_if_active,
        } => {
            let Some(init) = host.init_system() else {
                return warn(NO_INIT_SYSTEM.into());
            };
            let state = host.service(init, name);
            if !state.exists {
                return warn(format!("{name} service does not exist"));
            }
            let mut out = pass();
            if !state.enabled {
                out.warnings.push(format!(
                    "{name} service is not enabled, please run '{}'",
                    enable_command(init, name)
                ));
            }
            if *check_if_active && !state.active {
                out.errors.push(format!(
                    "{name} service is not active, please run 'systemctl start {name}.service'"
                ));
            }
            out
        }
        Check::Swap => match host.swaps() {
            Some(lines) if lines.len() > 1 => warn(
                "swap is enabled; production deployments should disable swap unless testing the NodeSwap feature gate of the kubelet"
                    .into(),
            ),
            _ => pass(),
        },
        Check::ExternalEtcdVersion { endpoints } => match endpoints {
            None => pass(),
            // Upstream asks each endpoint's /version over HTTPS; kubeadm-rs has no such probe yet, so it
            // says so instead of failing a setup it cannot judge.
            Some(_) => warn(
                "the version of the external etcd endpoints was not checked (kubeadm supports external etcd >= 3.2.18)"
                    .into(),
            ),
        },
        Check::ImagePull { images, policy } => image_pull(runtime, images, policy),
    }
}

/// A version that does not parse, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not parse {0:?} as version")]
struct VersionParseError(String);

/// Why `kubelet --version` output gives no version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum KubeletVersionError {
    /// The output is not `Kubernetes v<version>`.
    #[error("Unable to parse output from Kubelet: {0:?}")]
    Output(String),
    /// The version does not parse.
    #[error(transparent)]
    Version(VersionParseError),
}

fn semver(s: &str) -> Result<Semver, VersionParseError> {
    Semver::parse(s).ok_or_else(|| VersionParseError(s.to_string()))
}

fn kubernetes_version_check(kubeadm: &str, kubernetes: &str) -> Findings {
    // Custom builds without a version stamp skip the check.
    if kubeadm.starts_with("v0.0.0") {
        return pass();
    }
    let kadm = match semver(kubeadm) {
        Ok(v) => v,
        Err(e) => return fail(format!("couldn't parse kubeadm version {kubeadm:?}: {e}")),
    };
    let k8s = match semver(kubernetes) {
        Ok(v) => v,
        Err(e) => return fail(format!("couldn't parse Kubernetes version {kubernetes:?}: {e}")),
    };
    // The first unsupported version is major.(minor+1).0-0, below every other version of that minor.
    if (k8s.major, k8s.minor) >= (kadm.major, kadm.minor + 1) {
        return warn(format!(
            "Kubernetes version is greater than kubeadm version. Please consider to upgrade kubeadm. Kubernetes version: {k8s}. Kubeadm version: {}.{}.x",
            kadm.major, kadm.minor
        ));
    }
    pass()
}

/// The version in `kubelet --version` output, as upstream's `GetKubeletVersion` extracts it.
fn parse_kubelet_version(output: &str) -> Result<Semver, KubeletVersionError> {
    let clean = output.trim();
    let parsed = clean.strip_prefix("Kubernetes v").filter(|rest| {
        // `(\d+)\.(\d+)\.(\d+)([-0-9a-zA-Z_.+]*)` with no leading zeros, then only spaces: one match.
        let mut parts = rest.splitn(3, '.');
        let num = |p: &str| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !(p.len() > 1 && p.starts_with('0'))
        };
        let (Some(a), Some(b), Some(c)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let digits = c.bytes().take_while(u8::is_ascii_digit).count();
        num(a)
            && num(b)
            && num(&c[..digits])
            && c[digits..]
                .bytes()
                .all(|x| x.is_ascii_alphanumeric() || matches!(x, b'-' | b'_' | b'.' | b'+'))
    });
    match parsed {
        Some(v) => semver(v).map_err(KubeletVersionError::Version),
        None => Err(KubeletVersionError::Output(clean.to_string())),
    }
}

fn kubelet_version_check(host: &dyn HostProbe, kubernetes: &str) -> Findings {
    let kubelet = match host.kubelet_version_output() {
        Ok(out) => match parse_kubelet_version(&out) {
            Ok(v) => v,
            Err(e) => return fail(format!("couldn't get kubelet version: {e}")),
        },
        Err(e) => {
            return fail(format!(
                "couldn't get kubelet version: cannot execute 'kubelet --version': {e}"
            ));
        }
    };
    if kubelet.less_than(MINIMUM_KUBELET_VERSION) {
        return fail(format!(
            "Kubelet version \"{kubelet}\" is lower than kubeadm can support. Please upgrade kubelet"
        ));
    }
    if !kubernetes.is_empty() {
        let k8s = match semver(kubernetes) {
            Ok(v) => v,
            Err(e) => return fail(format!("couldn't parse Kubernetes version {kubernetes:?}: {e}")),
        };
        // Upstream's comparison, kept as is: it looks at the minor even when the majors differ.
        if kubelet.major > k8s.major || kubelet.minor > k8s.minor {
            return fail(format!(
                "the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: \"{kubelet}\" Control plane version: \"{k8s}\""
            ));
        }
    }
    pass()
}

const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// apimachinery's `IsQualifiedName`.
fn qualified_name_errors(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    kubeadm_api::validation::is_dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    let b = name.as_bytes();
    let valid = !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !valid {
        errs.push(format!("name part {QUALIFIED_NAME_MSG}"));
    }
    errs
}

fn hostname_check(host: &dyn HostProbe, name: &str) -> Findings {
    let mut out = pass();
    for msg in qualified_name_errors(name) {
        out.warnings
            .push(format!("invalid node name format {name:?}: {msg}"));
    }
    match host.lookup_host(name) {
        Ok(addrs) if !addrs.is_empty() => {}
        Ok(_) => out
            .warnings
            .push(format!("hostname \"{name}\" could not be reached")),
        Err(e) => {
            out.warnings
                .push(format!("hostname \"{name}\" could not be reached"));
            out.warnings.push(format!("hostname \"{name}\": {e}"));
        }
    }
    out
}

fn image_pull(runtime: &dyn Runtime, images: &[String], policy: &str) -> Findings {
    let mut out = pass();
    for image in images {
        match policy {
            "Never" => continue,
            // Upstream's ImageExists treats any failure to ask as "absent" and pulls.
            "IfNotPresent" if runtime.image_exists(image).unwrap_or(false) => continue,
            "IfNotPresent" | "Always" => {
                if let Err(e) = runtime.pull_image(image) {
                    out.errors.push(format!("failed to pull image {image}: {e}"));
                }
            }
            other => {
                out.errors.push(format!("unsupported pull policy {other:?}"));
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelet_version_output_is_parsed_as_upstream() {
        assert_eq!(
            parse_kubelet_version("Kubernetes v1.25.16\n").map(|v| v.to_string()),
            Ok("1.25.16".to_string())
        );
        assert_eq!(
            parse_kubelet_version("  Kubernetes v1.26.0-alpha.1 ").map(|v| v.to_string()),
            Ok("1.26.0-alpha.1".to_string())
        );
        assert_eq!(
            parse_kubelet_version("Kubernetes v01.25.0").map_err(|e| e.to_string()),
            Err("Unable to parse output from Kubelet: \"Kubernetes v01.25.0\"".to_string())
        );
        assert!(parse_kubelet_version("kubelet 1.25").is_err());
    }

    #[test]
    fn qualified_names() {
        assert!(qualified_name_errors("node-1.example").is_empty());
        assert_eq!(qualified_name_errors("-bad").len(), 1);
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert_eq!(qualified_name_errors(&"a".repeat(64)).len(), 1);
    }
}
