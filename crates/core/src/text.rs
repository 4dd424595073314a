//! Text as Go's standard library and apimachinery render it for people: `text/tabwriter` tables
//! and `duration.ShortHumanDuration`. Used by `certs check-expiration` and `token list`.

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
