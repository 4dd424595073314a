//! The certificates renewed for each component during the static-pod upgrade (upstream's renewal
//! manager, `RenewUsingLocalCA` by name).

use super::*;

/// Upstream's renewal manager as the upgrade uses it: `RenewUsingLocalCA` by name.
pub(super) struct Renewer<'a> {
    up: &'a StaticPodUpgrade<'a>,
    handlers: Vec<Handler>,
}

impl<'a> Renewer<'a> {
    pub(super) fn new(up: &'a StaticPodUpgrade<'a>) -> Self {
        let cert_dir = Path::new(&up.cfg.cluster.certificates_dir);
        let etcd = kubeadm_phases_pki_etcd_mode(up.cfg);
        Self {
            up,
            handlers: handlers(&up.kubernetes_dir, cert_dir, &etcd),
        }
    }

    /// Renews one certificate; `Ok(false)` when its CA is external.
    pub(super) fn renew(&self, name: &str) -> Result<bool, RenewError> {
        let h = self
            .handlers
            .iter()
            .find(|h| h.name == name)
            .ok_or_else(|| RenewError::Unknown(name.to_string()))?;
        let alg = crate::pki::pki_inputs(self.up.cfg).key_algorithm;
        let key = crate::pki::KeyPool::default()
            .take(self.up.keygen, alg)
            .map_err(RenewError::Key)?;
        let cert_dir = Path::new(&self.up.cfg.cluster.certificates_dir);
        renew_using_local_ca(self.up.fs, h, cert_dir, &key, self.up.now, (self.up.random)())
            .map_err(RenewError::Renewal)
    }

    /// Upstream's `renewCertsByComponent`.
    pub(super) fn renew_for_component(&self, component: &str) -> Result<(), RenewError> {
        let local = self.up.cfg.cluster.etcd.local.is_some();
        let names: Vec<&str> = match component {
            ETCD if local => vec!["etcd-server", "etcd-peer", "etcd-healthcheck-client"],
            "kube-apiserver" => {
                let mut n = vec!["apiserver", "apiserver-kubelet-client", "front-proxy-client"];
                if local {
                    n.push("apiserver-etcd-client");
                }
                n
            }
            "kube-controller-manager" => vec!["controller-manager.conf"],
            "kube-scheduler" => vec!["scheduler.conf"],
            _ => vec![],
        };
        for name in names {
            self.up
                .say(&format!("[upgrade/staticpods] Renewing {name} certificate"));
            if !self.renew(name)? {
                self.up.say(&format!(
                    "[upgrade/staticpods] External CA detected, {name} certificate can't be renewed"
                ));
            }
        }
        Ok(())
    }
}

/// The etcd mode the renewal table is built for.
fn kubeadm_phases_pki_etcd_mode(cfg: &InitConfig) -> EtcdMode {
    crate::pki::pki_inputs(cfg).etcd
}
