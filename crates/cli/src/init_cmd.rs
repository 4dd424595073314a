//! `kubeadm init` and `kubeadm init phase …`: builds the init context from the options and runs the
//! workflow (whole, or filtered to one phase) with the real or the dry-run effects.

use std::path::{Path, PathBuf};

use kubeadm_core::manifests::{CA_CERTS_EXTRA_PATHS, ManifestHostFacts};
use kubeadm_core::patches::{PatchFile, PatchManager};
use kubeadm_effects::cluster::{Cluster, DryRunCluster, Resource};
use kubeadm_effects::fs::{DryRunFs, Fs};
use kubeadm_effects::init_system::DryRunInitSystem;
use kubeadm_host::fs::RealFs;
use kubeadm_host::init_system::HostInitSystem;
use kubeadm_phases::InitData;

use crate::config_cmd::reporter;
use crate::dispatch::CommandError;
use crate::execute::Invocation;
use crate::init_options::{self, InitOptions};

/// Where the kubelet keeps its files.
const KUBELET_DIR: &str = "/var/lib/kubelet";

/// Where upstream keeps static pod manifests.
const MANIFESTS_DIR: &str = "/etc/kubernetes/manifests";

/// Runs the init workflow: all of it (`filter` empty) or the phase `filter` names.
pub(crate) fn run(inv: &Invocation<'_>, filter: &[String]) -> Result<(), CommandError> {
    let opts = init_options::load(inv)?;
    let mut skip = inv.flags.strings("skip-phases");
    if filter.is_empty() && skip.is_empty() {
        skip = opts.cfg.init.skip_phases.clone();
    }
    let workflow = kubeadm_phases::init_workflow();
    let mut data = context(inv, opts)?;
    // The phases that will run, so the `certs` phase can generate every key they need at once.
    data.planned = workflow
        .plan(filter, &skip)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(selector, selected)| selected.then_some(selector))
        .collect();
    kubeadm_phases::detect_external_ca(&mut data).map_err(|e| CommandError::Failed(e.to_string()))?;
    // Upstream's `newInitData`: the CA keys to upload are not there.
    if data.upload_certs && data.external_ca {
        return Err(CommandError::Failed(
            "can't use upload-certs with an external CA or an external front-proxy CA".into(),
        ));
    }
    // Printed once the run's data is ready, as upstream's `init` does.
    if filter.is_empty() {
        data.say(&format!(
            "[init] Using Kubernetes version: {}",
            data.cfg.cluster.kubernetes_version
        ));
    }
    // A failed preflight check exits 2 (see `CommandError::from`).
    workflow.run(&mut data, filter, &skip)?;
    if filter.is_empty() {
        // Upstream's `showJoinCommand`, after every phase ran.
        kubeadm_phases::join_command::show(&data)
            .map_err(|e| CommandError::Failed(format!("failed to print join command: {e}")))?;
    }
    Ok(())
}

/// Upstream's `InitDryRunGetter` Node: the control-plane node as a kubelet would have registered
/// it, so the node patches have something to read.
fn dry_run_node(name: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": {"creationTimestamp": null, "labels": {"kubernetes.io/hostname": name}, "name": name},
        "spec": {},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}},
    })
}

/// How the phases reach the API server: the real client from `--kubeconfig`, or with `--dry-run` a
/// client that prints every write and answers reads from a fake control-plane Node.
fn cluster_access(inv: &Invocation<'_>, opts: &InitOptions) -> kubeadm_phases::ClusterAccess {
    if opts.dry_run {
        // Upstream reads the admin.conf it just wrote to its dry-run folder; ours is in the overlay.
        let path = PathBuf::from(&opts.kubeconfig_dir).join("admin.conf");
        let rep: std::sync::Arc<dyn kubeadm_effects::report::Reporter> = std::sync::Arc::new(reporter(inv));
        let node = dry_run_node(&opts.cfg.init.node_registration.name);
        kubeadm_phases::ClusterAccess::new(
            path,
            Box::new(move |_| {
                let dry = DryRunCluster::new(rep.clone(), kubeadm_yaml::to_string)
                    .with_object(&Resource::nodes(), node.clone());
                Ok(Box::new(dry) as Box<dyn Cluster>)
            }),
        )
    } else {
        kubeadm_phases::ClusterAccess::new(
            PathBuf::from(&opts.kubeconfig_path),
            Box::new(|p| {
                kubeadm_host::cluster::KubeCluster::from_kubeconfig(p)
                    .map(|c| Box::new(c) as Box<dyn Cluster>)
                    .map_err(|e| e.to_string())
            }),
        )
    }
}

