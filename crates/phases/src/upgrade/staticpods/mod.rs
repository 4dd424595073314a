//! The static-pod upgrade of a control-plane node (upstream's `phases/upgrade/staticpods.go`), shared
//! by `kubeadm upgrade apply` and the `control-plane` phase of `kubeadm upgrade node`.
//!
//! New manifests are written to a temporary folder under `/etc/kubernetes/tmp`; for each component
//! (etcd first, unless external or `--etcd-upgrade=false`) whose new manifest differs from the
//! running one, its certificates are renewed (unless `--certificate-renewal=false`), the running
//! manifest is moved to a backup folder and the new one moved in, then the mirror Pod's hash must
//! change and the component's Pods must run within the timeout, or every manifest moved so far is
//! moved back. etcd's data folder is copied before etcd is touched, and copied back when etcd does
//! not come back.
//!
//! Beyond upstream: etcd's backup folder also holds a consistent snapshot taken through the etcd
//! API (`snapshot.db`, for `etcdutl snapshot restore`); a component that does not come up is
//! diagnosed through the CRI before the rollback (its newest container's state, exit code and last log lines); the etcd data is restored
//! into its own folder (upstream's `cp -r` nests the backup inside it); every component logs how
//! long it took at `-v1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kubeadm_api::internal::InitConfig;
use kubeadm_core::manifests::{self, Component, ManifestHostFacts, StaticPod};
use kubeadm_core::patches::PatchManager;
use kubeadm_core::pki::EtcdMode;
use kubeadm_effects::cluster::{Cluster, ListOptions, Resource};
use kubeadm_effects::cri::Runtime;
use kubeadm_effects::etcd::Etcd;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::keygen::KeyGen;
use kubeadm_effects::report::Reporter;
use serde_json::Value;

use crate::etcd_cluster::{
    EtcdConnector, WaitEtcdError, check_cluster_health, client_from_cluster, wait_for_cluster_available,
};
use crate::renewal::{Handler, handlers, renew_using_local_ca};

mod dry_run;
mod etcd;
mod renew;
mod rollback;
mod wait;

pub use dry_run::dry_run;
use etcd::EtcdStep;
use renew::Renewer;

/// Upstream's `UpgradeManifestTimeout`.
pub const UPGRADE_MANIFEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// The environment variable that sets another timeout (a Go duration such as `90s`): beyond
/// upstream 1.25, which has none; later releases made it `timeouts.upgradeManifests` of their
/// configuration. The testbed uses it to keep its rollback short.
pub const UPGRADE_MANIFEST_TIMEOUT_ENV: &str = "KUBEADM_UPGRADE_MANIFESTS_TIMEOUT";

/// The timeout for each component: [`UPGRADE_MANIFEST_TIMEOUT`], or what `value` (the variable's)
/// says; a value that is not a positive Go duration is refused with a message naming the variable.
pub fn manifest_timeout(value: Option<&str>) -> Result<Duration, crate::TimeoutEnvError> {
    crate::timeout_from_env(UPGRADE_MANIFEST_TIMEOUT_ENV, value, UPGRADE_MANIFEST_TIMEOUT)
}

/// Go's `time.Duration.String()` of a timeout, as the upgrade prints it.
pub fn timeout_text(d: Duration) -> String {
    go_duration(d)
}
/// How often the mirror Pods' hashes are polled: upstream every `APICallRetryInterval` (500 ms),
/// here every 100 ms (nothing is printed per poll).
const HASH_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Upstream's `APICallRetryInterval`, kept where a failed poll prints a line (the Pods of a label).
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How etcd is waited for after its upgrade: upstream tries 10 times, 15 s apart, so an etcd that
/// needs one second more than the first try waits 15 s; here the same 150 s are spent in 300 tries
/// 500 ms apart (nothing is printed per try).
const ETCD_RETRIES: u32 = 300;
const ETCD_RETRY_INTERVAL: Duration = Duration::from_millis(500);
/// The etcd static pod.
const ETCD: &str = "etcd";
/// The prefix of the temporary folder of new manifests (upstream's).
const UPGRADED_MANIFESTS: &str = "kubeadm-upgraded-manifests";

