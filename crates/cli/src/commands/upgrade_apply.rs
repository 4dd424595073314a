//! `kubeadm upgrade apply [version]` (upstream's `cmd/upgrade/apply.go` and `common.go`): the
//! configuration from the cluster (with the kubelet's and kube-proxy's; `k8s.gcr.io` moved to
//! `registry.k8s.io` and written back, the one upgrade command that persists it), the root, CoreDNS
//! and cluster health checks, the version skew policy (`--force` for what can be skipped), the
//! confirmation prompt, the image pull, then the static-pod upgrade of this node
//! ([`kubeadm_phases::upgrade::staticpods`]), the removal of the legacy control-plane taint and the
//! post-upgrade tasks ([`kubeadm_phases::upgrade::postupgrade`]).
//!
//! `--dry-run` changes nothing: the API calls are printed (reads answered by the real server), the
//! new manifests and the kubelet's configuration printed as upstream prints them.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_api::validation::validate_ignore_preflight_errors;
use kubeadm_core::layout::{KUBELET_CONF, KUBERNETES_DIR, Layout, MANIFESTS_DIR};
use kubeadm_core::upgrade::policy::{PolicyFlags, enforce_version_policies, format_errors};
use kubeadm_core::upgrade::version::SemanticVersion;
use kubeadm_effects::cluster::Cluster;
use kubeadm_effects::cri::PullProgress;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;
use kubeadm_phases::preflight::{IgnoreSet, pull_images};
use kubeadm_phases::upgrade::common::{
    Format, Printer, fix_cri_socket_scheme, load_config, preflight_and_health, print_configuration,
};
use kubeadm_phases::upgrade::postupgrade::{PostUpgrade, old_taint_message, remove_old_control_plane_taint};
use kubeadm_phases::upgrade::staticpods::{
    self, StaticPodUpgrade, UPGRADE_MANIFEST_TIMEOUT_ENV, manifest_timeout, timeout_text,
};
use kubeadm_phases::upgrade::versions::ClusterVersions;

use crate::cobra::execute::Invocation;
use crate::commands::config_load::image_settings;
use crate::error::{CommandError, Output};
use crate::setup::{host_facts, reporter};

