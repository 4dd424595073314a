//! The `remove-etcd-member` phase of `kubeadm reset`: the local etcd's data directory, and this
//! node's member removed from the etcd cluster (upstream's `RemoveStackedEtcdMemberFromCluster` with
//! `etcdutil.NewFromCluster`; choosing the member to remove is a plain function tested on its own,
//! the etcd calls go through the `Etcd` trait).

use std::path::{Path, PathBuf};

use kubeadm_api::internal::InitConfig;
use kubeadm_api::v1beta3::ApiEndpoint;
use kubeadm_effects::etcd::{EtcdError, Member};
use kubeadm_effects::fs::Fs;
use kubeadm_workflow::PhaseError;
use serde_json::Value;

use crate::etcd_cluster::{EtcdClientError, client_from_cluster, client_url, peer_url};
use crate::reset::ResetData;

/// Why the etcd data directory is unknown (upstream then assumes an external etcd).
#[derive(Debug, thiserror::Error)]
pub enum EtcdDataDirError {
    /// The manifest could not be read.
    #[error("failed to read manifest for {path:?}: {reason}")]
    Read {
        /// The manifest path.
        path: PathBuf,
        /// The error text.
        reason: String,
    },
    /// The manifest has no `etcd-data` host path volume.
    #[error("invalid etcd pod manifest")]
    Invalid,
}

/// Upstream's `getEtcdDataDir`: the local etcd's data directory from the configuration, or else
/// from the `etcd-data` volume of the static pod manifest.
pub fn etcd_data_dir(
    cfg: Option<&InitConfig>,
    manifest: &[u8],
    manifest_path: &Path,
) -> Result<String, EtcdDataDirError> {
    if let Some(local) = cfg.and_then(|c| c.cluster.etcd.local.as_ref()) {
        return Ok(local.data_dir.clone());
    }
    let doc = kubeadm_yaml::parse_documents(&String::from_utf8_lossy(manifest))
        .map_err(|e| EtcdDataDirError::Read {
            path: manifest_path.to_path_buf(),
            reason: e.to_string(),
        })?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let dir = doc
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some("etcd-data"))
        .and_then(|v| v.pointer("/hostPath/path"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if dir.is_empty() {
        return Err(EtcdDataDirError::Invalid);
    }
    Ok(dir.to_string())
}

/// Why `reset` leaves the etcd data directory it was given instead of emptying it (beyond
/// upstream, which empties whatever absolute path the `kubeadm-config` ConfigMap names: anyone able
/// to edit it could have the next `reset -f` empty `/`).
#[derive(Debug, thiserror::Error)]
pub enum DataDirRefusal {
    /// Not an absolute path.
    #[error("it is not an absolute path")]
    Relative,
    /// One of [`SYSTEM_DIRS`] (after `.`, `..` and symbolic links are resolved).
    #[error("it is a system directory")]
    System,
    /// Neither what the node's own `etcd.yaml` mounts nor a directory holding `member/`.
    #[error(
        "it is not the directory this node's etcd.yaml mounts as its data, and it holds no etcd member/ directory"
    )]
    NotEtcds,
}

/// The directories `reset` never empties as etcd's data: the root, the top-level directories of the
/// Filesystem Hierarchy Standard, the first level of `/usr` and `/var` that the system keeps its
/// programs, libraries, state and logs in, and kubeadm's and the kubelet's own directories (which
/// `reset` cleans by their own rules).
pub const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/bin",
    "/usr/include",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/local",
    "/usr/sbin",
    "/usr/share",
    "/usr/src",
    "/var",
    "/var/cache",
    "/var/lib",
    "/var/local",
    "/var/lock",
    "/var/log",
    "/var/mail",
    "/var/opt",
    "/var/run",
    "/var/spool",
    "/var/tmp",
    "/etc/kubernetes",
    "/var/lib/kubelet",
];

/// `path` with `.`, `..` and repeated or trailing slashes resolved as text (`..` above the root is
/// the root).
fn lexical_clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Whether `reset` may empty `dir` as etcd's data: an absolute path that is none of
/// [`SYSTEM_DIRS`] (as written or with its links resolved), and either the `etcd-data` host path of
/// the node's own manifest (`manifest_dir`) or a directory holding etcd's `member/`.
pub fn check_etcd_data_dir(
    fs: &dyn Fs,
    dir: &Path,
    manifest_dir: Option<&Path>,
) -> Result<(), DataDirRefusal> {
    if !dir.is_absolute() {
        return Err(DataDirRefusal::Relative);
    }
    let clean = lexical_clean(dir);
    let real = fs.canonicalize(dir).ok();
    let system = |p: &Path| SYSTEM_DIRS.iter().any(|s| Path::new(s) == p);
    if system(&clean) || real.as_deref().is_some_and(system) {
        return Err(DataDirRefusal::System);
    }
    let mounted = manifest_dir.is_some_and(|m| m.is_absolute() && lexical_clean(m) == clean);
    if mounted || fs.exists(&dir.join("member")) {
        Ok(())
    } else {
        Err(DataDirRefusal::NotEtcds)
    }
}

