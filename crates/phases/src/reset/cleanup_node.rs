//! The `cleanup-node` phase of `kubeadm reset`: the kubelet stopped, its mounts unmounted, the pod
//! sandboxes removed, the manifests and certificates emptied and the kubeconfig files deleted.

use std::path::{Path, PathBuf};

use kubeadm_api::gofmt;
use kubeadm_effects::fs::Fs;
use kubeadm_workflow::PhaseError;

use crate::reset::mount_table::{empty_around_mounts, mounts_below};
use crate::reset::{DEFAULT_CERT_DIR, ResetData};

/// The files `cleanup-node` deletes from `/etc/kubernetes`, in upstream's order.
const FILES_TO_CLEAN: [&str; 5] = [
    "admin.conf",
    "kubelet.conf",
    "bootstrap-kubelet.conf",
    "controller-manager.conf",
    "scheduler.conf",
];

/// The `cleanup-node` phase: stop the kubelet, unmount what is mounted under `/var/lib/kubelet`,
/// remove every pod sandbox, empty the manifests and certificates directories, delete the
/// kubeconfig files. Every failure is a warning, as upstream.
///
/// Beyond upstream, in a whole `kubeadm reset`: the stateful directories collected before this
/// phase (etcd's data directory) are emptied once the kubelet and the containers are gone, before
/// the manifests and kubeconfig files are deleted; the line saying so is still printed after the
/// phases, where upstream prints it. Upstream empties them last, and a reset killed after it
/// deleted `etcd.yaml` and `admin.conf` never empties them: run again, it finds neither the
/// configuration nor the manifest that name the directory, assumes an external etcd, and the next
/// `init` fails its preflight on a non-empty `/var/lib/etcd` (`reset_crash_points.rs` shows it).
pub(crate) fn run_cleanup_node(data: &mut ResetData) -> Result<(), PhaseError> {
    const SRC: &str = "cleanupnode.go";
    let collected_before = data.dirs_to_clean.len();
    match data.effects.init_system.kind() {
        None => {
            data.effects.reporter.warn(
                SRC,
                "[reset] The kubelet service could not be stopped by kubeadm. Unable to detect a supported init system!",
            );
            data.effects
                .reporter
                .warn(SRC, "[reset] Please ensure kubelet is stopped manually");
        }
        Some(_) if data.dry_run => data.say("[reset] Would stop the kubelet service"),
        Some(_) => {
            data.say("[reset] Stopping the kubelet service");
            if let Err(e) = data.effects.init_system.service_stop("kubelet") {
                data.effects.reporter.warn(
                    SRC,
                    &format!("[reset] The kubelet service could not be stopped by kubeadm: [{e}]\n"),
                );
                data.effects
                    .reporter
                    .warn(SRC, "[reset] Please ensure kubelet is stopped manually");
            }
        }
    }

    let kubelet_dir = gofmt::quote(&data.kubelet_dir.display().to_string());
    if data.dry_run {
        data.say(&format!(
            "[reset] Would unmount mounted directories in {kubelet_dir}"
        ));
    } else {
        data.say(&format!(
            "[reset] Unmounting mounted directories in {kubelet_dir}"
        ));
        if let Some(dir) = absolute_kubelet_dir(data) {
            data.dirs_to_clean.push(dir);
        }
    }

    if data.dry_run {
        data.say("[reset] Would remove Kubernetes-managed containers");
    } else {
        data.effects
            .reporter
            .info(1, SRC, "[reset] Removing Kubernetes-managed containers");
        let removed = data
            .runtime
            .list_pod_sandboxes()
            .map_err(|e| e.to_string())
            .and_then(|pods| {
                let ids: Vec<String> = pods.into_iter().map(|p| p.id).collect();
                data.runtime.remove_pod_sandboxes(&ids).map_err(|e| e.to_string())
            });
        if let Err(e) = removed {
            data.effects
                .reporter
                .warn(SRC, &format!("[reset] Failed to remove containers: {e}\n"));
        }
    }

    if data.stateful_dirs_after && !data.dry_run {
        for dir in &data.dirs_to_clean[..collected_before] {
            // A failure (and what is left) is reported where upstream reports it, when the
            // directory is emptied again after the phases.
            let _ = empty_around_mounts(data, dir, false);
        }
    }

    if data.cert_dir != Path::new(DEFAULT_CERT_DIR) {
        data.effects.reporter.warn(
            SRC,
            &format!(
                "[reset] WARNING: Cleaning a non-default certificates directory: {}\n",
                gofmt::quote(&data.cert_dir.display().to_string())
            ),
        );
    }
    reset_config_dir(data);

    let rootless = data.cfg.as_ref().is_some_and(|c| {
        c.cluster
            .feature_gates
            .get("RootlessControlPlane")
            .copied()
            .unwrap_or(false)
    });
    if rootless {
        if data.dry_run {
            data.say("[reset] Would remove users and groups created for rootless control-plane");
        } else {
            data.effects.reporter.info(
                1,
                SRC,
                "[reset] Removing users and groups created for rootless control-plane",
            );
            if let Err(e) = crate::users::remove_users_and_groups(
                &*data.effects.fs,
                &*data.effects.reporter,
                &crate::users::AccountFiles::host(),
            ) {
                data.effects
                    .reporter
                    .warn(SRC, &format!("[reset] Failed to remove users and groups: {e}\n"));
            }
        }
    }
    Ok(())
}

