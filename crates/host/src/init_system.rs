//! The host's init system, found and driven as upstream does: `systemctl` on PATH means systemd,
//! `openrc` on PATH means OpenRC, otherwise there is none.

use std::process::Output;

use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};

use crate::path_lookup;

/// The init system of this host.
#[derive(Debug, Clone, Copy)]
pub struct HostInitSystem {
    kind: Option<InitSystemKind>,
}

impl HostInitSystem {
    /// Detects the init system from the commands on PATH.
    pub fn detect() -> Self {
        let kind = if on_path("systemctl") {
            Some(InitSystemKind::Systemd)
        } else if on_path("openrc") {
            Some(InitSystemKind::OpenRc)
        } else {
            None
        };
        Self { kind }
    }
}

/// Go's `exec.LookPath` for a bare name: an executable file in one of PATH's absolute directories
/// ([`path_lookup::look_path`]; never the current directory).
fn on_path(name: &str) -> bool {
    path_lookup::look_path(name).is_some()
}

/// Runs `program` (found on PATH as [`on_path`] finds it) with `args`.
fn output(program: &str, args: &[&str]) -> std::io::Result<Output> {
    path_lookup::command(program)?.args(args).output()
}

fn run(program: &str, args: &[&str]) -> Result<(), ServiceError> {
    let command = format!("{program} {}", args.join(" "));
    match output(program, args) {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(ServiceError {
            command,
            reason: out.status.to_string(),
        }),
        Err(e) => Err(ServiceError {
            command,
            reason: e.to_string(),
        }),
    }
}

impl InitSystem for HostInitSystem {
    fn kind(&self) -> Option<InitSystemKind> {
        self.kind
    }

    fn service_exists(&self, service: &str) -> bool {
        match self.kind {
            // systemd writes "Loaded: not-found" on stdout for unknown units.
            Some(InitSystemKind::Systemd) => output("systemctl", &["status", service])
                .is_ok_and(|o| !String::from_utf8_lossy(&o.stdout).contains("Loaded: not-found")),
            // OpenRC writes to stderr when a service does not exist.
            Some(InitSystemKind::OpenRc) => output("rc-service", &[service, "status"]).is_ok_and(|o| {
                let mut all = o.stdout;
                all.extend_from_slice(&o.stderr);
                !String::from_utf8_lossy(&all).contains("does not exist")
            }),
            None => false,
        }
    }

    fn service_stop(&self, service: &str) -> Result<(), ServiceError> {
        match self.kind {
            Some(InitSystemKind::Systemd) => run("systemctl", &["stop", service]),
            Some(InitSystemKind::OpenRc) => run("rc-service", &[service, "stop"]),
            None => Err(ServiceError {
                command: format!("stop {service}"),
                reason: "no supported init system".into(),
            }),
        }
    }

    fn service_restart(&self, service: &str) -> Result<(), ServiceError> {
        match self.kind {
            Some(InitSystemKind::Systemd) => {
                run("systemctl", &["daemon-reload"]).map_err(|e| ServiceError {
                    reason: format!("failed to reload systemd: {}", e.reason),
                    ..e
                })?;
                run("systemctl", &["restart", service])
            }
            Some(InitSystemKind::OpenRc) => run("rc-service", &[service, "restart"]),
            None => Err(ServiceError {
                command: format!("restart {service}"),
                reason: "no supported init system".into(),
            }),
        }
    }
}
