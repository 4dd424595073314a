//! Differential fuzzing against upstream kubeadm v1.25.16: the configs of `tests/corpus/` are mutated
//! (byte flips, control characters, Unicode oddities, lines deleted, duplicated or re-indented,
//! scalars swapped or replaced by edge values, anchors and aliases, extra documents, truncation) and
//! fed to the commands that read a config (`config images list`, `config migrate`, `token create
//! --dry-run` and, as root, chrooted with `--rootfs`: `init --dry-run`, `init phase control-plane
//! all`, `init phase etcd local`); flags of the config commands get random values. Upstream and ours
//! run each case side by side, each in a folder of its own, and must agree on the verdict, the exit
//! code, the error's words and the output (for the phases, every file written, byte for byte, with
//! its mode), except where `tests/corpus/deliberate-differences.txt` says otherwise. Standard
//! error is compared line by line both ways (`same_lines`): a line of ours upstream does not print
//! fails as a line of upstream's missing from ours does.
//! Upstream goes through a file's documents in Go's random map order, so with several documents
//! which one's warnings and error come first varies between its runs; such a case that differs is
//! run through upstream again (up to 8 times) and ours must match one of its runs.
//!
//! Deterministic: case `i` of seed `s` is always the same input. `KUBEADM_DIFFUZZ_CASES` (default
//! 2000), `KUBEADM_DIFFUZZ_SEED` (default 18) and `KUBEADM_DIFFUZZ_FIRST` (the first case's
//! number, default 0: `FIRST=i CASES=i+1` reruns case `i` alone) change the run; a failing case is written to
//! `target/tmp/diffuzz-failures/` and printed with both outputs, and the run fails.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use kubeadm_testkit::dryrun::dry_run_whole;
use kubeadm_testkit::oracle::{
    Allowance, Difference, Run, diff, differences, expected_code, mask_tokens, run, stderr_lines,
    upstream_kubeadm,
};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// splitmix64: small, deterministic, and ours.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Characters yaml.v2's reader or scanner treats specially, as UTF-8 (some deliberately malformed).
const ODD_BYTES: &[&[u8]] = &[
    b"\x00",
    b"\x01",
    b"\x08",
    b"\x0b",
    b"\x0c",
    b"\x0d",
    b"\x1b",
    b"\x1f",
    b"\x7f",
    b"\t",
    b"\xc2\x80",
    b"\xc2\x85",
    b"\xc2\x9f",
    b"\xc2\xa0",
    b"\xe2\x80\xa8",
    b"\xe2\x80\xa9",
    b"\xef\xbb\xbf",
    b"\xef\xbf\xbe",
    b"\xef\xbf\xbf",
    b"\xef\xbf\xbd",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\x80",
    b"\xff",
    b"\xc3",
    b"\xf4\x90\x80\x80",
    b"\xf0\x9f\x98\x80",
    b"\xe2\x80\x8b",
];

/// Scalars that test the edges of kubeadm's parsing: numbers, YAML 1.1 words, versions, URLs.
const EDGE_SCALARS: &[&str] = &[
    "99999999999999999999",
    "-1",
    "0",
    "1e400",
    "0x1F",
    "0o17",
    "017",
    ".inf",
    "-.nan",
    "1_000",
    "yes",
    "no",
    "on",
    "off",
    "~",
    "null",
    "\"\"",
    "''",
    "[]",
    "{}",
    "true",
    "\"\\x01\"",
    "v1.25.16-",
    "v1.25.16+",
    "v1.25.16-+",
    "v1.25.016",
    "v1.25.16-01",
    "v1.25.16-rc.1+b",
    "1.25.16 ",
    "v1.25",
    "v1.25.16.1",
    "stable-1.25",
    "ci/latest",
    "release/v1.25.2",
    "v1.23.0",
    "unix://%00",
    "unix:///a%zz",
    "unix://a b/x",
    "unix:///run/x#%zz",
    "https://[::1",
    "https://h:x",
    "https://u%zz@h:1",
    "https://[fe80::1%25en0]:2379",
    ":x",
    "10.0.0.1:2379",
    "tcp://1.2.3.4:5",
    "/var/run/crio/crio.sock",
    "unix:x.sock",
    "10.0.0.0/8",
    "fd00::/108",
    "::1",
    "1.2.3.4:99999",
    "&a x",
    "*a",
    "!!str 5",
    "!!int x",
    "!!binary aGk=",
    "\"\\u00e9\"",
    "'it''s'",
    "|\n  x",
    "abcdef.0123456789abcdef",
    "ABCDEF.0123456789abcdef",
    "24h",
    "1.5h",
    "-5m",
    "10ns",
    "x",
];

