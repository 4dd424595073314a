//! Masks for comparing `kubeadm init --dry-run` outputs of upstream and ours: what differs from run
//! to run (upstream's temporary folder, the CA, token expiry, random tokens and keys) and the places
//! the lines name for the files (upstream's dry run writes them into a temporary folder, ours keeps
//! them in memory and names where they would go): the place is masked, the line kept.

/// Masks what differs from run to run: upstream's dry-run folder, the CA, the token expiry and
/// the CA hash.
pub fn mask_dry_run(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = line.to_string();
        if let Some(at) = l.find("/etc/kubernetes/tmp/kubeadm-init-dryrun") {
            let end = l[at..].find(['"', ' ']).map_or(l.len(), |e| at + e);
            let tail = l[at..end].split('/').skip(5).collect::<Vec<_>>().join("/");
            l = format!(
                "{}DIR{}{}",
                &l[..at],
                if tail.is_empty() { "" } else { "/" },
                tail
            ) + &l[end..];
        }
        for key in ["certificate-authority-data: ", "expiration: "] {
            if let Some(at) = l.find(key) {
                l = format!("{}{key}MASKED", &l[..at]);
            }
        }
        if let Some(at) = l.find("sha256:") {
            l = format!("{}sha256:HASH{}", &l[..at], &l[(at + 71).min(l.len())..]);
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Upstream's two lines about its temporary folder (after [`mask_dry_run`]), which ours, writing
/// none, does not print.
const UPSTREAM_FOLDER_LINES: [&str; 2] = [
    "[dryrun] Wrote certificates, kubeconfig files and control plane manifests to the \"DIR\" directory",
    "[dryrun] Please examine the \"DIR\" directory for details about what would be written",
];

/// A line naming where files go, with the place masked and the rest kept: the folder of
/// `… folder "P"`, `… local etcd in "P"` and `… from directory "P"` becomes `<dir>`, and of
/// `… to file "P/NAME"` and `  sudo cp -i P/NAME …` only NAME is kept. Upstream's dry run names its
/// temporary folder there (`DIR` after [`mask_dry_run`]), ours the real places (the configured
/// certificate folder, /etc/kubernetes/manifests, /var/lib/kubelet). `None` for upstream's lines
/// about its temporary folder.
pub fn mask_place(line: &str) -> Option<String> {
    if UPSTREAM_FOLDER_LINES.contains(&line) {
        return None;
    }
    let base = |path: &str| path.rsplit('/').next().unwrap_or_default().to_string();
    for (marker, keep_name) in [
        ("folder \"", false),
        ("local etcd in \"", false),
        ("from directory \"", false),
        ("to file \"", true),
    ] {
        let Some(at) = line.find(marker) else { continue };
        let start = at + marker.len();
        let Some(len) = line[start..].find('"') else {
            continue;
        };
        let path = &line[start..start + len];
        let masked = if keep_name {
            format!("<dir>/{}", base(path))
        } else {
            "<dir>".to_string()
        };
        return Some(format!("{}{masked}{}", &line[..start], &line[start + len..]));
    }
    if let Some((path, tail)) = line
        .strip_prefix("  sudo cp -i ")
        .and_then(|rest| rest.split_once(' '))
    {
        return Some(format!("  sudo cp -i <dir>/{} {tail}", base(path)));
    }
    Some(line.to_string())
}

/// From the dry-run file listing to the join command: the files, every API call and object, the
/// phase messages and the final text, with the places files go masked ([`mask_place`]).
pub fn dry_run_tail(text: &str) -> String {
    let masked = mask_dry_run(text);
    masked
        .lines()
        .skip_while(|l| !l.starts_with("[dryrun] The certificates or kubeconfig files"))
        .filter_map(mask_place)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Masks the random bootstrap tokens (`[a-z0-9]{6}.[a-z0-9]{16}`, their Secrets' names and
/// data) and a generated certificate key (64 hex digits), for runs that do not fix them.
pub fn mask_random(text: &str) -> String {
    let is_token_char = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("token-id: ") || trimmed.starts_with("token-secret: ") {
            let key = trimmed.split(':').next().unwrap_or_default();
            out.push_str(&format!("{}{key}: MASKED\n", &line[..line.len() - trimmed.len()]));
            continue;
        }
        let b = line.as_bytes();
        let mut l = String::new();
        let mut i = 0;
        while i < b.len() {
            let token = i + 23 <= b.len()
                && b[i..i + 6].iter().all(|&c| is_token_char(c))
                && b[i + 6] == b'.'
                && b[i + 7..i + 23].iter().all(|&c| is_token_char(c))
                && (i == 0 || !is_token_char(b[i - 1]))
                && b.get(i + 23).is_none_or(|&c| !is_token_char(c));
            let key = i + 64 <= b.len()
                && b[i..i + 64]
                    .iter()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
                && b.get(i + 64).is_none_or(|c| !c.is_ascii_alphanumeric());
            let id = line[i..].starts_with("bootstrap-token-")
                && i + 22 <= b.len()
                && b[i + 16..i + 22].iter().all(|&c| is_token_char(c))
                && b.get(i + 22).is_none_or(|&c| !is_token_char(c));
            if token {
                l.push_str("TOKEN");
                i += 23;
            } else if key {
                l.push_str("CERTIFICATE-KEY");
                i += 64;
            } else if id {
                l.push_str("bootstrap-token-ID");
                i += 22;
            } else {
                let c = line[i..].chars().next().unwrap_or(' ');
                l.push(c);
                i += c.len_utf8();
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// A whole `init --dry-run` output, for comparing runs driven by flags: from the version line to
/// the join command, with what differs from run to run masked, the places files go masked
/// ([`mask_place`]) and without the system verification report (the host's: the coloured lines
/// and the line that says it failed).
pub fn dry_run_whole(text: &str) -> String {
    mask_random(&mask_dry_run(text))
        .lines()
        .skip_while(|l| !l.starts_with("[init] Using Kubernetes version"))
        .filter(|l| !l.contains('\x1b') && !l.starts_with("[preflight] The system verification failed"))
        .filter_map(mask_place)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const UPSTREAM: &str = "[init] Using Kubernetes version: v1.25.16
[certs] Using certificateDir folder \"/etc/kubernetes/tmp/kubeadm-init-dryrun1899654202\"
[kubelet-start] Writing kubelet configuration to file \"/etc/kubernetes/tmp/kubeadm-init-dryrun1899654202/config.yaml\"
[etcd] Would ensure that \"/var/lib/etcd\" directory is present
[dryrun] Wrote certificates, kubeconfig files and control plane manifests to the \"/etc/kubernetes/tmp/kubeadm-init-dryrun1899654202\" directory
[dryrun] The certificates or kubeconfig files would not be printed due to their sensitive nature
[dryrun] Please examine the \"/etc/kubernetes/tmp/kubeadm-init-dryrun1899654202\" directory for details about what would be written
  sudo cp -i /etc/kubernetes/tmp/kubeadm-init-dryrun1899654202/admin.conf $HOME/.kube/config
";

    const OURS: &str = "[init] Using Kubernetes version: v1.25.16
[certs] Using certificateDir folder \"/etc/kubernetes/pki\"
[kubelet-start] Writing kubelet configuration to file \"/var/lib/kubelet/config.yaml\"
[etcd] Would ensure that \"/var/lib/etcd\" directory is present
[dryrun] The certificates or kubeconfig files would not be printed due to their sensitive nature
  sudo cp -i /etc/kubernetes/admin.conf $HOME/.kube/config
";

    #[test]
    fn places_are_masked_and_lines_kept() {
        assert_eq!(dry_run_whole(UPSTREAM), dry_run_whole(OURS));
        assert_eq!(dry_run_whole(OURS).lines().count(), 6);
        assert!(dry_run_whole(OURS).contains("to file \"<dir>/config.yaml\"\n"));
        assert_eq!(dry_run_tail(UPSTREAM), dry_run_tail(OURS));
    }

    #[test]
    fn a_different_line_or_file_name_still_differs() {
        for (from, to) in [
            (
                "/var/lib/kubelet/config.yaml",
                "/var/lib/kubelet/kubeadm-flags.env",
            ),
            ("Using certificateDir folder", "Using certificate folder"),
            ("/var/lib/etcd", "/var/lib/etcd2"),
            ("admin.conf $HOME", "super-admin.conf $HOME"),
        ] {
            let changed = OURS.replace(from, to);
            assert_ne!(dry_run_whole(UPSTREAM), dry_run_whole(&changed), "{to}");
        }
        // A line of upstream's about its folder that ours would print is not hidden from it.
        let extra = format!("{OURS}[dryrun] Please examine the \"/etc/kubernetes\" directory for details\n");
        assert_ne!(dry_run_whole(UPSTREAM), dry_run_whole(&extra));
    }
}
