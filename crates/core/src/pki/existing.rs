//! What upstream checks when certificate files already exist: a CA must be a CA; a signed
//! certificate's key must load, the certificate must chain to the expected CA at the current time and
//! cover every SAN the configuration asks for; "external CA" mode is a CA certificate without its key,
//! with every certificate it would sign already present. File contents come in as text.

use std::net::IpAddr;

use super::cert::{CertInfo, CertParseError};
use super::der::civil_from_unix;
use super::keys::{KeyError, PrivateKey};
use super::spec::{AltNames, CertId};

/// Why Go's `x509` package refuses a certificate kubeadm finds on disk, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum X509Error {
    /// Before its validity period (times in RFC 3339).
    #[error("x509: certificate has expired or is not yet valid: current time {now} is before {not_before}")]
    NotYetValid {
        /// The time of the check.
        now: String,
        /// The start of the validity period.
        not_before: String,
    },
    /// After its validity period (times in RFC 3339).
    #[error("x509: certificate has expired or is not yet valid: current time {now} is after {not_after}")]
    Expired {
        /// The time of the check.
        now: String,
        /// The end of the validity period.
        not_after: String,
    },
    /// Not signed by the CA, whose subject is the certificate's issuer: Go names the candidate and
    /// why its signature check failed.
    #[error(
        "x509: certificate signed by unknown authority (possibly because of {why:?} while trying to verify candidate authority certificate {candidate:?})"
    )]
    BadSignature {
        /// The signature check's error.
        why: &'static str,
        /// The CA's common name.
        candidate: String,
    },
    /// Not signed by the CA.
    #[error("x509: certificate signed by unknown authority")]
    UnknownAuthority,
    /// An IP address wanted, and the certificate has no IP SANs.
    #[error("x509: cannot validate certificate for {0} because it doesn't contain any IP SANs")]
    NoIpSans(String),
    /// A name or address the certificate's SANs do not cover.
    #[error("x509: certificate is valid for {valid}, not {host}")]
    NotValidFor {
        /// The SANs of its kind, joined with `, `.
        valid: String,
        /// The name or address wanted.
        host: String,
    },
    /// A name wanted, and the certificate has no DNS SANs.
    #[error("x509: certificate is not valid for any names, but wanted to match {0}")]
    NoNames(String),
}

/// A problem with files that already exist.
#[derive(Debug, thiserror::Error)]
pub enum ExistingError {
    /// A certificate file did not parse.
    #[error("failure loading {base_name} certificate: {source}")]
    Cert {
        /// The file's base name.
        base_name: String,
        /// Why.
        #[source]
        source: CertParseError,
    },
    /// A key file did not parse.
    #[error("failure loading {base_name} key: {source}")]
    Key {
        /// The file's base name.
        base_name: String,
        /// Why.
        #[source]
        source: KeyError,
    },
    /// A key file is missing.
    #[error("failure loading key for {base_name}: the key file does not exist")]
    KeyMissing {
        /// The file's base name.
        base_name: String,
    },
    /// A certificate file is missing.
    #[error("failure loading certificate for {ux_name}: the certificate file does not exist")]
    CertMissing {
        /// The user-facing name.
        ux_name: String,
    },
    /// A CA certificate without the CA flag.
    #[error("certificate {base_name} is not a CA")]
    NotCa {
        /// The file's base name.
        base_name: String,
    },
    /// The certificate does not chain to the expected CA (or is outside its validity period).
    #[error("certificate {name} is not signed by corresponding CA: {reason}")]
    NotSignedByCa {
        /// The file's base name or user-facing name.
        name: String,
        /// Go's x509 verification error.
        reason: X509Error,
    },
    /// The per-certificate init phase found a certificate its CA did not sign.
    #[error("[certs] certificate {base_name} not signed by CA certificate {ca_base_name}: {reason}")]
    PhaseChain {
        /// The certificate's base name.
        base_name: String,
        /// The CA's base name.
        ca_base_name: String,
        /// Go's x509 verification error.
        reason: X509Error,
    },
    /// The certificate lacks a SAN the configuration asks for.
    #[error("certificate {base_name} is invalid: {reason}")]
    MissingSan {
        /// The file's base name.
        base_name: String,
        /// Go's `HostnameError`.
        reason: X509Error,
    },
}

