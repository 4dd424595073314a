//! `kubeadm init` stopped dead at every file change and every API call in turn, then run again.
//!
//! The whole init workflow (preflight aside, as a re-run with `--ignore-preflight-errors=all` has it)
//! runs on fakes: files into a dry-run overlay, an in-memory API server. A crash point is one file
//! change (write, directory, removal, rename) or one API call: at crash point k, that operation
//! and everything after it fail, as if the process had been killed there (no clean-up runs: every
//! later file operation and API call fails too). Then the same init runs again on what was left,
//! and must finish; what it leaves must be what an uninterrupted run leaves: the same files with
//! the same modes (manifests and kubelet files byte for byte, key material aside), every
//! certificate signed by its CA and matching its key, the kubeconfig files' client certificates
//! signed by the cluster CA, and the same API objects (CA data aside).

use std::sync::atomic::Ordering;

mod common;
mod crash;
use crash::{CrashPoint, Node, comparable, file_problems, object_problems, objects, pki_problems, try_each};

#[test]
fn init_killed_at_any_point_finishes_when_run_again() {
    let reference = Node::new();
    let whole = CrashPoint::new(None);
    reference
        .init(&whole)
        .unwrap_or_else(|e| panic!("uninterrupted init: {e}"));
    let points = whole.count.load(Ordering::SeqCst);
    let (want_files, want_objects) = (comparable(&reference.files()), objects(&reference.cluster));
    assert!(
        pki_problems(&reference.files()).is_empty(),
        "{:?}",
        pki_problems(&reference.files())
    );
    assert!(
        want_files.len() > 25 && want_objects.len() > 20,
        "too little to compare"
    );

    // Each crash point on its own node.
    let failures = try_each("init (file changes and API calls)", points, |k| {
        let node = Node::new();
        let mut problems = Vec::new();
        if node.init(&CrashPoint::new(Some(k))).is_ok() {
            problems.push("the killed run succeeded".to_string());
        }
        node.cluster.restart();
        if let Err(e) = node.init(&CrashPoint::new(None)) {
            problems.push(format!("the run after it failed: {e}"));
            return problems;
        }
        let files = node.files();
        problems.extend(pki_problems(&files));
        problems.extend(file_problems(&want_files, &comparable(&files)));
        problems.extend(object_problems(&want_objects, &objects(&node.cluster)));
        problems
    });
    assert!(points > 60, "only {points} crash points");
    assert!(
        failures.is_empty(),
        "{} of {points} crash points:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