/// A mutation of a config file, by name (for the failure report) and effect.
fn mutate(rng: &mut Rng, mut text: Vec<u8>, seeds: &[(String, Vec<u8>)]) -> (Vec<u8>, Vec<String>) {
    let mut applied = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len();
        let kind = rng.below(13);
        let name = match kind {
            0 if !text.is_empty() => {
                let i = rng.below(text.len());
                text[i] = rng.next() as u8;
                "byte flip"
            }
            1 => {
                let i = rng.below(text.len() + 1);
                let odd = rng.pick(ODD_BYTES);
                text.splice(i..i, odd.iter().copied());
                "odd character"
            }
            2 if n > 1 => {
                lines.remove(rng.below(n));
                text = lines.join(&b'\n');
                "line deleted"
            }
            3 => {
                let i = rng.below(n);
                let l = lines[i].clone();
                lines.insert(i, l);
                text = lines.join(&b'\n');
                "line duplicated"
            }
            4 => {
                let i = rng.below(n);
                let l = &mut lines[i];
                match rng.below(3) {
                    0 => {
                        const INDENTS: [&[u8]; 3] = [b"  ", b" ", b"\t"];
                        l.splice(0..0, rng.pick(&INDENTS).iter().copied());
                    }
                    1 => {
                        let spaces = l.iter().take_while(|&&b| b == b' ').count().min(2);
                        l.drain(..spaces);
                    }
                    _ => l.retain(|&b| b != b' '),
                }
                text = lines.join(&b'\n');
                "line re-indented"
            }
            5 | 6 => {
                // A scalar value replaced by an edge value.
                let with_value: Vec<usize> = (0..n).filter(|&i| value_at(&lines[i]).is_some()).collect();
                if with_value.is_empty() {
                    continue;
                }
                let i = *rng.pick(&with_value);
                let at = value_at(&lines[i]).unwrap_or(0);
                let edge = rng.pick(EDGE_SCALARS).as_bytes().to_vec();
                lines[i].truncate(at);
                lines[i].extend(edge);
                text = lines.join(&b'\n');
                "edge scalar"
            }
            7 => {
                // Two scalar values swapped.
                let with_value: Vec<usize> = (0..n).filter(|&i| value_at(&lines[i]).is_some()).collect();
                if with_value.len() < 2 {
                    continue;
                }
                let (a, b) = (*rng.pick(&with_value), *rng.pick(&with_value));
                let (va, vb) = (value_at(&lines[a]).unwrap_or(0), value_at(&lines[b]).unwrap_or(0));
                let (sa, sb) = (lines[a][va..].to_vec(), lines[b][vb..].to_vec());
                lines[a].truncate(va);
                lines[a].extend(sb);
                lines[b].truncate(vb);
                lines[b].extend(sa);
                text = lines.join(&b'\n');
                "scalars swapped"
            }
            8 => {
                // An anchor on one value and an alias (or merge) elsewhere.
                let with_value: Vec<usize> = (0..n).filter(|&i| value_at(&lines[i]).is_some()).collect();
                if with_value.len() < 2 {
                    continue;
                }
                let (a, b) = (*rng.pick(&with_value), *rng.pick(&with_value));
                let va = value_at(&lines[a]).unwrap_or(0);
                lines[a].splice(va..va, b"&x ".iter().copied());
                let vb = value_at(&lines[b]).unwrap_or(0);
                lines[b].truncate(vb);
                lines[b].extend_from_slice(if rng.chance(80) { b"*x" } else { b"*nope" });
                text = lines.join(&b'\n');
                "anchor and alias"
            }
            9 => {
                let i = rng.below(n + 1);
                const SEPARATORS: [&[u8]; 5] = [b"---", b"--- # c", b"---x", b"...", b"--- a: 1"];
                let sep = *rng.pick(&SEPARATORS);
                lines.insert(i, sep.to_vec());
                text = lines.join(&b'\n');
                "separator inserted"
            }
            10 => {
                let other = &rng.pick(seeds).1;
                text.extend_from_slice(b"\n---\n");
                text.extend_from_slice(other);
                "document appended"
            }
            11 if !text.is_empty() => {
                text.truncate(rng.below(text.len()));
                "truncated"
            }
            12 => {
                let i = rng.below(n);
                const KEYS: [&[u8]; 4] = [b"foo: 1", b"<<: {a: 1}", b"? [a]\n: b", b"\"k\\x01\": v"];
                let key = rng.pick(&KEYS);
                let indent: Vec<u8> = lines[i].iter().take_while(|&&b| b == b' ').copied().collect();
                let mut l = indent;
                l.extend_from_slice(key);
                lines.insert(i, l);
                text = lines.join(&b'\n');
                "key inserted"
            }
            _ => continue,
        };
        applied.push(name.to_string());
    }
    (text, applied)
}

