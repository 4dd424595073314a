//! Unified diffs exactly as upstream kubeadm prints them (`kubeadm upgrade diff`), which uses
//! go-difflib: a port of Python's `difflib.SequenceMatcher` and `unified_diff`.
//!
//! The hunks come from the Ratcliff/Obershelp "gestalt" matching (the longest contiguous matching
//! block, recursively on both sides), with the "autojunk" heuristic for second sequences of 200
//! lines or more. That is not a minimal edit script: a Myers diff would often produce different
//! hunks, so the algorithm is reproduced here rather than taken from a diff crate.
//!
//! Pure: strings in, a string out.

use std::collections::HashMap;

/// Second sequences at least this long get the "popular lines are junk" heuristic.
const AUTOJUNK_MIN_LEN: usize = 200;

/// go-difflib's `SplitLines`: the text split after each `\n`, and one more `\n` appended to the
/// last piece. Text ending in a newline therefore gets a final line holding `\n` alone: upstream's
/// quirk, kept because it shows in the hunk ranges.
pub fn split_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if text.is_empty() || text.ends_with('\n') {
        lines.push(String::new());
    }
    if let Some(last) = lines.last_mut() {
        last.push('\n');
    }
    lines
}

/// What one opcode does to turn `a` into `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

/// `a[i1..i2]` becomes `b[j1..j2]`. Signed, because the grouping does Go's `int` arithmetic,
/// which wraps (see [`SequenceMatcher::grouped_opcodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpCode {
    tag: Tag,
    i1: i64,
    i2: i64,
    j1: i64,
    j2: i64,
}

/// A line index as Go's `int` (inputs never come near `i64::MAX` lines).
fn int(i: usize) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

/// `a[a..a+size] == b[b..b+size]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Match {
    a: usize,
    b: usize,
    size: usize,
}

/// The matcher of two line sequences (no junk predicate, autojunk on, as go-difflib's
/// `NewMatcher`).
struct SequenceMatcher<'s> {
    a: &'s [String],
    b: &'s [String],
    /// Line of `b` → its indices in `b`, ascending, without the popular lines.
    b2j: HashMap<&'s str, Vec<usize>>,
}

