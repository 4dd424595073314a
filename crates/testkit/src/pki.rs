//! Certificate chains checked by a real consumer: `openssl verify` of what kubeadm wrote.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;

/// Why `openssl verify` did not accept a certificate.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// openssl could not be run.
    #[error("run openssl: {0}")]
    Run(#[from] std::io::Error),
    /// openssl refused the chain.
    #[error("openssl verify {}: {output}", .leaf.display())]
    Refused {
        /// The certificate checked.
        leaf: std::path::PathBuf,
        /// openssl's standard output then standard error.
        output: String,
    },
}

/// `openssl verify -CAfile ca leaf`; the error carries openssl's output.
pub fn openssl_verify(ca: &Path, leaf: &Path) -> Result<(), VerifyError> {
    let out = Command::new("openssl")
        .arg("verify")
        .arg("-CAfile")
        .arg(ca)
        .arg(leaf)
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(VerifyError::Refused {
            leaf: leaf.to_path_buf(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        })
    }
}

/// Every signed certificate under `root`'s `etc/kubernetes/pki` against its CA (with `cas`, each CA
/// against itself too), then the client certificate embedded in each of the kubeconfig files `confs`
/// (in `etc/kubernetes`) against the cluster CA. Files that are not there are skipped; the failures
/// are returned.
pub fn verify_chains(root: &Path, cas: bool, confs: &[&str]) -> Vec<String> {
    let kube = root.join("etc/kubernetes");
    let pki = kube.join("pki");
    let mut pairs = vec![
        ("ca.crt", "apiserver.crt"),
        ("ca.crt", "apiserver-kubelet-client.crt"),
        ("front-proxy-ca.crt", "front-proxy-client.crt"),
        ("etcd/ca.crt", "etcd/server.crt"),
        ("etcd/ca.crt", "etcd/peer.crt"),
        ("etcd/ca.crt", "etcd/healthcheck-client.crt"),
        ("etcd/ca.crt", "apiserver-etcd-client.crt"),
    ];
    if cas {
        pairs.extend([
            ("ca.crt", "ca.crt"),
            ("front-proxy-ca.crt", "front-proxy-ca.crt"),
            ("etcd/ca.crt", "etcd/ca.crt"),
        ]);
    }
    let mut failures = Vec::new();
    for (ca, leaf) in pairs {
        if pki.join(ca).exists()
            && pki.join(leaf).exists()
            && let Err(e) = openssl_verify(&pki.join(ca), &pki.join(leaf))
        {
            failures.push(e.to_string());
        }
    }
    for conf in confs {
        let Ok(text) = std::fs::read_to_string(kube.join(conf)) else {
            continue;
        };
        let Some(line) = text.lines().find(|l| l.contains("client-certificate-data: ")) else {
            continue;
        };
        let pem = base64::engine::general_purpose::STANDARD
            .decode(line.split_once(": ").expect("colon").1.trim())
            .expect("base64");
        let tmp = root.join(format!("{conf}.crt"));
        std::fs::write(&tmp, pem).expect("write");
        if let Err(e) = openssl_verify(&pki.join("ca.crt"), &tmp) {
            failures.push(e.to_string());
        }
        std::fs::remove_file(&tmp).expect("rm");
    }
    failures
}
