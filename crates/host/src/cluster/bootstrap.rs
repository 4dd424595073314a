//! The clients `kubeadm join` needs before the node has credentials of its own: one from a
//! kubeconfig held in memory (the bootstrap kubeconfig discovery builds, with the bootstrap token or
//! the discovery file's own credentials), and the anonymous client upstream's token discovery uses
//! for its first read of `kube-public/cluster-info`, which does not verify the server certificate.
//!
//! **Why an unverified client exists at all.** Before the first read the joining node knows
//! nothing about the cluster CA: token discovery fetches `cluster-info` over unverified TLS, then
//! trusts its content only after checking the JWS signature made with the bootstrap token and the
//! CA's public key pins; with pins it reads `cluster-info` again over TLS verified against that
//! CA. [`KubeCluster::insecure_anonymous`] is for that first read only; every other client keeps
//! TLS verification on.
//!
//! **Bounded answers.** What that client reads comes from a server nobody vouches for yet, so an
//! answer is read whole within the time discovery has left and at most
//! [`MAX_UNTRUSTED_ANSWER`] bytes of it (`cluster-info` is a few KiB): a server that sends without
//! end, or a byte at a time, fails the read instead of filling the memory or outliving the
//! discovery timeout.

use std::path::Path;
use std::time::{Duration, Instant};

use http_body_util::BodyExt as _;
use kube::api::GetParams;
use kube::config::Kubeconfig;
use kubeadm_effects::cluster::{Call, ClusterError};
use serde_json::Value;

use super::{ClientError, KubeCluster, block_on};

/// The largest answer the client of an untrusted server reads.
pub const MAX_UNTRUSTED_ANSWER: usize = 4 << 20;

/// Why a bounded read failed.
enum Bounded {
    Kube(kube::Error),
    TooLarge,
    Late,
}

