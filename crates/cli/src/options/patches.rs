//! The `--patches` directory as `init`, `join` and `upgrade node` read it (upstream's
//! `GetPatchManagerForPath`): which directory, and the patch files in it.

use std::path::Path;

use kubeadm_core::patches::{PatchFile, PatchManager};
use kubeadm_effects::fs::Fs;
use kubeadm_phases::patches::Patches;

/// The patch directory: `--patches` when given, else the configuration's `patches.directory`.
pub(crate) fn patches_dir(flag: String, from_config: Option<&kubeadm_api::v1beta3::Patches>) -> String {
    if flag.is_empty() {
        from_config.map(|p| p.directory.clone()).unwrap_or_default()
    } else {
        flag
    }
}

/// The patch directory of `init` and `join`, read from the host where a phase first needs it.
pub(crate) fn lazy_patches(dir: &str) -> Patches {
    let owned = dir.to_string();
    Patches::new(
        dir,
        Box::new(move || read_patch_dir(&kubeadm_host::fs::RealFs, &owned)),
    )
}

/// Reads every regular file under a patch directory, subdirectories included (upstream walks the
/// directory once per run).
pub(crate) fn read_patch_dir(
    fs: &dyn Fs,
    dir: &str,
) -> Result<PatchManager, kubeadm_core::patches::PatchError> {
    let unreadable = |e: &std::io::Error| {
        kubeadm_core::patches::PatchError::unreadable_directory(dir, &kubeadm_api::gofmt::io_error(e))
    };
    // Go's filepath.Walk starts with an Lstat of the folder: its error names it so.
    if let Err(e) = std::fs::symlink_metadata(dir) {
        return Err(kubeadm_core::patches::PatchError::unreadable_directory(
            dir,
            &format!("lstat {dir}: {}", kubeadm_api::gofmt::io_error(&e)),
        ));
    }
    let mut files = Vec::new();
    for path in crate::setup::files_below(Path::new(dir)).map_err(|e| unreadable(&e))? {
        let content = fs.read(&path).map_err(|e| unreadable(&e))?;
        let rel = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        files.push(PatchFile { path: rel, content });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    PatchManager::from_files(dir, &files)
}
