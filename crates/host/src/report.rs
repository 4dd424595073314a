//! The terminal reporter: stdout and stderr, klog-formatted log lines with the real clock and pid.
//! A closed pipe is not an error worth dying loudly for: output to it is dropped.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kubeadm_effects::report::{CivilTime, Reporter, Severity, klog_header};

/// Writes to this process's stdout and stderr.
#[derive(Debug, Clone)]
pub struct TerminalReporter {
    verbosity: u8,
    skip_headers: bool,
    /// The progress line of long waits: only when stdout and stderr are both a terminal.
    live: Option<Arc<Mutex<ProgressLine>>>,
}

impl TerminalReporter {
    /// A reporter at `-v` level `verbosity`; `skip_headers` is klog's `--skip-headers`. Progress
    /// lines are shown when stdout and stderr are both a terminal (and `TERM` is not `dumb`).
    pub fn new(verbosity: u8, skip_headers: bool) -> Self {
        let terminal = std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb");
        Self {
            verbosity,
            skip_headers,
            live: terminal.then(|| Arc::new(Mutex::new(ProgressLine::default()))),
        }
    }

    /// Clears a progress line before other output.
    fn clear_progress(&self) {
        if let Some(live) = &self.live
            && let Ok(mut line) = live.lock()
            && let Some(clear) = line.clear()
        {
            let _ = std::io::stderr().lock().write_all(clear.as_bytes());
        }
    }
}

/// The one line a wait shows on a terminal: what is waited for and the seconds so far, rewritten in
/// place (carriage return, erase line) when either changes.
#[derive(Debug, Default)]
struct ProgressLine {
    shown: Option<(String, u64)>,
}

/// Carriage return and ANSI "erase the whole line".
const ERASE_LINE: &str = "\r\x1b[2K";

impl ProgressLine {
    /// What to write to show `what` after `elapsed`; nothing when the line already says so.
    fn update(&mut self, what: &str, elapsed: Duration) -> Option<String> {
        let secs = elapsed.as_secs();
        if self.shown.as_ref().is_some_and(|(w, s)| w == what && *s == secs) {
            return None;
        }
        self.shown = Some((what.to_string(), secs));
        Some(format!("{ERASE_LINE}{what} ({secs}s)"))
    }

    /// What to write to take the line away, if one is shown.
    fn clear(&mut self) -> Option<&'static str> {
        self.shown.take().map(|_| ERASE_LINE)
    }
}

impl Reporter for TerminalReporter {
    fn out(&self, text: &str) {
        self.clear_progress();
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
    }

    fn err(&self, text: &str) {
        self.clear_progress();
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn progress(&self, what: &str, elapsed: Duration) {
        if let Some(live) = &self.live
            && let Ok(mut line) = live.lock()
            && let Some(text) = line.update(what, elapsed)
        {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }

    fn progress_end(&self) {
        self.clear_progress();
    }

    fn verbosity(&self) -> u8 {
        self.verbosity
    }

    fn log(&self, severity: Severity, level: u8, source: &str, message: &str) {
        if level > self.verbosity {
            return;
        }
        let mut line = if self.skip_headers {
            String::new()
        } else {
            klog_header(severity, now_utc(), std::process::id(), source)
        };
        line.push_str(message);
        if !line.ends_with('\n') {
            line.push('\n');
        }
        self.err(&line);
    }
}

/// The current time in UTC, broken into fields (klog prints local time; these machines run in UTC and
/// a fixed zone keeps the output independent of the environment).
fn now_utc() -> CivilTime {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    civil_from_unix(d.as_secs(), d.subsec_micros())
}

/// Converts seconds since the epoch to a civil UTC time (Howard Hinnant's days-from-civil inverse).
fn civil_from_unix(secs: u64, micros: u32) -> CivilTime {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    CivilTime {
        month,
        day,
        hour: (rem / 3600) as u8,
        minute: (rem % 3600 / 60) as u8,
        second: (rem % 60) as u8,
        micros,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_is_rewritten_when_it_changes_and_cleared_once() {
        let mut line = ProgressLine::default();
        assert_eq!(line.clear(), None, "nothing shown, nothing to clear");
        let wait = "[wait-control-plane] the API server's /healthz";
        assert_eq!(
            line.update(wait, Duration::from_millis(300)).as_deref(),
            Some("\r\x1b[2K[wait-control-plane] the API server's /healthz (0s)")
        );
        assert_eq!(line.update(wait, Duration::from_millis(900)), None, "same second");
        assert_eq!(
            line.update(wait, Duration::from_secs(12)).as_deref(),
            Some("\r\x1b[2K[wait-control-plane] the API server's /healthz (12s)")
        );
        assert_eq!(
            line.update("other", Duration::from_secs(12)).as_deref(),
            Some("\r\x1b[2Kother (12s)")
        );
        assert_eq!(line.clear(), Some("\r\x1b[2K"));
        assert_eq!(line.clear(), None);
    }

    #[test]
    fn no_progress_off_a_terminal() {
        // Under `cargo test` stdout is captured (not a terminal): nothing is set up to show.
        if !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
            assert!(TerminalReporter::new(0, false).live.is_none());
        }
    }

    #[test]
    fn civil_time_from_unix() {
        // 2026-11-30T06:10:04Z
        let t = civil_from_unix(1_796_019_004, 5);
        assert_eq!(
            (t.month, t.day, t.hour, t.minute, t.second, t.micros),
            (11, 30, 6, 10, 4, 5)
        );
        // 2024-02-29T23:59:59Z (leap day)
        let t = civil_from_unix(1_709_251_199, 0);
        assert_eq!((t.month, t.day, t.hour, t.minute, t.second), (2, 29, 23, 59, 59));
    }
}
