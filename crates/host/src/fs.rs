//! The real file system, with atomic writes.
//!
//! A file is written to a temporary name in its own directory, its mode set, flushed to disk, then
//! renamed over the target, and the directory flushed: an interrupted run leaves the old file or the
//! new one, never a torn one, and a private key is never readable by others, not even for an instant.
//! A kill between the create and the rename leaves the temporary file (`.<name>.tmp-<pid>`, the
//! secret inside): the next write of that file removes those of processes no longer running, and
//! `reset` those below the directories it cleans.
//!
//! Removing a tree never crosses into another file system: what is mounted below it (a pod's
//! volume still mounted under the kubelet's directory) is left, and the removal fails naming it.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::os::unix::fs::MetadataExt;

use kubeadm_effects::fs::{FileLock, Fs, PathIoError, temp_file_name, temp_file_owner};

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
        let name = name.to_string_lossy();
        remove_stale_temps(dir, |n| n == name);
        let tmp = dir.join(temp_file_name(&name, std::process::id()));
        // A file replaced keeps its owner, as Go's os.WriteFile into an existing file does (the
        // RootlessControlPlane gate gives keys and kubeconfig files to the components' users,
        // and a renewal must not take them back).
        let owner = fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.file_type().is_file())
            .map(|m| (m.uid(), m.gid()));
        let result = (|| {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&tmp)?;
            if let Some((uid, gid)) = owner
                && (uid, gid) != (f.metadata()?.uid(), f.metadata()?.gid())
            {
                std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
            }
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
        if !meta.is_dir() {
            return match fs::remove_file(path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            };
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let mut left = Vec::new();
        match parent.map(fs::metadata).transpose()? {
            // The directory is itself a mount point: nothing of it is ours to remove.
            Some(p) if p.dev() != meta.dev() => left.push(path.to_path_buf()),
            _ => remove_tree(path, meta.dev(), &mut left)?,
        }
        if left.is_empty() {
            Ok(())
        } else {
            Err(io::Error::other(OtherFileSystems(left)))
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

    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        lock_file(path, LOCK_TIMEOUT)
    }

    fn chown(&self, path: &Path, uid: u32, gid: u32) -> io::Result<()> {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
    }

    fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }

    fn chown_tree(&self, path: &Path, uid: u32, gid: u32) -> Result<(), PathIoError> {
        // The top follows a symbolic link, as Go's os.Chown of the walk's root does.
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(at(path))?;
        if !fs::metadata(path).map_err(at(path))?.is_dir() {
            return Ok(());
        }
        let mut pending = vec![path.to_path_buf()];
        while let Some(dir) = pending.pop() {
            let mut entries = fs::read_dir(&dir)
                .map_err(at(&dir))?
                .map(|e| e.map(|e| e.path()))
                .collect::<io::Result<Vec<_>>>()
                .map_err(at(&dir))?;
            entries.sort();
            for p in entries {
                // Below the top, a link is changed itself, never what it points to.
                std::os::unix::fs::lchown(&p, Some(uid), Some(gid)).map_err(at(&p))?;
                if fs::symlink_metadata(&p).map_err(at(&p))?.is_dir() {
                    pending.push(p);
                }
            }
        }
        Ok(())
    }

    fn remove_stale_temp_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let meta = match fs::symlink_metadata(dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other?,
        };
        let mut removed = Vec::new();
        if meta.is_dir() {
            stale_temps_below(dir, meta.dev(), &mut removed)?;
        }
        Ok(removed)
    }
}

/// The error of an operation on `path`.
fn at(path: &Path) -> impl FnOnce(io::Error) -> PathIoError + '_ {
    move |source| PathIoError {
        path: path.to_path_buf(),
        source,
    }
}

/// How long [`Fs::lock`] tries (upstream's `openFileWithLock`: 5 s, every 200 ms).
const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(200);

/// Opens `path` read-write and takes an exclusive `fcntl` write lock on the whole file (the lock
/// upstream kubeadm takes on `/etc/passwd` and `/etc/group`, so two runs never interleave); errors
/// in upstream's words.
fn lock_file(path: &Path, timeout: std::time::Duration) -> io::Result<FileLock> {
    use nix::fcntl::{FcntlArg, fcntl};
    use nix::libc;
    let shown = path.display().to_string();
    let want = libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    };
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("open {shown}: {}", kubeadm_api::gofmt::io_error(&e)),
                )
            })?;
        loop {
            match fcntl(&file, FcntlArg::F_SETLK(&want)) {
                Ok(_) => break,
                Err(errno) => {
                    std::thread::sleep(LOCK_RETRY.min(timeout));
                    if std::time::Instant::now() > deadline {
                        let e = io::Error::from(errno);
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            format!(
                                "timeout attempting to obtain lock on file {}: {}",
                                kubeadm_api::gofmt::quote(&shown),
                                kubeadm_api::gofmt::io_error(&e)
                            ),
                        ));
                    }
                }
            }
        }
        let meta = file.metadata()?;
        // The holder replaced the file while we waited (a writer that renames, as ours does):
        // the lock is on a file nobody reads any more; take the new one's.
        let current = fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        if current == Some((meta.dev(), meta.ino())) {
            // Closing the file releases the lock.
            return Ok(FileLock::new(meta.permissions().mode() & 0o7777, Box::new(file)));
        }
    }
}

