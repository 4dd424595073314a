//! The lines the `certs` phases print, worded as upstream prints them (without the `[certs] `
//! prefix, which the reporter adds). Names in quotes are file base names (`etcd/ca`), as upstream.

use std::fmt;

/// One `[certs]` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertsMessage {
    /// `Using certificateDir folder "/etc/kubernetes/pki"`.
    UsingCertificateDir(String),
    /// `Generating "apiserver" certificate and key` (also for CAs).
    Generating(String),
    /// `Using existing ca certificate authority`.
    UsingExistingCa(String),
    /// `Using existing ca keyless certificate authority`.
    UsingExistingKeylessCa(String),
    /// `Using existing apiserver certificate and key on disk`.
    UsingExistingCert(String),
    /// `External etcd mode: Skipping etcd/ca certificate authority generation`.
    ExternalEtcdSkipCa(String),
    /// `External etcd mode: Skipping etcd/server certificate generation`.
    ExternalEtcdSkipCert(String),
    /// `Generating "sa" key and public key`.
    GeneratingSa,
    /// `Using the existing "sa" key`.
    UsingExistingSa,
    /// `Using existing sa keys` (external CA mode).
    UsingExistingSaKeys,
    /// `Generating "apiserver" key and CSR`.
    GeneratingCsr(String),
    /// `Using the existing "apiserver" CSR`.
    UsingExistingCsr(String),
}

impl fmt::Display for CertsMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertsMessage::UsingCertificateDir(d) => write!(f, "Using certificateDir folder {d:?}"),
            CertsMessage::Generating(b) => write!(f, "Generating {b:?} certificate and key"),
            CertsMessage::UsingExistingCa(b) => write!(f, "Using existing {b} certificate authority"),
            CertsMessage::UsingExistingKeylessCa(b) => {
                write!(f, "Using existing {b} keyless certificate authority")
            }
            CertsMessage::UsingExistingCert(b) => write!(f, "Using existing {b} certificate and key on disk"),
            CertsMessage::ExternalEtcdSkipCa(b) => {
                write!(
                    f,
                    "External etcd mode: Skipping {b} certificate authority generation"
                )
            }
            CertsMessage::ExternalEtcdSkipCert(b) => {
                write!(f, "External etcd mode: Skipping {b} certificate generation")
            }
            CertsMessage::GeneratingSa => f.write_str("Generating \"sa\" key and public key"),
            CertsMessage::UsingExistingSa => f.write_str("Using the existing \"sa\" key"),
            CertsMessage::UsingExistingSaKeys => f.write_str("Using existing sa keys"),
            CertsMessage::GeneratingCsr(b) => write!(f, "Generating {b:?} key and CSR"),
            CertsMessage::UsingExistingCsr(b) => write!(f, "Using the existing {b:?} CSR"),
        }
    }
}
