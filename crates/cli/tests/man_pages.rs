//! The man pages `kubeadm-genman` writes: one per command our `--help` lists (walked from the
//! root, as cobra's `GenManTree` walks the tree: no page for `help` or a help topic), each with
//! every flag its help shows, in OPTIONS or OPTIONS INHERITED FROM PARENT COMMANDS, its examples
//! when it has some, and rendering with `man -l` (man-db) without a warning.
// Tests run the binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn kubeadm(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubeadm"))
        .args(args)
        .output()
        .expect("run kubeadm");
    assert!(out.status.success(), "kubeadm {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8 help")
}

/// The lines of a help text's section (`Flags:`), up to the next blank line.
fn section<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

/// The flag names (`--cert-dir`) of a help text's `Flags:` and `Global Flags:` sections.
fn help_flags(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    for title in ["Flags:", "Global Flags:"] {
        for line in section(help, title) {
            if let Some(name) = line.split_whitespace().find(|w| w.starts_with("--")) {
                out.push(name.trim_end_matches(',').to_string());
            }
        }
    }
    out
}

/// Every command path our help lists, the root's `help` aside, with its help text.
fn commands() -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(path) = queue.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = kubeadm(&args);
        for line in section(&help, "Available Commands:") {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                let mut next = path.clone();
                next.push(name.to_string());
                queue.push(next);
            }
        }
        out.push((path, help));
    }
    out
}

fn generate() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let man1 = dir.path().join("man1");
    let status = Command::new(env!("CARGO_BIN_EXE_kubeadm-genman"))
        .arg(&man1)
        .env("SOURCE_DATE_EPOCH", "1796169600")
        .status()
        .expect("run kubeadm-genman");
    assert!(status.success(), "kubeadm-genman failed");
    (dir, man1)
}

#[test]
fn every_command_has_a_page_with_its_flags_and_examples() {
    let (_dir, man1) = generate();
    let written: BTreeSet<String> = std::fs::read_dir(&man1)
        .expect("read man1")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let commands = commands();
    assert!(commands.len() > 100, "only {} commands walked", commands.len());
    let mut expected = BTreeSet::new();
    let mut failures = Vec::new();
    for (path, help) in &commands {
        let dashed: String = std::iter::once("kubeadm")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-");
        let file = format!("{dashed}.1");
        expected.insert(file.clone());
        let Ok(page) = std::fs::read_to_string(man1.join(&file)) else {
            failures.push(format!("{file}: missing"));
            continue;
        };
        let escaped = dashed.replace('-', "\\-");
        if !page.contains(&format!(".SH NAME\n{escaped} \\- ")) {
            failures.push(format!("{file}: no NAME line for {dashed}"));
        }
        if !page.contains(".TH \"") || !page.contains("\"Dec 2026\"") {
            failures.push(format!("{file}: no .TH header dated Dec 2026"));
        }
        let options = page.split(".SH ").find(|s| s.starts_with("OPTIONS\n"));
        let inherited = page
            .split(".SH ")
            .find(|s| s.starts_with("OPTIONS INHERITED FROM PARENT COMMANDS\n"));
        let flags_section: String = options.into_iter().chain(inherited).collect();
        for flag in help_flags(help) {
            let roff = format!("\\fB{}\\fR", flag.replace('-', "\\-"));
            if !flags_section.contains(&roff) {
                failures.push(format!("{file}: flag {flag} missing"));
            }
        }
        let has_examples = help.lines().any(|l| l == "Examples:");
        if has_examples != page.contains("\n.SH EXAMPLE\n") {
            failures.push(format!("{file}: examples in help {has_examples}, in page not"));
        }
        if !path.is_empty() && !page.contains(".SH SEE ALSO\n") {
            failures.push(format!("{file}: no SEE ALSO"));
        }
    }
    for extra in written.difference(&expected) {
        failures.push(format!("{extra}: a page for no listed command"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Pages whose command has examples exist (a walk that finds none would pass vacuously).
    assert!(
        commands
            .iter()
            .filter(|(_, h)| h.lines().any(|l| l == "Examples:"))
            .count()
            > 5
    );
}

fn man_available() -> bool {
    Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_page_renders_with_man_without_warnings() {
    assert!(
        man_available(),
        "`man` is missing: install Debian's man-db (.ci/run installs it) to check the man pages"
    );
    let (_dir, man1) = generate();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&man1)
        .expect("read man1")
        .map(|e| e.expect("entry").path())
        .collect();
    pages.sort();
    assert!(pages.len() > 100, "only {} pages", pages.len());
    let mut failures = Vec::new();
    for page in &pages {
        // Lines wrap where man chooses: compare with runs of white space as one space.
        let out = render(page).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "));
        let name = page.file_stem().expect("stem").to_string_lossy().into_owned();
        match out {
            Ok(text) if text.contains(&format!("NAME {name} - ")) && text.contains(" SYNOPSIS ") => {}
            Ok(text) => failures.push(format!(
                "{}: rendered without its NAME line:\n{text}",
                page.display()
            )),
            Err(e) => failures.push(format!("{}: {e}", page.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `man -l` of one page, plain text; an error with the exit code and standard error when man
/// fails or warns.
fn render(page: &Path) -> Result<String, String> {
    let out = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("LANG", "C.UTF-8")
        .env("MANWIDTH", "80")
        .env_remove("MAN_KEEP_FORMATTING")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .map_err(|e| format!("cannot run man: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        return Err(format!("man exited {}: {stderr}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
