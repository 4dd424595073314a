//! The users and groups of the `RootlessControlPlane` feature gate on the host (upstream's
//! `util/users` and `util/staticpod/utils_linux.go`): created in `/etc/passwd` and `/etc/group`
//! under their locks before a control-plane manifest is written, removed by `reset`, and the
//! ownership of the files each component reads changed to match. What to write is computed by
//! `kubeadm_core::users`; this module reads, locks and writes through [`Fs`].
//!
//! Beyond upstream, which rewrites each file in place: each file is replaced atomically, `/etc/group`
//! before `/etc/passwd` when adding (a user never names a group that is not there yet) and after it
//! when removing, and when the second write fails the first file gets its old content back, so a
//! failed run leaves both files as they were.

use std::path::{Path, PathBuf};

use kubeadm_api::gofmt;
use kubeadm_api::v1beta3::ClusterConfiguration;
use kubeadm_core::manifests::StaticPod;
use kubeadm_core::manifests::rootless::{self, NonRootIds, OwnershipChange};
use kubeadm_core::users::{self as core_users, UsersAndGroups};
use kubeadm_effects::fs::{FileLock, Fs};
use kubeadm_effects::report::Reporter;

const SRC: &str = "users_linux.go";

/// Where the account files are: `root` is `/` on a host (and a temporary root in tests).
#[derive(Debug, Clone)]
pub struct AccountFiles {
    /// `/etc/login.defs`.
    pub login_defs: PathBuf,
    /// `/etc/passwd`.
    pub passwd: PathBuf,
    /// `/etc/group`.
    pub group: PathBuf,
}

impl AccountFiles {
    /// The files under `root`.
    pub fn under(root: &Path) -> AccountFiles {
        let at = |p: &str| root.join(p.trim_start_matches('/'));
        AccountFiles {
            login_defs: at(core_users::LOGIN_DEFS),
            passwd: at(core_users::PASSWD),
            group: at(core_users::GROUP),
        }
    }

    /// The host's.
    pub fn host() -> AccountFiles {
        AccountFiles::under(Path::new("/"))
    }
}

/// Why the users and groups could not be added or removed, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum UsersError {
    /// The files' contents refuse it.
    #[error(transparent)]
    Content(#[from] core_users::UsersError),
    /// A file could not be opened, locked, read or written.
    #[error("{0}")]
    Io(String),
}

fn lock(fs: &dyn Fs, path: &Path) -> Result<FileLock, UsersError> {
    fs.lock(path).map_err(|e| UsersError::Io(e.to_string()))
}

fn read(fs: &dyn Fs, path: &Path) -> Result<String, UsersError> {
    let bytes = fs
        .read(path)
        .map_err(|e| UsersError::Io(format!("read {}: {}", path.display(), gofmt::io_error(&e))))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn write(fs: &dyn Fs, path: &Path, text: &str, mode: u32) -> Result<(), UsersError> {
    fs.write(path, text.as_bytes(), mode)
        .map_err(|e| UsersError::Io(format!("write {}: {}", path.display(), gofmt::io_error(&e))))
}

/// Writes `first` then `second` (each `(path, old text, new text, mode)`), skipping an unchanged
/// file; when `second` fails, `first` gets its old text back.
fn write_pair(
    fs: &dyn Fs,
    first: (&Path, &str, &str, u32),
    second: (&Path, &str, &str, u32),
) -> Result<(), UsersError> {
    if first.1 != first.2 {
        write(fs, first.0, first.2, first.3)?;
    }
    if second.1 != second.2
        && let Err(e) = write(fs, second.0, second.2, second.3)
    {
        if first.1 != first.2 {
            let _ = fs.write(first.0, first.1.as_bytes(), first.3);
        }
        return Err(e);
    }
    Ok(())
}

/// Upstream's `AddUsersAndGroups`: the managed users and groups, added where missing, and their
/// IDs.
pub fn add_users_and_groups(
    fs: &dyn Fs,
    reporter: &dyn Reporter,
    files: &AccountFiles,
) -> Result<UsersAndGroups, UsersError> {
    reporter.info(1, SRC, "Adding managed users and groups");
    let login_defs = match fs.read(&files.login_defs) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(e) => {
            reporter.info(
                1,
                SRC,
                &format!(
                    "Could not open {}, using default system limits: {}",
                    gofmt::quote(&files.login_defs.display().to_string()),
                    gofmt::read_file_error(&files.login_defs.display().to_string(), &e)
                ),
            );
            None
        }
    };
    let limits = core_users::parse_login_defs(login_defs.as_deref())?;
    let passwd_lock = lock(fs, &files.passwd)?;
    let group_lock = lock(fs, &files.group)?;
    let passwd = read(fs, &files.passwd)?;
    let group = read(fs, &files.group)?;
    let added = core_users::add(
        limits,
        &files.passwd.display().to_string(),
        &passwd,
        &files.group.display().to_string(),
        &group,
    )?;
    if !added.new_users.is_empty() {
        reporter.info(5, SRC, &format!("Adding users: {}", added.new_users.join(",")));
    }
    if !added.new_groups.is_empty() {
        reporter.info(5, SRC, &format!("Adding groups: {}", added.new_groups.join(",")));
    }
    write_pair(
        fs,
        (&files.group, &group, &added.group, group_lock.mode),
        (&files.passwd, &passwd, &added.passwd, passwd_lock.mode),
    )?;
    Ok(added.ids)
}

