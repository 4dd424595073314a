//! The file system as kubeadm uses it: whole-file reads, atomic whole-file writes with a mode,
//! directories, removal.
//!
//! [`DryRunFs`] is the dry-run decorator: reads pass through to the wrapped file system unless the run
//! itself wrote the file; writes land in an in-memory overlay and are reported, so nothing on disk
//! changes.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whole-file access to a file system.
pub trait Fs: Send + Sync {
    /// Reads a whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Writes a whole file atomically (a reader sees the old or the new content, never a mix), with
    /// `mode` set before it becomes visible. Creates missing parent directories with mode 0755, as
    /// upstream does for the directories it owns.
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()>;
    /// Whether a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Creates a directory and its parents with `mode`; no error if it exists.
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()>;
    /// Removes a file; no error if it does not exist.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// One change a dry run would have made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsChange {
    /// A file written with this content and mode.
    Write {
        /// Path.
        path: PathBuf,
        /// Content.
        contents: Vec<u8>,
        /// Mode.
        mode: u32,
    },
    /// A directory created.
    CreateDir {
        /// Path.
        path: PathBuf,
        /// Mode.
        mode: u32,
    },
    /// A file removed.
    Remove {
        /// Path.
        path: PathBuf,
    },
}

/// The dry-run decorator over another file system.
#[derive(Debug)]
pub struct DryRunFs<F> {
    inner: F,
    overlay: Mutex<Overlay>,
}

#[derive(Debug, Default)]
struct Overlay {
    files: BTreeMap<PathBuf, Option<Vec<u8>>>,
    dirs: Vec<PathBuf>,
    changes: Vec<FsChange>,
}

impl<F: Fs> DryRunFs<F> {
    /// Wraps `inner`; nothing will be written to it.
    pub fn new(inner: F) -> Self {
        Self {
            inner,
            overlay: Mutex::new(Overlay::default()),
        }
    }

    /// The changes made so far, in order.
    pub fn changes(&self) -> Vec<FsChange> {
        self.lock().changes.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Overlay> {
        // A poisoned overlay still holds consistent data: every mutation is a single push/insert.
        self.overlay.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<F: Fs> Fs for DryRunFs<F> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.lock().files.get(path) {
            Some(Some(data)) => return Ok(data.clone()),
            Some(None) => return Err(io::Error::from(io::ErrorKind::NotFound)),
            None => {}
        }
        self.inner.read(path)
    }

    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        let mut o = self.lock();
        o.files.insert(path.to_path_buf(), Some(contents.to_vec()));
        o.changes.push(FsChange::Write {
            path: path.to_path_buf(),
            contents: contents.to_vec(),
            mode,
        });
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        let o = self.lock();
        match o.files.get(path) {
            Some(f) => f.is_some(),
            None => o.dirs.iter().any(|d| d == path) || self.inner.exists(path),
        }
    }

    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        let mut o = self.lock();
        if !o.dirs.iter().any(|d| d == path) {
            o.dirs.push(path.to_path_buf());
            o.changes.push(FsChange::CreateDir {
                path: path.to_path_buf(),
                mode,
            });
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut o = self.lock();
        o.files.insert(path.to_path_buf(), None);
        o.changes.push(FsChange::Remove {
            path: path.to_path_buf(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file system with one file that fails every write, to prove the decorator never writes.
    struct ReadOnly;
    impl Fs for ReadOnly {
        fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
            if path == Path::new("/etc/existing") {
                Ok(b"old".to_vec())
            } else {
                Err(io::ErrorKind::NotFound.into())
            }
        }
        fn write(&self, _: &Path, _: &[u8], _: u32) -> io::Result<()> {
            panic!("dry run wrote through")
        }
        fn exists(&self, path: &Path) -> bool {
            path == Path::new("/etc/existing")
        }
        fn create_dir_all(&self, _: &Path, _: u32) -> io::Result<()> {
            panic!("dry run created a directory")
        }
        fn remove_file(&self, _: &Path) -> io::Result<()> {
            panic!("dry run removed a file")
        }
    }

    #[test]
    fn writes_stay_in_the_overlay_and_are_recorded() {
        let fs = DryRunFs::new(ReadOnly);
        assert_eq!(fs.read(Path::new("/etc/existing")).expect("read"), b"old");
        fs.write(Path::new("/etc/existing"), b"new", 0o600)
            .expect("write");
        assert_eq!(fs.read(Path::new("/etc/existing")).expect("read"), b"new");
        fs.remove_file(Path::new("/etc/existing")).expect("remove");
        assert!(!fs.exists(Path::new("/etc/existing")));
        fs.create_dir_all(Path::new("/etc/kubernetes"), 0o755)
            .expect("mkdir");
        assert!(fs.exists(Path::new("/etc/kubernetes")));
        assert_eq!(fs.changes().len(), 3);
        assert!(matches!(&fs.changes()[0], FsChange::Write { mode: 0o600, .. }));
    }
}
