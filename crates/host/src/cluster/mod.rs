//! The real API server client: kube-rs over rustls (aws-lc-rs), configured from a kubeconfig file
//! such as `admin.conf` — server, CA and client certificate from the file, TLS verification on.
//!
//! **Sync over async.** The phases are synchronous, so [`KubeCluster`] owns a current-thread tokio
//! runtime and blocks on it for each call. Unlike the CRI client, which builds a runtime per call,
//! the runtime lives as long as the client: kube's `Client` runs its request buffer as a task on the
//! runtime it was built in, so the two must stay together. (When the caller is itself inside a
//! tokio runtime, where `block_on` would panic, the call runs on a scoped thread.)
//!
//! **Objects are JSON.** Requests are built with kube's `Request` builder on REST paths made from
//! the [`Resource`] (`/api/v1/namespaces/<ns>/configmaps`, `/apis/<group>/<version>/...`), bodies
//! and answers are `serde_json::Value`, so any kind works without a typed struct and the object
//! sent is exactly the one the core built.
//!
//! **Errors.** An error Status becomes the matching [`ClusterError`] with the API server's message;
//! a failed connection (refused, reset, timed out) becomes [`ClusterError::Unavailable`] naming the
//! call and the URL.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::Request;
use kubeadm_effects::cluster::{
    Call, Cluster, ClusterError, ListOptions, PatchType, Propagation, Resource, Verb, object_key,
};
use serde_json::Value;

mod bootstrap;
pub use bootstrap::MAX_UNTRUSTED_ANSWER;
mod redact;

/// How long one request may take before it counts as unavailable (client-go's kubeadm clients
/// have no overall timeout; a bound keeps a hung server from hanging `init`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig could not be read or used.
    #[error("failed to load admin kubeconfig {path}: {message}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The kubeconfig's user authenticates with an auth provider. client-go finds no plugin of that
    /// name in kubeadm (it registers none); kube would run a `gcp` provider's `cmd-path`, so none is
    /// ever used.
    #[error("failed to create API client from {path}: no Auth Provider found for name {name:?}")]
    AuthProvider {
        /// The kubeconfig file.
        path: PathBuf,
        /// The provider's name.
        name: String,
    },
    /// The kubeconfig's exec credential plugin is not found on PATH (relative and empty PATH
    /// entries are skipped, as Go's `exec.LookPath` refuses them).
    #[error(
        "failed to create API client from {path}: getting credentials: exec: executable {command} not found"
    )]
    ExecNotFound {
        /// The kubeconfig file.
        path: PathBuf,
        /// The plugin's command.
        command: String,
    },
    /// The I/O runtime or the HTTP client could not be set up.
    #[error("failed to create API client from {path}: {message}")]
    Client {
        /// The kubeconfig file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// The API server named by a kubeconfig.
pub struct KubeCluster {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    server: String,
    /// For a server not trusted yet (token discovery's first read): when every answer must have
    /// come, whole, by, and the time it was given (see `bootstrap.rs`).
    untrusted_until: Option<(std::time::Instant, Duration)>,
}

impl std::fmt::Debug for KubeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeCluster")
            .field("server", &self.server)
            .finish()
    }
}

impl KubeCluster {
    /// A client for the cluster, user and context the kubeconfig file selects.
    pub fn from_kubeconfig(path: &Path) -> Result<Self, ClientError> {
        let kubeconfig = Kubeconfig::read_from(path).map_err(|e| ClientError::Kubeconfig {
            path: path.to_path_buf(),
            message: redact::describe(&e),
        })?;
        Self::from_parsed(kubeconfig, path)
    }

