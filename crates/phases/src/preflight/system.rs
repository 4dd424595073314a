//! The `SystemVerification` check: k8s.io/system-validators v1.8.0 with its `DefaultSysSpec` for Linux,
//! as kubeadm v1.25 runs it (kernel, then OS, then cgroups validators).
//!
//! Each validator reports `KEY: value` lines (coloured) into a buffer that upstream prints only when
//! some validator returned an error, after `[preflight] The system verification failed. Printing the
//! output from the verification:`.

use std::collections::BTreeMap;

use kubeadm_effects::host_probe::{Cgroups, HostProbe};

use super::Findings;

/// A kernel option of the spec and its alternative names.
struct KernelOption {
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
}

const fn opt(name: &'static str) -> KernelOption {
    KernelOption {
        name,
        aliases: &[],
        description: "",
    }
}

const REQUIRED: &[KernelOption] = &[
    opt("NAMESPACES"),
    opt("NET_NS"),
    opt("PID_NS"),
    opt("IPC_NS"),
    opt("UTS_NS"),
    opt("CGROUPS"),
    opt("CGROUP_CPUACCT"),
    opt("CGROUP_DEVICE"),
    opt("CGROUP_FREEZER"),
    opt("CGROUP_PIDS"),
    opt("CGROUP_SCHED"),
    opt("CPUSETS"),
    opt("MEMCG"),
    opt("INET"),
    opt("EXT4_FS"),
    opt("PROC_FS"),
    KernelOption {
        name: "NETFILTER_XT_TARGET_REDIRECT",
        aliases: &["IP_NF_TARGET_REDIRECT"],
        description: "",
    },
    opt("NETFILTER_XT_MATCH_COMMENT"),
    opt("FAIR_GROUP_SCHED"),
];

const OPTIONAL: &[KernelOption] = &[
    KernelOption {
        name: "OVERLAY_FS",
        aliases: &["OVERLAYFS_FS"],
        description: "Required for overlayfs.",
    },
    KernelOption {
        name: "AUFS_FS",
        aliases: &[],
        description: "Required for aufs.",
    },
    KernelOption {
        name: "BLK_DEV_DM",
        aliases: &[],
        description: "Required for devicemapper.",
    },
    KernelOption {
        name: "CFS_BANDWIDTH",
        aliases: &[],
        description: "Required for CPU quota.",
    },
    KernelOption {
        name: "CGROUP_HUGETLB",
        aliases: &[],
        description: "Required for hugetlb cgroup.",
    },
    KernelOption {
        name: "SECCOMP",
        aliases: &[],
        description: "Required for seccomp.",
    },
    KernelOption {
        name: "SECCOMP_FILTER",
        aliases: &[],
        description: "Required for seccomp mode 2.",
    },
];

const CGROUPS_V1: &[&str] = &["cpu", "cpuacct", "cpuset", "devices", "freezer", "memory", "pids"];
const CGROUPS_V1_OPTIONAL: &[&str] = &["hugetlb", "blkio"];
const CGROUPS_V2: &[&str] = &["cpu", "cpuset", "devices", "freezer", "memory", "pids"];
const CGROUPS_V2_OPTIONAL: &[&str] = &["hugetlb", "io"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Good,
    Bad,
    Warn,
}

/// The validators' report, as `StreamReporter` writes it.
#[derive(Default)]
struct Report(String);

impl Report {
    fn line(&mut self, key: &str, value: &str, verdict: Verdict) {
        let colour = match verdict {
            Verdict::Good => 32,
            Verdict::Bad => 31,
            Verdict::Warn => 33,
        };
        self.0.push_str(&format!(
            "\x1b[0;37m{key}\x1b[0m: \x1b[0;{colour}m{value}\x1b[0m\n"
        ));
    }
}

/// `^3\.[1-9][0-9].*$` or `^([4-9]|[1-9][0-9]+)\.([0-9]+)\.([0-9]+).*$`: kernel 3.10 or newer.
fn supported_kernel(release: &str) -> bool {
    let b = release.as_bytes();
    if b.len() >= 4 && b[0] == b'3' && b[1] == b'.' && (b'1'..=b'9').contains(&b[2]) && b[3].is_ascii_digit()
    {
        return true;
    }
    let mut parts = release.splitn(3, '.');
    let (Some(major), Some(minor), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let major_ok = !major.is_empty()
        && major.bytes().all(|c| c.is_ascii_digit())
        && ((major.len() == 1 && major.as_bytes()[0] >= b'4')
            || (major.len() > 1 && !major.starts_with('0')));
    let minor_ok = !minor.is_empty() && minor.bytes().all(|c| c.is_ascii_digit());
    major_ok && minor_ok && rest.bytes().next().is_some_and(|c| c.is_ascii_digit())
}

/// Lines `CONFIG_[A-Z0-9_]+=[myn]…` (after trimming) into option → first value letter.
fn parse_kernel_config(text: &str) -> BTreeMap<String, char> {
    let mut config = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("CONFIG_") else {
            continue;
        };
        let Some((name, value)) = rest.split_once('=') else {
            continue;
        };
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
        match value.chars().next() {
            Some(v @ ('y' | 'm' | 'n')) if name_ok => {
                config.insert(format!("CONFIG_{name}"), v);
            }
            _ => {}
        }
    }
    config
}