/// What the upgrade works on and through.
pub struct StaticPodUpgrade<'a> {
    /// The configuration to upgrade to (its `kubernetesVersion` is the target).
    pub cfg: &'a InitConfig,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// The file system.
    pub fs: &'a dyn Fs,
    /// The API server.
    pub cluster: &'a dyn Cluster,
    /// Opens etcd clients.
    pub etcd: &'a EtcdConnector,
    /// The container runtime, to diagnose a component that does not come up.
    pub runtime: &'a dyn Runtime,
    /// `--patches`, read.
    pub patches: Option<&'a PatchManager>,
    /// Facts about the host the manifests depend on.
    pub facts: &'a ManifestHostFacts,
    /// `--etcd-upgrade`.
    pub etcd_upgrade: bool,
    /// `--certificate-renewal`: renews with keys from here.
    pub renew_certs: bool,
    /// Generates the renewed certificates' keys.
    pub keygen: &'a dyn KeyGen,
    /// How long each component gets.
    pub timeout: Duration,
    /// Now, Unix seconds (renewed certificates, the backup folders' names).
    pub now: i64,
    /// Random values (temporary folder names, serial numbers).
    pub random: fn() -> u64,
    /// Where output goes.
    pub reporter: &'a dyn Reporter,
    /// Whether the patch folder's reading was announced yet (`Default::default()`: upstream prints
    /// it where a patch is first applied).
    pub patches_announced: std::cell::Cell<bool>,
}

impl std::fmt::Debug for StaticPodUpgrade<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticPodUpgrade")
            .field("kubernetes_dir", &self.kubernetes_dir)
            .field("etcd_upgrade", &self.etcd_upgrade)
            .field("renew_certs", &self.renew_certs)
            .finish_non_exhaustive()
    }
}

/// Why the upgrade failed, in upstream's words (the rollback already done where it says so).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StaticPodUpgradeError(pub String);

/// A static Pod manifest that does not parse.
#[derive(Debug, thiserror::Error)]
enum ManifestParseError {
    /// Not YAML.
    #[error(transparent)]
    Yaml(kubeadm_yaml::ParseError),
    /// No document.
    #[error("empty manifest")]
    Empty,
}

