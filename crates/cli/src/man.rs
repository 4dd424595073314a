//! Man pages of the command tree, one per command, laid out as cobra's man generator
//! (`github.com/spf13/cobra/doc`, `GenManTree`) lays them out: the file `kubeadm-init-phase-certs.1`
//! for `kubeadm init phase certs`; sections NAME, SYNOPSIS, DESCRIPTION, OPTIONS, OPTIONS INHERITED
//! FROM PARENT COMMANDS, EXAMPLE and SEE ALSO; hidden, deprecated and help-topic commands and
//! cobra's `help` get no page, as cobra skips them. cobra writes Markdown and converts it with
//! go-md2man; we write the roff directly (`.TP` per flag, examples in no-fill mode).
//!
//! Pure: the date is passed in (`kubeadm-genman` takes it from `SOURCE_DATE_EPOCH` or the clock).

use kubeadm_workflow::FlagSpec;

use crate::cobra::command::{Command, Tree};
use crate::cobra::go_values::go_quote;
use crate::cobra::help::use_line;

/// The month a page is dated with (`Jan 2006` in its header, as cobra's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManDate {
    /// The year, e.g. 2026.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: u32,
}

impl ManDate {
    /// The UTC month of a Unix time in seconds.
    pub fn from_unix(seconds: i64) -> Self {
        // Howard Hinnant's days-to-civil algorithm.
        let z = seconds.div_euclid(86_400) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        ManDate {
            year,
            month: u32::try_from(month).unwrap_or(1),
        }
    }

    fn header(&self) -> String {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let month = MONTHS
            .get((self.month as usize).saturating_sub(1))
            .copied()
            .unwrap_or("Jan");
        format!("{month} {}", self.year)
    }
}

/// One man page: its file name (`kubeadm-init.1`) and its roff source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManPage {
    /// The file name, section suffix included.
    pub file_name: String,
    /// The page, in roff (man macros).
    pub text: String,
}

/// The man section of every page.
const SECTION: &str = "1";

/// Whether cobra's `GenManTree` writes a page for a subcommand (the root always gets one).
fn has_page(cmd: &Command) -> bool {
    cmd.is_available() && !cmd.is_help_topic()
}

/// Every page of the tree, parents before children.
pub(crate) fn pages(tree: &Tree, date: &ManDate) -> Vec<ManPage> {
    let mut out = Vec::new();
    collect(tree, &tree.root, date, &mut out);
    out
}

fn collect(tree: &Tree, cmd: &Command, date: &ManDate, out: &mut Vec<ManPage>) {
    out.push(ManPage {
        file_name: format!("{}.{SECTION}", dashed(&cmd.path)),
        text: page(tree, cmd, date),
    });
    for sub in cmd.sorted_subs() {
        if has_page(sub) {
            collect(tree, sub, date, out);
        }
    }
}

/// `kubeadm init phase` → `kubeadm-init-phase`.
fn dashed(path: &str) -> String {
    path.replace(' ', "-")
}

/// Text escaped for roff: backslashes, minus signs (so that flags copy as typed), and a leading
/// control character; a line may break after `|` and `/` (`text|json|yaml|…` lists and URLs are
/// long words).
fn esc(text: &str) -> String {
    let s = text
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('|', "|\\:")
        .replace('/', "/\\:");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// The page of one command.
fn page(tree: &Tree, cmd: &Command, date: &ManDate) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        ".TH \"{}\" \"{SECTION}\" \"{}\" \"kubeadm {}\" \"\"\n",
        esc(&dashed(&cmd.path).to_uppercase()),
        date.header(),
        kubeadm_api::version::KUBEADM_VERSION
    ));
    // No hyphenation (a flag name must not be split) and no justification, as go-md2man's pages.
    out.push_str(".nh\n.ad l\n");
    out.push_str(&format!(
        ".SH NAME\n{} \\- {}\n",
        esc(&dashed(&cmd.path)),
        esc(&cmd.short)
    ));
    out.push_str(&format!(
        ".SH SYNOPSIS\n\\fB{}\\fR\n",
        esc(&use_line(tree, cmd, true))
    ));
    out.push_str(".SH DESCRIPTION\n");
    let description = if cmd.long.is_empty() {
        &cmd.short
    } else {
        &cmd.long
    };
    out.push_str(&paragraphs(description));
    let flags = tree.flags_of(&cmd.path);
    if flags.local.iter().any(shown) {
        out.push_str(".SH OPTIONS\n");
        out.push_str(&flag_items(&flags.local));
    }
    if flags.inherited.iter().any(shown) {
        out.push_str(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n");
        out.push_str(&flag_items(&flags.inherited));
    }
    if !cmd.example.is_empty() {
        out.push_str(".SH EXAMPLE\n");
        out.push_str(&preformatted(&cmd.example));
    }
    let mut see_also = Vec::new();
    if let Some((parent, _)) = cmd.path.rsplit_once(' ') {
        see_also.push(format!("\\fB{}\\fR({SECTION})", esc(&dashed(parent))));
    }
    for sub in cmd.sorted_subs() {
        if has_page(sub) {
            see_also.push(format!("\\fB{}\\fR({SECTION})", esc(&dashed(&sub.path))));
        }
    }
    if !see_also.is_empty() {
        out.push_str(".SH SEE ALSO\n");
        out.push_str(&see_also.join(",\n"));
        out.push('\n');
    }
    out
}

