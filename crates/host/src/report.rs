//! The terminal reporter: stdout and stderr, klog-formatted log lines with the real clock and pid.
//! A closed pipe is not an error worth dying loudly for: output to it is dropped.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use kubeadm_effects::report::{CivilTime, Reporter, Severity, klog_header};

/// Writes to this process's stdout and stderr.
#[derive(Debug, Clone)]
pub struct TerminalReporter {
    verbosity: u8,
    skip_headers: bool,
}

impl TerminalReporter {
    /// A reporter at `-v` level `verbosity`; `skip_headers` is klog's `--skip-headers`.
    pub fn new(verbosity: u8, skip_headers: bool) -> Self {
        Self {
            verbosity,
            skip_headers,
        }
    }
}

impl Reporter for TerminalReporter {
    fn out(&self, text: &str) {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
    }

    fn err(&self, text: &str) {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
