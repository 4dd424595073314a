//! The users and groups of the `RootlessControlPlane` feature gate (upstream's `util/users`): one
//! system user and group per control-plane component (`kubeadm-etcd`, `kubeadm-kas`,
//! `kubeadm-kcm`, `kubeadm-ks`) and the group `kubeadm-sa-key-readers` (kube-apiserver and
//! kube-controller-manager), with IDs in the system range `/etc/login.defs` gives.
//!
//! Values in, values out: the texts of `/etc/login.defs`, `/etc/passwd` and `/etc/group` go in, the
//! new texts of the two files and the IDs come out; locking and writing them is the caller's. As
//! upstream, only `/etc/passwd` and `/etc/group` change (not `/etc/shadow` nor `/etc/gshadow`), an
//! existing user or group of one of these names is reused when it has the expected shape and
//! refused otherwise, and the error texts are upstream's.

use std::collections::BTreeMap;

/// `/etc/login.defs`.
pub const LOGIN_DEFS: &str = "/etc/login.defs";
/// `/etc/passwd`.
pub const PASSWD: &str = "/etc/passwd";
/// `/etc/group`.
pub const GROUP: &str = "/etc/group";

/// The user (and group) etcd runs as.
pub const ETCD_USER: &str = "kubeadm-etcd";
/// The user (and group) kube-apiserver runs as.
pub const KUBE_APISERVER_USER: &str = "kubeadm-kas";
/// The user (and group) kube-controller-manager runs as.
pub const KUBE_CONTROLLER_MANAGER_USER: &str = "kubeadm-kcm";
/// The user (and group) kube-scheduler runs as.
pub const KUBE_SCHEDULER_USER: &str = "kubeadm-ks";
/// The group allowed to read the service-account private key.
pub const SA_KEY_READERS_GROUP: &str = "kubeadm-sa-key-readers";

/// The shell of the users kubeadm creates (no login).
const NO_SHELL: &str = "/bin/false";

/// The users kubeadm manages, in upstream's order.
pub const USERS: [&str; 4] = [
    ETCD_USER,
    KUBE_APISERVER_USER,
    KUBE_CONTROLLER_MANAGER_USER,
    KUBE_SCHEDULER_USER,
];

/// The groups kubeadm manages and their members, in upstream's order.
pub const GROUPS: [(&str, &[&str]); 5] = [
    (ETCD_USER, &[ETCD_USER]),
    (KUBE_APISERVER_USER, &[KUBE_APISERVER_USER]),
    (KUBE_CONTROLLER_MANAGER_USER, &[KUBE_CONTROLLER_MANAGER_USER]),
    (KUBE_SCHEDULER_USER, &[KUBE_SCHEDULER_USER]),
    (
        SA_KEY_READERS_GROUP,
        &[KUBE_APISERVER_USER, KUBE_CONTROLLER_MANAGER_USER],
    ),
];

/// The system ID ranges (`SYS_UID_MIN` … `SYS_GID_MAX`), inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `SYS_UID_MIN`.
    pub min_uid: i64,
    /// `SYS_UID_MAX`.
    pub max_uid: i64,
    /// `SYS_GID_MIN`.
    pub min_gid: i64,
    /// `SYS_GID_MAX`.
    pub max_gid: i64,
}

/// Upstream's defaults when `/etc/login.defs` is missing or silent: 100–999 for both.
pub const DEFAULT_LIMITS: Limits = Limits {
    min_uid: 100,
    max_uid: 999,
    min_gid: 100,
    max_gid: 999,
};

/// Why the users and groups could not be added, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsersError {
    /// A `SYS_*` value of `/etc/login.defs` is not a number (`line` counts from 0, as upstream's).
    #[error("could not parse value for {key} at line {line}: {source}")]
    LoginDefs {
        /// The key.
        key: &'static str,
        /// The line, from 0.
        line: usize,
        /// strconv's error.
        source: ParseIntError,
    },
    /// A line of `/etc/passwd` or `/etc/group` does not parse.
    #[error("could not parse {}: {reason}", kubeadm_api::gofmt::quote(path))]
    Parse {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A user or group of a managed name exists with another shape.
    #[error("error validating existing users and groups: {0}")]
    Validate(String),
    /// The range has too few free IDs.
    #[error("could not allocate {total} IDs based on existing entries in the range: {min} - {max}")]
    Exhausted {
        /// How many were needed.
        total: usize,
        /// The range's start.
        min: i64,
        /// The range's end.
        max: i64,
    },
}

/// Go's `*strconv.NumError` of `ParseInt(s, 10, 64)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("strconv.ParseInt: parsing {}: {}", kubeadm_api::gofmt::quote(.input), if *.range { "value out of range" } else { "invalid syntax" })]
pub struct ParseIntError {
    /// The text.
    pub input: String,
    /// Out of range (otherwise: not a number).
    pub range: bool,
}

