//! kubeadm's preflight checks: which checks `init` runs, in upstream's order and with upstream's names
//! (the names `--ignore-preflight-errors` takes), how each one judges the host, and the text upstream
//! prints (`\t[WARNING Name]: …` on stderr, the `[preflight] Some fatal errors occurred:` error).
//!
//! Host facts come through [`HostProbe`] and the container runtime through [`Runtime`], so every check
//! is testable with a scripted host. Nothing here touches the host itself.
//!
//! Upstream: `cmd/kubeadm/app/preflight/checks.go` (+ `checks_linux.go`, `checks_unix.go`, `utils.go`),
//! `cmd/kubeadm/app/cmd/phases/init/preflight.go` and `k8s.io/system-validators` (the
//! `SystemVerification` check).
//!
//! Where kubeadm-rs deliberately differs from upstream v1.25.16 (both because kubeadm-rs talks to the
//! container runtime over gRPC itself instead of running `crictl`):
//! - `FileExisting-crictl` is still in the list, so scripts that name it keep working, but it always
//!   passes: no step of kubeadm-rs runs `crictl`, so a host without it is fully usable.
//! - `CRI` always runs. Upstream leaves it out (with a klog warning) when `crictl` is missing, since it
//!   has no other way to reach the runtime; its message is our client's error instead of `crictl`'s
//!   output.

mod checks;
mod join;
mod proxy;
mod system;

use std::collections::BTreeSet;
use std::fmt;

use kubeadm_api::internal::InitConfig;
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::host_probe::HostProbe;
use kubeadm_effects::report::Reporter;

pub use join::{join_node_checks, run_join_preflight};
pub use proxy::{FirstIpError, first_ip, proxy_for};

/// `ControlPlaneNumCPU`.
pub const CONTROL_PLANE_NUM_CPU: usize = 2;
/// `ControlPlaneMem`, in MB.
pub const CONTROL_PLANE_MEM_MB: u64 = 1700;
/// `KubeletPort`.
pub const KUBELET_PORT: u16 = 10250;
/// `KubeSchedulerPort`.
pub const KUBE_SCHEDULER_PORT: u16 = 10259;
/// `KubeControllerManagerPort`.
pub const KUBE_CONTROLLER_MANAGER_PORT: u16 = 10257;
/// `EtcdListenClientPort`.
pub const ETCD_LISTEN_CLIENT_PORT: u16 = 2379;
/// `EtcdListenPeerPort`.
pub const ETCD_LISTEN_PEER_PORT: u16 = 2380;
/// The static pod manifests directory (`KubernetesDir` + `ManifestsSubDirName`).
pub const MANIFESTS_DIR: &str = kubeadm_core::layout::MANIFESTS_DIR;

const BRIDGE_NF: &str = "/proc/sys/net/bridge/bridge-nf-call-iptables";
const BRIDGE_NF6: &str = "/proc/sys/net/bridge/bridge-nf-call-ip6tables";
const IPV4_FORWARD: &str = "/proc/sys/net/ipv4/ip_forward";
const IPV6_DEFAULT_FORWARDING: &str = "/proc/sys/net/ipv6/conf/default/forwarding";

