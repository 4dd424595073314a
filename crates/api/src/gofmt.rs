//! Go's text formatting where kubeadm's messages and files depend on it, in one place: `%q`
//! quoting ([`quote`]), `%v` of a string slice ([`list`]), an OS error as Go prints it
//! ([`io_error`]), `text/tabwriter` tables ([`tabwrite`]) and apimachinery's
//! `duration.ShortHumanDuration` ([`short_human_duration`]).

/// Go's `%q` of a string: double-quoted with Go escapes, printable Unicode kept as is.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Go's `%v` of a `[]string`: `[a b c]`.
pub fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(" "))
}

/// An OS error as Go prints it after `open <path>: `: its errno text with a lower-case first letter
/// (`no such file or directory`), without Rust's ` (os error N)`.
pub fn io_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = text.find(" (os error ").map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Go's `os.ReadFile(path)` error text: `open <path>: <errno>`, except for a directory, which opens
/// and then fails to read (`read <path>: is a directory`).
pub fn read_file_error(path: &str, e: &std::io::Error) -> String {
    let op = if e.kind() == std::io::ErrorKind::IsADirectory {
        "read"
    } else {
        "open"
    };
    format!("{op} {path}: {}", io_error(e))
}

/// An approximation of Go's `strconv.IsPrint` for characters beyond ASCII: control and format
/// characters and unassigned private ranges are escaped, the rest is printed.
fn is_go_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c as u32, 0x80..=0x9f | 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff)
        // Space separators other than the ASCII space (Go's `unicode.IsPrint` keeps only that one).
        || matches!(c as u32, 0xa0 | 0x1680 | 0x2000..=0x200a | 0x202f | 0x205f | 0x3000)
        // Other format characters, noncharacters and the supplementary private use planes.
        || matches!(c as u32, 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0xfffe | 0xffff | 0xe0001 | 0xe0020..=0xe007f | 0xf0000..))
}

/// apimachinery's `duration.ShortHumanDuration` of a signed duration in nanoseconds (`364d`, `9y`,
/// `<invalid>`). Sub-second precision matters: a certificate issued a moment ago has 364 days left,
/// not a year, because Go subtracts the current time with nanoseconds.
pub fn short_human_duration(nanos: i128) -> String {
    const SEC: i128 = 1_000_000_000;
    let seconds = nanos / SEC;
    let hours = nanos / (3600 * SEC);
    if seconds < -1 {
        "<invalid>".to_string()
    } else if seconds < 0 {
        "0s".to_string()
    } else if seconds < 60 {
        format!("{seconds}s")
    } else if nanos / (60 * SEC) < 60 {
        format!("{}m", nanos / (60 * SEC))
    } else if hours < 24 {
        format!("{hours}h")
    } else if hours < 24 * 365 {
        format!("{}d", hours / 24)
    } else {
        format!("{}y", nanos / (24 * 365 * 3600 * SEC))
    }
}

/// Go's `text/tabwriter` for left-aligned cells padded with spaces: a column's width is fixed per
/// block of consecutive lines that have a cell in it; the text after a line's last tab is not aligned.
pub fn tabwrite(lines: &[String], min_width: usize, padding: usize) -> String {
    let cells: Vec<Vec<&str>> = lines.iter().map(|l| l.split('\t').collect()).collect();
    let mut widths: Vec<usize> = Vec::new();
    let mut out = String::new();
    format_block(&cells, 0, cells.len(), &mut widths, min_width, padding, &mut out);
    out
}

fn format_block(
    cells: &[Vec<&str>],
    mut line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    min_width: usize,
    padding: usize,
    out: &mut String,
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column + 1 >= cells[this].len() {
            this += 1;
            continue;
        }
        write_lines(cells, line0, this, widths, out);
        line0 = this;
        let mut width = min_width;
        while this < line1 && column + 1 < cells[this].len() {
            width = width.max(cells[this][column].chars().count() + padding);
            this += 1;
        }
        widths.push(width);
        format_block(cells, line0, this, widths, min_width, padding, out);
        widths.pop();
        line0 = this;
    }
    write_lines(cells, line0, line1, widths, out);
}

fn write_lines(cells: &[Vec<&str>], line0: usize, line1: usize, widths: &[usize], out: &mut String) {
    for line in &cells[line0..line1] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if let Some(w) = widths.get(j)
                && j + 1 < line.len()
            {
                out.extend(std::iter::repeat_n(' ', w.saturating_sub(cell.chars().count())));
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(quote("x\ty\u{1}é"), "\"x\\ty\\x01é\"");
        assert_eq!(quote("\u{7f}\u{200b}"), "\"\\x7f\\u200b\"");
        // Go's own output for this string (fmt.Printf("%q")).
        assert_eq!(
            quote("a\u{a0}b\u{3000}c\u{2009}d\u{f0001}e\u{600}f\u{fffe}g"),
            r#""a\u00a0b\u3000c\u2009d\U000f0001e\u0600f\ufffeg""#
        );
    }

    #[test]
    fn io_errors_and_lists_read_as_go_prints_them() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io_error(&e), "no such file or directory");
        assert_eq!(list(["a", "b c"]), "[a b c]");
        assert_eq!(list(Vec::<String>::new()), "[]");
    }

    #[test]
    fn short_durations_follow_apimachinery() {
        let s = |secs: i128| secs * 1_000_000_000;
        assert_eq!(short_human_duration(s(-5)), "<invalid>");
        assert_eq!(short_human_duration(s(-1)), "0s");
        assert_eq!(short_human_duration(s(59)), "59s");
        assert_eq!(short_human_duration(s(3599)), "59m");
        assert_eq!(short_human_duration(s(86_399)), "23h");
        assert_eq!(short_human_duration(s(365 * 86_400) - 1), "364d");
        assert_eq!(short_human_duration(s(365 * 86_400)), "1y");
        assert_eq!(short_human_duration(s(3650 * 86_400) - 1), "9y");
    }
}
