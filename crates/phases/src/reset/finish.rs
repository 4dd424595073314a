//! What `kubeadm reset` does after its phases (and its phase subcommands do not): the stateful
//! directories the phases collected emptied, then the manual-cleanup instructions.

use kubeadm_api::gofmt;

use crate::reset::ResetData;
use crate::reset::mount_table::empty_around_mounts;

/// Upstream's `cleanDirs`, run by `kubeadm reset` after its phases: empties the stateful directories
/// the phases collected (etcd's data, the kubelet's directory).
pub fn clean_stateful_dirs(data: &ResetData) {
    if data.dry_run {
        data.say(&format!(
            "[reset] Would delete contents of stateful directories: {}",
            gofmt::list(data.dirs_to_clean.iter().map(|p| p.display()))
        ));
        return;
    }
    data.say(&format!(
        "[reset] Deleting contents of stateful directories: {}",
        gofmt::list(data.dirs_to_clean.iter().map(|p| p.display()))
    ));
    for dir in &data.dirs_to_clean {
        data.effects.reporter.info(
            1,
            "reset.go",
            &format!("[reset] Deleting contents of {}", dir.display()),
        );
        if let Err(e) = empty_around_mounts(data, dir, true) {
            data.effects.reporter.warn(
                "reset.go",
                &format!(
                    "[reset] Failed to delete contents of {} directory: {}",
                    gofmt::quote(&dir.display().to_string()),
                    gofmt::io_error(&e)
                ),
            );
        }
    }
}

/// What `kubeadm reset` prints last: what it does not clean up (CNI configuration, iptables and
/// IPVS rules, the user's kubeconfig), upstream's two texts.
pub const CLEANUP_INSTRUCTIONS: &str = "
The reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d

The reset process does not reset or clean up iptables rules or IPVS tables.
If you wish to reset iptables, you must do so manually by using the \"iptables\" command.

If your cluster was setup to utilize IPVS, run ipvsadm --clear (or similar)
to reset your system's IPVS tables.

The reset process does not clean your kubeconfig files and you must remove them manually.
Please, check the contents of the $HOME/.kube/config file.
";