/// One preflight check, as plain data: what to look at and how to judge it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// `IsPrivilegedUser`: the process runs as root.
    IsPrivilegedUser,
    /// `NumCPU`: at least this many CPUs.
    NumCpu(usize),
    /// `Mem`: at least this many MB of RAM.
    Mem(u64),
    /// `KubernetesVersion`: the target version is not newer than kubeadm's minor.
    KubernetesVersion {
        /// kubeadm's own version.
        kubeadm_version: String,
        /// The version to deploy.
        kubernetes_version: String,
    },
    /// `Firewalld`: warns when firewalld is active.
    Firewalld(Vec<i32>),
    /// `Port-<n>`: the TCP port is free.
    Port(u16),
    /// `FileAvailable-<path>`: the file does not exist yet.
    FileAvailable {
        /// The file.
        path: String,
        /// A name replacing the one derived from the path.
        label: Option<String>,
    },
    /// `DirAvailable-<path>`: the directory is absent or empty.
    DirAvailable(String),
    /// `FileExisting-<path>`: the file exists.
    FileExisting {
        /// The file.
        path: String,
        /// A name replacing the one derived from the path.
        label: Option<String>,
    },
    /// `FileContent-<path>`: the file starts with this content.
    FileContent {
        /// The file.
        path: String,
        /// The expected leading bytes.
        content: Vec<u8>,
    },
    /// `FileExisting-<exe>`: the binary is in `PATH`; an error when mandatory, else a warning.
    InPath {
        /// The executable.
        exe: String,
        /// Whether a missing binary is an error.
        mandatory: bool,
    },
    /// `FileExisting-crictl`, which kubeadm-rs does not need (see the module documentation).
    Crictl,
    /// `HTTPProxy`: whether `proto://host` would go through a proxy.
    HttpProxy {
        /// `https`.
        proto: String,
        /// The host (an IP address or name).
        host: String,
    },
    /// `HTTPProxyCIDR`: whether the first address of a CIDR would go through a proxy.
    HttpProxyCidr {
        /// `https`.
        proto: String,
        /// The CIDR as configured (may be empty).
        cidr: String,
    },
    /// `CRI`: the container runtime answers.
    Cri,
    /// `SystemVerification`: kernel version and configuration, OS, cgroups.
    SystemVerification,
    /// `Hostname`: the node name is well-formed and resolves.
    Hostname(String),
    /// `KubeletVersion`: the installed kubelet is supported and not newer than the control plane.
    KubeletVersion(String),
    /// `Service-<Name>`: the service is enabled (and active, if asked).
    Service {
        /// The service, e.g. `kubelet`.
        name: String,
        /// Whether an inactive service is an error.
        check_if_active: bool,
    },
    /// `Swap`: warns when swap is on.
    Swap,
    /// `ExternalEtcdVersion`: the external etcd is recent enough.
    ExternalEtcdVersion {
        /// The endpoints (`None` when not configured).
        endpoints: Option<Vec<String>>,
    },
    /// `ImagePull`: the control-plane images are present (pulling them as the policy says).
    ImagePull {
        /// The images, in upstream's order.
        images: Vec<String>,
        /// `Always`, `IfNotPresent` or `Never`.
        policy: String,
    },
}

/// Go's `strings.Title` on a service name: each letter after a non-letter is upper-cased.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        let letter = c.is_alphanumeric() || c == '_' || c == '\'';
        out.extend(if prev_letter {
            c.to_lowercase().collect::<Vec<_>>()
        } else {
            c.to_uppercase().collect()
        });
        prev_letter = letter;
    }
    out
}

fn path_name(prefix: &str, path: &str) -> String {
    format!("{prefix}-{}", path.replace('/', "-"))
}

impl Check {
    /// The check's name, as `--ignore-preflight-errors` and the `[WARNING Name]` lines use it.
    pub fn name(&self) -> String {
        match self {
            Check::IsPrivilegedUser => "IsPrivilegedUser".into(),
            Check::NumCpu(_) => "NumCPU".into(),
            Check::Mem(_) => "Mem".into(),
            Check::KubernetesVersion { .. } => "KubernetesVersion".into(),
            Check::Firewalld(_) => "Firewalld".into(),
            Check::Port(p) => format!("Port-{p}"),
            Check::FileAvailable { path, label } => {
                label.clone().unwrap_or_else(|| path_name("FileAvailable", path))
            }
            Check::DirAvailable(path) => path_name("DirAvailable", path),
            Check::FileExisting { path, label } => {
                label.clone().unwrap_or_else(|| path_name("FileExisting", path))
            }
            Check::FileContent { path, .. } => path_name("FileContent", path),
            Check::InPath { exe, .. } => path_name("FileExisting", exe),
            Check::Crictl => "FileExisting-crictl".into(),
            Check::HttpProxy { .. } => "HTTPProxy".into(),
            Check::HttpProxyCidr { .. } => "HTTPProxyCIDR".into(),
            Check::Cri => "CRI".into(),
            Check::SystemVerification => "SystemVerification".into(),
            Check::Hostname(_) => "Hostname".into(),
            Check::KubeletVersion(_) => "KubeletVersion".into(),
            Check::Service { name, .. } => format!("Service-{}", title(name)),
            Check::Swap => "Swap".into(),
            Check::ExternalEtcdVersion { .. } => "ExternalEtcdVersion".into(),
            Check::ImagePull { .. } => "ImagePull".into(),
        }
    }
}

/// What one check found, before the ignore set is applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Warnings, in order.
    pub warnings: Vec<String>,
    /// Errors, in order.
    pub errors: Vec<String>,
    /// Text the check prints to stdout itself (the system verification report when it fails).
    pub stdout: String,
}

