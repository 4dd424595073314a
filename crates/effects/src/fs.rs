//! The file system as kubeadm uses it: whole-file reads, atomic whole-file writes with a mode,
//! directories, removal, and the few mount operations `reset` needs (resolving a directory's real
//! path, unmounting what is mounted under it).
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
    /// Reads a whole file as it is on disk, ignoring what a dry run has written in its place.
    /// Upstream's dry run writes its files into a temporary folder, so a phase that reads a path
    /// of the real configuration (`upload-certs` reading the certificate folder) sees only what
    /// was there before the run; this is that read. Outside a dry run it is [`Fs::read`].
    fn read_on_disk(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.read(path)
    }
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

    /// The names of a directory's entries, sorted (Go's `Readdirnames`, used by `reset` to empty a
    /// directory). The default reports the operation as unsupported, for implementations that never
    /// list directories.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Err(unsupported("list_dir", path))
    }

    /// Removes a file or a directory with everything under it; no error if nothing is there (Go's
    /// `os.RemoveAll`). Default: unsupported.
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        Err(unsupported("remove_all", path))
    }

    /// The path with every symbolic link resolved (Go's `filepath.EvalSymlinks`); fails when it does
    /// not exist. Default: unsupported.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        Err(unsupported("canonicalize", path))
    }

    /// Unmounts the file system mounted at `path` (`umount(2)` without flags). Default: unsupported.
    fn unmount(&self, path: &Path) -> io::Result<()> {
        Err(unsupported("unmount", path))
    }

    /// Moves a file within one file system (`rename(2)`: atomic, replaces `to`). Default: unsupported.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _ = to;
        Err(unsupported("rename", from))
    }

    /// Copies the directory `from` with everything under it to `to` (created; modes kept), as
    /// `cp -a from to` does when `to` does not exist. Default: unsupported.
    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _ = to;
        Err(unsupported("copy_dir", from))
    }

    /// Removes the temporary files that writes of a process no longer running left in `dir` and
    /// below it (a kill between a write's create and rename leaves `.<name>.tmp-<pid>`, with the
    /// file's secret content); a live process's are kept. Returns the files removed. Default: a file
    /// system without such files has none to remove.
    fn remove_stale_temp_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let _ = dir;
        Ok(Vec::new())
    }

    /// Opens an existing file for writing and takes an exclusive `fcntl` write lock on it, as
    /// upstream's `openFileWithLock` does for `/etc/passwd` and `/etc/group` (tried every 200 ms for
    /// 5 s, then `timeout attempting to obtain lock on file "<path>": <errno>`; an open that fails
    /// says `open <path>: <errno>`). The lock is held until the returned guard is dropped.
    /// Default: unsupported.
    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        Err(unsupported("lock", path))
    }

    /// Changes the owner of a file or directory (`chown(2)`, following a symbolic link).
    /// Default: unsupported.
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> io::Result<()> {
        let _ = (uid, gid);
        Err(unsupported("chown", path))
    }

    /// Changes the permissions of a file or directory (`chmod(2)`). Default: unsupported.
    fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        let _ = mode;
        Err(unsupported("chmod", path))
    }

    /// Changes the owner of `path` and of everything below it (`chown -R`), without following a
    /// symbolic link below it; the error names the path that failed. Default: unsupported.
    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), PathIoError> {
        let _ = (uid, gid);
        Err(PathIoError {
            path: path.to_path_buf(),
            source: unsupported("chown_tree", path),
        })
    }
}

/// An exclusive lock on a file, released when dropped ([`Fs::lock`]).
pub struct FileLock {
    /// The file's permission bits when it was locked (kept by a rewrite).
    pub mode: u32,
    /// The open, locked file (whatever the implementation holds).
    _held: Box<dyn Send + Sync>,
}

impl FileLock {
    /// A lock on a file of `mode`, held as long as `held` lives.
    pub fn new(mode: u32, held: Box<dyn Send + Sync>) -> FileLock {
        FileLock { mode, _held: held }
    }
}

impl std::fmt::Debug for FileLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLock")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// An I/O error and the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct PathIoError {
    /// The path.
    pub path: PathBuf,
    /// The error.
    #[source]
    pub source: io::Error,
}

/// The file a write's temporary file stands for and the process that made it: `.<name>.tmp-<pid>`
/// gives `(name, pid)`.
pub fn temp_file_owner(file_name: &str) -> Option<(&str, u32)> {
    let (name, pid) = file_name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    let pid_ok = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    let pid = pid.parse::<u32>().ok().filter(|p| pid_ok && *p > 0)?;
    (!name.is_empty()).then_some((name, pid))
}

/// The name of the temporary file process `pid` writes `name` through.
pub fn temp_file_name(name: &str, pid: u32) -> String {
    format!(".{name}.tmp-{pid}")
}

