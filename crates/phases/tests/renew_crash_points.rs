//! `kubeadm certs renew` stopped dead at every file change in turn, then run again.
//!
//! The node is what `kubeadm init` leaves (made on fakes, as in `init_crash_points.rs`). A
//! renewal (`all`, one certificate, one kubeconfig file) is killed at its k-th file change (that
//! change and everything after it fail, no clean-up runs), then run again on what was left: it
//! must finish and leave what an uninterrupted renewal leaves: every file whole with its mode,
//! every renewed certificate new (the CAs, `sa.*` and `kubelet.conf` untouched), signed by its CA
//! and matching its key, the kubeconfig files' client certificates signed by the cluster CA.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kubeadm_core::pki::{EtcdMode, KeyAlgorithm};
use kubeadm_phases::renewal::{RenewRequest, renew_certificates};

mod common;
mod crash;
use crash::{
    CrashFs, CrashPoint, KEYS, NOW, Node, comparable, file_problems, node_with_files, pki_problems, try_each,
};

type Files = BTreeMap<PathBuf, (u32, Vec<u8>)>;

/// `kubeadm certs renew <which>` on `node` until `crash` kills it, if it does; what it printed.
fn renew(node: &Node, which: &str, crash: &Arc<CrashPoint>) -> Result<String, String> {
    let fs = CrashFs(node.overlay.clone(), crash.clone());
    let etcd = EtcdMode::Local {
        server_cert_sans: Vec::new(),
        peer_cert_sans: Vec::new(),
    };
    let req = RenewRequest {
        which,
        kubernetes_dir: Path::new("/etc/kubernetes"),
        cert_dir: Path::new("/etc/kubernetes/pki"),
        etcd: &etcd,
        key_algorithm: KeyAlgorithm::Rsa2048,
        now: *NOW,
    };
    let mut serial = 0x5eed_u64;
    let mut random = || {
        serial += 1;
        serial
    };
    let mut out = String::new();
    renew_certificates(&fs, &**KEYS, &req, &mut random, &mut out)
        .map(|()| out)
        .map_err(|e| e.to_string())
}

/// What a renewal of `which` must replace (its certificates, kubeconfig files), what it may
/// replace (their keys: a new key may equal an old one, as the test's keys come from a pool), and
/// what it must leave as `init` wrote it (the rest).
fn renewal_problems(which: &str, before: &Files, after: &Files) -> Vec<String> {
    enum Want {
        New,
        Any,
        Same,
    }
    let want_for = |path: &Path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let under_pki = path.starts_with("/etc/kubernetes/pki");
        let selected = match which {
            "all" => true,
            "apiserver" => {
                under_pki && !path.starts_with("/etc/kubernetes/pki/etcd") && name.starts_with("apiserver.")
            }
            file => name == file,
        };
        let ca_or_sa = matches!(
            name,
            "ca.crt" | "ca.key" | "front-proxy-ca.crt" | "front-proxy-ca.key"
        ) || name.starts_with("sa.");
        match (selected, under_pki, name.rsplit('.').next()) {
            (true, true, Some("crt")) if !ca_or_sa => Want::New,
            (true, true, Some("key")) if !ca_or_sa => Want::Any,
            (true, false, _)
                if matches!(name, "admin.conf" | "controller-manager.conf" | "scheduler.conf") =>
            {
                Want::New
            }
            _ => Want::Same,
        }
    };
    let mut problems = Vec::new();
    let mut count = 0;
    for (path, (_, old)) in before {
        let Some((_, new)) = after.get(path) else {
            problems.push(format!("{} gone", path.display()));
            continue;
        };
        match want_for(path) {
            Want::New if new == old => problems.push(format!("{} not renewed", path.display())),
            Want::New => count += 1,
            Want::Same if new != old => problems.push(format!("{} changed", path.display())),
            Want::Same | Want::Any => {}
        }
    }
    let want = match which {
        // 7 certificates, 3 kubeconfig files.
        "all" => 10,
        _ => 1,
    };
    if problems.is_empty() && count != want {
        problems.push(format!("{count} files renewed, want {want}"));
    }
    problems
}

#[test]
fn renewal_killed_at_any_point_finishes_when_run_again() {
    let inited = Node::new();
    inited
        .init(&CrashPoint::new(None))
        .unwrap_or_else(|e| panic!("init: {e}"));
    let before = inited.files();
    let mut tried = 0;
    for which in ["all", "apiserver", "admin.conf"] {
        let reference = node_with_files(&before);
        let whole = CrashPoint::new(None);
        let out = renew(&reference, which, &whole).unwrap_or_else(|e| panic!("renew {which}: {e}"));
        assert!(
            out.contains(" renewed\n") && !out.contains("MISSING!"),
            "renew {which}:\n{out}"
        );
        let problems = renewal_problems(which, &before, &reference.files());
        assert!(problems.is_empty(), "uninterrupted renew {which}: {problems:?}");
        let points = whole.count.load(Ordering::SeqCst);
        let want = comparable(&reference.files());
        let failures = try_each(&format!("certs renew {which} (file changes)"), points, |k| {
            let node = node_with_files(&before);
            let mut problems = Vec::new();
            if renew(&node, which, &CrashPoint::new(Some(k))).is_ok() {
                problems.push("the killed run succeeded".to_string());
            }
            if let Err(e) = renew(&node, which, &CrashPoint::new(None)) {
                problems.push(format!("the run after it failed: {e}"));
                return problems;
            }
            let files = node.files();
            problems.extend(pki_problems(&files));
            problems.extend(file_problems(&want, &comparable(&files)));
            problems.extend(renewal_problems(which, &before, &files));
            problems
        });
        assert!(
            failures.is_empty(),
            "renew {which}: {} of {points} crash points:\n{}",
            failures.len(),
            failures.join("\n")
        );
        tried += points;
    }
    assert!(tried >= 20, "only {tried} crash points");
}