/// Why a control-plane manifest could not be written.
#[derive(Debug, thiserror::Error)]
enum WriteManifestError {
    /// `--patches` could not be applied.
    #[error("failed to patch static Pod manifest file for {name:?}: {}", source.detailed())]
    Patch {
        /// The component.
        name: String,
        /// Why.
        source: Box<kubeadm_core::patches::PatchError>,
    },
    /// The `RootlessControlPlane` users, groups or file owners could not be set up.
    #[error(transparent)]
    NonRoot(crate::users::NonRootError),
    /// The file could not be written.
    #[error("failed to create static pod manifest file for {name:?}: {source}")]
    Write {
        /// The component.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Why the running etcd's version could not be read from its manifest.
#[derive(Debug, thiserror::Error)]
enum EtcdTagError {
    /// The manifest could not be read.
    #[error("failed to read manifest for {path:?}: {source}")]
    Read {
        /// The manifest.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest does not parse.
    #[error("failed to unmarshal manifest for {path:?}: {source}")]
    Parse {
        /// The manifest.
        path: String,
        /// Why.
        source: ManifestParseError,
    },
}

/// The mirror Pod of a component could not be read.
#[derive(Debug, thiserror::Error)]
#[error("failed to obtain static Pod hash for component {component} on Node {node}: {source}")]
struct MirrorPodHashError {
    component: String,
    node: String,
    source: kubeadm_effects::cluster::ClusterError,
}

/// Why waiting for an upgraded component failed.
#[derive(Debug, thiserror::Error)]
enum ComponentWaitError {
    /// Its mirror Pod could not be read.
    #[error(transparent)]
    Hash(MirrorPodHashError),
    /// Its mirror Pod's hash did not change in time.
    #[error(
        "static Pod hash for component {component} on Node {node} did not change after {timeout}: timed out waiting for the condition"
    )]
    HashUnchanged {
        /// The component.
        component: String,
        /// The Node.
        node: String,
        /// The timeout, as Go prints it.
        timeout: String,
    },
    /// Its Pods did not run in time.
    #[error("timed out waiting for the condition")]
    PodsNotRunning,
}

/// Why a certificate could not be renewed.
#[derive(Debug, thiserror::Error)]
enum RenewError {
    /// No such certificate.
    #[error("{0} is not a known certificate")]
    Unknown(String),
    /// No key could be made.
    #[error(transparent)]
    Key(crate::pki::CertsError),
    /// The renewal failed.
    #[error(transparent)]
    Renewal(crate::renewal::RenewalError),
}

fn failed(e: impl std::fmt::Display) -> StaticPodUpgradeError {
    StaticPodUpgradeError(e.to_string())
}

/// The folders of one upgrade (upstream's `KubeStaticPodPathManager`).
#[derive(Debug, Clone)]
struct Paths {
    real: PathBuf,
    temp: PathBuf,
    backup_manifests: PathBuf,
    backup_etcd: PathBuf,
    keep_etcd_backup: bool,
}

impl Paths {
    fn real(&self, component: &str) -> PathBuf {
        self.real.join(format!("{component}.yaml"))
    }
    fn temp(&self, component: &str) -> PathBuf {
        self.temp.join(format!("{component}.yaml"))
    }
    fn backup(&self, component: &str) -> PathBuf {
        self.backup_manifests.join(format!("{component}.yaml"))
    }
}

/// `2006-01-02-15-04-05` in local time, as Go's `time.Now().Format` names the backup folders.
fn timestamp(now: i64) -> String {
    kubeadm_api::timestamp::Time::from_unix_seconds(now)
        .map(|t| t.local_dashed())
        .unwrap_or_default()
}

/// Go's `time.Duration.String()`.
fn go_duration(d: Duration) -> String {
    kubeadm_api::duration::Duration::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)).to_string()
}

/// Manifests moved out of the way so far: component → its backup (upstream's `recoverManifests`).
type Recover = BTreeMap<String, PathBuf>;