    /// A client from an already parsed kubeconfig; `path` names it in errors.
    fn from_parsed(kubeconfig: Kubeconfig, path: &Path) -> Result<Self, ClientError> {
        let label = path.to_path_buf();
        Self::connect(path, async move {
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| ClientError::Kubeconfig {
                    path: label.clone(),
                    message: redact::describe(&e),
                })?;
            runnable_credentials(config, &label)
        })
    }

    /// Builds the client from the configuration `make` yields, inside the client's own runtime (kube
    /// may run exec plugins or read files while building it), with kubeadm's User-Agent and timeouts.
    fn connect(
        path: &Path,
        make: impl Future<Output = Result<kube::Config, ClientError>> + Send,
    ) -> Result<Self, ClientError> {
        // kube reaches rustls through the process-wide provider; aws-lc-rs is the only one built.
        // An error only means some other part of the process installed it first.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClientError::Client {
                path: path.to_path_buf(),
                message: format!("cannot start the I/O runtime: {e}"),
            })?;
        let client = block_on(&runtime, async {
            let mut config = make.await?;
            // Upstream's client-go User-Agent: the API server records writes under the name before
            // its first `/` (`managedFields[].manager: kubeadm`).
            let argv0 = std::env::args().next().unwrap_or_default();
            if let Ok(agent) = http::HeaderValue::from_str(&kubeadm_api::version::user_agent(&argv0)) {
                config.headers.push((http::header::USER_AGENT, agent));
            }
            config.connect_timeout = Some(Duration::from_secs(10));
            config.read_timeout = Some(REQUEST_TIMEOUT);
            config.write_timeout = Some(REQUEST_TIMEOUT);
            let server = config.cluster_url.to_string();
            let client = kube::Client::try_from(config).map_err(|e| ClientError::Client {
                path: path.to_path_buf(),
                message: redact::describe(&e),
            })?;
            Ok::<_, ClientError>((client, server))
        })
        .map_err(|e| ClientError::Client {
            path: path.to_path_buf(),
            message: e.to_string(),
        })??;
        Ok(Self {
            runtime,
            client: client.0,
            server: client.1.trim_end_matches('/').to_string(),
            untrusted_until: None,
        })
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The API server's `/version` document (`gitVersion`, …), as client-go's discovery
    /// `ServerVersion` reads it (`kubeadm upgrade plan` reports the cluster version from it).
    pub fn server_version(&self) -> Result<Value, ClusterError> {
        let call = Call::new(Verb::Get, &Resource::new("", "", "version"), "", "");
        let request = Request::new("")
            .get("version", &GetParams::default())
            .map_err(|e| Self::build_error(&call, e))?;
        let client = self.client.clone();
        self.run(&call, async move { client.request::<Value>(request).await })
    }

    fn run<T: Send>(
        &self,
        call: &Call,
        future: impl Future<Output = Result<T, kube::Error>> + Send,
    ) -> Result<T, ClusterError> {
        let result = block_on(&self.runtime, future).map_err(|e| ClusterError::Client {
            call: Box::new(call.clone()),
            message: format!("cannot run the request: {e}"),
        })?;
        result.map_err(|e| self.classify(call, e))
    }

    fn classify(&self, call: &Call, error: kube::Error) -> ClusterError {
        match error {
            kube::Error::Api(status) => {
                ClusterError::from_status(call.clone(), status.code, &status.reason, &status.message)
            }
            e @ (kube::Error::HyperError(_) | kube::Error::Service(_)) => {
                match crate::https::certificate_rejected(&e) {
                    Some(why) => ClusterError::Untrusted {
                        call: Box::new(call.clone()),
                        message: format!("{}: {why}", self.url(call)),
                    },
                    None => ClusterError::Unavailable {
                        call: Box::new(call.clone()),
                        message: format!("{}: {}", self.url(call), redact::describe(&e)),
                    },
                }
            }
            other => ClusterError::Client {
                call: Box::new(call.clone()),
                message: redact::describe(&other),
            },
        }
    }

    fn url(&self, call: &Call) -> String {
        let mut url = format!(
            "{}{}",
            self.server,
            collection_path(&call.resource, &call.namespace)
        );
        if !call.name.is_empty() {
            url.push('/');
            url.push_str(&call.name);
        }
        url
    }

    fn request(&self, call: &Call) -> Request {
        Request::new(collection_path(&call.resource, &call.namespace))
    }

    fn body(call: &Call, object: &Value) -> Result<Vec<u8>, ClusterError> {
        serde_json::to_vec(object).map_err(|e| ClusterError::Client {
            call: Box::new(call.clone()),
            message: format!("cannot encode the object: {e}"),
        })
    }

    fn build_error(call: &Call, e: impl std::fmt::Display) -> ClusterError {
        ClusterError::Client {
            call: Box::new(call.clone()),
            message: format!("cannot build the request: {e}"),
        }
    }
}

