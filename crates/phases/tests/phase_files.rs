//! The promise the README makes a newcomer: a phase kubeadm prints or takes lives in
//! `crates/phases/src/<workflow>/<phase>.rs` (dashes as underscores). The few phases that share a
//! file are listed here with that file, so a new phase without its own file fails this test until
//! it gets one or is listed.

use std::path::Path;

/// Top-level phases whose code is in a file named otherwise (none today).
const SHARED_FILES: &[(&str, &str, &str)] = &[];

fn check(workflow_dir: &str, phases: Vec<&'static str>, missing: &mut Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(workflow_dir);
    for name in phases {
        let file = SHARED_FILES
            .iter()
            .find(|(w, p, _)| *w == workflow_dir && *p == name)
            .map_or_else(|| name.replace('-', "_"), |(_, _, f)| (*f).to_string());
        let path = src.join(format!("{file}.rs"));
        if !path.is_file() {
            missing.push(format!("{workflow_dir} phase {name:?}: no {}", path.display()));
        }
    }
}

/// The names of a workflow's top-level phases (a name's use line may name an argument).
fn top<C>(phases: &[kubeadm_workflow::Phase<C>]) -> Vec<&'static str> {
    phases
        .iter()
        .map(|p| p.name.split_whitespace().next().unwrap_or(p.name))
        .collect()
}

#[test]
fn every_phase_has_its_file() {
    let mut missing = Vec::new();
    check(
        "init",
        top(&kubeadm_phases::init::tree::workflow().phases),
        &mut missing,
    );
    check(
        "join",
        top(&kubeadm_phases::join::tree::workflow().phases),
        &mut missing,
    );
    check(
        "reset",
        top(&kubeadm_phases::reset::tree::workflow().phases),
        &mut missing,
    );
    check(
        "upgrade/node",
        top(&kubeadm_phases::upgrade::node::tree::workflow().phases),
        &mut missing,
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
