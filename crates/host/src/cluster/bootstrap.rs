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

use std::path::Path;

use kube::config::Kubeconfig;

use super::{ClientError, KubeCluster};

impl KubeCluster {
    /// A client from kubeconfig text (YAML or JSON) held in memory; `label` names it in errors.
    /// TLS is verified as the kubeconfig says (its CA; `insecure-skip-tls-verify` if it sets it).
    pub fn from_kubeconfig_text(label: &str, text: &str) -> Result<Self, ClientError> {
        let path = Path::new(label);
        let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| ClientError::Kubeconfig {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_parsed(kubeconfig, path)
    }

    /// An anonymous client for `server` (`https://host:port`) that does NOT verify the server's
    /// certificate. Use it only for token discovery's first `cluster-info` read, whose answer is
    /// verified afterwards (see the module documentation).
    pub fn insecure_anonymous(server: &str) -> Result<Self, ClientError> {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_an_error_naming_it() {
        let err = KubeCluster::from_kubeconfig_text("bootstrap", "clusters: [").expect_err("not YAML");
        assert!(err.to_string().contains("bootstrap"), "{err}");
        let err = KubeCluster::insecure_anonymous("https://a b").expect_err("not a URL");
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