/// Where the value of a `key: value` (or `- value`) line starts, when it has one on the line.
fn value_at(line: &[u8]) -> Option<usize> {
    if line.trim_ascii_start().starts_with(b"#") {
        return None;
    }
    let colon = line.windows(2).position(|w| w == b": ").map(|i| i + 2);
    let dash = line
        .iter()
        .position(|&b| b != b' ')
        .filter(|&i| line[i..].starts_with(b"- "))
        .map(|i| i + 2);
    colon.or(dash).filter(|&i| i < line.len())
}

/// Random flag values: edge values, mutated edge values, random bytes (never NUL: argv cannot hold it).
fn flag_value(rng: &mut Rng) -> String {
    let mut v: Vec<u8> = match rng.below(4) {
        0 => rng.pick(EDGE_SCALARS).as_bytes().to_vec(),
        1 => rng
            .pick(&[
                "v1.25.3",
                "1.25.16",
                "stable-1",
                "my.reg:5000/k8s",
                "PublicKeysECDSA=true",
                "json",
                "yaml",
                "text",
                "kubeproxy.config.k8s.io/v1alpha1",
            ])
            .as_bytes()
            .to_vec(),
        2 => (0..rng.below(12)).map(|_| 0x20 + rng.below(95) as u8).collect(),
        _ => (0..rng.below(8)).map(|_| 1 + rng.below(255) as u8).collect(),
    };
    if rng.chance(30) && !v.is_empty() {
        let i = rng.below(v.len());
        v[i] = 1 + rng.below(255) as u8;
    }
    String::from_utf8_lossy(&v).replace('\0', "")
}

/// What a case's run leaves to compare when both accept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// Standard output, random tokens masked.
    Plain,
    /// `init --dry-run`'s whole output, with [`dry_run_whole`]'s masks.
    DryRun,
    /// Standard output, and every file written under the root (`init phase … --rootfs`).
    Files,
}

/// One case: the arguments (`{F}` for the config file, `{R}` for the side's own root: each binary
/// runs in a folder of its own) and the file's bytes, if any.
struct Case {
    args: Vec<String>,
    file: Option<Vec<u8>>,
    what: String,
    output: Output,
}

/// The commands that read a config file, with what to compare; `rootfs` ones need root.
fn config_command(rng: &mut Rng, rootfs: bool) -> (Vec<String>, Output) {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let chrooted = |words: &[&str]| {
        let mut a = s(&["--rootfs", "{R}"]);
        a.extend(s(words));
        a.extend(s(&["--config", "/config.yaml"]));
        a
    };
    match rng.below(if rootfs { 16 } else { 11 }) {
        0..=2 => (s(&["config", "images", "list", "--config", "{F}"]), Output::Plain),
        3 => (
            s(&["config", "images", "list", "-o", "yaml", "--config", "{F}"]),
            Output::Plain,
        ),
        4..=7 => (s(&["config", "migrate", "--old-config", "{F}"]), Output::Plain),
        8..=10 => (
            s(&["token", "create", "--dry-run", "--config", "{F}"]),
            Output::Plain,
        ),
        11 | 12 => (
            chrooted(&["init", "phase", "control-plane", "all"]),
            Output::Files,
        ),
        13 => (chrooted(&["init", "phase", "etcd", "local"]), Output::Files),
        _ => {
            // Preflight's findings are the host's (and, for upstream, its chroot's): skipped.
            let mut a = chrooted(&["init", "--dry-run"]);
            a.push("--skip-phases=preflight".into());
            (a, Output::DryRun)
        }
    }
}

fn make_case(seed: u64, index: u64, seeds: &[(String, Vec<u8>)], rootfs: bool) -> Case {
    let mut rng = Rng::new(seed, index);
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    if rng.chance(15) {
        // Flags of the config commands.
        let mut args = match rng.below(4) {
            0 | 1 => {
                let mut a = s(&["config", "images", "list"]);
                for _ in 0..1 + rng.below(2) {
                    let flag = *rng.pick(&[
                        "--kubernetes-version",
                        "--image-repository",
                        "--feature-gates",
                        "-o",
                        "--allow-missing-template-keys",
                    ]);
                    a.push(format!("{flag}={}", flag_value(&mut rng)));
                }
                a
            }
            2 => {
                let which = *rng.pick(&["init-defaults", "join-defaults"]);
                s(&["config", "print", which, "--component-configs"])
                    .into_iter()
                    .chain([flag_value(&mut rng)])
                    .collect()
            }
            _ => s(&["config", "migrate", "--old-config"])
                .into_iter()
                .chain([flag_value(&mut rng)])
                .collect(),
        };
        if args.iter().any(|a| a == "--old-config") && args.last().is_some_and(|a| a.is_empty()) {
            args.pop();
        }
        let what = format!("flags {args:?}");
        return Case {
            args,
            file: None,
            what,
            output: Output::Plain,
        };
    }
    let (name, text) = rng.pick(seeds);
    let (bytes, applied) = mutate(&mut rng, text.clone(), seeds);
    let (args, output) = config_command(&mut rng, rootfs);
    let what = format!("{name} + {}", applied.join(", "));
    Case {
        args,
        file: Some(bytes),
        what,
        output,
    }
}