impl StaticPodUpgrade<'_> {
    fn say(&self, line: &str) {
        self.reporter.out(&format!("{line}\n"));
    }

    fn node_name(&self) -> &str {
        &self.cfg.init.node_registration.name
    }

    fn tmp_root(&self) -> PathBuf {
        self.kubernetes_dir.join("tmp")
    }

    /// Upstream's `CreateTempDirForKubeadm`: `<name><random digits>` under `/etc/kubernetes/tmp`.
    fn temp_dir(&self, name: &str) -> Result<PathBuf, StaticPodUpgradeError> {
        let root = self.tmp_root();
        self.fs.create_dir_all(&root, 0o700).map_err(|e| {
            failed(format!(
                "failed to create directory {:?}: {e}",
                root.display().to_string()
            ))
        })?;
        for _ in 0..100 {
            let dir = root.join(format!("{name}{}", (self.random)() % 10_000_000_000));
            if !self.fs.exists(&dir) {
                self.fs
                    .create_dir_all(&dir, 0o700)
                    .map_err(|e| failed(format!("couldn't create a temporary directory: {e}")))?;
                return Ok(dir);
            }
        }
        Err(failed(
            "couldn't create a temporary directory: too many names taken",
        ))
    }

    /// Upstream's `CreateTimestampDirForKubeadm`.
    fn timestamp_dir(&self, name: &str) -> Result<PathBuf, StaticPodUpgradeError> {
        let root = self.tmp_root();
        let dir = root.join(format!("{name}-{}", timestamp(self.now)));
        self.fs
            .create_dir_all(&dir, 0o700)
            .map_err(|e| failed(format!("could not create timestamp directory: {e}")))?;
        Ok(dir)
    }

    /// Upstream's `PerformStaticPodUpgrade`: the whole upgrade of this node's control plane.
    ///
    /// Beyond upstream, the temporary folders of new manifests that an earlier run left (it was
    /// killed before its clean-up) are removed first; the backups are kept.
    pub fn perform(&self) -> Result<(), StaticPodUpgradeError> {
        let external = self.cfg.cluster.etcd.external.is_some();
        for stale in self.fs.list_dir(&self.tmp_root()).unwrap_or_default() {
            if stale.starts_with(UPGRADED_MANIFESTS)
                && stale[UPGRADED_MANIFESTS.len()..]
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            {
                // Best effort: a folder that stays is only clutter.
                let _ = self.fs.remove_all(&self.tmp_root().join(stale));
            }
        }
        let temp = self.temp_dir(UPGRADED_MANIFESTS)?;
        let backup_manifests = self.timestamp_dir("kubeadm-backup-manifests")?;
        let backup_etcd = self.timestamp_dir("kubeadm-backup-etcd")?;
        let paths = Paths {
            real: self.kubernetes_dir.join("manifests"),
            temp,
            backup_manifests,
            backup_etcd,
            keep_etcd_backup: self.etcd_upgrade && !external,
        };
        self.control_plane(&paths)
    }

    /// Upstream's `StaticPodControlPlane`.
    fn control_plane(&self, paths: &Paths) -> Result<(), StaticPodUpgradeError> {
        let mut recover = Recover::new();
        let started = Instant::now();
        let mut hashes = BTreeMap::new();
        for c in Component::ALL {
            let hash = self.wait_for_single_hash(c.name())?;
            hashes.insert(c.name(), hash);
        }
        let external = self.cfg.cluster.etcd.external.is_some();
        let old_etcd = if external {
            None
        } else {
            let cert_dir = Path::new(&self.cfg.cluster.certificates_dir);
            let log = |m: &str| self.reporter.info(1, "etcd.go", m);
            Some(
                client_from_cluster(self.cluster, cert_dir, self.etcd, &log)
                    .map_err(|e| failed(format!("failed to create etcd client: {e}")))?,
            )
        };
        let renewer = self.renew_certs.then(|| Renewer::new(self));

        if let Some(old_etcd) = &old_etcd
            && self.etcd_upgrade
        {
            self.say("[upgrade/etcd] Upgrading to TLS for etcd");
            match self.etcd(paths, renewer.as_ref(), &mut recover, &**old_etcd) {
                Ok(()) => {}
                Err(EtcdStep::Fatal(e)) => return Err(e),
                Err(EtcdStep::NonFatal(e)) => {
                    self.say(&format!(
                        "[upgrade/etcd] Non fatal issue encountered during upgrade: {e}"
                    ));
                }
            }
        }

        self.say(&format!(
            "[upgrade/staticpods] Writing new Static Pod manifests to {:?}",
            paths.temp.display().to_string()
        ));
        self.write_control_plane_manifests(&paths.temp)
            .map_err(|e| failed(format!("error creating init static pod manifest files: {e}")))?;
        for c in Component::ALL {
            let before = hashes.get(c.name()).cloned().unwrap_or_default();
            self.component(c.name(), renewer.as_ref(), paths, &before, &mut recover, false)?;
        }

        if let Some(r) = &renewer {
            match r.renew("admin.conf") {
                Ok(true) => {}
                Ok(false) => self.say(
                    "[upgrade/staticpods] External CA detected, admin.conf certificate can't be renewed",
                ),
                Err(e) => {
                    return Err(self.rollback(
                        &recover,
                        format!("failed to upgrade the admin.conf certificates: {e}"),
                        paths,
                        false,
                    ));
                }
            }
        }
        self.reporter.info(
            1,
            "staticpods.go",
            &format!(
                "[upgrade/staticpods] control plane upgraded in {:.1?}",
                started.elapsed()
            ),
        );
        // Best effort, as upstream: the temporary folder always, the etcd backup unless kept.
        let mut errors = Vec::new();
        if let Err(e) = self.fs.remove_all(&paths.temp) {
            errors.push(e.to_string());
        }
        if !paths.keep_etcd_backup
            && let Err(e) = self.fs.remove_all(&paths.backup_etcd)
        {
            errors.push(e.to_string());
        }
        match errors.as_slice() {
            [] => Ok(()),
            [one] => Err(failed(one)),
            many => Err(failed(format!("[{}]", many.join(", ")))),
        }
    }

    /// The three control-plane manifests, patched, into `dir` (upstream's
    /// `CreateInitStaticPodManifestFiles`, which prints nothing but the patches it applies).
    fn write_control_plane_manifests(&self, dir: &Path) -> Result<(), WriteManifestError> {
        for c in Component::ALL {
            let mut pod = manifests::control_plane_pod(
                c,
                &self.cfg.cluster,
                &self.cfg.init.local_api_endpoint,
                &self.cfg.resolved,
                self.facts,
            );
            self.as_non_root(&mut pod)?;
            self.write_manifest(dir, pod)?;
        }
        Ok(())
    }

    /// With the `RootlessControlPlane` gate: the users, the file owners and `pod` made to run as
    /// non-root, as upstream's `CreateStaticPodFiles` does for the upgrade's new manifests.
    fn as_non_root(&self, pod: &mut StaticPod) -> Result<(), WriteManifestError> {
        if !manifests::rootless::enabled(&self.cfg.cluster) {
            return Ok(());
        }
        crate::users::run_as_non_root(
            self.fs,
            self.reporter,
            &crate::users::AccountFiles::host(),
            &self.cfg.cluster,
            self.facts.external_ca,
            pod,
        )
        .map_err(WriteManifestError::NonRoot)
    }

    fn write_manifest(&self, dir: &Path, pod: StaticPod) -> Result<(), WriteManifestError> {
        for w in &pod.warnings {
            self.reporter.warn("manifests.go", w);
        }
        let pod = match self.patches {
            Some(pm) => {
                if !self.patches_announced.replace(true) {
                    for m in pm.messages() {
                        self.say(m);
                    }
                }
                let (patched, messages) =
                    pm.patch_static_pod(&pod)
                        .map_err(|source| WriteManifestError::Patch {
                            name: pod.name.to_string(),
                            source: Box::new(source),
                        })?;
                for m in messages {
                    self.say(&m);
                }
                patched
            }
            None => pod,
        };
        let path = dir.join(format!("{}.yaml", pod.name));
        self.fs
            .create_dir_all(dir, 0o700)
            .and_then(|()| self.fs.write(&path, pod.to_yaml().as_bytes(), 0o600))
            .map_err(|source| WriteManifestError::Write {
                name: pod.name.to_string(),
                source,
            })
    }

    /// Upstream's `upgradeComponent`.
    fn component(
        &self,
        component: &str,
        renewer: Option<&Renewer<'_>>,
        paths: &Paths,
        before_hash: &str,
        recover: &mut Recover,
        is_etcd: bool,
    ) -> Result<(), StaticPodUpgradeError> {
        let started = Instant::now();
        self.say(&format!(
            "[upgrade/staticpods] Preparing for {component:?} upgrade"
        ));
        let current = paths.real(component);
        let new = paths.temp(component);
        let backup = paths.backup(component);
        recover.insert(component.to_string(), backup.clone());

        if self.manifests_equal(&current, &new)? {
            self.say(&format!(
                "[upgrade/staticpods] Current and new manifests of {component} are equal, skipping upgrade"
            ));
            return Ok(());
        }
        if let Some(r) = renewer
            && let Err(e) = r.renew_for_component(component)
        {
            return Err(self.rollback(
                recover,
                format!("failed to renew certificates for component {component:?}: {e}"),
                paths,
                is_etcd,
            ));
        }
        // Upstream moves the running manifest to the backup folder, then the new one in: killed
        // between the two, it leaves no manifest at all (the kubelet stops the component, and the
        // next run cannot read it). Here the running manifest is copied to the backup, then the
        // new one replaces it in one rename, so the folder always holds one or the other.
        if let Err(e) = self
            .fs
            .read(&current)
            .and_then(|old| self.fs.write(&backup, &old, 0o600))
        {
            return Err(self.rollback(recover, go_rename_error(&current, &backup, &e), paths, is_etcd));
        }
        if let Err(e) = self.fs.rename(&new, &current) {
            return Err(self.rollback(recover, go_rename_error(&new, &current, &e), paths, is_etcd));
        }
        self.say(&format!(
            "[upgrade/staticpods] Moved new manifest to {:?} and backed up old manifest to {:?}",
            current.display().to_string(),
            backup.display().to_string()
        ));
        self.say("[upgrade/staticpods] Waiting for the kubelet to restart the component");
        self.say(&format!(
            "[upgrade/staticpods] This might take a minute or longer depending on the component/version gap (timeout {})",
            go_duration(self.timeout)
        ));
        let waited = self
            .wait_for_hash_change(component, before_hash)
            .and_then(|()| self.wait_for_pods_with_label(&format!("component={component}")));
        if let Err(e) = waited {
            self.diagnose(component);
            return Err(self.rollback(recover, e.to_string(), paths, is_etcd));
        }
        self.say(&format!(
            "[upgrade/staticpods] Component {component:?} upgraded successfully!"
        ));
        self.reporter.info(
            1,
            "staticpods.go",
            &format!(
                "[upgrade/staticpods] {component} upgraded in {:.1?}",
                started.elapsed()
            ),
        );
        Ok(())
    }

    /// Upstream's `ManifestFilesAreEqual`: the two Pods are the same object.
    fn manifests_equal(&self, a: &Path, b: &Path) -> Result<bool, StaticPodUpgradeError> {
        let read = |p: &Path| {
            let bytes = self.fs.read(p).map_err(|e| {
                failed(format!(
                    "failed to read manifest for {:?}: open {}: {}",
                    p.display().to_string(),
                    p.display(),
                    kubeadm_api::gofmt::io_error(&e)
                ))
            })?;
            parse_manifest(&bytes).map_err(|e| {
                failed(format!(
                    "failed to unmarshal manifest for {:?}: {e}",
                    p.display().to_string()
                ))
            })
        };
        Ok(read(a)? == read(b)?)
    }
}

