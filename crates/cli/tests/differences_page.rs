//! `docs/differences.md` against `tests/corpus/deliberate-differences.txt`: the page's section
//! "Checked by the differential tests" has one item (`### Title [name]`) per entry of the file
//! (`[name]`), and no other; an entry's `flag:` rules name flags its item must mention. So the page
//! users read and the file the differential tests obey cannot drift apart.
// Tests read the repository's files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::Path;

const SECTION: &str = "## Checked by the differential tests";

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file's entries: name → the flags its `flag:` rules add (`--NAME`).
fn entries(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            assert!(
                out.insert(name.to_string(), Vec::new()).is_none(),
                "entry [{name}] twice"
            );
            current = Some(name.to_string());
        } else if let Some(rule) = line.strip_prefix("flag:") {
            let name = current.as_ref().expect("a flag: rule before any entry");
            let flag = rule.split_whitespace().last().expect("a flag name");
            out.entry(name.clone()).or_default().push(flag.to_string());
        }
    }
    out
}

/// The page's items of the checked section: name (the heading's last `[...]`) → the item's text.
fn items(page: &str) -> Result<BTreeMap<String, String>, String> {
    let section = page
        .split("\n## ")
        .find(|s| s.starts_with(SECTION.trim_start_matches("## ")))
        .ok_or_else(|| format!("no {SECTION:?} section"))?;
    let mut out = BTreeMap::new();
    for item in section.split("\n### ").skip(1) {
        let heading = item.lines().next().unwrap_or_default();
        let name = heading
            .strip_suffix(']')
            .and_then(|h| h.rsplit_once(" ["))
            .map(|(_, n)| n.to_string())
            .ok_or_else(|| format!("item {heading:?} does not end with its entry's name: [name]"))?;
        if out.insert(name.clone(), item.to_string()).is_some() {
            return Err(format!("two items for [{name}]"));
        }
    }
    Ok(out)
}

/// What differs between the file and the page, one line each.
fn drift(file: &str, page: &str) -> Vec<String> {
    let entries = entries(file);
    let items = match items(page) {
        Ok(items) => items,
        Err(e) => return vec![format!("docs/differences.md: {e}")],
    };
    let mut out = Vec::new();
    for (name, flags) in &entries {
        match items.get(name) {
            None => out.push(format!(
                "[{name}] of deliberate-differences.txt has no item on the page"
            )),
            Some(text) => {
                for flag in flags {
                    if !text.contains(flag.as_str()) {
                        out.push(format!("the page's item [{name}] does not mention {flag}"));
                    }
                }
            }
        }
    }
    for name in items.keys() {
        if !entries.contains_key(name) {
            out.push(format!(
                "the page's item [{name}] is no entry of deliberate-differences.txt"
            ));
        }
    }
    out
}

#[test]
fn the_page_lists_every_deliberate_difference_and_no_other() {
    let file = read("tests/corpus/deliberate-differences.txt");
    let page = read("docs/differences.md");
    assert!(entries(&file).len() >= 6, "the file's entries were not found");
    let problems = drift(&file, &page);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check itself: an entry or an item removed, renamed or added is found.
#[test]
fn drift_is_found_both_ways() {
    let file = "[a]\nreason: x\nexit-3: y\n\n[b]\nreason: z\nflag: certs x --new-flag\n";
    let page = "# T\n\n## Checked by the differential tests\n\nintro\n\n### A [a]\n\ntext\n\n\
                ### B [b]\n\nuses --new-flag\n\n## Other\n\n### C\n";
    assert_eq!(drift(file, page), Vec::<String>::new());
    assert_eq!(
        drift(file, &page.replace("### A [a]", "### A [c]")),
        [
            "[a] of deliberate-differences.txt has no item on the page",
            "the page's item [c] is no entry of deliberate-differences.txt"
        ]
    );
    assert_eq!(
        drift(file, &page.replace("uses --new-flag", "uses it")),
        ["the page's item [b] does not mention --new-flag"]
    );
    assert_eq!(
        drift(&file.replace("[a]", "[d]"), page).len(),
        2,
        "an entry renamed in the file"
    );
    assert!(drift(file, &page.replace("### A [a]", "### A")).len() == 1);
}