/// Sends a request built by kube's `Request` builder and reads the answer as JSON. A macro rather
/// than a method: the builder's `http::Request` type cannot be named without another dependency.
macro_rules! send {
    ($self:expr, $call:expr, $built:expr) => {{
        let call: &Call = $call;
        match $built {
            Err(e) => Err(KubeCluster::build_error(call, e)),
            Ok(request) => {
                let client = $self.client.clone();
                $self.run(call, async move { client.request::<Value>(request).await })
            }
        }
    }};
}

/// The checks a verbose health answer marks failed (`[-]etcd failed: reason withheld`); the whole
/// answer when it is neither `ok` nor such a list.
fn failing_checks(body: &str) -> Vec<String> {
    let body = body.trim();
    let failed: Vec<String> = body
        .lines()
        .filter_map(|l| l.strip_prefix("[-]"))
        .map(|l| l.trim().to_string())
        .collect();
    let listed = body.lines().any(|l| l.starts_with("[+]"));
    if failed.is_empty() && !listed && body != "ok" {
        return vec![body.to_string()];
    }
    failed
}

/// The configuration with its credentials made safe to use before kube acts on them (building the
/// client runs the user's credential plugin): an auth provider is refused, as upstream's client
/// finds none registered (kube would run a `gcp` provider's `cmd-path`); an exec plugin named by a
/// bare command runs from the absolute path it is found at, never from the current directory.
fn runnable_credentials(mut config: kube::Config, path: &Path) -> Result<kube::Config, ClientError> {
    if let Some(provider) = &config.auth_info.auth_provider {
        return Err(ClientError::AuthProvider {
            path: path.to_path_buf(),
            name: provider.name.clone(),
        });
    }
    if let Some(command) = config
        .auth_info
        .exec
        .as_mut()
        .and_then(|e| e.command.as_mut())
        .filter(|c| !c.contains('/'))
    {
        let found = crate::path_lookup::look_path(command).ok_or_else(|| ClientError::ExecNotFound {
            path: path.to_path_buf(),
            command: command.clone(),
        })?;
        *command = found.display().to_string();
    }
    Ok(config)
}

/// The REST path of a resource's collection, in a namespace or cluster-wide.
fn collection_path(resource: &Resource, namespace: &str) -> String {
    // Non-resource paths (`/healthz`) have no version.
    if resource.version.is_empty() {
        return format!("/{}", resource.plural);
    }
    let mut path = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    if !namespace.is_empty() {
        path.push_str("/namespaces/");
        path.push_str(namespace);
    }
    path.push('/');
    path.push_str(&resource.plural);
    path
}