/// Where this node's etcd keeps its data, as `reset` finds it, and whether it may be emptied.
#[derive(Debug)]
pub(crate) enum EtcdDataDir {
    /// Unknown (upstream then assumes an external etcd).
    Unknown(EtcdDataDirError),
    /// Named, but not to be emptied.
    Refused(PathBuf, DataDirRefusal),
    /// To be emptied.
    Clean(PathBuf),
}

/// Finds the etcd data directory (upstream's `getEtcdDataDir`, from the configuration or else the
/// node's `etcd.yaml`) and checks it ([`check_etcd_data_dir`]). Prints nothing.
pub(crate) fn locate_etcd_data_dir(data: &ResetData) -> EtcdDataDir {
    let manifest_path = data.kubernetes_dir.join("manifests/etcd.yaml");
    let manifest = data.effects.fs.read(&manifest_path);
    let from_manifest = manifest
        .as_ref()
        .ok()
        .and_then(|bytes| etcd_data_dir(None, bytes, &manifest_path).ok());
    let has_local = data.cfg.as_ref().is_some_and(|c| c.cluster.etcd.local.is_some());
    let dir = if has_local {
        etcd_data_dir(data.cfg.as_ref(), b"", &manifest_path)
    } else {
        match &manifest {
            Ok(bytes) => etcd_data_dir(None, bytes, &manifest_path),
            Err(e) => Err(EtcdDataDirError::Read {
                path: manifest_path.clone(),
                reason: format!(
                    "open {}: {}",
                    manifest_path.display(),
                    kubeadm_api::gofmt::io_error(e)
                ),
            }),
        }
    };
    match dir {
        Err(e) => EtcdDataDir::Unknown(e),
        Ok(dir) => {
            let dir = PathBuf::from(dir);
            match check_etcd_data_dir(&*data.effects.fs, &dir, from_manifest.as_deref().map(Path::new)) {
                Ok(()) => EtcdDataDir::Clean(dir),
                Err(why) => EtcdDataDir::Refused(dir, why),
            }
        }
    }
}

/// The `remove-etcd-member` phase: adds the local etcd's data directory to the directories to
/// empty (when [`check_etcd_data_dir`] allows it; a warning says why not) and, with a
/// configuration from the cluster, removes this node's member from the etcd cluster (a failure
/// is only a warning, as upstream).
pub(crate) fn run_remove_etcd_member(data: &mut ResetData) -> Result<(), PhaseError> {
    let has_local = data.cfg.as_ref().is_some_and(|c| c.cluster.etcd.local.is_some());
    if !has_local {
        data.effects.reporter.warn(
            "removeetcdmember.go",
            "[reset] No kubeadm config, using etcd pod spec to get data directory",
        );
    }
    let dir = match locate_etcd_data_dir(data) {
        EtcdDataDir::Unknown(e) => {
            data.effects
                .reporter
                .info(1, "removeetcdmember.go", &format!("[reset] {e}"));
            data.say("[reset] No etcd config found. Assuming external etcd");
            data.say("[reset] Please, manually reset etcd to prevent further issues");
            return Ok(());
        }
        EtcdDataDir::Refused(dir, why) => {
            data.effects.reporter.warn(
                "removeetcdmember.go",
                &format!(
                    "[reset] Not deleting the contents of the etcd data directory {}: {why}",
                    kubeadm_api::gofmt::quote(&dir.display().to_string())
                ),
            );
            None
        }
        EtcdDataDir::Clean(dir) => Some(dir),
    };
    data.dirs_to_clean.extend(dir);
    if data.cfg.is_some() {
        if data.dry_run {
            data.say("[reset] Would remove the etcd member on this node from the etcd cluster");
        } else if let Err(e) = remove_stacked_etcd_member(data) {
            data.effects.reporter.warn(
                "removeetcdmember.go",
                &format!(
                    "[reset] Failed to remove etcd member: {e}, please manually remove this etcd member using etcdctl"
                ),
            );
        }
    }
    Ok(())
}