/// Upstream's period warning (`CheckCertificatePeriodValidity`, printed by klog), or `None` when
/// `now` lies within the validity period.
pub fn period_warning(name: &str, cert: &CertInfo, now: i64) -> Option<String> {
    let period = format!(
        "NotBefore: {}, NotAfter: {}",
        go_time(cert.not_before),
        go_time(cert.not_after)
    );
    let problem = if now < cert.not_before {
        "the certificate is not valid yet"
    } else if now > cert.not_after {
        "the certificate has expired"
    } else {
        return None;
    };
    Some(format!(
        "WARNING: could not validate bounds for certificate {name}: {problem}: {period}"
    ))
}

/// Go's default `time.Time` formatting of a UTC instant.
fn go_time(unix: i64) -> String {
    let c = civil_from_unix(unix);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} +0000 UTC",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

fn rfc3339(unix: i64) -> String {
    let c = civil_from_unix(unix);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// An existing CA: its certificate and, unless it is externally managed, its key.
#[derive(Debug)]
pub struct CaCheck {
    /// The CA certificate.
    pub cert: CertInfo,
    /// The key, `None` when the key file is absent (external CA).
    pub key: Option<PrivateKey>,
    /// A period warning to print, if any.
    pub warning: Option<String>,
}

/// Checks an existing CA (`LoadCertificateAuthority` / the existing branch of
/// `writeCertificateAuthorityFilesIfNotExist`): the certificate must parse and be a CA; the key, when
/// present, must parse.
pub fn check_existing_ca(
    base_name: &str,
    cert_pem: &str,
    key_pem: Option<&str>,
    now: i64,
) -> Result<CaCheck, ExistingError> {
    let cert = CertInfo::from_pem(cert_pem).map_err(|source| ExistingError::Cert {
        base_name: base_name.to_string(),
        source,
    })?;
    let warning = period_warning(base_name, &cert, now);
    if !cert.is_ca {
        return Err(ExistingError::NotCa {
            base_name: base_name.to_string(),
        });
    }
    let key = key_pem
        .map(PrivateKey::from_pem)
        .transpose()
        .map_err(|source| ExistingError::Key {
            base_name: base_name.to_string(),
            source,
        })?;
    Ok(CaCheck { cert, key, warning })
}

/// Go's `VerifyCertChain` with the CA as the only root: the certificate (through its bundled
/// intermediates, if any) must be signed by `ca` and every certificate must be valid at `now`.
fn verify_chain(
    cert: &CertInfo,
    intermediates: &[CertInfo],
    ca: &CertInfo,
    now: i64,
) -> Result<(), X509Error> {
    let expired = |c: &CertInfo| {
        if now < c.not_before {
            Some(X509Error::NotYetValid {
                now: rfc3339(now),
                not_before: rfc3339(c.not_before),
            })
        } else if now > c.not_after {
            Some(X509Error::Expired {
                now: rfc3339(now),
                not_after: rfc3339(c.not_after),
            })
        } else {
            None
        }
    };
    if let Some(e) = expired(cert) {
        return Err(e);
    }
    let signed_directly = cert.raw_issuer == ca.raw_subject && cert.is_signed_by(ca);
    let via_intermediate = || {
        intermediates.iter().any(|i| {
            i.is_ca
                && cert.raw_issuer == i.raw_subject
                && cert.is_signed_by(i)
                && expired(i).is_none()
                && i.is_signed_by(ca)
        })
    };
    if !(signed_directly || via_intermediate()) {
        if cert.raw_issuer == ca.raw_subject {
            // Go names the candidate it tried and why its signature check failed.
            let why = if ca.spki_is_rsa() {
                "crypto/rsa: verification error"
            } else {
                "x509: ECDSA verification failure"
            };
            return Err(X509Error::BadSignature {
                why,
                candidate: ca.common_name.clone(),
            });
        }
        return Err(X509Error::UnknownAuthority);
    }
    if let Some(e) = expired(ca) {
        return Err(e);
    }
    Ok(())
}

/// Go's `Certificate.VerifyHostname` for the names kubeadm checks (exact or single-label wildcard
/// DNS match, case-insensitive; exact IP match), with `HostnameError`'s text.
fn verify_hostname(cert: &CertInfo, host: &str) -> Result<(), X509Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        if cert.ips.contains(&ip) {
            return Ok(());
        }
        if cert.ips.is_empty() {
            return Err(X509Error::NoIpSans(host.to_string()));
        }
        let valid: Vec<String> = cert.ips.iter().map(ToString::to_string).collect();
        return Err(X509Error::NotValidFor {
            valid: valid.join(", "),
            host: host.to_string(),
        });
    }
    let wanted = host.trim_end_matches('.').to_ascii_lowercase();
    let matches = cert.dns_names.iter().any(|pattern| {
        let pattern = pattern.to_ascii_lowercase();
        if pattern == wanted {
            return true;
        }
        match (pattern.strip_prefix("*."), wanted.split_once('.')) {
            (Some(suffix), Some((_, rest))) => !suffix.is_empty() && suffix == rest,
            _ => false,
        }
    });
    if matches {
        return Ok(());
    }
    if cert.dns_names.is_empty() {
        return Err(X509Error::NoNames(host.to_string()));
    }
    Err(X509Error::NotValidFor {
        valid: cert.dns_names.join(", "),
        host: host.to_string(),
    })
}

