//! Everything kubeadm shows the user goes through a [`Reporter`]: command output on stdout, messages on
//! stderr, and log lines in klog's format (`W1130 06:10:04.676793   18522 file.go:305] message`) that
//! upstream kubeadm prints for warnings and, with `-v`, for progress.

/// A klog severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// `I` lines.
    Info,
    /// `W` lines.
    Warning,
    /// `E` lines.
    Error,
}

impl Severity {
    /// The letter klog starts a line with.
    pub fn letter(self) -> char {
        match self {
            Severity::Info => 'I',
            Severity::Warning => 'W',
            Severity::Error => 'E',
        }
    }
}

/// Where user-visible output goes.
pub trait Reporter: Send + Sync {
    /// Writes command output to stdout, as is.
    fn out(&self, text: &str);
    /// Writes a message to stderr, as is.
    fn err(&self, text: &str);
    /// The `-v` level in force.
    fn verbosity(&self) -> u8;
    /// Writes a log line when `level` is at most the `-v` level. `source` names where it comes from
    /// (klog prints the Go file and line; we print ours).
    fn log(&self, severity: Severity, level: u8, source: &str, message: &str);

    /// A warning, always shown.
    fn warn(&self, source: &str, message: &str) {
        self.log(Severity::Warning, 0, source, message);
    }
    /// An info line shown at `-v` `level` and above.
    fn info(&self, level: u8, source: &str, message: &str) {
        self.log(Severity::Info, level, source, message);
    }

    /// Beyond upstream: a long wait goes on, for `elapsed` so far; `what` says what is waited for.
    /// A terminal shows it on one line that each call rewrites and that any other output (or
    /// [`Reporter::progress_end`]) clears first; everywhere else (a pipe, a file, the fakes)
    /// nothing is shown, so the output stays upstream's byte for byte.
    fn progress(&self, what: &str, elapsed: std::time::Duration) {
        let _ = (what, elapsed);
    }

    /// The wait [`Reporter::progress`] showed is over: its line is cleared.
    fn progress_end(&self) {}
}

/// Beyond upstream: runs `work`, one blocking call (an image pull), while a second thread shows
/// `what` and the seconds so far through [`Reporter::progress`] once a second; the line is cleared
/// when `work` returns. Where progress is not shown, the thread only waits.
pub fn with_progress<T>(reporter: &dyn Reporter, what: &str, work: impl FnOnce() -> T) -> T {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    use std::time::{Duration, Instant};
    let (done, finished) = channel::<()>();
    let out = std::thread::scope(|s| {
        s.spawn(move || {
            let start = Instant::now();
            loop {
                reporter.progress(what, start.elapsed());
                if !matches!(
                    finished.recv_timeout(Duration::from_secs(1)),
                    Err(RecvTimeoutError::Timeout)
                ) {
                    break;
                }
            }
        });
        let out = work();
        drop(done);
        out
    });
    reporter.progress_end();
    out
}

/// Formats a klog header: severity, month and day, time with microseconds, thread (process) id and
/// source, e.g. `W1130 06:10:04.676793   18522 images.rs:80] `.
pub fn klog_header(severity: Severity, civil: CivilTime, pid: u32, source: &str) -> String {
    format!(
        "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}] ",
        severity.letter(),
        civil.month,
        civil.day,
        civil.hour,
        civil.minute,
        civil.second,
        civil.micros,
        pid,
        source
    )
}

/// A wall-clock time broken into fields (the caller decides the time zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilTime {
    /// 1–12.
    pub month: u8,
    /// 1–31.
    pub day: u8,
    /// 0–23.
    pub hour: u8,
    /// 0–59.
    pub minute: u8,
    /// 0–60.
    pub second: u8,
    /// 0–999999.
    pub micros: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_matches_klog_layout() {
        let t = CivilTime {
            month: 11,
            day: 30,
            hour: 6,
            minute: 10,
            second: 4,
            micros: 676793,
        };
        assert_eq!(
            klog_header(Severity::Warning, t, 18522, "initconfiguration.go:305"),
            "W1130 06:10:04.676793   18522 initconfiguration.go:305] "
        );
    }
}
