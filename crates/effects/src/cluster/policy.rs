//! Upstream's write policies (`apiclient/idempotency.go`) and its two retry shapes (apimachinery's
//! `wait.Poll`/`PollImmediate` and `wait.ExponentialBackoff`), on top of the plain calls.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    API_CALL_RETRY_INTERVAL, API_CALL_WITH_WRITE_TIMEOUT, Cluster, ClusterError, PATCH_NODE_RETRY_INTERVAL,
    PATCH_NODE_TIMEOUT, PatchType, Resource, object_key,
};

/// What one attempt of a retry loop came to.
#[derive(Debug)]
pub enum Attempt<T> {
    /// Done, with this value.
    Done(T),
    /// Try again; `Some` replaces the error reported if the loop runs out of time.
    Retry(Option<ClusterError>),
    /// Stop now with this error.
    Fail(ClusterError),
}

impl<T> From<Result<T, ClusterError>> for Attempt<T> {
    fn from(r: Result<T, ClusterError>) -> Self {
        match r {
            Ok(v) => Attempt::Done(v),
            Err(e) => Attempt::Retry(Some(e)),
        }
    }
}

/// apimachinery's `wait.PollImmediate`: the first attempt at once, then one every `interval`.
/// (Its `wait.Poll`, which first waits one interval, is not used: where upstream polls so, the
/// first attempt is made at once here, as nothing is printed per attempt.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Poll {
    /// Time between attempts.
    pub interval: Duration,
    /// When to give up.
    pub timeout: Duration,
}

impl Poll {
    /// `wait.PollImmediate(interval, timeout, …)`.
    pub fn immediate(interval: Duration, timeout: Duration) -> Self {
        Self { interval, timeout }
    }

    /// Runs `attempt` until it is done or fails, or the time is up; then the last error (as
    /// upstream returns its `lastError`), or [`ClusterError::WaitTimeout`] when there was none.
    /// Time is the larger of the wall clock and the sum of pauses, so a fake whose pauses take no
    /// time still sees the same number of attempts.
    pub fn run<C, T, F>(&self, cluster: &C, mut attempt: F) -> Result<T, ClusterError>
    where
        C: Cluster + ?Sized,
        F: FnMut() -> Attempt<T>,
    {
        let start = Instant::now();
        let mut paused = Duration::ZERO;
        let mut last = None;
        loop {
            match attempt() {
                Attempt::Done(v) => return Ok(v),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(Some(e)) => last = Some(e),
                Attempt::Retry(None) => {}
            }
            let elapsed = start.elapsed().max(paused);
            if elapsed + self.interval > self.timeout {
                return Err(last.unwrap_or(ClusterError::WaitTimeout { last: None }));
            }
            cluster.pause(self.interval);
            paused += self.interval;
        }
    }
}

/// apimachinery's `wait.Backoff` as `wait.ExponentialBackoff` runs it: `steps` attempts, pausing
/// `duration` after the first and multiplying it by `factor` each time. (Upstream's jitter of 10%
/// on the 10ms default is left out: it only spreads retries of many clients.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// How many attempts.
    pub steps: u32,
    /// The first pause.
    pub duration: Duration,
    /// The growth of each pause.
    pub factor: f64,
}

impl Backoff {
    /// client-go's `retry.DefaultBackoff`.
    pub const DEFAULT: Backoff = Backoff {
        steps: 4,
        duration: Duration::from_millis(10),
        factor: 5.0,
    };

    /// The backoff of upstream's `apiclient.TryRunCommand(f, 5)`.
    pub const TRY_RUN_COMMAND: Backoff = Backoff {
        steps: 5,
        duration: Duration::from_secs(5),
        factor: 2.0,
    };

    /// Runs `attempt` (`Ok(Some)`: done; `Ok(None)`: try again; `Err`: try again, remembered)
    /// up to `steps` times; then the last error, or [`ClusterError::WaitTimeout`].
    pub fn run<C, T, F>(&self, cluster: &C, mut attempt: F) -> Result<T, ClusterError>
    where
        C: Cluster + ?Sized,
        F: FnMut() -> Result<Option<T>, ClusterError>,
    {
        let mut pause = self.duration;
        let mut last = None;
        for step in 0..self.steps {
            match attempt() {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(e) => last = Some(e),
            }
            if step + 1 < self.steps {
                cluster.pause(pause);
                pause = pause.mul_f64(self.factor);
            }
        }
        Err(last.unwrap_or(ClusterError::WaitTimeout { last: None }))
    }
}

pub(super) fn create_or_update<C: Cluster + ?Sized>(
    cluster: &C,
    resource: &Resource,
    object: &Value,
) -> Result<(), ClusterError> {
    match cluster.create(resource, object) {
        Ok(_) => Ok(()),
        Err(e) if !e.is_already_exists() => Err(e.context(format!("unable to create {}", resource.noun()))),
        Err(_) => match cluster.update(resource, object) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.context(format!("unable to update {}", resource.noun()))),
        },
    }
}

