//! The way back: every manifest moved so far moved back (upstream's `rollbackOldManifests`), after
//! the component that did not come up is diagnosed (beyond upstream).

use super::*;

impl StaticPodUpgrade<'_> {
    /// Upstream's `rollbackOldManifests`: every backed-up manifest moved back (etcd's only when
    /// `restore_etcd`); always an error, naming `cause` and what the rollback itself hit.
    pub(super) fn rollback(
        &self,
        recover: &Recover,
        cause: String,
        paths: &Paths,
        restore_etcd: bool,
    ) -> StaticPodUpgradeError {
        let mut errors = vec![cause];
        for (component, backup) in recover {
            if component == ETCD && !restore_etcd {
                continue;
            }
            let real = paths.real(component);
            if let Err(e) = self.fs.rename(backup, &real) {
                errors.push(go_rename_error(backup, &real, &e));
            }
        }
        let all = if errors.len() == 1 {
            errors.remove(0)
        } else {
            format!("[{}]", errors.join(", "))
        };
        failed(format!(
            "couldn't upgrade control plane. kubeadm has tried to recover everything into the earlier state. Errors faced: {all}"
        ))
    }
}

impl StaticPodUpgrade<'_> {
    /// Beyond upstream: what the runtime says of the component's newest container (and, for
    /// kube-apiserver, its `/readyz` checks), printed before the rollback, so that the cause is on
    /// screen (a bad flag, a missing file, a crash loop, etcd unusable).
    pub(super) fn diagnose(&self, component: &str) {
        if component == "kube-apiserver" {
            let f = crate::diagnose::api_server(self.cluster);
            self.say(&format!("[upgrade/staticpods] Diagnosis: {}", f.marked()));
        }
        for line in crate::diagnose::containers(self.runtime, self.fs, &[component]) {
            match line.strip_prefix("  ") {
                Some(log) => self.say(&format!("[upgrade/staticpods]   {log}")),
                None => self.say(&format!("[upgrade/staticpods] Diagnosis: {line}")),
            }
        }
    }
}