/// Blocks on `future` in `runtime`; on a scoped thread when the caller is inside a tokio runtime.
fn block_on<F>(runtime: &tokio::runtime::Runtime, future: F) -> io::Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(runtime.block_on(future));
    }
    std::thread::scope(|scope| match scope.spawn(|| runtime.block_on(future)).join() {
        Ok(output) => Ok(output),
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

impl Cluster for KubeCluster {
    fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, ClusterError> {
        let call = Call::new(Verb::Get, resource, resource.scope(namespace), name);
        if let Some((until, given)) = self.untrusted_until {
            return self.get_untrusted(&call, until, given);
        }
        send!(self, &call, self.request(&call).get(name, &GetParams::default()))
    }

    fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ClusterError> {
        let call = Call::new(Verb::List, resource, resource.scope(namespace), "");
        let list = self.list_object(resource, namespace, options)?;
        match list.get("items") {
            Some(Value::Array(items)) => Ok(items.clone()),
            Some(Value::Null) | None => Ok(Vec::new()),
            Some(_) => Err(ClusterError::Client {
                call: Box::new(call),
                message: "the list's items are not an array".to_string(),
            }),
        }
    }

    fn list_object(
        &self,
        resource: &Resource,
        namespace: &str,
        options: &ListOptions,
    ) -> Result<Value, ClusterError> {
        let call = Call::new(Verb::List, resource, resource.scope(namespace), "");
        let mut params = ListParams::default();
        if !options.label_selector.is_empty() {
            params = params.labels(&options.label_selector);
        }
        if !options.field_selector.is_empty() {
            params = params.fields(&options.field_selector);
        }
        send!(self, &call, self.request(&call).list(&params))
    }

    fn create(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let (namespace, name) = object_key(object);
        let call = Call::new(Verb::Create, resource, resource.scope(namespace), name);
        let body = Self::body(&call, object)?;
        send!(
            self,
            &call,
            self.request(&call).create(&PostParams::default(), body)
        )
    }

    fn update(&self, resource: &Resource, object: &Value) -> Result<Value, ClusterError> {
        let (namespace, name) = object_key(object);
        let call = Call::new(Verb::Update, resource, resource.scope(namespace), name);
        let body = Self::body(&call, object)?;
        send!(
            self,
            &call,
            self.request(&call).replace(name, &PostParams::default(), body)
        )
    }

    fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value, ClusterError> {
        let call = Call::new(Verb::Patch, resource, resource.scope(namespace), name);
        let params = PatchParams::default();
        let request = self.request(&call);
        let built = match patch_type {
            PatchType::Strategic => request.patch(name, &params, &Patch::Strategic(patch)),
            PatchType::Merge => request.patch(name, &params, &Patch::Merge(patch)),
            PatchType::Json => {
                let ops: json_patch::Patch =
                    serde_json::from_value(patch.clone()).map_err(|e| ClusterError::Client {
                        call: Box::new(call.clone()),
                        message: format!("not a JSON patch: {e}"),
                    })?;
                request.patch(name, &params, &Patch::<()>::Json(ops))
            }
        };
        send!(self, &call, built)
    }

    fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<(), ClusterError> {
        let call = Call::new(Verb::Delete, resource, resource.scope(namespace), name);
        let params = DeleteParams {
            propagation_policy: propagation.map(|p| match p {
                Propagation::Foreground => PropagationPolicy::Foreground,
                Propagation::Background => PropagationPolicy::Background,
                Propagation::Orphan => PropagationPolicy::Orphan,
            }),
            ..DeleteParams::default()
        };
        send!(self, &call, self.request(&call).delete(name, &params)).map(|_| ())
    }

    fn healthy(&self) -> Result<bool, ClusterError> {
        let call = Call::new(Verb::Get, &Resource::new("", "", "healthz"), "", "");
        let request = Request::new("")
            .get("healthz", &GetParams::default())
            .map_err(|e| Self::build_error(&call, e))?;
        let client = self.client.clone();
        match self.run(&call, async move { client.request_text(request).await }) {
            Ok(body) => Ok(body.trim() == "ok"),
            Err(
                e @ (ClusterError::Unavailable { .. }
                | ClusterError::Untrusted { .. }
                | ClusterError::Client { .. }),
            ) => Err(e),
            // An error status: up, not healthy yet.
            Err(_) => Ok(false),
        }
    }

    fn failing_readyz_checks(&self) -> Result<Vec<String>, ClusterError> {
        let call = Call::new(Verb::Get, &Resource::new("", "", "readyz"), "", "");
        let request = http::Request::get("/readyz?verbose")
            .body(Vec::new())
            .map_err(|e| Self::build_error(&call, e))?;
        let client = self.client.clone();
        // A failing check is an error status (500) with a plain-text body, which kube words as a
        // Status it could not parse: that body is the answer here, not an error.
        let body = self.run(&call, async move {
            match client.request_text(request).await {
                Ok(body) => Ok(body),
                Err(kube::Error::Api(status)) if status.reason == "Failed to parse error data" => {
                    Ok(status.message.clone())
                }
                Err(e) => Err(e),
            }
        })?;
        Ok(failing_checks(&body))
    }
}
