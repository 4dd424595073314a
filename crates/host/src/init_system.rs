//! The host's init system, found and driven as upstream does: `systemctl` on PATH means systemd,
//! `openrc` on PATH means OpenRC, otherwise there is none.

use std::path::Path;
use std::process::Command;

use kubeadm_effects::init_system::{InitSystem, InitSystemKind, ServiceError};

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

/// Go's `exec.LookPath` for a bare name: an executable regular file in one of PATH's directories.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = if dir.as_os_str().is_empty() {
                Path::new(".").join(name)
            } else {
                dir.join(name)
            };
            std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

fn run(program: &str, args: &[&str]) -> Result<(), ServiceError> {
    let command = format!("{program} {}", args.join(" "));
    match Command::new(program).args(args).output() {
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
            Some(InitSystemKind::Systemd) => Command::new("systemctl")
                .args(["status", service])
                .output()
                .is_ok_and(|o| !String::from_utf8_lossy(&o.stdout).contains("Loaded: not-found")),
            // OpenRC writes to stderr when a service does not exist.
            Some(InitSystemKind::OpenRc) => Command::new("rc-service")
                .args([service, "status"])
                .output()
                .is_ok_and(|o| {
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