/// How many more times upstream runs a case with several documents that differs.
const UPSTREAM_RERUNS: usize = 8;

/// Why ours and upstream's runs of one case differ, if they do in a way the list does not allow.
fn compare(
    up: &Run,
    us: &Run,
    file: &str,
    rules: &[kubeadm_testkit::oracle::Difference],
    output: Output,
) -> Option<String> {
    let rule = |kind: Allowance, text: &str| {
        rules
            .iter()
            .find(|r| r.allowance == kind && text.contains(r.text.as_str()))
    };
    if up.code != 0 && us.code == 0 && rule(Allowance::Accept, &up.stderr).is_some() {
        return None;
    }
    if up.code == 0 && us.code != 0 && rule(Allowance::Refuse, &us.stderr).is_some() {
        return None;
    }
    if us.code != expected_code(up) {
        // Upstream's message (its last line before the stack-trace hint) names the class, so
        // different refusals with the same codes are not merged.
        let said = stderr_lines(&up.stderr)
            .into_iter()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or_default();
        return Some(format!(
            "exit {} (want {}; upstream {}): upstream said {said:?}",
            us.code,
            expected_code(up),
            up.code
        ));
    }
    if up.code == 0 {
        let (want, got) = match output {
            Output::DryRun => (dry_run_whole(&up.stdout), dry_run_whole(&us.stdout)),
            Output::Plain | Output::Files => (mask_tokens(&up.stdout), mask_tokens(&us.stdout)),
        };
        if want != got {
            let lines: Vec<String> = diff(&want, &got).lines().take(12).map(str::to_string).collect();
            return Some(format!("stdout differs:\n{}", lines.join("\n")));
        }
    }
    same_lines(&up.stderr, &us.stderr, file, rules)
}