/// The verdict on one check after the ignore set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// The check's name.
    pub name: String,
    /// Warnings, including errors demoted because the check is ignored.
    pub warnings: Vec<String>,
    /// Errors that remain fatal.
    pub errors: Vec<String>,
    /// Whether the ignore set named this check (or `all`).
    pub ignored: bool,
}

impl CheckResult {
    /// No warning and no error.
    pub fn passed(&self) -> bool {
        self.warnings.is_empty() && self.errors.is_empty()
    }
}

/// The checks whose errors count as warnings: lower-cased names, or `all`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreSet(BTreeSet<String>);

impl IgnoreSet {
    /// From names in any case (upstream lower-cases them when validating the flag).
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(names: I) -> IgnoreSet {
        IgnoreSet(names.into_iter().map(|s| s.as_ref().to_lowercase()).collect())
    }

    /// upstream's `setHasItemOrAll`.
    pub fn ignores(&self, name: &str) -> bool {
        self.0.contains("all") || self.0.contains(&name.to_lowercase())
    }
}

impl From<BTreeSet<String>> for IgnoreSet {
    fn from(set: BTreeSet<String>) -> IgnoreSet {
        IgnoreSet::new(set)
    }
}

/// Which stream a line of output goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output (`[preflight] …` progress lines).
    Stdout,
    /// Standard error (the `[WARNING …]` lines).
    Stderr,
}

/// Fatal preflight errors: upstream's `preflight.Error`, which makes the CLI exit with code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "[preflight] Some fatal errors occurred:\n{lines}[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`"
)]
pub struct PreflightError {
    /// The `\t[ERROR Name]: message\n` lines (or, for a runtime that cannot be reached, the bare text).
    pub lines: String,
}

/// The result of running a list of checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreflightRun {
    /// Every check, in order.
    pub results: Vec<CheckResult>,
    /// What upstream prints while running them, in order.
    pub output: Vec<(Stream, String)>,
    /// The fatal errors, if any.
    pub error: Option<PreflightError>,
}

impl PreflightRun {
    /// The text written to one stream.
    pub fn text(&self, stream: Stream) -> String {
        self.output
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, t)| t.as_str())
            .collect()
    }

    /// Prints what the checks printed, in order, through `reporter`; then their error, if any.
    pub fn report(self, reporter: &dyn Reporter) -> Result<(), PreflightError> {
        for (stream, text) in &self.output {
            match stream {
                Stream::Stdout => reporter.out(text),
                Stream::Stderr => reporter.err(text),
            }
        }
        self.error.map_or(Ok(()), Err)
    }

    fn append(&mut self, other: PreflightRun) {
        self.results.extend(other.results);
        self.output.extend(other.output);
        self.error = other.error;
    }
}

/// Upstream's `RunChecks`: runs each check in order, demotes the errors of ignored checks, writes the
/// warnings as they come, and collects the errors into one [`PreflightError`].
pub fn run_checks(
    checks: &[Check],
    host: &dyn HostProbe,
    runtime: &dyn Runtime,
    ignore: &IgnoreSet,
) -> PreflightRun {
    let mut run = PreflightRun::default();
    let mut error_lines = String::new();
    for check in checks {
        let name = check.name();
        let Findings {
            mut warnings,
            mut errors,
            stdout,
        } = checks::evaluate(check, host, runtime);
        if !stdout.is_empty() {
            run.output.push((Stream::Stdout, stdout));
        }
        let ignored = ignore.ignores(&name);
        if ignored {
            warnings.append(&mut errors);
        }
        for w in &warnings {
            run.output
                .push((Stream::Stderr, format!("\t[WARNING {name}]: {w}\n")));
        }
        for e in &errors {
            error_lines.push_str(&format!("\t[ERROR {name}]: {e}\n"));
        }
        run.results.push(CheckResult {
            name,
            warnings,
            errors,
            ignored,
        });
    }
    if !error_lines.is_empty() {
        run.error = Some(PreflightError { lines: error_lines });
    }
    run
}