impl<'s> SequenceMatcher<'s> {
    fn new(a: &'s [String], b: &'s [String]) -> Self {
        let mut b2j: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, line) in b.iter().enumerate() {
            b2j.entry(line.as_str()).or_default().push(i);
        }
        // Lines making up more than 1% of a long `b` are dropped from the index: they can still
        // extend a match but never seed one.
        if b.len() >= AUTOJUNK_MIN_LEN {
            let limit = b.len() / 100 + 1;
            b2j.retain(|_, indices| indices.len() <= limit);
        }
        SequenceMatcher { a, b, b2j }
    }

    /// The longest matching block in `a[alo..ahi]` and `b[blo..bhi]`, earliest in `a`, then in
    /// `b`, on ties; `(alo, blo, 0)` when nothing matches.
    fn find_longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        // j2len[j] = length of the longest match ending with a[i-1] and b[j].
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for i in alo..ahi {
            let mut next: HashMap<usize, usize> = HashMap::new();
            if let Some(indices) = self.b2j.get(self.a[i].as_str()) {
                for &j in indices {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = j.checked_sub(1).and_then(|p| j2len.get(&p)).copied().unwrap_or(0) + 1;
                    next.insert(j, k);
                    if k > bestsize {
                        (besti, bestj, bestsize) = (i + 1 - k, j + 1 - k, k);
                    }
                }
            }
            j2len = next;
        }
        // Extend by equal lines on both sides: popular lines are not in `b2j`, so the loop above
        // cannot have included them. (There is no junk predicate, so no junk-only extension.)
        while besti > alo && bestj > blo && self.a[besti - 1] == self.b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && self.a[besti + bestsize] == self.b[bestj + bestsize]
        {
            bestsize += 1;
        }
        Match {
            a: besti,
            b: bestj,
            size: bestsize,
        }
    }

    /// The matching blocks, adjacent ones merged, ending with the sentinel `(len a, len b, 0)`.
    fn matching_blocks(&self) -> Vec<Match> {
        // An explicit stack of regions instead of recursion (deep inputs cannot overflow the
        // stack). The visiting order only changes the order blocks are found in, which sorting
        // restores: blocks are strictly increasing in both `a` and `b`.
        let mut stack = vec![(0, self.a.len(), 0, self.b.len())];
        let mut matched: Vec<Match> = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = stack.pop() {
            let m = self.find_longest_match(alo, ahi, blo, bhi);
            if m.size == 0 {
                continue;
            }
            matched.push(m);
            if alo < m.a && blo < m.b {
                stack.push((alo, m.a, blo, m.b));
            }
            if m.a + m.size < ahi && m.b + m.size < bhi {
                stack.push((m.a + m.size, ahi, m.b + m.size, bhi));
            }
        }
        matched.sort_by_key(|m| (m.a, m.b));

        let mut blocks = Vec::new();
        let mut cur = Match { a: 0, b: 0, size: 0 };
        for m in matched {
            if cur.a + cur.size == m.a && cur.b + cur.size == m.b {
                cur.size += m.size;
            } else {
                if cur.size > 0 {
                    blocks.push(cur);
                }
                cur = m;
            }
        }
        if cur.size > 0 {
            blocks.push(cur);
        }
        blocks.push(Match {
            a: self.a.len(),
            b: self.b.len(),
            size: 0,
        });
        blocks
    }

    fn opcodes(&self) -> Vec<OpCode> {
        let (mut i, mut j) = (0, 0);
        let mut codes = Vec::new();
        for m in self.matching_blocks() {
            let tag = match (i < m.a, j < m.b) {
                (true, true) => Some(Tag::Replace),
                (true, false) => Some(Tag::Delete),
                (false, true) => Some(Tag::Insert),
                (false, false) => None,
            };
            if let Some(tag) = tag {
                codes.push(OpCode {
                    tag,
                    i1: int(i),
                    i2: int(m.a),
                    j1: int(j),
                    j2: int(m.b),
                });
            }
            (i, j) = (m.a + m.size, m.b + m.size);
            if m.size > 0 {
                codes.push(OpCode {
                    tag: Tag::Equal,
                    i1: int(m.a),
                    i2: int(i),
                    j1: int(m.b),
                    j2: int(j),
                });
            }
        }
        codes
    }

    /// The change clusters with up to `n` lines of context around each. The arithmetic wraps
    /// like Go's: with `n` of 2^62 or more, `2n` turns negative and every unchanged stretch ends
    /// a group, as upstream prints it (and near `i64::MAX` the ranges go negative, where upstream
    /// panics; [`unified_diff`] then prints those ranges as empty).
    fn grouped_opcodes(&self, n: i64) -> Vec<Vec<OpCode>> {
        let mut codes = self.opcodes();
        if codes.is_empty() {
            codes.push(OpCode {
                tag: Tag::Equal,
                i1: 0,
                i2: 1,
                j1: 0,
                j2: 1,
            });
        }
        if let Some(c) = codes.first_mut().filter(|c| c.tag == Tag::Equal) {
            c.i1 = c.i1.max(c.i2.wrapping_sub(n));
            c.j1 = c.j1.max(c.j2.wrapping_sub(n));
        }
        if let Some(c) = codes.last_mut().filter(|c| c.tag == Tag::Equal) {
            c.i2 = c.i2.min(c.i1.wrapping_add(n));
            c.j2 = c.j2.min(c.j1.wrapping_add(n));
        }
        let nn = n.wrapping_add(n);
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for mut c in codes {
            // A long unchanged stretch ends one group and starts the next.
            if c.tag == Tag::Equal && c.i2.wrapping_sub(c.i1) > nn {
                group.push(OpCode {
                    tag: Tag::Equal,
                    i1: c.i1,
                    i2: c.i2.min(c.i1.wrapping_add(n)),
                    j1: c.j1,
                    j2: c.j2.min(c.j1.wrapping_add(n)),
                });
                groups.push(std::mem::take(&mut group));
                c.i1 = c.i1.max(c.i2.wrapping_sub(n));
                c.j1 = c.j1.max(c.j2.wrapping_sub(n));
            }
            group.push(c);
        }
        // A last group that is only unchanged context shows nothing.
        let only_context = group.len() == 1 && group[0].tag == Tag::Equal;
        if !group.is_empty() && !only_context {
            groups.push(group);
        }
        groups
    }
}