/// Whether upstream's and our standard error say the same, both ways: each line of upstream's
/// pairs with one of ours (equal once ours' place in the file is left out, or as a rule of the list
/// pairs them), and each of ours left over is allowed by a `place:` rule.
fn same_lines(up: &str, us: &str, file: &str, rules: &[Difference]) -> Option<String> {
    let ours: Vec<String> = stderr_lines(us)
        .iter()
        .map(|l| without_locations(l, file))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut used = vec![false; ours.len()];
    // The first of our lines not yet paired that `fits`; taken.
    let mut take = |fits: &dyn Fn(&str) -> bool| -> bool {
        match (0..ours.len()).find(|&i| !used[i] && fits(&ours[i])) {
            Some(i) => {
                used[i] = true;
                true
            }
            None => false,
        }
    };
    let lines = upstream_lines(up);
    for (at, line) in lines.iter().enumerate() {
        let line = line.clone();
        let repeated = rules.iter().any(|r| {
            r.allowance == Allowance::Repeat
                && found(&pattern(&r.text), &line).is_some_and(|(_, end)| {
                    let said = &line[end..];
                    // Said before in the same words, or the error another line ends with.
                    lines[..at].contains(&line)
                        || (!said.is_empty()
                            && lines.iter().any(|other| *other != line && other.ends_with(said)))
                })
        });
        if repeated {
            // Upstream says it twice (a warning, then the error; or the strict check of its
            // config pass, then of its component-config pass): ours once, or, where ours also
            // checks twice (`config migrate`'s init and join passes), twice: a line of ours that
            // says it again pairs with the repeat.
            match strict_warning(&line) {
                Some((gvk, phrases)) => {
                    for p in phrases {
                        let want = if p.starts_with("key ") {
                            format!("{p} already set in map")
                        } else {
                            format!("{p} in {gvk}")
                        };
                        take(&|o: &str| o == want);
                    }
                }
                None => {
                    take(&|o: &str| o == line);
                }
            }
            continue;
        }
        if rules
            .iter()
            .any(|r| r.allowance == Allowance::Omit && found(&pattern(&r.text), &line).is_some())
        {
            continue;
        }
        if let Some((gvk, phrases)) = strict_warning(&line) {
            // A strict-decoding warning (Go's type dump): ours warns of each unknown field (with
            // the document's kind) and each repeated key on a line of its own, with its place.
            if phrases.is_empty() {
                return Some(format!("a strict-decoding warning naming nothing: {line:?}"));
            }
            for p in phrases {
                let want = if p.starts_with("key ") {
                    format!("{p} already set in map")
                } else {
                    format!("{p} in {gvk}")
                };
                if !take(&|o: &str| o == want) {
                    return Some(format!("missing our warning {want:?} (upstream: {line:?})"));
                }
            }
            continue;
        }
        if let Some(r) = rules
            .iter()
            .find(|r| r.allowance == Allowance::Key && line.contains(r.text.as_str()))
        {
            // Upstream's words from the rule's last (`: `-separated) part on: the end of our line.
            let last = r.text.rsplit(": ").next().unwrap_or("");
            let i = line.find(r.text.as_str()).unwrap_or(0) + r.text.len() - last.len();
            let said = line[i..].trim_end();
            // yaml.v2 joins the errors of one document on a line (`key "a" already set in
            // map, unknown field "b"`); ours gives each its own line.
            for part in joined_errors(said) {
                if !take(&|o: &str| o.ends_with(part)) {
                    return Some(format!("missing the key phrase {part:?} (upstream: {line:?})"));
                }
            }
            continue;
        }
        if take(&|o: &str| o == line) {
            continue;
        }
        let worded: Vec<&Difference> = rules
            .iter()
            .filter(|r| r.allowance == Allowance::Message && found(&pattern(&r.text), &line).is_some())
            .collect();
        if !worded.is_empty() {
            // The same line, but for the words a rule names (the first rule whose wording ours
            // has: several may name one message of upstream's).
            let paired = worded.iter().any(|r| {
                let want = with_our_words(&line, r);
                take(&|o: &str| matches(&want, o, true) == Some(o.len()))
            });
            if !paired {
                return Some(format!(
                    "missing our wording of upstream's line {line:?} ({})",
                    worded
                        .iter()
                        .map(|r| format!("{:?} => {:?}", r.text, r.ours))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ));
            }
            continue;
        }
        // Where we deliberately refuse more (a `refuse` rule), our list of errors holds
        // upstream's, then ours: `[a, b]` against `[a, b, c]`.
        let more = rules
            .iter()
            .any(|r| r.allowance == Allowance::Refuse && us.contains(r.text.as_str()));
        if let Some(l) = line.strip_suffix(']').filter(|l| more && l.starts_with('[')) {
            let head = format!("{l}, ");
            if take(&|o: &str| o.starts_with(&head) && o.ends_with(']')) {
                continue;
            }
        }
        return Some(format!("missing upstream's line {line:?}"));
    }
    for (line, _) in ours.iter().zip(&used).filter(|(_, u)| !**u) {
        // Where a field upstream's message names is in the file (its place left out above).
        let allowed = rules.iter().any(|r| {
            r.allowance == Allowance::Place
                && line.strip_prefix(r.text.as_str()).is_some_and(|field| {
                    !field.is_empty() && stderr_lines(up).iter().any(|l| l.contains(&format!("{field}: ")))
                })
        });
        if !allowed {
            return Some(format!("a line of ours upstream does not print: {line:?}"));
        }
    }
    None
}

/// Upstream's standard error as lines to compare (klog headers and the lines about fetching a
/// version left out, as `stderr_lines` does), with yaml.v2's list of errors (`yaml: unmarshal
/// errors:` and a line `  line N: …` per error) joined onto the line it continues.
fn upstream_lines(up: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in stderr_lines(up) {
        if line.trim().is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if line.starts_with("  line ") && last.contains("yaml: unmarshal errors:") => {
                if !last.ends_with(':') {
                    last.push(',');
                }
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => out.push(line),
        }
    }
    out
}

/// A strict-decoding warning of upstream's (`error unmarshaling configuration
/// schema.GroupVersionKind{Group:"G", Version:"V", Kind:"K"}: strict decoding error: unknown field
/// "a", key "b" already set in map`): the kind as `G/V, Kind=K` and each phrase.
fn strict_warning(line: &str) -> Option<(String, Vec<String>)> {
    let (head, errors) = line.split_once("}: strict decoding error: ")?;
    let dump = head.split_once("schema.GroupVersionKind{")?.1;
    let field = |name: &str| -> String {
        dump.split(", ")
            .find_map(|f| f.strip_prefix(&format!("{name}:\"")))
            .map(|v| v.trim_end_matches('"').to_string())
            .unwrap_or_default()
    };
    let gvk = format!("{}/{}, Kind={}", field("Group"), field("Version"), field("Kind"));
    let mut phrases = Vec::new();
    let mut rest = errors;
    while let Some(i) = ["unknown field \"", "key \""]
        .iter()
        .filter_map(|w| rest.find(w))
        .min()
    {
        let phrase: String = rest[i..].split_inclusive('"').take(2).collect();
        rest = &rest[i + phrase.len()..];
        phrases.push(phrase);
    }
    Some((gvk, phrases))
}

