//! The etcd client `kubeadm reset` and a control-plane `kubeadm join` use (upstream's
//! `etcdutil.Client` for `ListMembers`, `AddMember`, `RemoveMember` and the cluster status), over the `etcd-client` crate with TLS from the etcd CA and a client
//! certificate. Synchronous: each call runs on a private current-thread runtime.

use std::path::Path;
use std::time::Duration;

use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};
use kubeadm_effects::etcd::{Etcd, EtcdError, Member};

/// Upstream's `etcdTimeout`: each call's deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// A snapshot streams the whole database: it gets longer.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(120);
/// Upstream's dial timeout for etcd clients.
const DIAL_TIMEOUT: Duration = Duration::from_secs(20);

/// Upstream's `etcdBackoff` (`wait.Backoff{Steps: 18, Duration: 100ms, Factor: 1.5, Jitter:
/// 0.1}`): each call is tried up to 18 times, the waits growing from 100 ms by half each time
/// (about five minutes in all), so that a cluster that is briefly unhealthy (a member restarting,
/// a leader election) does not fail a reset's member removal or a join's member addition.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// Attempts.
    pub steps: u32,
    /// The first wait.
    pub first: Duration,
}

impl Backoff {
    /// Upstream's.
    pub const UPSTREAM: Backoff = Backoff {
        steps: 18,
        first: Duration::from_millis(100),
    };

    /// The wait after attempt `n` (0-based): `first × 1.5ⁿ`, plus up to 10 % jitter.
    fn wait(&self, n: u32) -> Duration {
        let base = self.first.mul_f64(1.5f64.powi(n as i32));
        let jitter = f64::from(std::process::id().wrapping_mul(n + 1) % 1000) / 10_000.0;
        base.mul_f64(1.0 + jitter)
    }
}

/// Why the client could not be created.
#[derive(Debug, thiserror::Error)]
pub enum EtcdConnectError {
    /// A TLS file could not be read.
    #[error("open {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the etcd client runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// Connecting or syncing the endpoints failed.
    #[error("{0}")]
    Etcd(String),
}

/// A client connected to an etcd cluster, its endpoints synced with the membership.
pub struct EtcdClient {
    runtime: tokio::runtime::Runtime,
    options: ConnectOptions,
    endpoints: Vec<String>,
    backoff: Backoff,
}

impl std::fmt::Debug for EtcdClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdClient")
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl EtcdClient {
    /// Connects to `endpoints` with the CA, client certificate and key files, then replaces the
    /// endpoints by every member's client URLs (upstream's `Sync`).
    pub fn connect(
        endpoints: &[String],
        ca: &Path,
        cert: &Path,
        key: &Path,
    ) -> Result<Self, EtcdConnectError> {
        Self::connect_with(endpoints, ca, cert, key, Backoff::UPSTREAM)
    }

    /// [`EtcdClient::connect`] with another retry policy (tests that expect failures).
    pub fn connect_with(
        endpoints: &[String],
        ca: &Path,
        cert: &Path,
        key: &Path,
        backoff: Backoff,
    ) -> Result<Self, EtcdConnectError> {
        let read = |p: &Path| {
            std::fs::read(p).map_err(|source| EtcdConnectError::Read {
                path: p.display().to_string(),
                source,
            })
        };
        let tls = TlsOptions::new()
            .ca_certificate(Certificate::from_pem(read(ca)?))
            .identity(Identity::from_pem(read(cert)?, read(key)?));
        let options = ConnectOptions::new()
            .with_tls(tls)
            .with_timeout(CALL_TIMEOUT)
            .with_connect_timeout(DIAL_TIMEOUT);
        // TLS in tonic reaches rustls through the process-wide provider; aws-lc-rs is the only one.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(EtcdConnectError::Runtime)?;
        let mut client = Self {
            runtime,
            options,
            endpoints: endpoints.to_vec(),
            backoff,
        };
        let members = client
            .list_members()
            .map_err(|e| EtcdConnectError::Etcd(format!("error syncing endpoints with etcd: {e}")))?;
        let synced: Vec<String> = members.into_iter().flat_map(|m| m.client_urls).collect();
        if !synced.is_empty() {
            client.endpoints = synced;
        }
        Ok(client)
    }

    /// [`EtcdClient::attempt`] under upstream's backoff: every failure is tried again (as upstream
    /// does), but for the answers `done` takes as the end of the call (`Some` result).
    fn call<T>(
        &self,
        name: &str,
        op: impl AsyncFn(&mut Client) -> Result<T, etcd_client::Error>,
        done: impl Fn(&EtcdError) -> Option<Result<T, EtcdError>>,
    ) -> Result<T, EtcdError> {
        let mut n = 0;
        loop {
            match self.attempt(name, &op) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    if let Some(result) = done(&e) {
                        return result;
                    }
                    n += 1;
                    if n >= self.backoff.steps {
                        return Err(e);
                    }
                    std::thread::sleep(self.backoff.wait(n - 1));
                }
            }
        }
    }

    /// Runs `op` on the first endpoint that answers: like upstream's clientv3, one member that is
    /// down (its Pod still listed, its node being reset) must not fail the call. An endpoint is
    /// tried alone, so a refused connection moves on to the next one at once.
    fn attempt<T>(
        &self,
        name: &str,
        op: &impl AsyncFn(&mut Client) -> Result<T, etcd_client::Error>,
    ) -> Result<T, EtcdError> {
        let fail = |e: etcd_client::Error| EtcdError {
            call: name.to_string(),
            endpoints: self.endpoints.clone(),
            message: e.to_string(),
        };
        self.runtime.block_on(async {
            let mut last = None;
            for endpoint in &self.endpoints {
                let attempt = async {
                    let mut client = Client::connect([endpoint], Some(self.options.clone())).await?;
                    op(&mut client).await
                };
                match attempt.await {
                    Ok(v) => return Ok(v),
                    // An answer from etcd itself (not a transport failure) is final.
                    Err(e @ etcd_client::Error::GRpcStatus(_)) if !unavailable(&e) => return Err(fail(e)),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.map_or_else(
                || EtcdError {
                    call: name.to_string(),
                    endpoints: Vec::new(),
                    message: "no endpoints".into(),
                },
                fail,
            ))
        })
    }
}