/// cobra's man generator lists a flag unless it is hidden or deprecated.
fn shown(f: &FlagSpec) -> bool {
    !f.hidden && f.deprecated.is_empty()
}

/// One `.TP` item per flag, sorted by name as pflag visits them: `-s, --name[=default]` (the
/// brackets when the flag takes no value, strings quoted as Go's `%q`), then the usage.
fn flag_items(flags: &[FlagSpec]) -> String {
    let mut sorted: Vec<&FlagSpec> = flags.iter().filter(|f| shown(f)).collect();
    sorted.sort_by(|a, b| a.name.cmp(b.name));
    let mut out = String::new();
    for f in sorted {
        let mut tag = if !f.shorthand.is_empty() && f.shorthand_deprecated.is_empty() {
            format!("\\fB\\-{}\\fR, \\fB\\-\\-{}\\fR", esc(f.shorthand), esc(f.name))
        } else {
            format!("\\fB\\-\\-{}\\fR", esc(f.name))
        };
        let default = if f.value_type == "string" {
            go_quote(f.default)
        } else {
            f.default.to_string()
        };
        if f.no_opt_default.is_empty() {
            tag.push_str(&format!("={}", esc(&default)));
        } else {
            tag.push_str(&format!("[={}]", esc(&default)));
        }
        out.push_str(&format!(".TP\n{tag}\n"));
        for (i, line) in f.usage.lines().enumerate() {
            if i > 0 {
                out.push_str(".br\n");
            }
            out.push_str(&esc(line.trim_start()));
            out.push('\n');
        }
    }
    out
}

/// A text as roff paragraphs: blocks separated by blank lines; a block whose lines are all
/// indented is kept as typed (no fill), others are filled, with a break before list items.
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.trim_matches('\n').lines().collect();
    for block in lines.split(|l| l.trim().is_empty()) {
        if block.is_empty() {
            continue;
        }
        if block.iter().all(|l| l.starts_with([' ', '\t'])) {
            out.push_str(&preformatted(&block.join("\n")));
            continue;
        }
        out.push_str(".PP\n");
        for (i, line) in block.iter().enumerate() {
            let item = line.starts_with("- ")
                || line.starts_with("* ")
                || line
                    .split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if i > 0 && item {
                out.push_str(".br\n");
            }
            // A line starting with spaces breaks and keeps its indentation in fill mode.
            out.push_str(&esc(&line.replace('\t', "    ")));
            out.push('\n');
        }
    }
    out
}

/// Text kept as typed, indented (cobra's fenced code block).
fn preformatted(text: &str) -> String {
    let mut out = String::from(".PP\n.RS\n.nf\n");
    for line in text.trim_matches('\n').lines() {
        out.push_str(&esc(&line.replace('\t', "    ")));
        out.push('\n');
    }
    out.push_str(".fi\n.RE\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_the_utc_month() {
        assert_eq!(ManDate::from_unix(0), ManDate { year: 1970, month: 1 });
        // 2026-12-02T00:00:00Z, the last second of November 2026 and of February 2024.
        assert_eq!(
            ManDate::from_unix(1_796_169_600),
            ManDate {
                year: 2026,
                month: 12
            }
        );
        assert_eq!(
            ManDate::from_unix(1_796_083_199),
            ManDate {
                year: 2026,
                month: 11
            }
        );
        assert_eq!(
            ManDate::from_unix(1_709_251_199),
            ManDate { year: 2024, month: 2 }
        );
        assert_eq!(
            ManDate {
                year: 2026,
                month: 12
            }
            .header(),
            "Dec 2026"
        );
    }

    #[test]
    fn text_is_escaped_for_roff() {
        assert_eq!(esc("--config a\\b"), "\\-\\-config a\\eb");
        assert_eq!(esc(".hidden"), "\\&.hidden");
        assert_eq!(esc("'quoted"), "\\&'quoted");
        assert_eq!(esc("a|b"), "a|\\:b");
    }

    #[test]
    fn indented_blocks_are_not_filled_and_list_items_break() {
        let out = paragraphs("Intro line\n- one\n- two\n\n    code here\n    more\n\nEnd.");
        assert_eq!(
            out,
            ".PP\nIntro line\n.br\n\\- one\n.br\n\\- two\n.PP\n.RS\n.nf\n    code here\n    more\n.fi\n.RE\n.PP\nEnd.\n"
        );
    }
}