fn parse_int(s: &str) -> Result<i64, ParseIntError> {
    s.parse::<i64>().map_err(|e| ParseIntError {
        input: s.to_string(),
        range: matches!(
            e.kind(),
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
        ),
    })
}

/// The ID ranges `/etc/login.defs` sets (`None`: the file could not be read, upstream's defaults).
/// A line counts when it starts with the key; the rest, trimmed, is the value.
pub fn parse_login_defs(text: Option<&str>) -> Result<Limits, UsersError> {
    let mut l = DEFAULT_LIMITS;
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Ok(l);
    };
    for (i, line) in text.split('\n').enumerate() {
        let slots: [(&'static str, &mut i64); 4] = [
            ("SYS_UID_MIN", &mut l.min_uid),
            ("SYS_UID_MAX", &mut l.max_uid),
            ("SYS_GID_MIN", &mut l.min_gid),
            ("SYS_GID_MAX", &mut l.max_gid),
        ];
        for (key, slot) in slots {
            if let Some(rest) = line.strip_prefix(key) {
                *slot = parse_int(rest.trim()).map_err(|source| UsersError::LoginDefs {
                    key,
                    line: i,
                    source,
                })?;
            }
        }
    }
    Ok(l)
}

/// One line of `/etc/passwd` or `/etc/group`, the fields kubeadm looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    id: i64,
    /// A user's primary group.
    gid: i64,
    /// A group's members, joined by `,` as in the file.
    members: String,
    /// A user's shell.
    shell: String,
}

fn parse_entries(path: &str, text: &str, user: bool) -> Result<Vec<Entry>, UsersError> {
    let fields_wanted = if user { 7 } else { 4 };
    let err = |reason: String| UsersError::Parse {
        path: path.to_string(),
        reason,
    };
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(':').collect();
        if f.len() != fields_wanted {
            return Err(err(format!(
                "entry must have {fields_wanted} fields separated by ':', got {} at line {i}: {line}",
                f.len()
            )));
        }
        let id = parse_int(f[2]).map_err(|e| err(format!("error parsing id at line {i}: {e}")))?;
        let mut e = Entry {
            name: f[0].to_string(),
            id,
            gid: 0,
            members: String::new(),
            shell: String::new(),
        };
        if user {
            e.gid = parse_int(f[3]).map_err(|e| err(format!("error parsing GID at line {i}: {e}")))?;
            e.shell = f[6].to_string();
        } else {
            e.members = f[3].to_string();
        }
        out.push(e);
    }
    Ok(out)
}

/// The IDs of the managed users and groups, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsersAndGroups {
    /// User name → UID.
    pub users: BTreeMap<String, i64>,
    /// Group name → GID.
    pub groups: BTreeMap<String, i64>,
}

impl UsersAndGroups {
    /// The UID of `name` (0 when unknown, which cannot happen for a managed name).
    pub fn uid(&self, name: &str) -> i64 {
        self.users.get(name).copied().unwrap_or_default()
    }

    /// The GID of `name`.
    pub fn gid(&self, name: &str) -> i64 {
        self.groups.get(name).copied().unwrap_or_default()
    }
}

/// What adding the users and groups gives: the files' new texts (equal to the old ones when
/// nothing was missing), the IDs, and the names added (sorted, for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// `/etc/passwd`'s new text.
    pub passwd: String,
    /// `/etc/group`'s new text.
    pub group: String,
    /// The IDs of every managed user and group.
    pub ids: UsersAndGroups,
    /// Users added.
    pub new_users: Vec<String>,
    /// Groups added.
    pub new_groups: Vec<String>,
}