/// A shared file system is a file system too: a dry run's overlay is shared by every context that
/// writes and reads it back (a control-plane join's and `init`'s phases).
impl<F: Fs + ?Sized> Fs for std::sync::Arc<F> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        (**self).read(path)
    }
    fn read_on_disk(&self, path: &Path) -> io::Result<Vec<u8>> {
        (**self).read_on_disk(path)
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        (**self).write(path, contents, mode)
    }
    fn exists(&self, path: &Path) -> bool {
        (**self).exists(path)
    }
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        (**self).create_dir_all(path, mode)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        (**self).remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        (**self).list_dir(path)
    }
    fn remove_all(&self, path: &Path) -> io::Result<()> {
        (**self).remove_all(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        (**self).canonicalize(path)
    }
    fn unmount(&self, path: &Path) -> io::Result<()> {
        (**self).unmount(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        (**self).rename(from, to)
    }
    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        (**self).copy_dir(from, to)
    }
    fn remove_stale_temp_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        (**self).remove_stale_temp_files(dir)
    }
    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        (**self).lock(path)
    }
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> io::Result<()> {
        (**self).chown(path, uid, gid)
    }
    fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        (**self).chmod(path, mode)
    }
    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), PathIoError> {
        (**self).chown_tree(path, uid, gid)
    }
}

/// The error of an [`Fs`] operation an implementation does not provide.
fn unsupported(operation: &str, path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{operation} {}: not supported by this file system",
            path.display()
        ),
    )
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
    /// A file or a directory tree removed (`remove_all`).
    RemoveAll {
        /// Path.
        path: PathBuf,
    },
    /// A file system unmounted.
    Unmount {
        /// The mount point.
        path: PathBuf,
    },
    /// A file moved.
    Rename {
        /// Where it was.
        from: PathBuf,
        /// Where it is.
        to: PathBuf,
    },
    /// A directory tree copied.
    CopyDir {
        /// The source.
        from: PathBuf,
        /// The copy.
        to: PathBuf,
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

    fn read_on_disk(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read_on_disk(path)
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

    /// Lists the wrapped file system: entries removed or written by the run itself are not
    /// reflected (no caller lists a directory it changed in the same run).
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }

    fn remove_all(&self, path: &Path) -> io::Result<()> {
        let mut o = self.lock();
        o.files.insert(path.to_path_buf(), None);
        o.changes.push(FsChange::RemoveAll {
            path: path.to_path_buf(),
        });
        Ok(())
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }

    fn unmount(&self, path: &Path) -> io::Result<()> {
        self.lock().changes.push(FsChange::Unmount {
            path: path.to_path_buf(),
        });
        Ok(())
    }

    /// Moves the file's content in the overlay (read through from the wrapped file system).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let contents = self.read(from)?;
        let mut o = self.lock();
        o.files.insert(from.to_path_buf(), None);
        o.files.insert(to.to_path_buf(), Some(contents));
        o.changes.push(FsChange::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
        });
        Ok(())
    }

    /// Only recorded: the copy's files are not readable through the overlay.
    fn copy_dir(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.lock().changes.push(FsChange::CopyDir {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
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
        fn remove_all(&self, _: &Path) -> io::Result<()> {
            panic!("dry run removed a tree")
        }
        fn unmount(&self, _: &Path) -> io::Result<()> {
            panic!("dry run unmounted")
        }
    }

    #[test]
    fn tree_removal_and_unmount_are_only_recorded() {
        let fs = DryRunFs::new(ReadOnly);
        fs.remove_all(Path::new("/etc/existing")).expect("remove_all");
        assert!(!fs.exists(Path::new("/etc/existing")));
        fs.unmount(Path::new("/var/lib/kubelet/pods/x")).expect("unmount");
        assert_eq!(
            fs.changes(),
            [
                FsChange::RemoveAll {
                    path: "/etc/existing".into()
                },
                FsChange::Unmount {
                    path: "/var/lib/kubelet/pods/x".into()
                }
            ]
        );
        // What the wrapped file system does not provide stays unsupported.
        assert_eq!(
            fs.list_dir(Path::new("/etc")).expect_err("unsupported").kind(),
            io::ErrorKind::Unsupported
        );
    }

    #[test]
    fn temp_file_names_give_their_file_and_process() {
        assert_eq!(
            temp_file_owner(".admin.conf.tmp-4242"),
            Some(("admin.conf", 4242))
        );
        assert_eq!(
            temp_file_owner(&temp_file_name("a.tmp-1", 7)),
            Some(("a.tmp-1", 7))
        );
        for not_one in [
            "admin.conf.tmp-1",
            ".admin.conf.tmp-",
            ".admin.conf.tmp-0",
            ".admin.conf.tmp-+1",
            ".admin.conf.tmp-12x",
            "..tmp-12",
            ".admin.conf",
        ] {
            assert_eq!(temp_file_owner(not_one), None, "{not_one}");
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