/// `kubeadm upgrade apply [version]`.
pub(crate) fn run(inv: &Invocation<'_>, _: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let dry_run = f.bool("dry-run");
    let force = f.bool("force");
    let interactive = !(f.bool("yes") || dry_run || force);
    let rep = reporter(inv);
    let printer = Printer {
        format: Format::Text,
        rep: &rep,
    };

    // enforceRequirements
    let kubeconfig = f.string("kubeconfig");
    let cluster =
        crate::commands::upgrade_node::client(inv, Path::new(&kubeconfig), dry_run).map_err(|e| {
            CommandError::Failed(format!(
                "couldn't create a Kubernetes client from file {kubeconfig:?}: {e}"
            ))
        })?;
    let cluster: &dyn Cluster = &*cluster;
    let fs: Arc<dyn Fs> = Arc::from(crate::setup::fs(dry_run));

    printer.print("[upgrade/config] Making sure the configuration is correct:\n");
    let mut new_token = || BootstrapTokenString::generate(rand::random::<u8>);
    let (mut cfg, legacy) = load_config(
        &f.string("config"),
        true,
        cluster,
        &*fs,
        &host_facts::gather(),
        Path::new(KUBELET_CONF),
        &mut new_token,
        &printer,
    )?;
    let mut target = legacy.then(|| cfg.cluster.kubernetes_version.clone());
    if target.is_none() {
        let given = inv.args.iter().filter(|a| !a.is_empty()).count();
        if given > 1 {
            return Err(CommandError::Validation(
                "too many arguments. Required arguments: [version]".into(),
            ));
        }
        if given < 1 {
            return Err(CommandError::Validation(
                "missing one or more required arguments. Required arguments: [version]".into(),
            ));
        }
    }
    if let [version] = inv.args.as_slice() {
        target = Some(version.clone());
        cfg.cluster.kubernetes_version = version.clone();
    }

    let ignore = validate_ignore_preflight_errors(
        &f.strings("ignore-preflight-errors"),
        &cfg.init.node_registration.ignore_preflight_errors,
    )
    .map_err(|e| CommandError::Validation(e.to_string()))?;
    cfg.init.node_registration.ignore_preflight_errors = ignore.iter().cloned().collect();
    let ignore = IgnoreSet::from(ignore);

    let host_probe = crate::setup::host_probe();
    let pause = image_settings(&cfg).pause_image();
    preflight_and_health(cluster, &*host_probe, &pause, dry_run, &ignore, &printer)?;

    let gates = f.string("feature-gates");
    if !gates.is_empty() {
        cfg.cluster.feature_gates = kubeadm_api::features::parse_feature_gates(&gates)
            .map_err(|e| CommandError::Validation(format!("[upgrade/config] FATAL: {e}")))?;
    }
    if f.bool("print-config") {
        print_configuration(&printer, &cfg);
    }
    fix_cri_socket_scheme(&mut cfg, cluster, &|| host_facts::gather().hostname)?;

    // runApply
    let (version, resolved) = normalize_kubernetes_version(&cfg.cluster)?;
    cfg.cluster.kubernetes_version = version.clone();
    cfg.resolved = resolved;
    let new_version = SemanticVersion::parse(&version).map_err(|_| {
        CommandError::Failed(format!(
            "unable to parse normalized version {version:?} as a semantic version"
        ))
    })?;
    // Upstream's `features.ValidateVersion` next: no 1.25 feature gate has a minimum version.

    rep.out(&format!(
        "[upgrade/version] You have chosen to change the cluster version to {version:?}\n"
    ));
    // The real server's version, in a dry run too (upstream fakes it into its dry-run client).
    let version_client = kubeadm_host::cluster::KubeCluster::from_kubeconfig(Path::new(&kubeconfig))
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    let server_version = || {
        if dry_run {
            rep.out("[dryrun] Would perform action GET on resource \"version\" in API group \"core/\"\n");
        }
        version_client.server_version()
    };
    let mut getter = ClusterVersions {
        cluster,
        fs: &*fs,
        manifests_dir: MANIFESTS_DIR,
        server_version: &server_version,
    };
    let flags = PolicyFlags {
        experimental: f.bool("allow-experimental-upgrades"),
        release_candidates: f.bool("allow-release-candidate-upgrades"),
    };
    let skew = enforce_version_policies(&mut getter, &version, &new_version, flags, &mut |l| rep.out(l));
    if let Some(errs) = skew {
        if !errs.mandatory.is_empty() {
            return Err(CommandError::Failed(format!(
                "[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n{}\nPlease fix the misalignments highlighted above and try upgrading again",
                format_errors(&errs.mandatory)
            )));
        }
        if !errs.skippable.is_empty() {
            if !force {
                return Err(CommandError::Failed(format!(
                    "[upgrade/version] FATAL: the --version argument is invalid due to these errors:\n\n{}\nCan be bypassed if you pass the --force flag",
                    format_errors(&errs.skippable)
                )));
            }
            rep.out(&format!(
                "[upgrade/version] Found {} potential version compatibility errors but skipping since the --force flag is set: \n\n{}",
                errs.skippable.len(),
                format_errors(&errs.skippable)
            ));
        }
    }
    let _ = target;

    if interactive {
        confirm(&rep)?;
    }

    let runtime = crate::setup::runtime(&cfg.init.node_registration.cri_socket);
    let runtime = PullProgress {
        runtime: &*runtime,
        reporter: &rep,
        prefix: "upgrade/prepull",
    };
    pull_images(&cfg, &ignore, &*host_probe, &runtime, dry_run, "upgrade/prepull")
        .report(&rep)
        .map_err(|e| CommandError::Preflight(e.to_string()))?;

    let patches_dir = f.string("patches");
    let patches = if patches_dir.is_empty() {
        None
    } else {
        Some(
            crate::commands::patches::read_patch_dir(&*fs, &patches_dir)
                .map_err(|e| CommandError::Failed(format!("[upgrade/apply] FATAL: {}", e.detailed())))?,
        )
    };
    let external_ca = kubeadm_phases::upgrade::diff::using_external_ca(
        &*fs,
        &*host_probe,
        Path::new(&cfg.cluster.certificates_dir),
        crate::setup::unix_now(),
    );
    let facts = crate::setup::manifest_host_facts(external_ca);
    let timeout = manifest_timeout(crate::setup::env_var(UPGRADE_MANIFEST_TIMEOUT_ENV).as_deref())
        .map_err(CommandError::Validation)?;
    rep.out(&format!(
        "[upgrade/apply] Upgrading your Static Pod-hosted control plane to version {version:?} (timeout: {})...\n",
        timeout_text(timeout)
    ));
    let upgraded = if dry_run {
        staticpods::dry_run(
            &cfg,
            &*fs,
            patches.as_ref(),
            true,
            &facts,
            Path::new(KUBERNETES_DIR),
            &rep,
        )
    } else {
        let connector = crate::setup::etcd_connector();
        let keygen = crate::setup::keygen();
        StaticPodUpgrade {
            cfg: &cfg,
            kubernetes_dir: PathBuf::from(KUBERNETES_DIR),
            fs: &*fs,
            cluster,
            etcd: &connector,
            runtime: &runtime,
            patches: patches.as_ref(),
            facts: &facts,
            etcd_upgrade: f.bool("etcd-upgrade"),
            renew_certs: f.bool("certificate-renewal"),
            keygen: &*keygen,
            timeout,
            now: crate::setup::unix_now(),
            random: rand::random::<u64>,
            reporter: &rep,
            patches_announced: Default::default(),
        }
        .perform()
    };
    upgraded.map_err(|e| CommandError::Failed(format!("[upgrade/apply] FATAL: {e}")))?;
    // Writing the API server's manifest recorded its authorization modes in the configuration,
    // which is what upstream uploads below.
    let _ = kubeadm_core::manifests::record_authorization_mode(&mut cfg.cluster);

    rep.out(&old_taint_message());
    remove_old_control_plane_taint(cluster).map_err(CommandError::Failed)?;

    // A dry run writes the kubelet's configuration to a temporary folder (in the dry-run overlay
    // here) and prints it as if in its real place.
    let kubelet_dir = if dry_run {
        PathBuf::from(KUBERNETES_DIR).join(format!("tmp/kubeadm-upgrade-dryrun{}", rand::random::<u32>()))
    } else {
        Layout::default().kubelet_dir()
    };
    PostUpgrade {
        cfg: &cfg,
        cluster,
        fs: &*fs,
        kubelet_dir: &kubelet_dir,
        kubelet_run_dir: &Layout::default().kubelet_dir(),
        patches: patches.as_ref(),
        dry_run,
        environment: &facts.environment,
        reporter: &rep,
    }
    .run()
    .map_err(|e| CommandError::Failed(format!("[upgrade/postupgrade] FATAL post-upgrade error: {e}")))?;

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

/// Upstream's `NormalizeKubernetesVersion`: a label or CI version resolved (offline), the CI
/// registry chosen for a CI version with the default registry, the minimum version enforced.
fn normalize_kubernetes_version(
    cluster: &kubeadm_api::v1beta3::ClusterConfiguration,
) -> Result<(String, kubeadm_api::dynamic::ResolvedCluster), CommandError> {
    let mut copy = cluster.clone();
    let mut warnings = Vec::new();
    let resolved = kubeadm_api::dynamic::default_cluster_dynamic(
        &mut copy,
        &Default::default(),
        &kubeadm_api::version::offline,
        &mut warnings,
    )
    .map_err(|e| CommandError::Validation(e.to_string()))?;
    Ok((copy.kubernetes_version, resolved))
}

/// Upstream's `InteractivelyConfirmAction("upgrade", …)`.
fn confirm(rep: &dyn Reporter) -> Result<(), CommandError> {
    rep.out("[upgrade] Are you sure you want to proceed? [y/N]: ");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CommandError::Failed(format!("couldn't read from standard input: {e}")))?;
    let answer = line.strip_suffix('\n').unwrap_or(&line);
    let answer = answer.strip_suffix('\r').unwrap_or(answer).to_lowercase();
    if answer == "y" || answer == "yes" {
        Ok(())
    } else {
        Err(CommandError::Failed(
            "won't proceed; the user didn't answer (Y|y) in order to continue".into(),
        ))
    }
}