pub(super) fn create_or_retain<C: Cluster + ?Sized>(
    cluster: &C,
    resource: &Resource,
    object: &Value,
) -> Result<(), ClusterError> {
    let (namespace, name) = object_key(object);
    match cluster.get(resource, namespace, name) {
        // Upstream treats any error but NotFound as "it is there" and writes nothing.
        Ok(_) => Ok(()),
        Err(e) if !e.is_not_found() => Ok(()),
        Err(_) => match cluster.create(resource, object) {
            Err(e) if !e.is_already_exists() => {
                Err(e.context(format!("unable to create {}", resource.noun())))
            }
            _ => Ok(()),
        },
    }
}

pub(super) fn mutate_config_map<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
    mutate: &mut dyn FnMut(&mut Value),
) -> Result<(), ClusterError> {
    let resource = Resource::config_maps();
    Poll::immediate(API_CALL_RETRY_INTERVAL, API_CALL_WITH_WRITE_TIMEOUT).run(cluster, || {
        let mut config_map = match cluster.get(&resource, namespace, name) {
            Ok(cm) => cm,
            Err(e) => return Attempt::Retry(Some(e)),
        };
        mutate(&mut config_map);
        cluster.update(&resource, &config_map).map(|_| ()).into()
    })
}

pub(super) fn create_or_mutate_config_map<C: Cluster + ?Sized>(
    cluster: &C,
    object: &Value,
    mutate: &mut dyn FnMut(&mut Value),
) -> Result<(), ClusterError> {
    let resource = Resource::config_maps();
    let (namespace, name) = object_key(object);
    Poll::immediate(API_CALL_RETRY_INTERVAL, API_CALL_WITH_WRITE_TIMEOUT).run(cluster, || {
        match cluster.create(&resource, object) {
            Ok(_) => Attempt::Done(()),
            Err(e) if e.is_already_exists() => mutate_config_map(cluster, namespace, name, mutate).into(),
            Err(e) => Attempt::Retry(Some(e)),
        }
    })
}

pub(super) fn patch_node<C: Cluster + ?Sized>(
    cluster: &C,
    name: &str,
    make_patch: &mut dyn FnMut(&Value) -> Value,
) -> Result<(), ClusterError> {
    let nodes = Resource::nodes();
    let result = Poll::immediate(PATCH_NODE_RETRY_INTERVAL, PATCH_NODE_TIMEOUT).run(cluster, || {
        let node = match cluster.get(&nodes, "", name) {
            Ok(node) => node,
            Err(e) => return Attempt::Retry(Some(e)),
        };
        // The kubelet sets the hostname label when it registers the Node; until then, wait.
        let has_hostname = node
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .is_some_and(|labels| labels.contains_key("kubernetes.io/hostname"));
        if !has_hostname {
            return Attempt::Retry(None);
        }
        let patch = make_patch(&node);
        match cluster.patch(&nodes, "", name, PatchType::Strategic, &patch) {
            Ok(_) => Attempt::Done(()),
            Err(e) => {
                let retry = e.is_timeout() || e.is_conflict();
                let e = e.context(format!("error patching node {name:?} through apiserver"));
                if retry {
                    Attempt::Retry(Some(e))
                } else {
                    Attempt::Fail(e)
                }
            }
        }
    });
    match result {
        // Upstream returns its (nil) last error when the Node never got its hostname label, so the
        // phase goes on; kept as is.
        Err(ClusterError::WaitTimeout { last: None }) => Ok(()),
        other => other,
    }
}

pub(super) fn create_or_update_token_secret<C: Cluster + ?Sized>(
    cluster: &C,
    token_id: &str,
    secret: &Value,
    fail_if_exists: bool,
) -> Result<(), ClusterError> {
    let secrets = Resource::secrets();
    let (namespace, name) = object_key(secret);
    if cluster.get(&secrets, namespace, name).is_ok() && fail_if_exists {
        return Err(ClusterError::TokenExists {
            id: token_id.to_string(),
        });
    }
    Backoff::TRY_RUN_COMMAND
        .run(cluster, || create_or_update(cluster, &secrets, secret).map(Some))
        .map_err(|e| ClusterError::WaitTimeout {
            last: Some(Box::new(e.context(format!(
                "failed to create or update bootstrap token with name {name}"
            )))),
        })
}

pub(super) fn wait_for_api<C: Cluster + ?Sized>(
    cluster: &C,
    timeout: Duration,
) -> Result<Duration, ClusterError> {
    let start = Instant::now();
    let mut paused = Duration::ZERO;
    let mut delay = Duration::from_millis(50);
    let mut last = None;
    loop {
        match cluster.healthy() {
            Ok(true) => return Ok(start.elapsed().max(paused)),
            Ok(false) => {}
            Err(e) => last = Some(Box::new(e)),
        }
        let elapsed = start.elapsed().max(paused);
        if elapsed >= timeout {
            return Err(ClusterError::WaitTimeout { last });
        }
        let pause = delay.min(timeout - elapsed);
        cluster.pause(pause);
        paused += pause;
        delay = (delay * 2).min(API_CALL_RETRY_INTERVAL);
    }
}
