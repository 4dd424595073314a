//! The init system that runs the kubelet: stopping and restarting services (systemd or OpenRC, as
//! upstream's `initsystem` package), or none at all.

use std::sync::Mutex;

/// Which init system manages services here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitSystemKind {
    /// `systemctl` is on PATH.
    Systemd,
    /// `openrc` is on PATH.
    OpenRc,
}

/// A service command that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{command}: {reason}")]
pub struct ServiceError {
    /// The command, e.g. `systemctl restart kubelet`.
    pub command: String,
    /// Why it failed (exit status or spawn error).
    pub reason: String,
}

/// Acting on services.
pub trait InitSystem: Send + Sync {
    /// The init system, or `None` when none kubeadm supports is found.
    fn kind(&self) -> Option<InitSystemKind>;
    /// Whether the service is known to the init system.
    fn service_exists(&self, service: &str) -> bool;
    /// Stops the service.
    fn service_stop(&self, service: &str) -> Result<(), ServiceError>;
    /// Reloads the init system's configuration and restarts the service.
    fn service_restart(&self, service: &str) -> Result<(), ServiceError>;
}

/// The dry-run decorator: answers questions from the wrapped init system, records the actions it
/// would have taken and takes none.
#[derive(Debug)]
pub struct DryRunInitSystem<I> {
    inner: I,
    actions: Mutex<Vec<String>>,
}

impl<I: InitSystem> DryRunInitSystem<I> {
    /// Wraps `inner`.
    pub fn new(inner: I) -> Self {
        Self {
            inner,
            actions: Mutex::new(Vec::new()),
        }
    }

    /// The actions it would have taken, e.g. `restart kubelet`.
    pub fn actions(&self) -> Vec<String> {
        self.actions.lock().map(|a| a.clone()).unwrap_or_default()
    }

    fn record(&self, action: String) {
        if let Ok(mut a) = self.actions.lock() {
            a.push(action);
        }
    }
}

impl<I: InitSystem> InitSystem for DryRunInitSystem<I> {
    fn kind(&self) -> Option<InitSystemKind> {
        self.inner.kind()
    }
    fn service_exists(&self, service: &str) -> bool {
        self.inner.service_exists(service)
    }
    fn service_stop(&self, service: &str) -> Result<(), ServiceError> {
        self.record(format!("stop {service}"));
        Ok(())
    }
    fn service_restart(&self, service: &str) -> Result<(), ServiceError> {
        self.record(format!("restart {service}"));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Refuses;
    impl InitSystem for Refuses {
        fn kind(&self) -> Option<InitSystemKind> {
            Some(InitSystemKind::Systemd)
        }
        fn service_exists(&self, _: &str) -> bool {
            true
        }
        fn service_stop(&self, _: &str) -> Result<(), ServiceError> {
            panic!("dry run stopped a service")
        }
        fn service_restart(&self, _: &str) -> Result<(), ServiceError> {
            panic!("dry run restarted a service")
        }
    }

    #[test]
    fn dry_run_records_instead_of_acting() {
        let d = DryRunInitSystem::new(Refuses);
        assert_eq!(d.kind(), Some(InitSystemKind::Systemd));
        d.service_stop("kubelet").expect("stop");
        d.service_restart("kubelet").expect("restart");
        assert_eq!(d.actions(), ["stop kubelet", "restart kubelet"]);
    }
}