/// The check `init phase certs <name>` makes before reusing an existing certificate: only that its
/// chain verifies against the CA certificate (no key or SAN checks, unlike
/// [`check_existing_signed`]). The error carries upstream's text
/// (`[certs] certificate apiserver not signed by CA certificate ca: x509: …`).
pub fn check_existing_chain(
    base_name: &str,
    ca_base_name: &str,
    cert_pem: &str,
    ca: &CertInfo,
    now: i64,
) -> Result<CertInfo, ExistingError> {
    let mut chain = CertInfo::chain_from_pem(cert_pem).map_err(|source| ExistingError::Cert {
        base_name: base_name.to_string(),
        source,
    })?;
    let cert = chain.remove(0);
    verify_chain(&cert, &chain, ca, now).map_err(|reason| ExistingError::PhaseChain {
        base_name: base_name.to_string(),
        ca_base_name: ca_base_name.to_string(),
        reason,
    })?;
    Ok(cert)
}

/// Checks an existing signed certificate before reusing it (the existing branch of
/// `writeCertificateFilesIfNotExist`): the key must load, the chain must verify against `ca` at `now`,
/// and every expected DNS name and IP must be covered. Returns the parsed certificate.
pub fn check_existing_signed(
    base_name: &str,
    cert_pem: &str,
    key_pem: &str,
    ca: &CertInfo,
    expected: &AltNames,
    now: i64,
) -> Result<CertInfo, ExistingError> {
    PrivateKey::from_pem(key_pem).map_err(|source| ExistingError::Key {
        base_name: base_name.to_string(),
        source,
    })?;
    let mut chain = CertInfo::chain_from_pem(cert_pem).map_err(|source| ExistingError::Cert {
        base_name: base_name.to_string(),
        source,
    })?;
    let cert = chain.remove(0);
    verify_chain(&cert, &chain, ca, now).map_err(|reason| ExistingError::NotSignedByCa {
        name: base_name.to_string(),
        reason,
    })?;
    let hosts = expected
        .dns_names
        .iter()
        .cloned()
        .chain(expected.ips.iter().map(ToString::to_string));
    for host in hosts {
        verify_hostname(&cert, &host).map_err(|reason| ExistingError::MissingSan {
            base_name: base_name.to_string(),
            reason,
        })?;
    }
    Ok(cert)
}