/// Why the etcd member could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveMemberError {
    /// No API client (the configuration came from somewhere else).
    #[error("no client to reach the cluster")]
    NoClient,
    /// No etcd client.
    #[error(transparent)]
    Client(#[from] EtcdClientError),
    /// An etcd call failed.
    #[error(transparent)]
    Etcd(#[from] EtcdError),
}

/// What to do with this node's member, given the members and the client's endpoints (the pure
/// part of upstream's `RemoveStackedEtcdMemberFromCluster`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberAction {
    /// It is the only member and the client reaches it through this node's URL: leave it.
    KeepLastMember,
    /// No member has this node's peer URL: it was removed already.
    AlreadyGone,
    /// Remove the member with this id.
    Remove(u64),
}

/// Decides what to do with the member of the node advertising `endpoint`.
pub fn member_action(
    members: &[Member],
    client_endpoints: &[String],
    endpoint: &ApiEndpoint,
) -> MemberAction {
    if members.len() == 1 && client_endpoints.contains(&client_url(endpoint)) {
        return MemberAction::KeepLastMember;
    }
    let peer_url = peer_url(endpoint);
    members
        .iter()
        .find(|m| m.peer_urls.first() == Some(&peer_url))
        .map_or(MemberAction::AlreadyGone, |m| MemberAction::Remove(m.id))
}

/// Upstream's `RemoveStackedEtcdMemberFromCluster`.
pub(crate) fn remove_stacked_etcd_member(data: &ResetData) -> Result<(), RemoveMemberError> {
    let (Some(cfg), Some(cluster)) = (data.cfg.as_ref(), data.cluster.as_deref()) else {
        return Err(RemoveMemberError::NoClient);
    };
    let log = |line: &str| data.effects.reporter.info(1, "etcd.go", line);
    let dir = Path::new(&cfg.cluster.certificates_dir);
    let etcd = client_from_cluster(cluster, dir, &data.effects.etcd, &log)?;
    let members = etcd.list_members()?;
    match member_action(&members, &etcd.endpoints(), &cfg.init.local_api_endpoint) {
        MemberAction::KeepLastMember => {
            data.effects.reporter.info(
                1,
                "local.go",
                "[etcd] This is the only remaining etcd member in the etcd cluster, skip removing it",
            );
            Ok(())
        }
        MemberAction::AlreadyGone => Ok(()),
        MemberAction::Remove(id) => {
            let left = etcd.remove_member(id)?;
            let names: Vec<&str> = left.iter().map(|m| m.name.as_str()).collect();
            data.effects.reporter.info(
                1,
                "local.go",
                &format!("[etcd] Updated etcd member list: {names:?}"),
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u64, ip: &str) -> Member {
        Member {
            id,
            name: format!("node-{id}"),
            peer_urls: vec![format!("https://{ip}:2380")],
            client_urls: vec![format!("https://{ip}:2379")],
        }
    }

    fn endpoint(ip: &str) -> ApiEndpoint {
        ApiEndpoint {
            advertise_address: ip.into(),
            bind_port: 6443,
        }
    }

    #[test]
    fn the_last_member_is_kept_only_when_reached_through_this_node() {
        let members = [member(7, "10.0.0.1")];
        let here = vec!["https://10.0.0.1:2379".to_string()];
        assert_eq!(
            member_action(&members, &here, &endpoint("10.0.0.1")),
            MemberAction::KeepLastMember
        );
        // One member, but the client reaches another address: upstream goes on and removes by peer URL.
        let elsewhere = vec!["https://10.0.0.9:2379".to_string()];
        assert_eq!(
            member_action(&members, &elsewhere, &endpoint("10.0.0.1")),
            MemberAction::Remove(7)
        );
    }

    #[test]
    fn a_member_among_several_is_removed_by_its_peer_url() {
        let members = [member(1, "10.0.0.1"), member(2, "10.0.0.2"), member(3, "fd00::3")];
        let eps: Vec<String> = members.iter().map(|m| m.client_urls[0].clone()).collect();
        assert_eq!(
            member_action(&members, &eps, &endpoint("10.0.0.2")),
            MemberAction::Remove(2)
        );
        assert_eq!(
            member_action(&members, &eps, &endpoint("10.0.0.4")),
            MemberAction::AlreadyGone
        );
        // IPv6 peer URLs are bracketed, as Go's JoinHostPort writes them.
        let v6 = [member(1, "10.0.0.1"), {
            let mut m = member(3, "x");
            m.peer_urls = vec!["https://[fd00::3]:2380".into()];
            m
        }];
        assert_eq!(
            member_action(&v6, &eps, &endpoint("fd00::3")),
            MemberAction::Remove(3)
        );
    }
}