/// Adds the managed users and groups missing from `passwd` and `group` (texts of the files at
/// `passwd_path` and `group_path`, named in errors) with IDs from `limits`' system ranges,
/// after checking the existing ones.
pub fn add(
    limits: Limits,
    passwd_path: &str,
    passwd: &str,
    group_path: &str,
    group: &str,
) -> Result<Added, UsersError> {
    let users = parse_entries(passwd_path, passwd, true)?;
    let groups = parse_entries(group_path, group, false)?;
    let (users_missing, groups_missing) = validate(&users, &groups, limits).map_err(UsersError::Validate)?;
    let uids = allocate(&users, limits.min_uid, limits.max_uid, users_missing.len())?;
    let gids = allocate(&groups, limits.min_gid, limits.max_gid, groups_missing.len())?;

    let mut ids = UsersAndGroups::default();
    for g in &groups {
        if GROUPS.iter().any(|(n, _)| *n == g.name) {
            ids.groups.entry(g.name.clone()).or_insert(g.id);
        }
    }
    let mut group_lines = Vec::new();
    for ((name, members), gid) in groups_missing.iter().zip(&gids) {
        ids.groups.insert(name.to_string(), *gid);
        group_lines.push(format!("{name}:x:{gid}:{}", members.join(",")));
    }
    for u in &users {
        if USERS.contains(&u.name.as_str()) {
            ids.users.entry(u.name.clone()).or_insert(u.id);
        }
    }
    let mut user_lines = Vec::new();
    for (name, uid) in users_missing.iter().zip(&uids) {
        // Every managed user has the group of its name: existing (first of that name) or new.
        let gid = groups
            .iter()
            .find(|g| g.name == *name)
            .map(|g| g.id)
            .or_else(|| ids.groups.get(*name).copied())
            .unwrap_or_default();
        ids.users.insert(name.to_string(), *uid);
        user_lines.push(format!("{name}:x:{uid}:{gid}:::{NO_SHELL}"));
    }
    let mut new_users: Vec<String> = users_missing.iter().map(|s| s.to_string()).collect();
    new_users.sort();
    let mut new_groups: Vec<String> = groups_missing.iter().map(|(n, _)| n.to_string()).collect();
    new_groups.sort();
    Ok(Added {
        passwd: append_lines(passwd, &user_lines),
        group: append_lines(group, &group_lines),
        ids,
        new_users,
        new_groups,
    })
}

type Missing = (Vec<&'static str>, Vec<(&'static str, &'static [&'static str])>);

/// Upstream's `validateEntries`: the managed users and groups to create, or why an existing one
/// is refused.
fn validate(users: &[Entry], groups: &[Entry], l: Limits) -> Result<Missing, String> {
    let q = kubeadm_api::gofmt::quote;
    let mut users_missing = Vec::new();
    for name in USERS {
        let Some(user) = users.iter().find(|u| u.name == name) else {
            users_missing.push(name);
            continue;
        };
        outside_range("UID", user, l.min_uid, l.max_uid)?;
        if user.shell != NO_SHELL {
            return Err(format!(
                "user {} has unexpected shell {}; expected {}",
                q(&user.name),
                q(&user.shell),
                q(NO_SHELL)
            ));
        }
        match groups.iter().find(|g| g.id == user.gid) {
            Some(g) if g.name != name => {
                return Err(format!(
                    "user {} has GID {} but the group with that GID is not named {}",
                    q(name),
                    g.id,
                    q(name)
                ));
            }
            Some(_) => {}
            None => {
                return Err(format!(
                    "could not find group with GID {} for user {}",
                    user.gid,
                    q(&user.name)
                ));
            }
        }
    }
    let mut groups_missing = Vec::new();
    for (name, members) in GROUPS {
        let Some(group) = groups.iter().find(|g| g.name == name) else {
            groups_missing.push((name, members));
            continue;
        };
        // Upstream's text says "user" and "UID range" for a group too.
        outside_range("GID", group, l.min_gid, l.max_gid)?;
        let want = members.join(",");
        if want != group.members {
            return Err(format!(
                "expected users {} for group {}; got {}",
                q(&want),
                q(name),
                q(&group.members)
            ));
        }
    }
    Ok((users_missing, groups_missing))
}

/// Upstream's refusal of an existing entry whose ID is outside `min..=max`.
fn outside_range(kind: &str, e: &Entry, min: i64, max: i64) -> Result<(), String> {
    if e.id < min || e.id > max {
        return Err(format!(
            "{kind} {} for user {} is outside the system UID range: {min} - {max}",
            e.id,
            kubeadm_api::gofmt::quote(&e.name)
        ));
    }
    Ok(())
}

/// The `total` lowest IDs in `min..=max` no entry has.
fn allocate(entries: &[Entry], min: i64, max: i64, total: usize) -> Result<Vec<i64>, UsersError> {
    if total == 0 {
        return Ok(Vec::new());
    }
    let mut ids = Vec::with_capacity(total);
    let mut id = min;
    while id <= max {
        if !entries.iter().any(|e| e.id == id) {
            ids.push(id);
            if ids.len() == total {
                return Ok(ids);
            }
        }
        id += 1;
    }
    Err(UsersError::Exhausted { total, min, max })
}

fn append_lines(text: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return text.to_string();
    }
    let mut out = text.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&lines.join("\n"));
    out.push('\n');
    out
}

/// Removes the managed users from `passwd` and the managed groups from `group` (every line that
/// starts with one of the names and `:`); returns the new texts.
pub fn remove(passwd: &str, group: &str) -> (String, String) {
    let names: Vec<&str> = GROUPS.iter().map(|(n, _)| *n).collect();
    (remove_lines(passwd, &USERS), remove_lines(group, &names))
}

fn remove_lines(text: &str, names: &[&str]) -> String {
    text.split('\n')
        .filter(|line| {
            !names
                .iter()
                .any(|n| line.strip_prefix(n).is_some_and(|rest| rest.starts_with(':')))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "users_tests.rs"]
mod tests;
