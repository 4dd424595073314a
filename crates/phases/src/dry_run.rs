//! What a dry run prints of the files it would have written (upstream's `util/dryrun`), shared by
//! `init`'s wait-control-plane and `join`'s kubelet-start.

use std::path::{Path, PathBuf};

use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter;

/// Upstream's `PrintFilesIfDryRunning`: the control-plane manifests (when `manifest_dir` is given)
/// and the kubelet's files the run would have written, read back from the dry-run overlay.
/// Upstream first names the temporary folder it wrote everything to; ours keeps nothing on disk,
/// so there is no folder to name.
pub(crate) fn print_files(
    fs: &dyn Fs,
    reporter: &dyn Reporter,
    manifest_dir: Option<&Path>,
    kubelet_dir: &Path,
) {
    reporter.out(
        "[dryrun] The certificates or kubeconfig files would not be printed due to their sensitive nature\n",
    );
    let manifests: Vec<PathBuf> = manifest_dir
        .map(|dir| {
            ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]
                .iter()
                .map(|c| dir.join(format!("{c}.yaml")))
                .collect()
        })
        .unwrap_or_default();
    let kubelet = ["config.yaml", "kubeadm-flags.env"].map(|f| kubelet_dir.join(f));
    for path in manifests.iter().chain(&kubelet) {
        print_file(fs, reporter, path, path);
    }
}

/// Upstream's `PrintDryRunFiles` for one file: `real` read back (from the overlay), announced as
/// `shown`, each line indented with a tab. A file that cannot be read is skipped (upstream reports
/// it at the end; a phase skipped by the user leaves nothing to print).
pub(crate) fn print_file(fs: &dyn Fs, reporter: &dyn Reporter, real: &Path, shown: &Path) {
    let Ok(bytes) = fs.read(real) else {
        return;
    };
    let mut text = format!(
        "[dryrun] Would write file {:?} with content:\n",
        shown.display().to_string()
    );
    for line in String::from_utf8_lossy(&bytes).lines() {
        text.push('\t');
        text.push_str(line);
        text.push('\n');
    }
    reporter.out(&text);
}
