//! `kubeadm upgrade apply [version]` once its flags are read (upstream's `cmd/upgrade/apply.go`
//! and `common.go`): the configuration from the cluster (with the kubelet's and kube-proxy's;
//! `k8s.gcr.io` moved to `registry.k8s.io` and written back, the one upgrade command that persists
//! it), the root, CoreDNS and cluster health checks, the version skew policy (`--force` for what
//! can be skipped), the confirmation prompt, the image pull, then the static-pod upgrade of this
//! node ([`crate::upgrade::staticpods`], certificates renewed unless `--certificate-renewal=false`),
//! the removal of the legacy control-plane taint and the post-upgrade tasks
//! ([`crate::upgrade::postupgrade`]).
//!
//! Everything it touches comes in through [`Apply`]: the command builds the real effects, the
//! crash-point test fakes (`tests/upgrade_apply_crash_points.rs`).
//!
//! `--dry-run` changes nothing: the API calls are printed (reads answered by the real server), the
//! new manifests and the kubelet's configuration printed as upstream prints them.

use std::path::{Path, PathBuf};

use kubeadm_api::dynamic::HostFacts;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::MANIFESTS_DIR;
use kubeadm_core::manifests::ManifestHostFacts;
use kubeadm_core::patches::{PatchError, PatchManager};
use kubeadm_core::upgrade::policy::{PolicyFlags, enforce_version_policies, format_errors};
use kubeadm_core::upgrade::version::SemanticVersion;
use kubeadm_effects::cluster::{Cluster, ClusterError};
use kubeadm_effects::cri::PullProgress;
use kubeadm_effects::report::Reporter;
use serde_json::Value;

use crate::preflight::{IgnoreSet, pull_images};
use crate::upgrade::UpgradeError;
use crate::upgrade::common::{
    Format, Printer, fix_cri_socket_scheme, load_config, preflight_and_health, print_configuration,
};
use crate::upgrade::postupgrade::{PostUpgrade, old_taint_message, remove_old_control_plane_taint};
use crate::upgrade::staticpods::{self, StaticPodUpgrade, manifest_timeout, timeout_text};
use crate::upgrade::versions::ClusterVersions;

