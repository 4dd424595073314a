//! Finding a program on `PATH`, and running the file found.
//!
//! Go's `exec.LookPath` (upstream's, since Go 1.19) refuses a program found through a relative
//! `PATH` entry, an empty one included (which means the current directory): a `systemctl` or
//! `kubelet` planted in whatever directory kubeadm happens to run from must never run as root.
//! Here relative and empty entries are skipped, and the program is spawned by the absolute path
//! found, never by its bare name (which `execvp` would look up again, current directory included).

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Go's `findExecutable`: not a directory, and executable by someone.
pub(crate) fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_dir() && m.permissions().mode() & 0o111 != 0)
}

/// Where `name` is found on this process's `PATH` ([`look_path_in`]).
pub fn look_path(name: &str) -> Option<PathBuf> {
    look_path_in(name, std::env::var_os("PATH").as_deref())
}

/// Where `name` is found on `path` (a `PATH` value): a name with a `/` is taken as it is; a bare
/// name is looked for in the absolute entries of `path` only, in order. `None` when it is not found.
pub fn look_path_in(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable_file(&p).then_some(p);
    }
    if name.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable_file(p))
}

/// A command running `name` as [`look_path`] finds it; not found is the error spawning a missing
/// program gives (`No such file or directory`).
pub fn command(name: &str) -> io::Result<Command> {
    look_path(name)
        .map(Command::new)
        .ok_or_else(|| io::Error::from_raw_os_error(nix::errno::Errno::ENOENT as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_empty_entries_are_skipped() {
        let dir = tempfile::tempdir().expect("dir");
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let abs = dir.path().display().to_string();
        let found = |path: &str| look_path_in("tool", Some(OsStr::new(path)));
        assert_eq!(found(&abs), Some(tool.clone()));
        assert_eq!(found(&format!(":{abs}")), Some(tool.clone()));
        assert_eq!(found(""), None);
        assert_eq!(found(":.:relative/dir"), None);
        assert_eq!(look_path_in("tool", None), None);
        assert_eq!(look_path_in("", Some(OsStr::new(&abs))), None);
        // A name with a slash is not searched for.
        assert_eq!(
            look_path_in(&tool.display().to_string(), None),
            Some(tool.clone())
        );
        // Not executable, or a directory: not found.
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(found(&abs), None);
        assert_eq!(look_path_in("tmp", Some(OsStr::new("/"))), None);
    }
}
