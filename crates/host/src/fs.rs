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

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)?;
        // The move is durable once the destination's folder is.
        let dir = to
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::File::open(dir)?.sync_all()
    }

    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        copy_tree(from, to)?;
        let dir = to
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::File::open(dir)?.sync_all()
    }
}

/// `cp -a`: directories, files (flushed) and symbolic links, with their modes.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    let mode = meta.permissions().mode() & 0o7777;
    if meta.file_type().is_symlink() {
        return std::os::unix::fs::symlink(fs::read_link(from)?, to);
    }
    if meta.is_dir() {
        fs::DirBuilder::new().mode(0o700).create(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        return fs::set_permissions(to, fs::Permissions::from_mode(mode));
    }
    let mut src = fs::File::open(from)?;
    let mut dst = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.set_permissions(fs::Permissions::from_mode(mode))?;
    dst.sync_all()
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
    fn rename_moves_and_copy_dir_keeps_tree_and_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("etcd");
        fs::create_dir_all(data.join("member/snap")).expect("mkdir");
        fs::set_permissions(&data, fs::Permissions::from_mode(0o700)).expect("chmod");
        RealFs
            .write(&data.join("member/snap/db"), b"bolt", 0o600)
            .expect("write");
        std::os::unix::fs::symlink("snap/db", data.join("member/link")).expect("symlink");
        let copy = dir.path().join("backup/etcd");
        fs::create_dir(dir.path().join("backup")).expect("mkdir");
        RealFs.copy_dir(&data, &copy).expect("copy");
        assert_eq!(fs::read(copy.join("member/snap/db")).expect("read"), b"bolt");
        assert_eq!(
            fs::metadata(&copy).expect("meta").permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(copy.join("member/snap/db"))
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        assert_eq!(
            fs::read_link(copy.join("member/link")).expect("link"),
            Path::new("snap/db")
        );
        // An existing destination is refused rather than merged into.
        assert!(RealFs.copy_dir(&data, &copy).is_err());

        let moved = dir.path().join("db.moved");
        RealFs
            .rename(&data.join("member/snap/db"), &moved)
            .expect("rename");
        assert!(!data.join("member/snap/db").exists());
        assert_eq!(fs::read(&moved).expect("read"), b"bolt");
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