/// Upstream's `RemoveUsersAndGroups`: every line of a managed name removed from `/etc/passwd` and
/// `/etc/group`.
pub fn remove_users_and_groups(
    fs: &dyn Fs,
    reporter: &dyn Reporter,
    files: &AccountFiles,
) -> Result<(), UsersError> {
    reporter.info(1, SRC, "Removing managed users and groups");
    let passwd_lock = lock(fs, &files.passwd)?;
    let group_lock = lock(fs, &files.group)?;
    let passwd = read(fs, &files.passwd)?;
    let group = read(fs, &files.group)?;
    let (new_passwd, new_group) = core_users::remove(&passwd, &group);
    write_pair(
        fs,
        (&files.passwd, &passwd, &new_passwd, passwd_lock.mode),
        (&files.group, &group, &new_group, group_lock.mode),
    )
}

/// The IDs `component` (a static pod's name) runs as.
pub fn ids_for(component: &str, ids: &UsersAndGroups) -> NonRootIds {
    let user = match component {
        "kube-apiserver" => core_users::KUBE_APISERVER_USER,
        "kube-controller-manager" => core_users::KUBE_CONTROLLER_MANAGER_USER,
        "kube-scheduler" => core_users::KUBE_SCHEDULER_USER,
        _ => core_users::ETCD_USER,
    };
    NonRootIds {
        user: ids.uid(user),
        group: ids.gid(user),
        sa_key_readers_group: ids.gid(core_users::SA_KEY_READERS_GROUP),
    }
}

/// Go's `os.FileMode.String()` of permission bits: `-rw-------`.
fn file_mode_string(mode: u32) -> String {
    let mut s = String::from("-");
    for (i, c) in "rwxrwxrwx".chars().enumerate() {
        s.push(if mode & (1 << (8 - i)) != 0 { c } else { '-' });
    }
    s
}

/// Makes the ownership changes, in order, with upstream's errors (`UpdatePathOwnerAndPermissions`,
/// `UpdatePathOwner`).
pub fn apply_ownership(fs: &dyn Fs, changes: &[OwnershipChange]) -> Result<(), String> {
    for c in changes {
        let (uid, gid) = (
            u32::try_from(c.uid).unwrap_or(u32::MAX),
            u32::try_from(c.gid).unwrap_or(u32::MAX),
        );
        let owner_error = |path: &Path, e: &std::io::Error| {
            format!(
                "failed to update owner of {} to uid: {} and gid: {}: chown {}: {}",
                gofmt::quote(&path.display().to_string()),
                c.uid,
                c.gid,
                path.display(),
                gofmt::io_error(e)
            )
        };
        let path = Path::new(&c.path);
        match c.mode {
            Some(mode) => {
                fs.chown(path, uid, gid).map_err(|e| owner_error(path, &e))?;
                fs.chmod(path, mode).map_err(|e| {
                    format!(
                        "failed to update permissions of {} to {}: chmod {}: {}",
                        gofmt::quote(&c.path),
                        file_mode_string(mode),
                        c.path,
                        gofmt::io_error(&e)
                    )
                })?;
            }
            None => fs
                .chown_tree(path, uid, gid)
                .map_err(|e| owner_error(&e.path, &e.source))?,
        }
    }
    Ok(())
}

/// Why a component could not be made to run as non-root, in upstream's words.
#[derive(Debug, thiserror::Error)]
pub enum NonRootError {
    /// The users and groups could not be added.
    #[error("failed to create users and groups: {0}")]
    Users(#[source] UsersError),
    /// A file's owner or mode could not be changed.
    #[error("failed to run component {component:?} as non-root: {reason}")]
    Component {
        /// The static pod.
        component: String,
        /// Why.
        reason: String,
    },
}

/// The `RootlessControlPlane` step of upstream's `CreateStaticPodFiles` and
/// `prepareAndWriteEtcdStaticPod` outside a dry run: the users and groups added (or found), the
/// files `pod`'s component reads given to its user, and `pod` set to run as that user.
/// `external_ca`: the CA key is absent (kube-controller-manager is then not given it).
pub fn run_as_non_root(
    fs: &dyn Fs,
    reporter: &dyn Reporter,
    files: &AccountFiles,
    cfg: &ClusterConfiguration,
    external_ca: bool,
    pod: &mut StaticPod,
) -> Result<(), NonRootError> {
    let ids = add_users_and_groups(fs, reporter, files).map_err(NonRootError::Users)?;
    let mut changed = pod.clone();
    let changes = rootless::run_as_non_root(&mut changed, ids_for(&pod.name, &ids), cfg, external_ca);
    apply_ownership(fs, &changes).map_err(|reason| NonRootError::Component {
        component: pod.name.clone(),
        reason,
    })?;
    *pod = changed;
    Ok(())
}

/// What a dry run says instead of [`run_as_non_root`]: `prefix` is the phase's (`[control-plane]`,
/// `[etcd]`), `components` how upstream prints the components it would make users for.
pub fn dry_run_lines(prefix: &str, components: &str, component: &str) -> [String; 2] {
    [
        format!("{prefix} Would create users and groups for {components} to run as non-root"),
        format!("{prefix} Would update static pod manifest for {component:?} to run run as non-root"),
    ]
}

#[cfg(test)]
#[path = "users_tests.rs"]
mod tests;