/// Upstream's `absoluteKubeletRunDirectory`: the kubelet directory with symbolic links resolved,
/// after unmounting everything mounted below it; `None` (with a warning) when either step fails,
/// and the directory is then left alone.
fn absolute_kubelet_dir(data: &ResetData) -> Option<PathBuf> {
    const SRC: &str = "cleanupnode.go";
    let dir = match data.effects.fs.canonicalize(&data.kubelet_dir) {
        Ok(d) => d,
        Err(e) => {
            data.effects.reporter.warn(
                SRC,
                &format!(
                    "[reset] Failed to evaluate the {} directory. Skipping its unmount and cleanup: lstat {}: {}\n",
                    gofmt::quote(&data.kubelet_dir.display().to_string()),
                    data.kubelet_dir.display(),
                    gofmt::io_error(&e)
                ),
            );
            return None;
        }
    };
    let mounts = match data.effects.fs.read(&data.mounts_file) {
        Ok(m) => m,
        Err(_) => {
            data.effects.reporter.warn(
                SRC,
                &format!(
                    "[reset] Failed to unmount mounted directories in {} \n",
                    data.kubelet_dir.display()
                ),
            );
            return None;
        }
    };
    // Deepest first, so that a mount inside another (a subPath in its volume) does not keep the
    // outer one busy; what stays mounted is never descended into when the directory is emptied.
    for mount_point in mounts_below(&String::from_utf8_lossy(&mounts), &dir) {
        if data.effects.fs.unmount(&mount_point).is_err() {
            data.effects.reporter.warn(
                "unmount_linux.go",
                &format!(
                    "[reset] Failed to unmount mounted directory in {}/: {}",
                    dir.display(),
                    mount_point.display()
                ),
            );
        }
    }
    Some(dir)
}

/// Upstream's `resetConfigDir`: empties the manifests and certificates directories, deletes the
/// kubeconfig files.
fn reset_config_dir(data: &ResetData) {
    let dirs = vec![data.kubernetes_dir.join("manifests"), data.cert_dir.clone()];
    if data.dry_run {
        data.say(&format!(
            "[reset] Would delete contents of directories: {}",
            gofmt::list(dirs.iter().map(|p| p.display()))
        ));
    } else {
        data.say(&format!(
            "[reset] Deleting contents of directories: {}",
            gofmt::list(dirs.iter().map(|p| p.display()))
        ));
        for dir in &dirs {
            if let Err(e) = clean_dir(&*data.effects.fs, dir) {
                data.effects.reporter.warn(
                    "cleanupnode.go",
                    &format!(
                        "[reset] Failed to delete contents of {} directory: {}",
                        gofmt::quote(&dir.display().to_string()),
                        gofmt::io_error(&e)
                    ),
                );
            }
        }
    }
    let files: Vec<PathBuf> = FILES_TO_CLEAN
        .iter()
        .map(|f| data.kubernetes_dir.join(f))
        .collect();
    if data.dry_run {
        data.say(&format!(
            "[reset] Would delete files: {}",
            gofmt::list(files.iter().map(|p| p.display()))
        ));
    } else {
        data.say(&format!(
            "[reset] Deleting files: {}",
            gofmt::list(files.iter().map(|p| p.display()))
        ));
        for file in &files {
            if let Err(e) = data.effects.fs.remove_all(file) {
                data.effects.reporter.warn(
                    "cleanupnode.go",
                    &format!(
                        "[reset] Failed to remove file: {} [{}]\n",
                        gofmt::quote(&file.display().to_string()),
                        gofmt::io_error(&e)
                    ),
                );
            }
        }
        remove_stale_temp_files(data);
    }
}

/// Beyond upstream: the temporary files a killed write left in `/etc/kubernetes` and below
/// (`.admin.conf.tmp-<pid>` holds the credentials of the file it was to become) are removed, those
/// of a process still running kept.
fn remove_stale_temp_files(data: &ResetData) {
    match data.effects.fs.remove_stale_temp_files(&data.kubernetes_dir) {
        Ok(removed) => {
            for file in removed {
                data.effects.reporter.info(
                    1,
                    "cleanupnode.go",
                    &format!(
                        "[reset] Removed the temporary file {} a killed write left",
                        file.display()
                    ),
                );
            }
        }
        Err(e) => data.effects.reporter.warn(
            "cleanupnode.go",
            &format!(
                "[reset] Failed to remove temporary files in {}: {}",
                gofmt::quote(&data.kubernetes_dir.display().to_string()),
                gofmt::io_error(&e)
            ),
        ),
    }
}

/// Upstream's `CleanDir`: removes everything inside `dir`, keeping `dir`; nothing to do when it
/// does not exist. Stops at the first entry that cannot be removed.
pub fn clean_dir(fs: &dyn Fs, dir: &Path) -> std::io::Result<()> {
    crate::reset::mount_table::clean_dir_around(fs, dir, &[]).map(drop)
}