/// Whether a gRPC status says the member could not be reached (another may answer).
fn unavailable(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(s) if matches!(s.code(), tonic::Code::Unavailable | tonic::Code::DeadlineExceeded))
}

fn member(m: &etcd_client::Member) -> Member {
    Member {
        id: m.id(),
        name: m.name().to_string(),
        peer_urls: m.peer_urls().to_vec(),
        client_urls: m.client_urls().to_vec(),
    }
}

impl Etcd for EtcdClient {
    fn endpoints(&self) -> Vec<String> {
        self.endpoints.clone()
    }

    fn list_members(&self) -> Result<Vec<Member>, EtcdError> {
        let resp = self.call("MemberList", async |c| c.member_list().await, |_| None)?;
        Ok(resp.members().iter().map(member).collect())
    }

    /// Upstream's `RemoveMember`: a member etcd does not know was removed already (no members
    /// returned then).
    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        let resp = self.call(
            &format!("MemberRemove {id}"),
            async move |c| {
                c.member_remove(id)
                    .await
                    .map(|r| r.members().iter().map(member).collect())
            },
            |e| {
                e.message
                    .contains("etcdserver: member not found")
                    .then(|| Ok(Vec::new()))
            },
        )?;
        Ok(resp)
    }

    /// Upstream's `AddMember`, but for its answer to a peer URL etcd knows already (and to too few
    /// started members), which end the call here: the caller handles them
    /// (`kubeadm_phases::etcd_cluster::add_joining_member`).
    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        let urls = vec![peer_url.to_string()];
        self.call(
            &format!("MemberAdd {peer_url}"),
            async |c| {
                c.member_add(urls.clone(), None)
                    .await
                    .map(|r| r.member_list().iter().map(member).collect())
            },
            |e| {
                (e.message.contains("Peer URLs already exists")
                    || e.message.contains("not enough started members"))
                .then(|| Err(e.clone()))
            },
        )
    }

    fn status(&self, endpoint: &str) -> Result<(), EtcdError> {
        // `Status` answers for the member the connection reaches: connect to that endpoint alone.
        let fail = |e: etcd_client::Error| EtcdError {
            call: format!("Status {endpoint}"),
            endpoints: vec![endpoint.to_string()],
            message: e.to_string(),
        };
        self.runtime.block_on(async {
            let mut client = Client::connect([endpoint], Some(self.options.clone()))
                .await
                .map_err(fail)?;
            client.status().await.map(|_| ()).map_err(fail)
        })
    }

    fn snapshot(&self, endpoint: &str) -> Result<Vec<u8>, EtcdError> {
        let fail = |e: etcd_client::Error| EtcdError {
            call: format!("Snapshot {endpoint}"),
            endpoints: vec![endpoint.to_string()],
            message: e.to_string(),
        };
        let options = self.options.clone().with_timeout(SNAPSHOT_TIMEOUT);
        self.runtime.block_on(async {
            let mut client = Client::connect([endpoint], Some(options)).await.map_err(fail)?;
            let mut stream = client.snapshot().await.map_err(fail)?;
            let mut db = Vec::new();
            while let Some(part) = stream.message().await.map_err(fail)? {
                db.extend_from_slice(part.blob());
            }
            Ok(db)
        })
    }
}
