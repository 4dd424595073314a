//! etcd's step of the static-pod upgrade (upstream's `performEtcdStaticPodUpgrade`): its data
//! copied (and, beyond upstream, a snapshot taken) before etcd is touched, waited for after, and its
//! data copied back when it does not come back.

use super::*;

impl StaticPodUpgrade<'_> {
    /// Upstream's `performEtcdStaticPodUpgrade`.
    pub(super) fn etcd(
        &self,
        paths: &Paths,
        renewer: Option<&Renewer<'_>>,
        recover: &mut Recover,
        old_etcd: &dyn Etcd,
    ) -> Result<(), EtcdStep> {
        let Some(local) = &self.cfg.cluster.etcd.local else {
            return Err(EtcdStep::NonFatal(failed(
                "external etcd detected, won't try to change any etcd state",
            )));
        };
        check_cluster_health(old_etcd)
            .map_err(|e| EtcdStep::Fatal(failed(format!("etcd cluster is not healthy: {e}"))))?;

        let data_dir = PathBuf::from(&local.data_dir);
        // Beyond upstream: a consistent snapshot of this member through the etcd API first (the
        // copy below is of a live folder); a failure only costs the snapshot.
        let endpoint = kubeadm_core::manifests::client_url(&self.cfg.init.local_api_endpoint);
        let snapshot = paths.backup_etcd.join("snapshot.db");
        match old_etcd.snapshot(&endpoint) {
            Ok(db) => match self.fs.write(&snapshot, &db, 0o600) {
                Ok(()) => self.reporter.info(
                    1,
                    "staticpods.go",
                    &format!(
                        "[upgrade/etcd] snapshot of the etcd member at {endpoint} saved to {}",
                        snapshot.display()
                    ),
                ),
                Err(e) => self.reporter.warn(
                    "staticpods.go",
                    &format!("[upgrade/etcd] could not save the etcd snapshot: {e}"),
                ),
            },
            Err(e) => self.reporter.warn(
                "staticpods.go",
                &format!("[upgrade/etcd] could not take a snapshot of etcd: {e}"),
            ),
        }
        let backup = self.etcd_backup_copy(paths, &data_dir);
        self.fs
            .copy_dir(&data_dir, &backup)
            .map_err(|e| EtcdStep::Fatal(failed(format!("failed to back up etcd data: {e}"))))?;

        let desired = if local.image_tag.is_empty() {
            let (v, warning) = kubeadm_core::images::etcd_version_for(&self.cfg.cluster.kubernetes_version)
                .ok_or_else(|| {
                    EtcdStep::Fatal(failed(format!(
                        "failed to retrieve an etcd version for the target Kubernetes version: could not parse {:?} as version",
                        self.cfg.cluster.kubernetes_version
                    )))
                })?;
            if let Some(w) = warning {
                self.reporter
                    .warn("staticpods.go", &format!("[upgrade/etcd] {}", w.0));
            }
            v.to_string()
        } else {
            local.image_tag.replacen('_', "+", 1)
        };
        let desired_v = kubeadm_core::upgrade::version::SemanticVersion::parse(&desired).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "failed to parse tag {:?} as a semantic version: {e}",
                local.image_tag
            )))
        })?;
        let current = self.running_etcd_tag(paths).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "failed to retrieve the current etcd version: {e}"
            )))
        })?;
        let current_v = kubeadm_core::upgrade::version::SemanticVersion::parse(&current).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "failed comparing the current etcd version {current:?} to the desired one {desired:?}: {e}"
            )))
        })?;
        if desired_v.less_than(&current_v) {
            return Err(EtcdStep::NonFatal(failed(format!(
                "the desired etcd version {desired:?} is older than the currently installed {current:?}. Skipping etcd upgrade"
            ))));
        }
        let before = self.wait_for_single_hash(ETCD).map_err(EtcdStep::Fatal)?;
        let mut pod = manifests::etcd_pod(
            &self.cfg.cluster,
            &self.cfg.init.local_api_endpoint,
            self.node_name(),
            &[],
            &self.cfg.resolved,
        )
        .map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "error creating local etcd static pod manifest file: {e}"
            )))
        })?;
        self.as_non_root(&mut pod).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "error creating local etcd static pod manifest file: {e}"
            )))
        })?;
        self.write_manifest(&paths.temp, pod).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "error creating local etcd static pod manifest file: {e}"
            )))
        })?;

        let endpoints = old_etcd.endpoints();
        if let Err(e) = self.component(ETCD, renewer, paths, &before, recover, true) {
            self.say(&format!("[upgrade/etcd] Failed to upgrade etcd: {e}"));
            // The old manifest is back (or was never moved): if etcd does not answer, its data is
            // restored too.
            if let Err(wait) = self.wait_for_etcd(old_etcd, &endpoints, "previous etcd") {
                self.say(&format!(
                    "[upgrade/etcd] Failed to healthcheck previous etcd: {wait}"
                ));
                self.restore_etcd_data(&backup, &data_dir, paths)?;
                self.wait_for_previous_etcd(old_etcd, &endpoints, paths)?;
            }
            self.say("[upgrade/etcd] Etcd was rolled back and is now available");
            return Err(EtcdStep::Fatal(failed(format!(
                "fatal error when trying to upgrade the etcd cluster, rolled the state back to pre-upgrade state: {e}"
            ))));
        }

        // A new client: the upgraded members may answer on other URLs.
        let cert_dir = Path::new(&self.cfg.cluster.certificates_dir);
        let log = |m: &str| self.reporter.info(1, "etcd.go", m);
        let new_etcd = client_from_cluster(self.cluster, cert_dir, self.etcd, &log)
            .map_err(|e| EtcdStep::Fatal(failed(format!("fatal error creating etcd client: {e}"))))?;
        if let Err(wait) = self.wait_for_etcd(&*new_etcd, &new_etcd.endpoints(), "etcd") {
            self.say(&format!("[upgrade/etcd] Failed to healthcheck etcd: {wait}"));
            self.restore_etcd_data(&backup, &data_dir, paths)?;
            self.say("[upgrade/etcd] Rolling back etcd manifest");
            let _ = self.rollback(recover, wait.to_string(), paths, true);
            self.wait_for_previous_etcd(old_etcd, &endpoints, paths)?;
            self.say("[upgrade/etcd] Etcd was rolled back and is now available");
            return Err(EtcdStep::Fatal(failed(format!(
                "fatal error upgrading local etcd cluster, rolled the state back to pre-upgrade state: {wait}"
            ))));
        }
        Ok(())
    }

    /// Where the data folder's copy goes: inside the backup folder, under the data folder's own
    /// name, where upstream's `cp -r` puts it.
    pub(super) fn etcd_backup_copy(&self, paths: &Paths, data_dir: &Path) -> PathBuf {
        let name = data_dir
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "etcd".into());
        paths.backup_etcd.join(name)
    }

    /// `[upgrade/etcd] Waiting for <what> to become available`, up to 150 s as upstream.
    pub(super) fn wait_for_etcd(
        &self,
        etcd: &dyn Etcd,
        endpoints: &[String],
        what: &str,
    ) -> Result<(), WaitEtcdError> {
        self.say(&format!("[upgrade/etcd] Waiting for {what} to become available"));
        // On a terminal, the wait and its seconds so far on one line (nothing anywhere else).
        let waited = std::cell::Cell::new(Duration::ZERO);
        let label = format!("[upgrade/etcd] Waiting for {what} to become available");
        let pause = |d: Duration| {
            self.reporter.progress(&label, waited.get());
            self.cluster.pause(d);
            waited.set(waited.get() + d);
        };
        let available =
            wait_for_cluster_available(etcd, endpoints, ETCD_RETRIES, ETCD_RETRY_INTERVAL, &pause);
        self.reporter.progress_end();
        available
    }

    /// The last wait after a rollback: nothing is left to try when it fails.
    pub(super) fn wait_for_previous_etcd(
        &self,
        etcd: &dyn Etcd,
        endpoints: &[String],
        paths: &Paths,
    ) -> Result<(), EtcdStep> {
        self.wait_for_etcd(etcd, endpoints, "previous etcd").map_err(|wait| {
            self.say(&format!("[upgrade/etcd] Failed to healthcheck previous etcd: {wait}"));
            EtcdStep::Fatal(failed(format!(
                "fatal error rolling back local etcd cluster manifest, the backup of etcd database is stored here:({}): {wait}",
                paths.backup_etcd.display()
            )))
        })
    }

    /// Upstream's `rollbackEtcdData`, with its messages.
    pub(super) fn restore_etcd_data(
        &self,
        backup: &Path,
        data_dir: &Path,
        paths: &Paths,
    ) -> Result<(), EtcdStep> {
        self.say("[upgrade/etcd] Rolling back etcd data");
        self.copy_back_etcd_data(backup, data_dir).map_err(|e| {
            EtcdStep::Fatal(failed(format!(
                "fatal error rolling back local etcd cluster datadir: {e}, the backup of etcd database is stored here:({})",
                paths.backup_etcd.display()
            )))
        })?;
        self.say("[upgrade/etcd] Etcd data rollback successful");
        Ok(())
    }

    /// The data folder replaced by the backup copy (the current one moved aside first, then
    /// removed once the copy is in place).
    pub(super) fn copy_back_etcd_data(&self, backup: &Path, data_dir: &Path) -> std::io::Result<()> {
        let aside = data_dir.with_extension(format!("failed-{}", (self.random)() % 1_000_000));
        let moved = self.fs.exists(data_dir);
        if moved {
            self.fs.rename(data_dir, &aside)?;
        }
        self.fs.copy_dir(backup, data_dir)?;
        if moved {
            self.fs.remove_all(&aside)?;
        }
        Ok(())
    }

    /// The running etcd's image tag, as a semantic version (`_` for `+`).
    pub(super) fn running_etcd_tag(&self, paths: &Paths) -> Result<String, EtcdTagError> {
        let path = paths.real(ETCD);
        let bytes = self.fs.read(&path).map_err(|source| EtcdTagError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let pod = parse_manifest(&bytes).map_err(|source| EtcdTagError::Parse {
            path: path.display().to_string(),
            source,
        })?;
        let image = pod
            .pointer("/spec/containers/0/image")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tag = image
            .rsplit_once(':')
            .filter(|(_, t)| !t.contains('/'))
            .map(|(_, t)| t)
            .unwrap_or("");
        Ok(tag.replacen('_', "+", 1))
    }
}

/// What the etcd step ended with (upstream's `fatal` flag).
pub(super) enum EtcdStep {
    /// Stops the upgrade.
    Fatal(StaticPodUpgradeError),
    /// Printed; the control plane is upgraded anyway.
    NonFatal(StaticPodUpgradeError),
}