fn validate_kernel_config(config: &BTreeMap<String, char>, report: &mut Report) -> Option<String> {
    let mut bad = Vec::new();
    for (options, required) in [(REQUIRED, true), (OPTIONAL, false)] {
        let missing = if required { Verdict::Bad } else { Verdict::Warn };
        for option in options {
            // The last name tried is the one reported when none is set.
            let mut name = String::new();
            let mut found = None;
            for n in std::iter::once(option.name).chain(option.aliases.iter().copied()) {
                name = format!("CONFIG_{n}");
                if let Some(v) = config.get(&name) {
                    found = Some(*v);
                    break;
                }
            }
            let (msg, verdict) = match found {
                None => ("not set", missing),
                Some('y') => ("enabled", Verdict::Good),
                Some('m') => ("enabled (as module)", Verdict::Good),
                Some(_) => ("disabled", missing),
            };
            if verdict == Verdict::Bad {
                bad.push(name.clone());
            }
            let mut msg = msg.to_string();
            if verdict != Verdict::Good && !option.description.is_empty() {
                msg = format!("{msg} - {}", option.description);
            }
            report.line(&name, &msg, verdict);
        }
    }
    (!bad.is_empty()).then(|| format!("unexpected kernel config: {}", bad.join(" ")))
}

fn kernel(host: &dyn HostProbe, report: &mut Report, errors: &mut Vec<String>) {
    let release = match host.kernel_release() {
        Ok(r) => r,
        Err(e) => {
            errors.push(format!("failed to get kernel release: {e}"));
            return;
        }
    };
    if supported_kernel(&release) {
        report.line("KERNEL_VERSION", &release, Verdict::Good);
    } else {
        report.line("KERNEL_VERSION", &release, Verdict::Bad);
        errors.push(format!("unsupported kernel release: {release}"));
    }
    match host.kernel_config(&release) {
        Ok(text) => errors.extend(validate_kernel_config(&parse_kernel_config(&text), report)),
        Err(e) => errors.push(format!("failed to parse kernel config: {e}")),
    }
}

fn os(host: &dyn HostProbe, report: &mut Report, errors: &mut Vec<String>) {
    match host.os_name() {
        Err(e) => errors.push(format!("failed to get os name: {e}")),
        Ok(name) if name.trim() == "Linux" => report.line("OS", "Linux", Verdict::Good),
        Ok(name) => {
            report.line("OS", name.trim(), Verdict::Bad);
            errors.push(format!("unsupported operating system: {}", name.trim()));
        }
    }
}

fn missing_cgroups(spec: &[&str], present: &[String], required: bool, report: &mut Report) -> Vec<String> {
    let mut missing = Vec::new();
    for cgroup in spec {
        let key = format!("CGROUPS_{}", cgroup.to_uppercase());
        if present.iter().any(|p| p == cgroup) {
            report.line(&key, "enabled", Verdict::Good);
        } else {
            report.line(
                &key,
                "missing",
                if required { Verdict::Bad } else { Verdict::Warn },
            );
            missing.push(cgroup.to_string());
        }
    }
    missing
}

fn cgroups(host: &dyn HostProbe, report: &mut Report, errors: &mut Vec<String>, warnings: &mut Vec<String>) {
    let (present, required, optional) = match host.cgroups() {
        Err(e) => {
            errors.push(e.to_string());
            return;
        }
        Ok(Cgroups::V1(subsystems)) => (subsystems, CGROUPS_V1, CGROUPS_V1_OPTIONAL),
        Ok(Cgroups::V2(controllers)) => {
            // The kernel enables these implicitly; they never appear in cgroup.controllers.
            let mut all = vec!["devices".to_string(), "freezer".to_string()];
            all.extend(controllers);
            (all, CGROUPS_V2, CGROUPS_V2_OPTIONAL)
        }
    };
    let missing = missing_cgroups(required, &present, true, report);
    if !missing.is_empty() {
        errors.push(format!("missing required cgroups: {}", missing.join(" ")));
    }
    let missing = missing_cgroups(optional, &present, false, report);
    if !missing.is_empty() {
        warnings.push(format!("missing optional cgroups: {}", missing.join(" ")));
    }
}

/// Runs the three validators.
pub(super) fn verify(host: &dyn HostProbe) -> Findings {
    let mut report = Report::default();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    kernel(host, &mut report, &mut errors);
    os(host, &mut report, &mut errors);
    cgroups(host, &mut report, &mut errors, &mut warnings);
    let stdout = if errors.is_empty() {
        String::new()
    } else {
        format!(
            "[preflight] The system verification failed. Printing the output from the verification:\n{}",
            report.0
        )
    };
    Findings {
        warnings,
        errors,
        stdout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_as_the_spec_regexps() {
        for (r, ok) in [
            ("3.10.0-1160.el7.x86_64", true),
            ("3.9.0", false),
            ("4.4.0-96-generic", true),
            ("5.15.0-91-generic", true),
            ("6.18.44-fc-v657", true),
            ("10.0.1", true),
            ("2.6.32", false),
            ("4.4", false),
            ("04.1.1", false),
        ] {
            assert_eq!(supported_kernel(r), ok, "{r}");
        }
    }

    #[test]
    fn kernel_config_lines() {
        let c = parse_kernel_config(
            "# comment\nCONFIG_A=y\n  CONFIG_B=m \nCONFIG_C=n\nCONFIG_D=\"x\"\nCONFIG_e=y\n",
        );
        assert_eq!(c.len(), 3);
        assert_eq!(c.get("CONFIG_B"), Some(&'m'));
    }
}