fn context(inv: &Invocation<'_>, opts: InitOptions) -> Result<InitData, CommandError> {
    let cluster = cluster_access(inv, &opts);
    let fs: Box<dyn Fs> = if opts.dry_run {
        Box::new(DryRunFs::new(RealFs))
    } else {
        Box::new(RealFs)
    };
    let patches = if opts.patches_dir.is_empty() {
        None
    } else {
        Some(read_patches(&*fs, &opts.patches_dir)?)
    };
    let rep = reporter(inv);
    if let Some(pm) = &patches {
        for m in pm.messages() {
            kubeadm_effects::report::Reporter::out(&rep, &format!("{m}\n"));
        }
    }
    let cert_dir = PathBuf::from(&opts.cfg.cluster.certificates_dir);
    // The CA certificate without its key: the user manages the CA.
    let manifest_facts =
        manifest_host_facts(fs.exists(&cert_dir.join("ca.crt")) && !fs.exists(&cert_dir.join("ca.key")));
    Ok(InitData {
        dry_run: opts.dry_run,
        ignore_preflight_errors: opts.ignore_preflight_errors,
        upload_certs: opts.upload_certs,
        skip_token_print: opts.skip_token_print,
        skip_certificate_key_print: opts.skip_certificate_key_print,
        manifest_dir: PathBuf::from(MANIFESTS_DIR),
        kubelet_dir: PathBuf::from(KUBELET_DIR),
        hostname: kubeadm_host::probe::hostname().unwrap_or_default(),
        init_system: if opts.dry_run {
            Box::new(DryRunInitSystem::new(HostInitSystem::detect()))
        } else {
            Box::new(HostInitSystem::detect())
        },
        host_probe: Box::new(kubeadm_host::host_probe::RealHostProbe),
        runtime: Box::new(
            kubeadm_host::cri::CriClient::new(&opts.cfg.init.node_registration.cri_socket)
                .map_err(|e| CommandError::Failed(e.to_string()))?,
        ),
        kubeconfig_dir: PathBuf::from(&opts.kubeconfig_dir),
        patches,
        manifest_facts,
        fs,
        reporter: Box::new(rep),
        keygen: Box::new(kubeadm_host::keygen::AwsLcKeyGen),
        keys: kubeadm_phases::KeyPool::default(),
        now: unix_now(),
        random: rand::random::<u64>,
        planned: Default::default(),
        external_ca: false,
        period_checked: Default::default(),
        cluster,
        cfg: opts.cfg,
    })
}

/// What the control-plane manifests take from this host: the CA certificate folders that exist, the
/// environment (proxy variables), and whether the CA is external.
pub(crate) fn manifest_host_facts(external_ca: bool) -> ManifestHostFacts {
    ManifestHostFacts {
        existing_ca_cert_dirs: CA_CERTS_EXTRA_PATHS
            .iter()
            .filter(|d| Path::new(d).is_dir())
            .map(|d| d.to_string())
            .collect(),
        environment: std::env::vars().collect(),
        external_ca,
    }
}

/// The current time as Unix seconds (the one clock read of a run).
pub(crate) fn unix_now() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// The patch directory: `--patches` when given, else the configuration's `patches.directory`.
pub(crate) fn patches_dir(flag: String, from_config: Option<&kubeadm_api::v1beta3::Patches>) -> String {
    if flag.is_empty() {
        from_config.map(|p| p.directory.clone()).unwrap_or_default()
    } else {
        flag
    }
}

/// Reads every regular file under a patch directory, subdirectories included (upstream walks the
/// directory once per run).
pub(crate) fn read_patches(fs: &dyn Fs, dir: &str) -> Result<PatchManager, CommandError> {
    read_patch_dir(fs, dir).map_err(|e| CommandError::Failed(e.detailed()))
}

/// [`read_patches`], with the patch error itself.
pub(crate) fn read_patch_dir(
    fs: &dyn Fs,
    dir: &str,
) -> Result<PatchManager, kubeadm_core::patches::PatchError> {
    let unreadable = |e: &std::io::Error| {
        kubeadm_core::patches::PatchError::unreadable_directory(dir, &crate::config_cmd::go_io_error(e))
    };
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::from(dir)];
    while let Some(d) = pending.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .map_err(|e| unreadable(&e))?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                pending.push(path);
            } else if path.is_file() {
                let content = fs.read(&path).map_err(|e| unreadable(&e))?;
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                files.push(PatchFile { path: rel, content });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    PatchManager::from_files(dir, &files)
}
