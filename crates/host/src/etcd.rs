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

    /// Runs `op` on the first endpoint that answers: like upstream's clientv3, one member that is
    /// down (its Pod still listed, its node being reset) must not fail the call. An endpoint is
    /// tried alone, so a refused connection moves on to the next one at once.
    fn call<T>(
        &self,
        name: &str,
        op: impl AsyncFn(&mut Client) -> Result<T, etcd_client::Error>,
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
        let resp = self.call("MemberList", async |c| c.member_list().await)?;
        Ok(resp.members().iter().map(member).collect())
    }

    fn remove_member(&self, id: u64) -> Result<Vec<Member>, EtcdError> {
        let resp = self.call(&format!("MemberRemove {id}"), async move |c| {
            c.member_remove(id).await
        })?;
        Ok(resp.members().iter().map(member).collect())
    }

    fn add_member(&self, peer_url: &str) -> Result<Vec<Member>, EtcdError> {
        let urls = vec![peer_url.to_string()];
        let resp = self.call(&format!("MemberAdd {peer_url}"), async |c| {
            c.member_add(urls.clone(), None).await
        })?;
        Ok(resp.member_list().iter().map(member).collect())
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