/// A piece of a rule's template: words as they are, `{n}` a number, `{q}` a Go-quoted string,
/// `{l}` yaml.v2's `line N: ` or nothing, `{*}` any text.
#[derive(Debug, Clone)]
enum Piece {
    Words(String),
    Number,
    Quoted,
    Line,
    Any,
}

fn pattern(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next = ["{n}", "{q}", "{l}", "{*}"]
            .iter()
            .filter_map(|w| rest.find(w))
            .min();
        match next {
            Some(0) => {
                out.push(match &rest[..3] {
                    "{n}" => Piece::Number,
                    "{q}" => Piece::Quoted,
                    "{l}" => Piece::Line,
                    _ => Piece::Any,
                });
                rest = &rest[3..];
            }
            Some(i) => {
                out.push(Piece::Words(rest[..i].to_string()));
                rest = &rest[i..];
            }
            None => {
                out.push(Piece::Words(rest.to_string()));
                rest = "";
            }
        }
    }
    out
}

/// The length of a match of `p` at the start of `s` (to its end when `whole`).
fn matches(p: &[Piece], s: &str, whole: bool) -> Option<usize> {
    let Some((first, more)) = p.split_first() else {
        return (!whole || s.is_empty()).then_some(0);
    };
    let then = |n: usize| matches(more, &s[n..], whole).map(|m| n + m);
    match first {
        Piece::Words(w) => s.starts_with(w.as_str()).then(|| then(w.len())).flatten(),
        Piece::Number => {
            let digits = s.bytes().take_while(u8::is_ascii_digit).count();
            (1..=digits).rev().find_map(then)
        }
        Piece::Quoted => {
            let b = s.as_bytes();
            if b.first() != Some(&b'"') {
                return None;
            }
            let mut i = 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return then(i + 1),
                    _ => i += 1,
                }
            }
            None
        }
        Piece::Line => {
            let line = s
                .strip_prefix("line ")
                .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
                .filter(|r| r.len() + "line ".len() < s.len())
                .and_then(|r| r.strip_prefix(": "))
                .map(|r| s.len() - r.len());
            line.and_then(then).or_else(|| then(0))
        }
        // Last in a template, to the end of the text; else as little as lets the rest match.
        Piece::Any if more.is_empty() => then(s.len()),
        Piece::Any => (0..=s.len()).filter(|&i| s.is_char_boundary(i)).find_map(then),
    }
}

/// Where `p` first matches in `s`: start and end.
fn found(p: &[Piece], s: &str) -> Option<(usize, usize)> {
    (0..s.len())
        .filter(|&i| s.is_char_boundary(i))
        .find_map(|i| matches(p, &s[i..], false).map(|n| (i, i + n)))
}

/// What our line must be where upstream printed `line` and a `message:` rule applies: upstream's
/// line with the words the rule names replaced by ours.
fn with_our_words(line: &str, rule: &Difference) -> Vec<Piece> {
    let (start, end) = found(&pattern(&rule.text), line).unwrap_or((0, 0));
    let mut out = vec![Piece::Words(line[..start].to_string())];
    out.extend(pattern(&rule.ours));
    out.push(Piece::Words(line[end..].to_string()));
    out
}

/// The errors yaml.v2 and the strict decoder join with ", " on one line, apart.
fn joined_errors(phrase: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = phrase;
    loop {
        let next = ["unknown field ", "key ", "line "]
            .iter()
            .filter_map(|w| rest.find(&format!(", {w}")))
            .min();
        match next {
            Some(i) => {
                parts.push(&rest[..i]);
                rest = &rest[i + 2..];
            }
            None => {
                parts.push(rest);
                return parts;
            }
        }
    }
}