/// What a tree removal left because it is on another file system than the tree.
#[derive(Debug, thiserror::Error)]
#[error("{} left: on another file system (still mounted)", list(.0))]
pub struct OtherFileSystems(pub Vec<PathBuf>);

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// Removes what is under `dir` and `dir` itself, except what is on another device than `dev` (a
/// mount point: added to `left`, and the directories holding it are kept).
fn remove_tree(dir: &Path, dev: u64, left: &mut Vec<PathBuf>) -> io::Result<()> {
    let before = left.len();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let meta = match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            other => other?,
        };
        if meta.dev() != dev {
            left.push(path);
        } else if meta.is_dir() {
            remove_tree(&path, dev, left)?;
        } else {
            match fs::remove_file(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
    }
    if left.len() > before {
        return Ok(());
    }
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Whether process `pid` is running (signal 0 reaches it, or exists but is not ours to signal).
/// Anything but "no such process" counts as running, so a temporary file is never taken from a
/// write still under way.
fn process_running(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Removes the temporary files in `dir` whose file `wanted` accepts and whose process is gone;
/// returns those removed. Best effort: what cannot be listed or removed is left.
fn remove_stale_temps(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some((name, pid)) = file_name.to_str().and_then(temp_file_owner) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && wanted(name) && !process_running(pid) && fs::remove_file(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// [`remove_stale_temps`] for every file, in `dir` and the directories below it on the same device
/// (`dev`); symbolic links are not followed.
fn stale_temps_below(dir: &Path, dev: u64, removed: &mut Vec<PathBuf>) -> io::Result<()> {
    removed.extend(remove_stale_temps(dir, |_| true));
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = match fs::symlink_metadata(entry.path()) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            other => other?,
        };
        if meta.is_dir() && meta.dev() == dev {
            stale_temps_below(&entry.path(), dev, removed)?;
        }
    }
    Ok(())
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

    #[test]
    fn a_lock_held_by_another_process_times_out_in_upstreams_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("passwd");
        fs::write(&path, "root:x:0:0:::/bin/sh\n").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let held = RealFs.lock(&path).expect("free");
        assert_eq!(held.mode, 0o644);
        drop(held);
        // Another process holds an fcntl write lock.
        let mut holder = kubeadm_testkit::rootfs::hold_fcntl_lock(&path, "time.sleep(30)");
        let err = lock_file(&path, std::time::Duration::from_millis(300)).expect_err("held");
        let _ = holder.kill();
        let _ = holder.wait();
        assert_eq!(
            err.to_string(),
            format!(
                "timeout attempting to obtain lock on file {:?}: resource temporarily unavailable",
                path.display().to_string()
            )
        );
        // Released with its holder.
        RealFs.lock(&path).expect("free again");
    }

    #[test]
    fn a_replaced_file_keeps_its_owner() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("apiserver.key");
        RealFs.write(&p, b"one", 0o600).expect("write");
        let me = fs::metadata(&p).expect("meta");
        // As root, a file given to another user; unprivileged, our own IDs stay.
        let (uid, gid) = if me.uid() == 0 {
            (101, 102)
        } else {
            (me.uid(), me.gid())
        };
        std::os::unix::fs::chown(&p, Some(uid), Some(gid)).expect("chown");
        RealFs.write(&p, b"two", 0o600).expect("rewrite");
        let m = fs::metadata(&p).expect("meta");
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (uid, gid, 0o600));
        assert_eq!(fs::read(&p).expect("read"), b"two");
    }

    #[test]
    fn a_file_replaced_while_waiting_is_locked_anew() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("group");
        fs::write(&path, "root:x:0:\n").expect("write");
        // The holder replaces the file by a rename, then lets go of the old one.
        let mut holder = kubeadm_testkit::rootfs::hold_fcntl_lock(
            &path,
            "time.sleep(0.5)\nopen(sys.argv[1]+'.new','w').write('new\\n')\nos.rename(sys.argv[1]+'.new',sys.argv[1])\ntime.sleep(0.3)",
        );
        let held = RealFs.lock(&path).expect("locked after the holder left");
        assert!(holder.wait().expect("wait").success());
        // Another process cannot lock the file now at the path: ours holds the new one.
        let probe = std::process::Command::new("python3")
            .args([
                "-c",
                "import fcntl,sys\nf=open(sys.argv[1],'r+')\ntry:\n  fcntl.lockf(f,fcntl.LOCK_EX|fcntl.LOCK_NB)\nexcept OSError:\n  sys.exit(7)",
            ])
            .arg(&path)
            .status()
            .expect("python3");
        assert_eq!(probe.code(), Some(7), "the new file is not locked");
        drop(held);
    }

    #[test]
    fn locking_a_missing_file_says_open_failed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("group");
        let err = RealFs.lock(&path).expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("open {}: no such file or directory", path.display())
        );
    }

    #[test]
    fn chown_tree_changes_everything_below_without_following_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = dir.path().join("outside");
        fs::write(&outside, "x").expect("write");
        let top = dir.path().join("etcd");
        fs::create_dir_all(top.join("member/snap")).expect("mkdir");
        fs::write(top.join("member/snap/db"), "x").expect("write");
        std::os::unix::fs::symlink(&outside, top.join("link")).expect("symlink");
        let me = nix::unistd::getuid().as_raw();
        let group = nix::unistd::getgid().as_raw();
        // Our own IDs (works unprivileged); a root run would use others.
        let (uid, gid) = if me == 0 { (1234, 5678) } else { (me, group) };
        RealFs.chown_tree(&top, uid, gid).expect("chown");
        for p in ["", "member", "member/snap", "member/snap/db"] {
            let m = fs::metadata(top.join(p)).expect("stat");
            assert_eq!((m.uid(), m.gid()), (uid, gid), "{p}");
        }
        let link = fs::symlink_metadata(top.join("link")).expect("lstat");
        assert_eq!((link.uid(), link.gid()), (uid, gid));
        if me == 0 {
            let o = fs::metadata(&outside).expect("stat");
            assert_eq!((o.uid(), o.gid()), (0, 0), "followed the link");
        }
        let err = RealFs
            .chown_tree(&dir.path().join("none"), uid, gid)
            .expect_err("missing");
        assert_eq!(err.path, dir.path().join("none"));
    }
    use super::*;

    /// The temporary file a write by process `pid` makes for `name`.
    fn temp_name(name: &str, pid: u32) -> String {
        format!(".{name}.tmp-{pid}")
    }

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
    /// A process that has exited (its pid is free) and one that runs until dropped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("wait");
        pid
    }

    struct Running(std::process::Child);
    impl Drop for Running {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    fn running() -> Running {
        Running(
            std::process::Command::new("sleep")
                .arg("60")
                .spawn()
                .expect("sleep"),
        )
    }

    #[test]
    fn the_next_write_removes_its_own_stale_temp_files_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (dead, live) = (dead_pid(), running());
        let stale = dir.path().join(temp_name("admin.conf", dead));
        let in_use = dir.path().join(temp_name("admin.conf", live.0.id()));
        let other_file = dir.path().join(temp_name("super-admin.conf", dead));
        for f in [&stale, &in_use, &other_file] {
            fs::write(f, b"client-key-data: secret").expect("write");
        }
        RealFs
            .write(&dir.path().join("admin.conf"), b"new", 0o600)
            .expect("write");
        assert!(!stale.exists(), "a dead writer's temp file is removed");
        assert!(in_use.exists(), "a running writer's temp file is kept");
        assert!(
            other_file.exists(),
            "another file's temp files are not this write's"
        );
    }

    #[test]
    fn stale_temp_files_are_removed_below_a_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (dead, live) = (dead_pid(), running());
        fs::create_dir_all(dir.path().join("pki/etcd")).expect("mkdir");
        let stale = [
            dir.path().join(temp_name("admin.conf", dead)),
            dir.path().join("pki/etcd").join(temp_name("ca.key", dead)),
        ];
        let kept = [
            dir.path().join(temp_name("kubelet.conf", live.0.id())),
            dir.path().join("pki/.ca.key.tmp-x"),
            dir.path().join("pki/ca.key"),
        ];
        for f in stale.iter().chain(&kept) {
            fs::write(f, b"secret").expect("write");
        }
        let mut removed = RealFs.remove_stale_temp_files(dir.path()).expect("clean");
        removed.sort();
        assert_eq!(removed, stale);
        assert!(kept.iter().all(|f| f.exists()));
        assert!(stale.iter().all(|f| !f.exists()));
        assert_eq!(
            RealFs
                .remove_stale_temp_files(&dir.path().join("absent"))
                .expect("absent"),
            Vec::<PathBuf>::new()
        );
    }
}
