//! The real file system, with atomic writes.
//!
//! A file is written to a temporary name in its own directory, its mode set, flushed to disk, then
//! renamed over the target, and the directory flushed: an interrupted run leaves the old file or the
//! new one, never a torn one, and a private key is never readable by others, not even for an instant.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use kubeadm_effects::fs::Fs;

/// The host's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl Fs for RealFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        self.create_dir_all(dir, 0o755)?;
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("not a file path"))?;
        let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
        let result = (|| {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&tmp)?;
            // The umask may have narrowed the mode at creation; set it exactly.
            f.set_permissions(fs::Permissions::from_mode(mode))?;
            f.write_all(contents)?;
            f.sync_all()?;
            fs::rename(&tmp, path)?;
            fs::File::open(dir)?.sync_all()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        fs::DirBuilder::new().recursive(true).mode(mode).create(path)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = fs::read_dir(path)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<io::Result<Vec<_>>>()?;
        names.sort();
        Ok(names)
    }

    fn remove_all(&self, path: &Path) -> io::Result<()> {
        // Not following a symbolic link: a link to a directory is removed, not what it points to.
        let meta = match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            other => other?,
        };
        let result = if meta.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
        match result {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn unmount(&self, path: &Path) -> io::Result<()> {
        nix::mount::umount(path).map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_sets_mode_and_replaces_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("pki/ca.key");
        RealFs.write(&p, b"one", 0o600).expect("write");
        RealFs.write(&p, b"two", 0o600).expect("rewrite");
        assert_eq!(fs::read(&p).expect("read"), b"two");
        assert_eq!(
            fs::metadata(&p).expect("meta").permissions().mode() & 0o777,
            0o600
        );
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(dir.path().join("pki")).expect("ls").count(), 1);
    }

    #[test]
    fn remove_all_takes_trees_links_and_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tree = dir.path().join("pods/a/volumes");
        fs::create_dir_all(&tree).expect("mkdir");
        fs::write(tree.join("f"), b"x").expect("write");
        let kept = dir.path().join("kept");
        fs::create_dir(&kept).expect("mkdir");
        fs::write(kept.join("g"), b"y").expect("write");
        std::os::unix::fs::symlink(&kept, dir.path().join("link")).expect("symlink");
        assert_eq!(RealFs.list_dir(dir.path()).expect("ls"), ["kept", "link", "pods"]);
        RealFs.remove_all(&dir.path().join("pods")).expect("tree");
        RealFs.remove_all(&dir.path().join("link")).expect("link");
        RealFs.remove_all(&dir.path().join("absent")).expect("absent");
        assert_eq!(RealFs.list_dir(dir.path()).expect("ls"), ["kept"]);
        // The link's target survives its link.
        assert!(kept.join("g").exists());
        assert_eq!(
            RealFs
                .canonicalize(&dir.path().join("kept/../kept"))
                .expect("real"),
            fs::canonicalize(&kept).expect("real")
        );
        assert!(RealFs.canonicalize(&dir.path().join("absent")).is_err());
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("d");
        fs::create_dir(&target).expect("mkdir");
        // Renaming a file over a directory fails: the target stays, the temp file goes.
        assert!(RealFs.write(&target, b"x", 0o644).is_err());
        assert!(target.is_dir());
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