/// One certificate an external CA must already have signed: (which, user-facing name).
pub fn external_ca_leaves(ca: CertId) -> &'static [(CertId, &'static str)] {
    match ca {
        CertId::Ca => &[
            (CertId::ApiServer, "API server"),
            (CertId::ApiServerKubeletClient, "API server kubelet client"),
        ],
        CertId::FrontProxyCa => &[(CertId::FrontProxyClient, "front-proxy client")],
        CertId::EtcdCa => &[
            (CertId::ApiServerEtcdClient, "apiserver etcd client"),
            (CertId::EtcdServer, "etcd server"),
            (CertId::EtcdPeer, "etcd peer"),
            (CertId::EtcdHealthcheckClient, "etcd health-check client"),
        ],
        _ => &[],
    }
}

/// The answer of `UsingExternalCA` and friends: whether the CA is external, and an error that
/// upstream returns alongside (a missing CA certificate gives `external: false` with an error).
#[derive(Debug)]
pub struct ExternalCaStatus {
    /// CA certificate present and key absent.
    pub external: bool,
    /// What is wrong, if anything.
    pub error: Option<ExistingError>,
}

/// Upstream's external-CA detection for one CA. `leaves` gives, for each certificate of
/// [`external_ca_leaves`] in order, its (user-facing name, certificate PEM, key PEM) as found on disk.
pub fn external_ca_status(
    ca_base_name: &str,
    ca_ux_name: &str,
    ca_cert_pem: Option<&str>,
    ca_key_present: bool,
    leaves: &[(&str, Option<&str>, Option<&str>)],
    now: i64,
) -> ExternalCaStatus {
    let fail = |external, error| ExternalCaStatus {
        external,
        error: Some(error),
    };
    let Some(ca_pem) = ca_cert_pem else {
        return fail(
            false,
            ExistingError::CertMissing {
                ux_name: ca_ux_name.to_string(),
            },
        );
    };
    let ca = match CertInfo::from_pem(ca_pem) {
        Ok(ca) => ca,
        Err(source) => {
            return fail(
                false,
                ExistingError::Cert {
                    base_name: ca_base_name.to_string(),
                    source,
                },
            );
        }
    };
    if !ca.is_ca {
        return fail(
            false,
            ExistingError::NotCa {
                base_name: ca_ux_name.to_string(),
            },
        );
    }
    if ca_key_present {
        return ExternalCaStatus {
            external: false,
            error: None,
        };
    }
    for (ux_name, cert_pem, key_pem) in leaves {
        let Some(key_pem) = key_pem else {
            return fail(
                true,
                ExistingError::KeyMissing {
                    base_name: (*ux_name).to_string(),
                },
            );
        };
        if let Err(source) = PrivateKey::from_pem(key_pem) {
            return fail(
                true,
                ExistingError::Key {
                    base_name: (*ux_name).to_string(),
                    source,
                },
            );
        }
        let Some(cert_pem) = cert_pem else {
            return fail(
                true,
                ExistingError::CertMissing {
                    ux_name: (*ux_name).to_string(),
                },
            );
        };
        let mut chain = match CertInfo::chain_from_pem(cert_pem) {
            Ok(c) => c,
            Err(source) => {
                return fail(
                    true,
                    ExistingError::Cert {
                        base_name: (*ux_name).to_string(),
                        source,
                    },
                );
            }
        };
        let cert = chain.remove(0);
        if let Err(reason) = verify_chain(&cert, &chain, &ca, now) {
            return fail(
                true,
                ExistingError::NotSignedByCa {
                    name: (*ux_name).to_string(),
                    reason,
                },
            );
        }
    }
    ExternalCaStatus {
        external: true,
        error: None,
    }
}
