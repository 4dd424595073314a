//! What `reset` reads of the mount table and how it empties a directory around what is still
//! mounted in it: the mount points of a `/proc/mounts` or `/proc/self/mountinfo` text (their octal
//! escapes decoded), the order to unmount them in (deepest first), and a directory emptied without
//! ever descending into a mount point.
//!
//! Upstream unmounts in the table's order (a parent before the subPath mount inside it, so the
//! parent is still busy), compares the escaped names (`\040` for a space never matches), and then
//! removes the kubelet's directory through whatever is still mounted: a pod's NFS or CSI volume
//! loses its data on the shared storage.

use std::path::{Path, PathBuf};

use kubeadm_api::gofmt;
use kubeadm_effects::fs::Fs;

use crate::reset::ResetData;

/// Decodes the octal escapes the kernel writes in a mount table's paths (`\040` space, `\011` tab,
/// `\012` newline, `\134` backslash; any `\` and three octal digits). Anything else is kept as it is.
pub fn decode_mount_path(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = |b: u8| (b'0'..=b'7').contains(&b);
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..=i + 3].iter().all(|&b| octal(b)) {
            let value = bytes[i + 1..=i + 3]
                .iter()
                .fold(0u32, |v, &b| v * 8 + u32::from(b - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points of a mount table, decoded, in the table's order. A line of
/// `/proc/self/mountinfo` (`ID PARENT MAJ:MIN ROOT MOUNTPOINT … - TYPE SOURCE …`) gives its fifth
/// field, a line of `/proc/mounts` (`SOURCE MOUNTPOINT TYPE …`) its second.
pub fn mount_points(table: &str) -> Vec<PathBuf> {
    table
        .split('\n')
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let mountinfo = fields.len() > 5
                && fields[0].parse::<u64>().is_ok()
                && fields[1].parse::<u64>().is_ok()
                && fields.contains(&"-");
            let field = if mountinfo { fields[4] } else { *fields.get(1)? };
            (!field.is_empty()).then(|| PathBuf::from(decode_mount_path(field)))
        })
        .collect()
}

/// The mount points of `table` strictly below `dir`, in the order to unmount them: deepest first,
/// and of two mounts on one path the later (the one on top) first.
pub fn mounts_below(table: &str, dir: &Path) -> Vec<PathBuf> {
    let mut below: Vec<PathBuf> = mount_points(table)
        .into_iter()
        .filter(|m| m != dir && m.starts_with(dir))
        .rev()
        .collect();
    // Stable: equal depths keep the reversed table order.
    below.sort_by_key(|m| std::cmp::Reverse(m.components().count()));
    below
}

/// Empties `dir` (keeping it) except the mount points in `keep` and the directories leading to
/// them: an entry that is a mount point is left as it is, one that holds a mount point is emptied
/// around it. The paths left are returned. Stops at the first entry that cannot be removed.
pub fn clean_dir_around(fs: &dyn Fs, dir: &Path, keep: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut left = Vec::new();
    if !fs.exists(dir) {
        return Ok(left);
    }
    for name in fs.list_dir(dir)? {
        let path = dir.join(name);
        if keep.contains(&path) {
            left.push(path);
        } else if keep.iter().any(|k| k.starts_with(&path)) {
            left.extend(clean_dir_around(fs, &path, keep)?);
        } else {
            fs.remove_all(&path)?;
        }
    }
    Ok(left)
}

/// Empties one of reset's stateful directories (etcd's data, the kubelet's) around what is still
/// mounted below it, as the mount table says now (read again after the unmounts); with `warn`, each
/// mount point left is reported with its reason. A table that cannot be read leaves the real file
/// system's own guard: its `remove_all` does not cross into another file system.
pub(crate) fn empty_around_mounts(data: &ResetData, dir: &Path, warn: bool) -> std::io::Result<()> {
    let fs = &*data.effects.fs;
    let real = fs.canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let keep: Vec<PathBuf> = fs
        .read(&data.mounts_file)
        .map(|table| mount_points(&String::from_utf8_lossy(&table)))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| {
            // The table names real paths; the directory is listed through the name it was given.
            let below = m.strip_prefix(&real).ok()?;
            (!below.as_os_str().is_empty()).then(|| dir.join(below))
        })
        .collect();
    let left = clean_dir_around(fs, dir, &keep)?;
    if warn {
        for path in left {
            data.effects.reporter.warn(
                "reset.go",
                &format!(
                    "[reset] Not deleting {} or anything in it: it is still a mount point",
                    gofmt::quote(&path.display().to_string())
                ),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(decode_mount_path(r"/a\040b"), "/a b");
        assert_eq!(decode_mount_path(r"/t\011ab\012nl\134x"), "/t\tab\nnl\\x");
        // Not an escape: kept as written.
        assert_eq!(decode_mount_path(r"/a\04"), r"/a\04");
        assert_eq!(decode_mount_path(r"/a\9xy"), r"/a\9xy");
        assert_eq!(decode_mount_path(r"\"), r"\");
        assert_eq!(decode_mount_path("/plain"), "/plain");
    }

    #[test]
    fn both_table_formats_give_their_mount_points() {
        let mounts =
            "overlay / overlay rw 0 0\ntmpfs /var/lib/kubelet/pods/p/volumes/my\\040vol tmpfs rw 0 0\n";
        assert_eq!(
            mount_points(mounts),
            [
                PathBuf::from("/"),
                PathBuf::from("/var/lib/kubelet/pods/p/volumes/my vol")
            ]
        );
        let mountinfo = "22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw\n\
                         41 22 0:40 / /var/lib/kubelet/a\\040b rw - tmpfs tmpfs rw\n\
                         42 41 8:1 /srv/x /var/lib/kubelet/a\\040b/sub rw master:3 - ext4 /dev/sda1 rw\n";
        assert_eq!(
            mount_points(mountinfo),
            [
                PathBuf::from("/"),
                PathBuf::from("/var/lib/kubelet/a b"),
                PathBuf::from("/var/lib/kubelet/a b/sub"),
            ]
        );
    }

    #[test]
    fn deepest_mounts_are_unmounted_first() {
        let table = "tmpfs /var/lib/kubelet/pods/p/volumes/v tmpfs rw 0 0\n\
                     nfs /var/lib/kubelet/pods/p/volumes/v/sub/path nfs rw 0 0\n\
                     tmpfs /var/lib/kubelet tmpfs rw 0 0\n\
                     tmpfs /var/lib/kubelet-other/x tmpfs rw 0 0\n\
                     tmpfs /var/lib/kubelet/pods/q/volumes/a\\040b tmpfs rw 0 0\n\
                     bind /var/lib/kubelet/pods/p/volumes/v/sub tmpfs rw 0 0\n\
                     tmpfs2 /var/lib/kubelet/pods/p/volumes/v tmpfs rw 0 0\n";
        let order: Vec<String> = mounts_below(table, Path::new("/var/lib/kubelet"))
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            order,
            [
                "/var/lib/kubelet/pods/p/volumes/v/sub/path",
                "/var/lib/kubelet/pods/p/volumes/v/sub",
                "/var/lib/kubelet/pods/p/volumes/v",
                "/var/lib/kubelet/pods/q/volumes/a b",
                "/var/lib/kubelet/pods/p/volumes/v",
            ]
        );
    }
}
