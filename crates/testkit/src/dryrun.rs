//! Masks for comparing `kubeadm init --dry-run` outputs of upstream and ours: what differs from run
//! to run (upstream's temporary folder, the CA, token expiry, random tokens and keys) and the lines
//! that name where upstream's dry run put its files (ours keeps them in memory).

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

/// From the dry-run file listing to the join command: the files, every API call and object, the
/// phase messages and the final text. Lines that name where files went are left out: upstream
/// writes everything to a temporary folder, ours keeps it in memory and names the real paths.
pub fn dry_run_tail(text: &str) -> String {
    let masked = mask_dry_run(text);
    masked
        .lines()
        .skip_while(|l| !l.starts_with("[dryrun] The certificates or kubeconfig files"))
        .filter(|l| {
            !l.contains("DIR")
                && !l.starts_with("[wait-control-plane] Waiting for the kubelet")
                && !l.starts_with("  sudo cp -i ")
        })
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
/// the join command, with what differs from run to run masked, without the lines that name the
/// folders the files went to (upstream's dry run writes them into a temporary folder, ours keeps
/// them in memory) and without the system verification report (the host's).
pub fn dry_run_whole(text: &str) -> String {
    mask_random(&mask_dry_run(text))
        .lines()
        .skip_while(|l| !l.starts_with("[init] Using Kubernetes version"))
        .filter(|l| {
            !l.contains("DIR")
                && !l.contains('\x1b')
                && !l.starts_with("[preflight] The system verification failed")
                && !l.starts_with("[wait-control-plane] Waiting for the kubelet")
                && !l.starts_with("  sudo cp -i ")
                && !(l.contains("folder \"") || l.contains("to file \"") || l.contains("local etcd in \""))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}