/// Go's `*os.LinkError` text for a failed rename.
fn go_rename_error(from: &Path, to: &Path, e: &std::io::Error) -> String {
    format!(
        "rename {} {}: {}",
        from.display(),
        to.display(),
        kubeadm_api::gofmt::io_error(e)
    )
}

fn parse_manifest(bytes: &[u8]) -> Result<Value, ManifestParseError> {
    let text = String::from_utf8_lossy(bytes);
    kubeadm_yaml::parse_documents(&text)
        .map_err(ManifestParseError::Yaml)?
        .into_iter()
        .next()
        .map(|d| d.value)
        .ok_or(ManifestParseError::Empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_is_upstreams_unless_the_variable_names_another() {
        assert_eq!(manifest_timeout(None), Ok(UPGRADE_MANIFEST_TIMEOUT));
        assert_eq!(timeout_text(UPGRADE_MANIFEST_TIMEOUT), "5m0s");
        assert_eq!(manifest_timeout(Some("90s")), Ok(Duration::from_secs(90)));
        assert_eq!(manifest_timeout(Some("1m30s")), Ok(Duration::from_secs(90)));
        for bad in ["", "90", "-1m", "0s", "soon"] {
            let e = manifest_timeout(Some(bad)).expect_err(bad);
            assert!(
                e.to_string().starts_with("KUBEADM_UPGRADE_MANIFESTS_TIMEOUT="),
                "{e}"
            );
        }
    }
}
