//! The kubelet's files and service as `init`, `join` and `upgrade node` handle them: writing the
//! flags and configuration files, stopping and starting the kubelet, and the text that says where to
//! look when it fails.

use std::path::{Path, PathBuf};

use kubeadm_core::kubelet;
use kubeadm_effects::fs::Fs;
use kubeadm_effects::init_system::InitSystem;
use kubeadm_effects::report::Reporter;

/// The kubelet's service name.
const KUBELET: &str = "kubelet";

/// Why the kubelet files could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KubeletError {
    /// No kubelet component config (defaulting always adds one).
    #[error("no kubelet component config found")]
    NoConfig,
    /// A patch could not be applied.
    #[error(
        "error writing kubelet configuration to disk: could not apply patches to the KubeletConfiguration: {0}"
    )]
    Patch(#[source] kubeadm_core::patches::PatchError),
    /// A file could not be written.
    #[error("{what}: failed to write kubelet configuration to the file {path:?}: {source}")]
    Write {
        /// Which step.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes one of the kubelet's files (mode 0644) into `kubelet_dir` (created 0700 when missing);
/// shared by `init` and `join`.
pub(crate) fn write_file(
    fs: &dyn Fs,
    kubelet_dir: &Path,
    path: &Path,
    bytes: &[u8],
    what: &'static str,
) -> Result<(), KubeletError> {
    fs.create_dir_all(kubelet_dir, 0o700)
        .and_then(|()| fs.write(path, bytes, 0o644))
        .map_err(|source| KubeletError::Write {
            what,
            path: path.display().to_string(),
            source,
        })
}

/// The kubelet's `config.yaml` as kubeadm writes it (upstream's `WriteConfigToDisk` up to the
/// write): the configuration with the `kubeletconfiguration` patches applied, their `[patches]`
/// lines and then the `Writing kubelet configuration` line printed through `say`. Returns the file's
/// path and content; writing it, and how that error reads, is the caller's.
pub(crate) fn config_file(
    kc: &kubeadm_api::componentconfig::kubelet::KubeletConfiguration,
    patches: Option<&kubeadm_core::patches::PatchManager>,
    kubelet_dir: &Path,
    say: &dyn Fn(&str),
) -> Result<(PathBuf, String), kubeadm_core::patches::PatchError> {
    let (text, messages) = kubelet::patched_config_yaml(kc, patches)?;
    for m in messages {
        say(&m);
    }
    let path = kubelet_dir.join("config.yaml");
    say(&format!(
        "[kubelet-start] Writing kubelet configuration to file {:?}",
        path.display().to_string()
    ));
    Ok((path, text))
}

/// The error and where to look at the kubelet: upstream's `kubeadmJoinFailMsg` (a join whose
/// TLS bootstrap timed out), and the start of its `kubeletFailTempl` (init's wait for the control
/// plane).
pub(crate) fn failure_text(error: &str) -> String {
    format!(
        "
Unfortunately, an error has occurred:
\t{error}

This error is likely caused by:
\t- The kubelet is not running
\t- The kubelet is unhealthy due to a misconfiguration of the node in some way (required cgroups disabled)

If you are on a systemd-powered system, you can try to troubleshoot the error with the following commands:
\t- 'systemctl status kubelet'
\t- 'journalctl -xeu kubelet'
"
    )
}

/// Upstream's `TryStopKubelet`: best effort, with its messages (`say` prints a line).
pub(crate) fn try_stop(init: &dyn InitSystem, say: &dyn Fn(&str), reporter: &dyn Reporter) {
    if init.kind().is_none() {
        say(
            "[kubelet-start] No supported init system detected, won't make sure the kubelet not running for a short period of time while setting up configuration for it.",
        );
        return;
    }
    if !init.service_exists(KUBELET) {
        say(
            "[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet not running for a short period of time while setting up configuration for it.",
        );
    }
    if let Err(e) = init.service_stop(KUBELET) {
        reporter.warn(
            "kubelet.rs",
            &format!("[kubelet-start] WARNING: unable to stop the kubelet service momentarily: [{e}]"),
        );
    }
}

/// Upstream's `TryStartKubelet`: best effort, with its messages (`say` prints a line).
pub(crate) fn try_start(init: &dyn InitSystem, say: &dyn Fn(&str), reporter: &dyn Reporter) {
    if init.kind().is_none() {
        say(
            "[kubelet-start] No supported init system detected, won't make sure the kubelet is running properly.",
        );
        return;
    }
    if !init.service_exists(KUBELET) {
        say(
            "[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet is running properly.",
        );
    }
    if let Err(e) = init.service_restart(KUBELET) {
        reporter.warn(
            "kubelet.rs",
            &format!("[kubelet-start] WARNING: unable to start the kubelet service: [{e}]"),
        );
        say("[kubelet-start] Please ensure kubelet is reloaded and running manually.");
    }
}

/// The kubelet's health endpoint upstream checks (`KubeletHealthzPort`).
pub(crate) const HEALTHZ_URL: &str = "http://localhost:10248/healthz";

/// Upstream's `WaitForHealthyKubelet`, run beside another wait (`WaitForKubeletAndFunc`: the
/// control plane in `init`, the TLS bootstrap in `join`): after an initial 40 s it says so, then
/// asks the kubelet's healthz endpoint up to five times, 5, 10, 20 and 40 s apart, saying each time
/// the kubelet does not answer well; after the fifth failure (115 s in) the wait fails with
/// `timed out waiting for the condition`. A healthy answer ends the check, not the other wait.
///
/// Driven by the caller's clock: [`KubeletCheck::poll`] with the time waited so far does what is
/// due by then; [`KubeletCheck::next_due`] says when the next step is, so the caller's pauses land
/// on it.
#[derive(Debug)]
pub(crate) struct KubeletCheck {
    /// When the next step is due; `None` once the kubelet answered well.
    due: Option<std::time::Duration>,
    /// Probes failed so far.
    failures: u32,
}

/// The kubelet check gave up (upstream's `wait.ErrWaitTimeout`).
#[derive(Debug, thiserror::Error)]
#[error("timed out waiting for the condition")]
pub(crate) struct KubeletCheckTimeout;

impl KubeletCheck {
    /// Upstream's initial timeout.
    const INITIAL: std::time::Duration = std::time::Duration::from_secs(40);
    /// `TryRunCommand(…, 5)`: five probes.
    const PROBES: u32 = 5;

    pub(crate) fn new() -> Self {
        KubeletCheck {
            due: Some(Self::INITIAL),
            failures: 0,
        }
    }

    /// When the next step is due, if any.
    pub(crate) fn next_due(&self) -> Option<std::time::Duration> {
        self.due
    }

    /// Does what is due by `elapsed`: the initial-timeout line, then a probe through `probe`;
    /// `say` prints a line.
    pub(crate) fn poll(
        &mut self,
        elapsed: std::time::Duration,
        probe: &dyn kubeadm_effects::host_probe::HostProbe,
        say: &dyn Fn(&str),
    ) -> Result<(), KubeletCheckTimeout> {
        let Some(due) = self.due else { return Ok(()) };
        if elapsed < due {
            return Ok(());
        }
        if self.failures == 0 {
            // Go's %v of 40*time.Second.
            say("[kubelet-check] Initial timeout of 40s passed.");
        }
        let healthy = match probe.http_get(HEALTHZ_URL) {
            Ok(200) => true,
            Ok(code) => {
                say("[kubelet-check] It seems like the kubelet isn't running or healthy.");
                say(&format!(
                    "[kubelet-check] The HTTP call equal to 'curl -sSL {HEALTHZ_URL}' returned HTTP code {code}"
                ));
                false
            }
            Err(e) => {
                say("[kubelet-check] It seems like the kubelet isn't running or healthy.");
                say(&format!(
                    "[kubelet-check] The HTTP call equal to 'curl -sSL {HEALTHZ_URL}' failed with error: {e}."
                ));
                false
            }
        };
        if healthy {
            self.due = None;
            return Ok(());
        }
        self.failures += 1;
        if self.failures >= Self::PROBES {
            self.due = None;
            return Err(KubeletCheckTimeout);
        }
        // 5 s after the first failure, doubling (wait.Backoff{Duration: 5s, Factor: 2}).
        self.due = Some(due + std::time::Duration::from_secs(5 << (self.failures - 1)));
        Ok(())
    }
}

/// One step of a wait run beside the kubelet check.
pub(crate) enum Step<T, E> {
    /// The wait is over.
    Done(T),
    /// The wait failed.
    Failed(E),
    /// Not yet: try again after this pause (shortened when the kubelet check is due sooner).
    Again(std::time::Duration),
}

/// How a wait beside the kubelet check failed.
#[derive(Debug)]
pub(crate) enum BesideKubelet<E> {
    /// The wait itself failed.
    Wait(E),
    /// The kubelet check gave up first.
    Kubelet(KubeletCheckTimeout),
}

impl<E: std::fmt::Display> std::fmt::Display for BesideKubelet<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BesideKubelet::Wait(e) => e.fmt(f),
            BesideKubelet::Kubelet(e) => e.fmt(f),
        }
    }
}

