//! Reading what the kubelet mirrors of the static pods (the etcd Pods' client URLs, the API server
//! Pod's advertise endpoint): a static pod may not be mirrored yet, so each read is retried as
//! upstream's `StaticPodMirroringDefaultRetry` does for 30 s; upstream tries once a second, here
//! five times a second (nothing is printed per try), so a Pod mirrored late is read sooner.

use std::time::Duration;

use kubeadm_effects::cluster::Cluster;

const STEPS: u32 = 150;
const INTERVAL: Duration = Duration::from_millis(200);

/// Calls `read` until it answers, pausing between tries through `cluster`; after the last try,
/// its last error.
pub(crate) fn retry<T, E>(cluster: &dyn Cluster, mut read: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut attempt = 1;
    loop {
        match read() {
            Ok(v) => return Ok(v),
            Err(e) if attempt >= STEPS => return Err(e),
            Err(_) => {}
        }
        cluster.pause(INTERVAL);
        attempt += 1;
    }
}
