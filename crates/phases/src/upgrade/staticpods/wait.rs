//! The waits of the static-pod upgrade: the mirror Pod's hash that must change and the Pods of a
//! component that must run, polled until the timeout.

use super::*;

impl StaticPodUpgrade<'_> {
    /// Polls `check` every `interval` until it answers or the timeout passes (on the wall clock, or
    /// counted in pauses when pausing does not sleep, as with the fakes); a terminal shows `what`
    /// is waited for meanwhile.
    pub(super) fn poll<T>(
        &self,
        what: &str,
        interval: Duration,
        mut check: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let start = Instant::now();
        let mut paused = Duration::ZERO;
        let answer = loop {
            if let Some(v) = check() {
                break Some(v);
            }
            let waited = start.elapsed().max(paused);
            if waited >= self.timeout {
                break None;
            }
            self.reporter.progress(what, waited);
            self.cluster.pause(interval);
            paused += interval;
        };
        self.reporter.progress_end();
        answer
    }

    pub(super) fn mirror_pod_hash(&self, component: &str) -> Result<String, MirrorPodHashError> {
        let node = self.node_name();
        let pod = self
            .cluster
            .get(
                &Resource::core("pods"),
                "kube-system",
                &format!("{component}-{node}"),
            )
            .map_err(|source| MirrorPodHashError {
                component: component.to_string(),
                node: node.to_string(),
                source,
            })?;
        Ok(pod
            .pointer("/metadata/annotations/kubernetes.io~1config.hash")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    /// Upstream's `WaitForStaticPodSingleHash`.
    pub(super) fn wait_for_single_hash(&self, component: &str) -> Result<String, StaticPodUpgradeError> {
        let mut last: Option<MirrorPodHashError> = None;
        let what = format!("[upgrade/staticpods] Waiting for the mirror Pod of {component}");
        self.poll(&what, HASH_POLL_INTERVAL, || {
            match self.mirror_pod_hash(component) {
                Ok(h) => Some(h),
                Err(e) => {
                    last = Some(e);
                    None
                }
            }
        })
        .ok_or_else(|| failed(last.as_ref().map(ToString::to_string).unwrap_or_default()))
    }

    /// Upstream's `WaitForStaticPodHashChange`.
    pub(super) fn wait_for_hash_change(
        &self,
        component: &str,
        before: &str,
    ) -> Result<(), ComponentWaitError> {
        let mut last: Option<MirrorPodHashError> = None;
        let what = format!("[upgrade/staticpods] Waiting for the kubelet to restart {component}");
        let changed = self.poll(&what, HASH_POLL_INTERVAL, || {
            match self.mirror_pod_hash(component) {
                Err(e) => {
                    last = Some(e);
                    None
                }
                Ok(h) => {
                    last = None;
                    (h != before).then_some(())
                }
            }
        });
        match (changed, last) {
            (Some(()), _) => Ok(()),
            (None, Some(e)) => Err(ComponentWaitError::Hash(e)),
            (None, None) => Err(ComponentWaitError::HashUnchanged {
                component: component.to_string(),
                node: self.node_name().to_string(),
                timeout: go_duration(self.timeout),
            }),
        }
    }

    /// Upstream's `WaitForPodsWithLabel`: every Pod with the label Running.
    pub(super) fn wait_for_pods_with_label(&self, selector: &str) -> Result<(), ComponentWaitError> {
        let mut last_count: Option<usize> = None;
        let options = ListOptions {
            label_selector: selector.to_string(),
            ..ListOptions::default()
        };
        let what = format!("[upgrade/staticpods] Waiting for the Pods {selector} to run");
        self.poll(&what, POLL_INTERVAL, || {
            let pods = match self
                .cluster
                .list(&Resource::core("pods"), "kube-system", &options)
            {
                Ok(p) => p,
                Err(e) => {
                    self.say(&format!(
                        "[apiclient] Error getting Pods with label selector {selector:?} [{e}]"
                    ));
                    return None;
                }
            };
            if last_count != Some(pods.len()) {
                self.say(&format!(
                    "[apiclient] Found {} Pods for label selector {selector}",
                    pods.len()
                ));
                last_count = Some(pods.len());
            }
            let running = !pods.is_empty()
                && pods
                    .iter()
                    .all(|p| p.pointer("/status/phase").and_then(Value::as_str) == Some("Running"));
            running.then_some(())
        })
        .ok_or(ComponentWaitError::PodsNotRunning)
    }
}