/// Upstream's `WaitForKubeletAndFunc`: `step` (given the time waited so far) is tried until it is
/// done or fails, while [`KubeletCheck`] runs beside it; whichever ends the wait first decides.
/// `pacer` sleeps (the cluster client's pause, instant on the fakes), so the time waited is the
/// larger of the wall clock and the pauses.
pub(crate) fn wait_beside_kubelet_check<T, E>(
    pacer: &dyn kubeadm_effects::cluster::Cluster,
    probe: &dyn kubeadm_effects::host_probe::HostProbe,
    say: &dyn Fn(&str),
    mut step: impl FnMut(std::time::Duration) -> Step<T, E>,
) -> Result<T, BesideKubelet<E>> {
    let start = std::time::Instant::now();
    let mut paused = std::time::Duration::ZERO;
    let mut check = KubeletCheck::new();
    loop {
        let pause = match step(start.elapsed().max(paused)) {
            Step::Done(t) => return Ok(t),
            Step::Failed(e) => return Err(BesideKubelet::Wait(e)),
            Step::Again(pause) => pause,
        };
        let elapsed = start.elapsed().max(paused);
        check.poll(elapsed, probe, say).map_err(BesideKubelet::Kubelet)?;
        let pause = match check.next_due() {
            Some(due) if due > elapsed => pause.min(due - elapsed),
            _ => pause,
        };
        pacer.pause(pause);
        paused += pause;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::time::Duration;

    use kubeadm_testkit::fakes::{FakeCluster, FakeHost};

    use super::*;

    /// Runs a wait that is done at `done_at` (never when `None`) beside the kubelet check on
    /// `host`: the lines printed, the outcome, and the last time the wait was tried.
    fn run(
        host: &FakeHost,
        done_at: Option<u64>,
    ) -> (Vec<String>, Result<Duration, BesideKubelet<()>>, Duration) {
        let lines = RefCell::new(Vec::new());
        let last = RefCell::new(Duration::ZERO);
        let pacer = FakeCluster::new();
        let out = wait_beside_kubelet_check(
            &pacer,
            host,
            &|l| lines.borrow_mut().push(l.to_string()),
            |elapsed| {
                *last.borrow_mut() = elapsed;
                match done_at {
                    Some(at) if elapsed >= Duration::from_secs(at) => Step::Done(elapsed),
                    _ if elapsed >= Duration::from_secs(240) => Step::Failed(()),
                    _ => Step::Again(Duration::from_millis(500)),
                }
            },
        );
        (lines.into_inner(), out, last.into_inner())
    }

    /// Upstream's text and timing with nothing listening on 10248: the initial timeout at 40 s,
    /// then five failed probes at 40, 45, 55, 75 and 115 s, and the wait fails there, long
    /// before the other wait's own timeout.
    #[test]
    fn a_kubelet_that_never_answers_ends_the_wait_after_115_seconds() {
        let (lines, out, last) = run(&FakeHost::default(), None);
        let failed = [
            "[kubelet-check] It seems like the kubelet isn't running or healthy.",
            "[kubelet-check] The HTTP call equal to 'curl -sSL http://localhost:10248/healthz' failed with error: Get \"http://localhost:10248/healthz\": dial tcp 127.0.0.1:10248: connect: connection refused.",
        ];
        let mut want = vec!["[kubelet-check] Initial timeout of 40s passed.".to_string()];
        for _ in 0..5 {
            want.extend(failed.iter().map(|s| s.to_string()));
        }
        assert_eq!(lines, want);
        assert!(matches!(out, Err(BesideKubelet::Kubelet(_))), "{out:?}");
        assert_eq!(
            KubeletCheckTimeout.to_string(),
            "timed out waiting for the condition"
        );
        assert!(
            last >= Duration::from_secs(114) && last <= Duration::from_secs(115),
            "{last:?}"
        );
    }

    /// A healthy kubelet: the initial-timeout line (upstream prints it whenever the wait lasts
    /// 40 s), no probe line, and the other wait decides.
    #[test]
    fn a_healthy_kubelet_leaves_the_other_wait_to_decide() {
        let mut host = FakeHost::default();
        host.http.insert(HEALTHZ_URL.to_string(), Ok(200));
        let (lines, out, _) = run(&host, Some(100));
        assert_eq!(lines, ["[kubelet-check] Initial timeout of 40s passed."]);
        assert!(matches!(out, Ok(d) if d >= Duration::from_secs(100)), "{out:?}");
        let (_, out, last) = run(&host, None);
        assert!(matches!(out, Err(BesideKubelet::Wait(()))), "{out:?}");
        assert!(last >= Duration::from_secs(240), "{last:?}");
    }

    /// An unhealthy answer is reported with its code; a wait done within 40 s prints nothing.
    #[test]
    fn an_unhealthy_answer_is_named_and_a_short_wait_prints_nothing() {
        let mut host = FakeHost::default();
        host.http.insert(HEALTHZ_URL.to_string(), Ok(500));
        let (lines, out, _) = run(&host, None);
        assert_eq!(
            lines[2],
            "[kubelet-check] The HTTP call equal to 'curl -sSL http://localhost:10248/healthz' returned HTTP code 500"
        );
        assert!(matches!(out, Err(BesideKubelet::Kubelet(_))));
        let (lines, out, _) = run(&FakeHost::default(), Some(39));
        assert!(lines.is_empty(), "{lines:?}");
        assert!(out.is_ok());
    }
}