impl KubeCluster {
    /// A client from kubeconfig text (YAML or JSON) held in memory; `label` names it in errors.
    /// TLS is verified as the kubeconfig says (its CA; `insecure-skip-tls-verify` if it sets it).
    pub fn from_kubeconfig_text(label: &str, text: &str) -> Result<Self, ClientError> {
        let path = Path::new(label);
        let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| ClientError::Kubeconfig {
            path: path.to_path_buf(),
            message: super::redact::describe(&e),
        })?;
        Self::from_parsed(kubeconfig, path)
    }

    /// An anonymous client for `server` (`https://host:port`) that does NOT verify the server's
    /// certificate. Use it only for token discovery's first `cluster-info` read, whose answer is
    /// verified afterwards (see the module documentation). Its reads must end `within` the time
    /// given from now (the discovery timeout) and hold at most [`MAX_UNTRUSTED_ANSWER`] bytes.
    pub fn insecure_anonymous(server: &str, within: Duration) -> Result<Self, ClientError> {
        let path = Path::new(server);
        let url: http::Uri = server
            .parse()
            .map_err(|e: http::uri::InvalidUri| ClientError::Client {
                path: path.to_path_buf(),
                message: format!("invalid server URL: {e}"),
            })?;
        Self::connect(path, async move {
            let mut config = kube::Config::new(url);
            config.accept_invalid_certs = true;
            // An empty trust store instead of the platform's (absent in a `--rootfs` chroot): no
            // certificate is verified anyway.
            config.root_cert = Some(Vec::new());
            Ok(config)
        })
        .map(|client| Self {
            untrusted_until: Some((Instant::now() + within, within)),
            ..client
        })
    }

    /// A GET of the client of an untrusted server: the answer whole by `until` (`given` after the
    /// client was made), at most
    /// [`MAX_UNTRUSTED_ANSWER`] bytes, then read as kube reads one (an error status is the API's
    /// error, a body that is not JSON kube's decoding error).
    pub(super) fn get_untrusted(
        &self,
        call: &Call,
        until: Instant,
        given: Duration,
    ) -> Result<Value, ClusterError> {
        let request = self
            .request(call)
            .get(&call.name, &GetParams::default())
            .map_err(|e| Self::build_error(call, e))?;
        let client = self.client.clone();
        let within = until.saturating_duration_since(Instant::now());
        let read = async move {
            let response = client
                .send(request.map(kube::client::Body::from))
                .await
                .map_err(Bounded::Kube)?;
            let status = response.status();
            let body = http_body_util::Limited::new(response.into_body(), MAX_UNTRUSTED_ANSWER)
                .collect()
                .await
                .map_err(|e| match e.downcast::<kube::Error>() {
                    Ok(e) => Bounded::Kube(*e),
                    Err(e) if e.is::<http_body_util::LengthLimitError>() => Bounded::TooLarge,
                    Err(e) => Bounded::Kube(kube::Error::Service(e)),
                })?
                .to_bytes();
            Ok((status, body))
        };
        let answer = block_on(&self.runtime, async move {
            tokio::time::timeout(within, read)
                .await
                .unwrap_or(Err(Bounded::Late))
        })
        .map_err(|e| ClusterError::Client {
            call: Box::new(call.clone()),
            message: format!("cannot run the request: {e}"),
        })?;
        let url = self.url(call);
        let (status, body) = match answer {
            Ok(answer) => answer,
            Err(Bounded::Kube(e)) => return Err(self.classify(call, e)),
            Err(Bounded::TooLarge) => {
                return Err(ClusterError::Client {
                    call: Box::new(call.clone()),
                    message: format!(
                        "{url}: the answer is larger than the limit of {} MiB",
                        MAX_UNTRUSTED_ANSWER >> 20
                    ),
                });
            }
            Err(Bounded::Late) => {
                return Err(ClusterError::Unavailable {
                    call: Box::new(call.clone()),
                    message: format!(
                        "{url}: no complete answer within the {} discovery allows",
                        kubeadm_api::duration::Duration::from_nanos(
                            i64::try_from(given.as_nanos()).unwrap_or(i64::MAX)
                        )
                    ),
                });
            }
        };
        if status.is_client_error() || status.is_server_error() {
            let text = String::from_utf8_lossy(&body);
            let api_status = serde_json::from_str::<kube::core::Status>(&text).unwrap_or_else(|_| {
                kube::core::Status::failure(text.trim(), "Failed to parse error data")
                    .with_code(status.as_u16())
            });
            return Err(self.classify(call, kube::Error::Api(api_status.boxed())));
        }
        serde_json::from_slice(&body).map_err(|e| self.classify(call, kube::Error::SerdeError(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_an_error_naming_it() {
        let err = KubeCluster::from_kubeconfig_text("bootstrap", "clusters: [").expect_err("not YAML");
        assert!(err.to_string().contains("bootstrap"), "{err}");
        let err =
            KubeCluster::insecure_anonymous("https://a b", Duration::from_secs(1)).expect_err("not a URL");
        assert!(err.to_string().contains("invalid server URL"), "{err}");
    }

    fn with_user(user: &str) -> String {
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: k
  cluster: {{server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}
contexts:
- name: c
  context: {{cluster: k, user: u}}
current-context: c
users:
- name: u
  user: {user}
"
        )
    }

    /// A `gcp` auth provider's `cmd-path` would run while the client is built: it never does, and
    /// the client is refused as upstream's (no auth provider plugin is registered in kubeadm).
    #[test]
    fn an_auth_provider_is_refused_and_its_command_never_runs() {
        let dir = tempfile::tempdir().expect("dir");
        let marker = dir.path().join("ran");
        let user = format!(
            "{{auth-provider: {{name: gcp, config: {{cmd-path: /bin/sh, cmd-args: '-c :>{}'}}}}}}",
            marker.display()
        );
        let result = KubeCluster::from_kubeconfig_text("discovery", &with_user(&user));
        assert!(!marker.exists(), "the auth provider's cmd-path ran");
        let err = result.expect_err("refused");
        assert_eq!(
            err.to_string(),
            "failed to create API client from discovery: no Auth Provider found for name \"gcp\""
        );
    }

    /// An exec plugin named by a bare command that PATH's absolute entries do not hold is not run.
    #[test]
    fn an_exec_plugin_not_on_path_is_not_run() {
        let user =
            "{exec: {command: kubeadm-rs-no-such-plugin, apiVersion: client.authentication.k8s.io/v1beta1}}";
        let err = KubeCluster::from_kubeconfig_text("discovery", &with_user(user)).expect_err("not found");
        assert_eq!(
            err.to_string(),
            "failed to create API client from discovery: getting credentials: exec: executable kubeadm-rs-no-such-plugin not found"
        );
    }
}
