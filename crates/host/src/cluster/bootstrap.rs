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
            message: super::redact::describe(&e),
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
}
