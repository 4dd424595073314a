//! [`Effects`]: every effect one run of a workflow acts through, chosen once (real, or the dry-run
//! decorators) by the binary's setup and embedded in the workflow's data, so that no phase chooses
//! between the real and the dry-run world itself and no workflow carries its own copy of the set.
//!
//! The API server is not in the set: which server a workflow talks to, and when it connects, is part
//! of the workflow (init connects with the `admin.conf` it wrote, join with what discovery found,
//! reset and upgrade with `--kubeconfig`), so each workflow's data keeps its own connector.

use std::fmt;
use std::sync::Arc;

use crate::cri::Runtime;
use crate::etcd::EtcdConnector;
use crate::fs::Fs;
use crate::host_probe::HostProbe;
use crate::init_system::InitSystem;
use crate::keygen::KeyGen;
use crate::report::Reporter;

/// Opens the container runtime at a CRI endpoint (`unix://…` or a socket path). Opening never
/// fails: a runtime that cannot be reached fails at its first call, as upstream's `crictl` does.
pub type CriConnector = Arc<dyn Fn(&str) -> Box<dyn Runtime> + Send + Sync>;

/// The clock, as Unix seconds.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The effects of one run. Cloning shares them: a joining control plane's init phases act through
/// the join's (in a dry run, one file-system overlay for both).
#[derive(Clone)]
pub struct Effects {
    /// The file system (the host's, or the dry-run overlay over it).
    pub fs: Arc<dyn Fs>,
    /// The init system that runs the kubelet (or the dry-run decorator that only says what it would do).
    pub init_system: Arc<dyn InitSystem>,
    /// What the preflight checks read from the host.
    pub host_probe: Arc<dyn HostProbe>,
    /// Opens the container runtime at an endpoint.
    pub cri: CriConnector,
    /// Connects to the etcd cluster (never called in a dry run).
    pub etcd: EtcdConnector,
    /// Generates private keys.
    pub keygen: Arc<dyn KeyGen>,
    /// Now, Unix seconds.
    pub clock: Clock,
    /// Random 64-bit values from the operating system's CSPRNG (serial numbers, token characters,
    /// temporary names).
    pub random: fn() -> u64,
    /// Where output goes.
    pub reporter: Arc<dyn Reporter>,
}

impl Effects {
    /// The runtime at `endpoint`.
    pub fn runtime(&self, endpoint: &str) -> Box<dyn Runtime> {
        (self.cri)(endpoint)
    }

    /// Now, Unix seconds.
    pub fn now(&self) -> i64 {
        (self.clock)()
    }
}

impl fmt::Debug for Effects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Effects")
            .field("host_probe", &self.host_probe)
            .finish_non_exhaustive()
    }
}