/// The flags of `upgrade apply`, read.
#[derive(Debug, Clone, Default)]
pub struct ApplyFlags {
    /// `--config` (empty: none).
    pub config: String,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--force`.
    pub force: bool,
    /// `--yes`.
    pub yes: bool,
    /// `--etcd-upgrade`.
    pub etcd_upgrade: bool,
    /// `--certificate-renewal`.
    pub renew_certs: bool,
    /// `--print-config`.
    pub print_config: bool,
    /// `--feature-gates` (empty: none).
    pub feature_gates: String,
    /// `--ignore-preflight-errors`.
    pub ignore_preflight_errors: Vec<String>,
    /// `--allow-experimental-upgrades`.
    pub allow_experimental: bool,
    /// `--allow-release-candidate-upgrades`.
    pub allow_release_candidates: bool,
    /// `--patches` (empty: none).
    pub patches: String,
}

/// Asks the API server its version (`/version`, a non-resource GET that [`Cluster`] does not have).
pub type ServerVersion<'a> = Box<dyn Fn() -> Result<Value, ClusterError> + 'a>;

/// Opens the client that asks the version: the real server's, in a dry run too (upstream fakes it
/// into its dry-run client). Opened where the version policy first needs it.
pub type OpenServerVersion<'a> = Box<dyn FnOnce() -> Result<ServerVersion<'a>, crate::SuppliedError> + 'a>;

/// What `upgrade apply` works on and through.
pub struct Apply<'a> {
    /// The command's arguments (the version).
    pub args: &'a [String],
    /// Its flags.
    pub flags: ApplyFlags,
    /// The API server (printing its calls in a dry run).
    pub cluster: &'a dyn Cluster,
    /// The host's facts, for defaulting the configuration and naming this node.
    pub host_facts: &'a dyn Fn() -> HostFacts,
    /// The server-version client, opened when needed.
    pub server_version: OpenServerVersion<'a>,
    /// Facts about the host the manifests depend on (whether the CA is external given).
    pub manifest_facts: &'a dyn Fn(bool) -> ManifestHostFacts,
    /// Reads a `--patches` directory.
    pub read_patches: &'a dyn Fn(&str) -> Result<PatchManager, PatchError>,
    /// The value of [`staticpods::UPGRADE_MANIFEST_TIMEOUT_ENV`], if set.
    pub manifest_timeout: Option<String>,
    /// `/etc/kubernetes`.
    pub kubernetes_dir: PathBuf,
    /// `/etc/kubernetes/kubelet.conf`, which names this node.
    pub kubelet_conf: PathBuf,
    /// The kubelet's folder (`/var/lib/kubelet`).
    pub kubelet_dir: PathBuf,
    /// Reads the answer to the confirmation prompt (a line of standard input).
    pub read_answer: &'a mut dyn FnMut() -> std::io::Result<String>,
    /// The effects it acts through (real, or dry-run).
    pub effects: kubeadm_effects::Effects,
}

impl std::fmt::Debug for Apply<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apply")
            .field("args", &self.args)
            .field("flags", &self.flags)
            .finish_non_exhaustive()
    }
}

impl Apply<'_> {
    /// Runs `upgrade apply`: `Ok` when the control plane of this node is upgraded (or, in a dry
    /// run, when it would be).
    pub fn run(self) -> Result<(), UpgradeError> {
        let Apply {
            args,
            flags: f,
            cluster,
            host_facts,
            server_version,
            manifest_facts,
            read_patches,
            manifest_timeout: timeout_value,
            kubernetes_dir,
            kubelet_conf,
            kubelet_dir,
            read_answer,
            effects,
        } = self;
        let (fs, host_probe, keygen, rep) = (
            &*effects.fs,
            &*effects.host_probe,
            &*effects.keygen,
            &*effects.reporter,
        );
        let (etcd, random, now) = (&effects.etcd, effects.random, || effects.now());
        let dry_run = f.dry_run;
        let interactive = !(f.yes || dry_run || f.force);
        let printer = Printer {
            format: Format::Text,
            rep,
        };

        // enforceRequirements
        printer.print("[upgrade/config] Making sure the configuration is correct:\n");
        let mut new_token = || BootstrapTokenString::generate(|| random() as u8);
        let (mut cfg, legacy) = load_config(
            &f.config,
            true,
            cluster,
            fs,
            &host_facts(),
            &kubelet_conf,
            &mut new_token,
            &printer,
        )?;
        if !legacy {
            let given = args.iter().filter(|a| !a.is_empty()).count();
            if given > 1 {
                return Err(UpgradeError::TooManyArguments);
            }
            if given < 1 {
                return Err(UpgradeError::MissingVersion);
            }
        }
        if let [version] = args {
            cfg.cluster.kubernetes_version = version.clone();
        }

        let ignore = validate_ignore_preflight_errors(
            &f.ignore_preflight_errors,
            &cfg.init.node_registration.ignore_preflight_errors,
        )
        .map_err(UpgradeError::from)?;
        cfg.init.node_registration.ignore_preflight_errors = ignore.iter().cloned().collect();
        let ignore = IgnoreSet::from(ignore);

        let pause = kubeadm_core::manifests::image_settings(&cfg.cluster, &cfg.resolved).pause_image();
        preflight_and_health(cluster, host_probe, &pause, dry_run, &ignore, &printer)?;

        if !f.feature_gates.is_empty() {
            cfg.cluster.feature_gates = kubeadm_api::features::parse_feature_gates(&f.feature_gates)
                .map_err(UpgradeError::FeatureGates)?;
        }
        if f.print_config {
            print_configuration(&printer, &cfg);
        }
        fix_cri_socket_scheme(&mut cfg, cluster, &|| host_facts().hostname)?;

        // runApply
        let (version, resolved) = normalize_kubernetes_version(&cfg.cluster)?;
        cfg.cluster.kubernetes_version = version.clone();
        cfg.resolved = resolved;
        let new_version =
            SemanticVersion::parse(&version).map_err(|_| UpgradeError::UnparsableVersion(version.clone()))?;
        // Upstream's `features.ValidateVersion` next: no 1.25 feature gate has a minimum version.

        rep.out(&format!(
            "[upgrade/version] You have chosen to change the cluster version to {version:?}\n"
        ));
        let version_client = server_version().map_err(UpgradeError::ServerVersion)?;
        let server_version = || {
            if dry_run {
                rep.out("[dryrun] Would perform action GET on resource \"version\" in API group \"core/\"\n");
            }
            version_client()
        };
        let mut getter = ClusterVersions {
            cluster,
            fs,
            manifests_dir: MANIFESTS_DIR,
            server_version: &server_version,
        };
        let policy = PolicyFlags {
            experimental: f.allow_experimental,
            release_candidates: f.allow_release_candidates,
        };
        let skew = enforce_version_policies(&mut getter, &version, &new_version, policy, &mut |l| rep.out(l));
        if let Some(errs) = skew {
            if !errs.mandatory.is_empty() {
                return Err(UpgradeError::VersionSkew {
                    errors: errs.mandatory,
                    mandatory: true,
                });
            }
            if !errs.skippable.is_empty() {
                if !f.force {
                    return Err(UpgradeError::VersionSkew {
                        errors: errs.skippable,
                        mandatory: false,
                    });
                }
                rep.out(&format!(
                    "[upgrade/version] Found {} potential version compatibility errors but skipping since the --force flag is set: \n\n{}",
                    errs.skippable.len(),
                    format_errors(&errs.skippable)
                ));
            }
        }

        if interactive {
            confirm(rep, read_answer)?;
        }

        let runtime = effects.runtime(&cfg.init.node_registration.cri_socket);
        let runtime = PullProgress {
            runtime: &*runtime,
            reporter: rep,
            prefix: "upgrade/prepull",
        };
        pull_images(&cfg, &ignore, host_probe, &runtime, dry_run, "upgrade/prepull")
            .report(rep)
            .map_err(UpgradeError::from)?;

        let patches = if f.patches.is_empty() {
            None
        } else {
            Some(read_patches(&f.patches).map_err(UpgradeError::Patches)?)
        };
        let external_ca = crate::upgrade::diff::using_external_ca(
            fs,
            host_probe,
            Path::new(&cfg.cluster.certificates_dir),
            now(),
        );
        let facts = manifest_facts(external_ca);
        let timeout = manifest_timeout(timeout_value.as_deref()).map_err(UpgradeError::Timeout)?;
        rep.out(&format!(
            "[upgrade/apply] Upgrading your Static Pod-hosted control plane to version {version:?} (timeout: {})...\n",
            timeout_text(timeout)
        ));
        let upgraded = if dry_run {
            staticpods::dry_run(&cfg, fs, patches.as_ref(), true, &facts, &kubernetes_dir, rep)
        } else {
            StaticPodUpgrade {
                cfg: &cfg,
                kubernetes_dir: kubernetes_dir.clone(),
                fs,
                cluster,
                etcd,
                runtime: &runtime,
                patches: patches.as_ref(),
                facts: &facts,
                etcd_upgrade: f.etcd_upgrade,
                renew_certs: f.renew_certs,
                keygen,
                timeout,
                now: now(),
                random,
                reporter: rep,
                patches_announced: Default::default(),
            }
            .perform()
        };
        upgraded.map_err(UpgradeError::StaticPods)?;
        // Writing the API server's manifest recorded its authorization modes in the configuration,
        // which is what upstream uploads below.
        let _ = kubeadm_core::manifests::record_authorization_mode(&mut cfg.cluster);

        rep.out(&old_taint_message());
        remove_old_control_plane_taint(cluster).map_err(UpgradeError::Taint)?;

        // A dry run writes the kubelet's configuration to a temporary folder (in the dry-run
        // overlay here) and prints it as if in its real place.
        let kubelet_out = if dry_run {
            kubernetes_dir.join(format!("tmp/kubeadm-upgrade-dryrun{}", random() as u32))
        } else {
            kubelet_dir.clone()
        };
        PostUpgrade {
            cfg: &cfg,
            cluster,
            fs,
            kubelet_dir: &kubelet_out,
            kubelet_run_dir: &kubelet_dir,
            patches: patches.as_ref(),
            dry_run,
            environment: &facts.environment,
            reporter: rep,
        }
        .run()
        .map_err(UpgradeError::PostUpgrade)?;

        if dry_run {
            // Upstream's line has a no-break space after the prefix.
            rep.out("[upgrade/successful]\u{a0}Finished dryrunning successfully!\n");
            return Ok(());
        }
        rep.out(&format!(
            "\n[upgrade/successful] SUCCESS! Your cluster was upgraded to {version:?}. Enjoy!\n\n\
             [upgrade/kubelet] Now that your control plane is upgraded, please proceed with upgrading your kubelets if you haven't already done so.\n"
        ));
        Ok(())
    }
}

/// Upstream's `NormalizeKubernetesVersion`: a label or CI version resolved (offline), the CI
/// registry chosen for a CI version with the default registry, the minimum version enforced.
fn normalize_kubernetes_version(
    cluster: &kubeadm_api::v1beta3::ClusterConfiguration,
) -> Result<(String, kubeadm_api::dynamic::ResolvedCluster), UpgradeError> {
    let mut copy = cluster.clone();
    let mut warnings = Vec::new();
    let resolved = kubeadm_api::dynamic::default_cluster_dynamic(
        &mut copy,
        &Default::default(),
        &kubeadm_api::version::offline,
        &mut warnings,
    )
    .map_err(UpgradeError::from)?;
    Ok((copy.kubernetes_version, resolved))
}

/// Upstream's `InteractivelyConfirmAction("upgrade", …)`.
fn confirm(
    rep: &dyn Reporter,
    read_answer: &mut dyn FnMut() -> std::io::Result<String>,
) -> Result<(), UpgradeError> {
    rep.out("[upgrade] Are you sure you want to proceed? [y/N]: ");
    let line = read_answer().map_err(UpgradeError::Stdin)?;
    let answer = line.strip_suffix('\n').unwrap_or(&line);
    let answer = answer.strip_suffix('\r').unwrap_or(answer).to_lowercase();
    if answer == "y" || answer == "yes" {
        Ok(())
    } else {
        Err(UpgradeError::Declined)
    }
}