/// Checks made outside the host-probe table (the cluster's health, CoreDNS before an upgrade): each
/// finding, taken in order, is printed as a warning when its check is ignored and collected as an
/// error line otherwise, as [`run_checks`] does.
pub fn collect_findings<'a>(
    findings: impl IntoIterator<Item = (&'a str, Option<String>)>,
    ignore: &IgnoreSet,
    reporter: &dyn Reporter,
) -> Result<(), PreflightError> {
    let mut lines = String::new();
    for (name, error) in findings {
        let Some(e) = error else { continue };
        if ignore.ignores(name) {
            reporter.err(&format!("\t[WARNING {name}]: {e}\n"));
        } else {
            lines.push_str(&format!("\t[ERROR {name}]: {e}\n"));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(PreflightError { lines })
    }
}

/// Upstream's opening of the init and join preflight: its first line, the root check alone
/// (stopping at its error), then the node's `checks`.
pub(crate) fn root_then_node_checks(
    checks: &[Check],
    ignore: &IgnoreSet,
    host: &dyn HostProbe,
    runtime: &dyn Runtime,
) -> PreflightRun {
    let mut run = PreflightRun::default();
    run.output
        .push((Stream::Stdout, "[preflight] Running pre-flight checks\n".into()));
    run.append(run_checks(&root_checks(), host, runtime, ignore));
    if run.error.is_none() {
        run.append(run_checks(checks, host, runtime, ignore));
    }
    run
}

/// Upstream's `RunRootCheckOnly`: the check that runs alone, first, and stops the run when it fails.
pub fn root_checks() -> Vec<Check> {
    vec![Check::IsPrivilegedUser]
}

/// The checks of upstream's `RunInitNodeChecks` for a first control-plane node
/// (`isSecondaryControlPlane = false`), after the root check, in upstream's order.
pub fn init_node_checks(cfg: &InitConfig) -> Vec<Check> {
    node_checks(cfg, false, false)
}

/// The checks of `RunInitNodeChecks` for a control-plane node joining (`isSecondaryControlPlane =
/// true`): without the common checks, which the join preflight already ran; `download_certs` leaves out
/// the external etcd certificate files.
pub fn control_plane_join_checks(cfg: &InitConfig, download_certs: bool) -> Vec<Check> {
    node_checks(cfg, true, download_certs)
}

fn node_checks(cfg: &InitConfig, secondary: bool, download_certs: bool) -> Vec<Check> {
    let endpoint = &cfg.init.local_api_endpoint;
    let cluster = &cfg.cluster;
    let manifest = |component: &str| Check::FileAvailable {
        path: format!("{MANIFESTS_DIR}/{component}.yaml"),
        label: None,
    };
    let mut checks = vec![
        Check::NumCpu(CONTROL_PLANE_NUM_CPU),
        Check::Mem(CONTROL_PLANE_MEM_MB),
        Check::KubernetesVersion {
            kubeadm_version: kubeadm_api::version::KUBEADM_VERSION.into(),
            kubernetes_version: cluster.kubernetes_version.clone(),
        },
        Check::Firewalld(vec![endpoint.bind_port, i32::from(KUBELET_PORT)]),
        // A bind port outside u16 fails validation long before preflight.
        Check::Port(u16::try_from(endpoint.bind_port).unwrap_or(0)),
        Check::Port(KUBE_SCHEDULER_PORT),
        Check::Port(KUBE_CONTROLLER_MANAGER_PORT),
        manifest("kube-apiserver"),
        manifest("kube-controller-manager"),
        manifest("kube-scheduler"),
        manifest("etcd"),
        Check::HttpProxy {
            proto: "https".into(),
            host: endpoint.advertise_address.clone(),
        },
    ];
    // strings.Split of an empty string gives one empty element: an empty pod subnet still makes a check
    // (which passes).
    for subnets in [&cluster.networking.service_subnet, &cluster.networking.pod_subnet] {
        for cidr in subnets.split(',') {
            checks.push(Check::HttpProxyCidr {
                proto: "https".into(),
                cidr: cidr.to_string(),
            });
        }
    }
    if !secondary {
        checks.extend(common_checks(
            &cluster.kubernetes_version,
            &cfg.init.node_registration.name,
        ));
        let v6 =
            kubeadm_api::dynamic::parse_ip_sloppy(&endpoint.advertise_address).is_some_and(|ip| ip.is_ipv6());
        if v6 {
            checks.push(file_content(BRIDGE_NF6));
            checks.push(file_content(IPV6_DEFAULT_FORWARDING));
        }
        if let Some(external) = &cluster.etcd.external {
            checks.push(Check::ExternalEtcdVersion {
                endpoints: external.endpoints.clone(),
            });
        }
    }
    if let Some(local) = &cluster.etcd.local {
        checks.push(Check::Port(ETCD_LISTEN_CLIENT_PORT));
        checks.push(Check::Port(ETCD_LISTEN_PEER_PORT));
        checks.push(Check::DirAvailable(local.data_dir.clone()));
    }
    if let Some(external) = &cluster.etcd.external
        && !(secondary && download_certs)
    {
        for path in [&external.ca_file, &external.cert_file, &external.key_file] {
            if !path.is_empty() {
                checks.push(Check::FileExisting {
                    path: path.clone(),
                    label: Some("ExternalEtcdClientCertificates".into()),
                });
            }
        }
    }
    checks
}

fn file_content(path: &str) -> Check {
    Check::FileContent {
        path: path.into(),
        content: b"1".to_vec(),
    }
}

/// Upstream's `addCommonChecks` on Linux, shared by init and join. `kubernetes_version` is empty for
/// join.
pub fn common_checks(kubernetes_version: &str, node_name: &str) -> Vec<Check> {
    let mut checks = vec![
        Check::Cri,
        file_content(BRIDGE_NF),
        file_content(IPV4_FORWARD),
        Check::Swap,
        Check::Crictl,
    ];
    for (exe, mandatory) in [
        ("conntrack", true),
        ("ip", true),
        ("iptables", true),
        ("mount", true),
        ("nsenter", true),
        ("ebtables", false),
        ("ethtool", false),
        ("socat", false),
        ("tc", false),
        ("touch", false),
    ] {
        checks.push(Check::InPath {
            exe: exe.into(),
            mandatory,
        });
    }
    checks.extend([
        Check::SystemVerification,
        Check::Hostname(node_name.into()),
        Check::KubeletVersion(kubernetes_version.into()),
        Check::Service {
            name: "kubelet".into(),
            check_if_active: false,
        },
        Check::Port(KUBELET_PORT),
    ]);
    checks
}

/// Upstream's `RunPullImagesCheck`: the `ImagePull` check over the control-plane images.
pub fn image_pull_checks(images: Vec<String>, policy: &str) -> Vec<Check> {
    vec![Check::ImagePull {
        images,
        policy: policy.to_string(),
    }]
}

/// Upstream's image pull before a control plane is set up or upgraded (`RunPullImagesCheck` and the
/// lines around it), under `prefix` (`preflight`, or `upgrade/prepull` for `upgrade apply`): in a dry
/// run only the line that says it would pull; else the three progress lines, then the `ImagePull`
/// check over the control-plane images with the node's pull policy.
pub fn pull_images(
    cfg: &InitConfig,
    ignore: &IgnoreSet,
    host: &dyn HostProbe,
    runtime: &dyn Runtime,
    dry_run: bool,
    prefix: &str,
) -> PreflightRun {
    let mut run = PreflightRun::default();
    if dry_run {
        run.output.push((
            Stream::Stdout,
            format!("[{prefix}] Would pull the required images (like 'kubeadm config images pull')\n"),
        ));
        return run;
    }
    run.output.push((
        Stream::Stdout,
        format!(
            "[{prefix}] Pulling images required for setting up a Kubernetes cluster\n\
             [{prefix}] This might take a minute or two, depending on the speed of your internet connection\n\
             [{prefix}] You can also perform this action in beforehand using 'kubeadm config images pull'\n"
        ),
    ));
    let policy = &cfg.init.node_registration.image_pull_policy;
    run.append(run_checks(
        &image_pull_checks(control_plane_images(cfg), policy),
        host,
        runtime,
        ignore,
    ));
    run
}

/// The images `init` pulls in preflight: upstream's `images.GetControlPlaneImages`.
pub fn control_plane_images(cfg: &InitConfig) -> Vec<String> {
    kubeadm_core::manifests::image_settings(&cfg.cluster, &cfg.resolved)
        .control_plane_images()
        .0
}

/// Upstream's init `preflight` phase: `[preflight] Running pre-flight checks`, the root check (alone,
/// stopping at its error), the init node checks, then, unless `dry_run`, the image pull with its three
/// progress lines (or the one line a dry run prints instead).
///
/// `run.error` set means the phase fails with that error (exit code 2 in the CLI).
pub fn run_init_preflight(
    cfg: &InitConfig,
    ignore: &IgnoreSet,
    host: &dyn HostProbe,
    runtime: &dyn Runtime,
    dry_run: bool,
) -> PreflightRun {
    let mut run = root_then_node_checks(&init_node_checks(cfg), ignore, host, runtime);
    if run.error.is_some() {
        return run;
    }
    run.append(pull_images(cfg, ignore, host, runtime, dry_run, "preflight"));
    run
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