/// `text` without the places ours adds to messages (deliberately): `FILE:L:C: `, `FILE: line L,
/// column C: ` and `FILE: `.
fn without_locations(text: &str, file: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(file) {
        out.push_str(&rest[..i]);
        let after = &rest[i + file.len()..];
        let skip = |s: &str| s.trim_start_matches(|c: char| c.is_ascii_digit()).to_string();
        let line_col = after
            .strip_prefix(':')
            .map(skip)
            .and_then(|s| s.strip_prefix(':').map(skip))
            .and_then(|s| s.strip_prefix(": ").map(str::to_string));
        let words = after
            .strip_prefix(": line ")
            .map(skip)
            .and_then(|s| s.strip_prefix(", column ").map(skip))
            .and_then(|s| s.strip_prefix(": ").map(str::to_string));
        let tail = line_col
            .or(words)
            .or_else(|| after.strip_prefix(": ").map(str::to_string));
        match tail {
            Some(t) => rest = &rest[rest.len() - t.len()..],
            None => {
                out.push_str(file);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The class of a failure, for grouping the report: the reason without numbers and without the
/// values quoted inside the lines it quotes (`\"…\"`), so that each wording is a class of its own.
fn class(why: &str) -> String {
    let mut out = String::new();
    let mut inner = false;
    let mut chars = why.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'"') => {
                chars.next();
                inner = !inner;
                out.push('"');
            }
            '\\' => {
                if let Some(next) = chars.next()
                    && !inner
                {
                    out.push(c);
                    out.push(next);
                }
            }
            _ if inner || c.is_ascii_digit() => {}
            c => out.push(c),
        }
    }
    out.chars().take(240).collect()
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_configs_and_flags_behave_like_upstream() {
    let cases = env_number("KUBEADM_DIFFUZZ_CASES", 2000);
    let seed = env_number("KUBEADM_DIFFUZZ_SEED", 18);
    let first = env_number("KUBEADM_DIFFUZZ_FIRST", 0);
    let rules = differences();
    let mut seeds = Vec::new();
    for dir in ["valid", "invalid", "v1beta2", "warnings", "stricter"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus().join(dir))
            .expect("corpus dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for f in files {
            let name = format!("{dir}/{}", f.file_name().expect("name").to_string_lossy());
            seeds.push((name, std::fs::read(&f).expect("seed")));
        }
    }
    assert!(seeds.len() > 50, "only {} seeds", seeds.len());
    // The chrooted commands (`--rootfs`) need root; without it, the config commands alone.
    let rootfs = kubeadm_testkit::rootfs::is_root();
    let failures_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diffuzz-failures");
    let _ = std::fs::remove_dir_all(&failures_dir);
    let next = AtomicUsize::new(first as usize);
    let failures: Mutex<BTreeMap<String, (u64, String, u64)>> = Mutex::new(BTreeMap::new());
    let counts = Mutex::new((0u64, 0u64, 0u64)); // (both accept, both refuse, failures)
    let started = std::time::Instant::now();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let dir = tempfile::tempdir().expect("tmp");
                // Each binary in a folder of its own: the chrooted commands write there.
                let (up_dir, us_dir) = (dir.path().join("up"), dir.path().join("us"));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as u64;
                    if i >= cases {
                        break;
                    }
                    // A sign of life on long runs.
                    if i > first && (i - first).is_multiple_of(5000) {
                        eprintln!("diffuzz: case {i} of {cases} after {:.0?}", started.elapsed());
                    }
                    let case = make_case(seed, i, &seeds, rootfs);
                    for side in [&up_dir, &us_dir] {
                        let _ = std::fs::remove_dir_all(side);
                        std::fs::create_dir(side).expect("case dir");
                        if let Some(bytes) = &case.file {
                            std::fs::write(side.join("config.yaml"), bytes).expect("write case");
                        }
                    }
                    let args_in = |side: &Path| -> Vec<String> {
                        let file = side.join("config.yaml");
                        case.args
                            .iter()
                            .map(|a| {
                                a.replace("{F}", &file.to_string_lossy())
                                    .replace("{R}", &side.to_string_lossy())
                            })
                            .collect()
                    };
                    let (up_args, us_args) = (args_in(&up_dir), args_in(&us_dir));
                    let up_args: Vec<&str> = up_args.iter().map(String::as_str).collect();
                    let us_args: Vec<&str> = us_args.iter().map(String::as_str).collect();
                    // Upstream's messages name its own folder: read as if it were ours.
                    let up_run = || {
                        let r = run(&upstream_kubeadm(), &up_args, &up_dir, &[]);
                        let (from, to) = (up_dir.to_string_lossy(), us_dir.to_string_lossy());
                        Run {
                            stdout: r.stdout.replace(from.as_ref(), &to),
                            stderr: r.stderr.replace(from.as_ref(), &to),
                            code: r.code,
                        }
                    };
                    let (up, us) = std::thread::scope(|s| {
                        let up = s.spawn(up_run);
                        let us = run_limited(&ours(), &us_args, &us_dir);
                        (up.join().expect("upstream run"), us)
                    });
                    // How our messages name the file: chrooted, as the command was given it.
                    let file = if case.args.iter().any(|a| a == "{R}") {
                        "/config.yaml".to_string()
                    } else {
                        us_dir.join("config.yaml").to_string_lossy().into_owned()
                    };
                    let mut verdict = compare(&up, &us, &file, &rules, case.output);
                    // Upstream goes through a file's documents in Go's random map order, so which
                    // document's warnings and error come first varies from run to run: ours must
                    // match one of its runs.
                    let several = case.file.as_ref().is_some_and(|b| b.windows(4).any(|w| w == b"\n---"));
                    for _ in 0..if several { UPSTREAM_RERUNS } else { 0 } {
                        if verdict.is_none() {
                            break;
                        }
                        // What the last run wrote goes; the config stays.
                        for written in ["etc", "var"] {
                            let _ = std::fs::remove_dir_all(up_dir.join(written));
                        }
                        if compare(&up_run(), &us, &file, &rules, case.output).is_none() {
                            verdict = None;
                        }
                    }
                    if verdict.is_none() && up.code == 0 && us.code == 0 && case.output == Output::Files {
                        verdict = different_files(&up_dir, &us_dir);
                    }
                    let mut c = counts.lock().expect("counts");
                    match (&verdict, up.code) {
                        (None, 0) => c.0 += 1,
                        (None, _) => c.1 += 1,
                        (Some(_), _) => c.2 += 1,
                    }
                    drop(c);
                    let Some(why) = verdict else { continue };
                    let mut f = failures.lock().expect("failures");
                    let key = class(&why);
                    if let Some(seen) = f.get_mut(&key) {
                        seen.2 += 1;
                        continue;
                    }
                    std::fs::create_dir_all(&failures_dir).expect("failures dir");
                    let saved = failures_dir.join(format!("case-{seed}-{i}.yaml"));
                    if let Some(bytes) = &case.file {
                        std::fs::write(&saved, bytes).expect("save case");
                    }
                    let report = format!(
                        "case {i} (seed {seed}): {why}\n  input: {}\n  args: {:?}\n  file: {}\n  upstream (exit {}):\n{}{}\n  ours (exit {}):\n{}{}",
                        case.what,
                        case.args,
                        if case.file.is_some() { saved.display().to_string() } else { "-".into() },
                        up.code,
                        indent(&up.stdout),
                        indent(&up.stderr),
                        us.code,
                        indent(&us.stdout),
                        indent(&us.stderr),
                    );
                    f.insert(key, (i, report, 1));
                }
            });
        }
    });
    let (accepted, refused, failed) = *counts.lock().expect("counts");
    let failures = failures.into_inner().expect("failures");
    let cases = cases.saturating_sub(first);
    eprintln!(
        "diffuzz: {cases} cases (seed {seed}, from case {first}) in {:.0?}: {accepted} accepted by both, {refused} refused by both, {failed} differences in {} classes",
        started.elapsed(),
        failures.len()
    );
    // Both verdicts must have been exercised, or the run proves little.
    assert!(
        cases < 100 || (accepted > cases / 20 && refused > cases / 20),
        "a lopsided run"
    );
    assert!(
        failures.is_empty(),
        "{failed} cases differ from upstream, in {} classes:\n\n{}",
        failures.len(),
        failures
            .values()
            .map(|(_, r, n)| format!("{r}  ({n} cases of this class)\n"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// How the files the two sides wrote under their roots differ (paths, modes, contents), if they do.
/// Upstream's `init --dry-run` leaves its temporary folder behind: not compared.
fn different_files(up: &Path, us: &Path) -> Option<String> {
    let dirs = ["etc/kubernetes", "var/lib/kubelet"];
    let (theirs, mine) = (
        kubeadm_testkit::rootfs::tree(up, &dirs),
        kubeadm_testkit::rootfs::tree(us, &dirs),
    );
    let theirs_names: Vec<&String> = theirs.keys().collect();
    let mine_names: Vec<&String> = mine.keys().collect();
    if theirs_names != mine_names {
        return Some(format!(
            "files written: upstream {theirs_names:?}, ours {mine_names:?}"
        ));
    }
    for (path, (mode, content)) in &theirs {
        let (my_mode, my_content) = &mine[path];
        if mode != my_mode {
            return Some(format!("{path}: mode {my_mode:o}, upstream {mode:o}"));
        }
        if content != my_content {
            return Some(format!(
                "{path} differs:\n{}",
                diff(
                    &String::from_utf8_lossy(content),
                    &String::from_utf8_lossy(my_content)
                )
            ));
        }
    }
    None
}

/// How long one of our runs may take before the case fails (a hang, not a verdict).
const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// `run`, but a run still going after [`TIME_LIMIT`] is killed and reported as exit -2.
fn run_limited(bin: &Path, args: &[&str], cwd: &Path) -> Run {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let (mut out, mut err) = (
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
    );
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break -2;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let text = |h: std::thread::JoinHandle<Vec<u8>>| {
        String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
    };
    let mut stderr = text(err);
    if code == -2 {
        stderr.push_str(&format!("(killed after {TIME_LIMIT:?})\n"));
    }
    Run {
        stdout: text(out),
        stderr,
        code,
    }
}

fn indent(s: &str) -> String {
    let s: String = s.chars().take(3000).collect();
    s.lines().map(|l| format!("    | {l}\n")).collect()
}