/// A hunk range as `start,length`, or `start` alone for one line; an empty range starts at the
/// line before it.
fn format_range(start: i64, stop: i64) -> String {
    let length = stop.wrapping_sub(start);
    match length {
        1 => format!("{}", start.wrapping_add(1)),
        0 => format!("{start},0"),
        _ => format!("{},{length}", start.wrapping_add(1)),
    }
}

/// `lines[from..to]`, or nothing when Go would have panicked on the bounds.
fn slice(lines: &[String], from: i64, to: i64) -> &[String] {
    match (usize::try_from(from), usize::try_from(to)) {
        (Ok(from), Ok(to)) => lines.get(from..to).unwrap_or_default(),
        _ => &[],
    }
}

/// The unified diff turning lines `a` into lines `b` (each line ending in its own `\n`, as
/// [`split_lines`] makes them), with `context` lines of context (a negative count means 3), as
/// go-difflib's `WriteUnifiedDiff` writes it: empty when nothing differs, else the `---`/`+++`
/// header (when either name is non-empty) and the hunks.
pub fn unified_diff(a: &[String], b: &[String], from_file: &str, to_file: &str, context: i64) -> String {
    let n = if context < 0 { 3 } else { context };
    let matcher = SequenceMatcher::new(a, b);
    let mut out = String::new();
    for (index, group) in matcher.grouped_opcodes(n).iter().enumerate() {
        if index == 0 && (!from_file.is_empty() || !to_file.is_empty()) {
            out.push_str(&format!("--- {from_file}\n+++ {to_file}\n"));
        }
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            format_range(first.i1, last.i2),
            format_range(first.j1, last.j2)
        ));
        for c in group {
            if c.tag == Tag::Equal {
                for line in slice(a, c.i1, c.i2) {
                    out.push(' ');
                    out.push_str(line);
                }
                continue;
            }
            if matches!(c.tag, Tag::Replace | Tag::Delete) {
                for line in slice(a, c.i1, c.i2) {
                    out.push('-');
                    out.push_str(line);
                }
            }
            if matches!(c.tag, Tag::Replace | Tag::Insert) {
                for line in slice(b, c.j1, c.j2) {
                    out.push('+');
                    out.push_str(line);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_lines_appends_a_newline_line() {
        assert_eq!(split_lines(""), vec!["\n"]);
        assert_eq!(split_lines("a"), vec!["a\n"]);
        assert_eq!(split_lines("a\n"), vec!["a\n", "\n"]);
        assert_eq!(split_lines("a\nb"), vec!["a\n", "b\n"]);
        assert_eq!(split_lines("a\n\nb\n"), vec!["a\n", "\n", "b\n", "\n"]);
    }

    #[test]
    fn ranges_use_the_ed_format() {
        assert_eq!(format_range(0, 0), "0,0");
        assert_eq!(format_range(3, 3), "3,0");
        assert_eq!(format_range(3, 4), "4");
        assert_eq!(format_range(3, 7), "4,4");
    }

    #[test]
    fn equal_inputs_give_no_output() {
        let a = split_lines("x\ny\n");
        assert_eq!(unified_diff(&a, &a, "f", "g", 3), "");
    }
}
