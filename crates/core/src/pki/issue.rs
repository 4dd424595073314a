//! Issuing certificates and CSRs exactly as upstream's `pkiutil` and client-go's `certutil` do:
//! the same extensions in Go's order (key usage, extended key usage, basic constraints, subject key
//! id on CAs only, authority key id from the CA's subject key id, SANs), the same string types, the
//! issuer copied verbatim from the CA, and the validity rules (CA: now − 5 min … now + 10 × 365 d;
//! signed: the CA's NotBefore … now + 365 d). Time, serial and keys are inputs, so this is pure.

use std::net::IpAddr;

use super::cert::CertInfo;
use super::der;
use super::keys::{KeyError, PrivateKey};
use super::spec::{
    AltNames, CA_BACKDATE_SECS, CA_VALIDITY_SECS, CERT_VALIDITY_SECS, CertSpec, ExtKeyUsage, PkiInputs,
    SanError, alt_names,
};

/// Why a certificate could not be issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    /// The SANs could not be computed.
    #[error(transparent)]
    San(#[from] SanError),
    /// Signing failed.
    #[error("unable to sign certificate")]
    Sign(#[source] KeyError),
    /// Upstream refuses to sign without a common name.
    #[error("must specify a CommonName")]
    NoCommonName,
    /// Upstream refuses a signed certificate without extended key usages.
    #[error("must specify at least one ExtKeyUsage")]
    NoUsages,
    /// A CA expected by spec is not a CA spec (table misuse).
    #[error("this function should only be used for CAs, but cert {name} has CA {ca}")]
    NotCaSpec {
        /// The spec name.
        name: &'static str,
        /// Its CA name.
        ca: &'static str,
    },
}

/// What goes into one certificate apart from keys: the `CertConfig` of upstream after mutators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertTemplate {
    /// Subject common name.
    pub common_name: String,
    /// Subject organizations.
    pub organization: Vec<String>,
    /// Subject alternative names (already de-duplicated and sorted).
    pub alt_names: AltNames,
    /// Extended key usages.
    pub ext_key_usages: Vec<ExtKeyUsage>,
}

impl CertTemplate {
    /// The template of a table entry for these inputs.
    pub fn for_spec(spec: &CertSpec, inputs: &PkiInputs) -> Result<Self, SanError> {
        Ok(CertTemplate {
            common_name: spec.subject_common_name(inputs).to_string(),
            organization: spec.organization.iter().map(|s| (*s).to_string()).collect(),
            alt_names: alt_names(spec, inputs)?,
            ext_key_usages: spec.ext_key_usages.to_vec(),
        })
    }
}

impl CertTemplate {
    /// The template `certs renew` uses: everything from the existing certificate (`certToConfig`),
    /// so SANs added to the config since are not picked up, as upstream.
    pub fn from_existing(cert: &CertInfo) -> Self {
        CertTemplate {
            common_name: cert.common_name.clone(),
            organization: cert.organizations.clone(),
            // `NewSignedCert` still sorts and de-duplicates the names it is given.
            alt_names: AltNames {
                dns_names: cert.dns_names.clone(),
                ips: cert.ips.clone(),
                warnings: Vec::new(),
            }
            .finish(),
            ext_key_usages: cert.ext_key_usages.clone(),
        }
    }
}

/// A freshly issued certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    /// DER.
    pub der: Vec<u8>,
    /// PEM, as written to `<base>.crt`.
    pub pem: String,
}

/// A certificate serial from 64 random bits, in upstream's range [1, 2^63 − 1) (`cryptorand.Int`
/// below MaxInt64 − 1, plus one), so it always encodes as a positive INTEGER of at most 8 bytes.
pub fn serial_from_random(random: u64) -> u64 {
    random % (i64::MAX as u64 - 1) + 1
}

/// Issues the self-signed CA certificate of `spec` (`NewCertificateAuthority`): NotBefore = now − 5
/// minutes, NotAfter = now + 10 × 365 days, serial in [1, 2^63 − 1).
pub fn issue_ca(
    spec: &CertSpec,
    inputs: &PkiInputs,
    key: &PrivateKey,
    now: i64,
    serial: u64,
) -> Result<Issued, IssueError> {
    if let Some(ca) = spec.ca {
        return Err(IssueError::NotCaSpec {
            name: spec.name,
            ca: super::spec::cert_spec(ca).name,
        });
    }
    let template = CertTemplate::for_spec(spec, inputs)?;
    let subject = name(&template.common_name, &template.organization);
    let tbs = Tbs {
        serial,
        issuer: &subject,
        subject: &subject,
        not_before: now - CA_BACKDATE_SECS,
        not_after: now + CA_VALIDITY_SECS,
        subject_key: key,
        is_ca: true,
        ext_key_usages: &[],
        alt_names: &template.alt_names,
        authority_key_id: None,
    };
    sign_certificate(&tbs, key)
}

/// Issues a certificate for `template`, signed by the CA (`NewSignedCert`): NotBefore = the CA's
/// NotBefore, NotAfter = now + 365 days (or `not_after` when given, as `kubeconfig user
/// --validity-period` does).
pub fn issue_signed(
    template: &CertTemplate,
    ca_cert: &CertInfo,
    ca_key: &PrivateKey,
    key: &PrivateKey,
    now: i64,
    not_after: Option<i64>,
    serial: u64,
) -> Result<Issued, IssueError> {
    if template.common_name.is_empty() {
        return Err(IssueError::NoCommonName);
    }
    if template.ext_key_usages.is_empty() {
        return Err(IssueError::NoUsages);
    }
    let subject = name(&template.common_name, &template.organization);
    // Go copies the parent's subject key id as authority key id, unless the certificate is
    // self-issued; without one on the CA there is no authority key id at all.
    let akid = if ca_cert.raw_subject == subject {
        None
    } else {
        ca_cert.subject_key_id.as_deref()
    };
    let tbs = Tbs {
        serial,
        issuer: &ca_cert.raw_subject,
        subject: &subject,
        not_before: ca_cert.not_before,
        not_after: not_after.unwrap_or(now + CERT_VALIDITY_SECS),
        subject_key: key,
        is_ca: false,
        ext_key_usages: &template.ext_key_usages,
        alt_names: &template.alt_names,
        authority_key_id: akid,
    };
    sign_certificate(&tbs, ca_key)
}

/// A CSR for `template` signed by `key` (`NewCSR`): subject and SANs only, as upstream.
pub fn issue_csr(template: &CertTemplate, key: &PrivateKey) -> Result<Issued, IssueError> {
    let subject = name(&template.common_name, &template.organization);
    let mut attributes = Vec::new();
    if let Some(san) = san_extension(&template.alt_names, subject.len() <= 2) {
        // extensionRequest (PKCS #9) holding the SAN extension.
        attributes.push(der::seq(&[
            &der::oid(&[1, 2, 840, 113_549, 1, 9, 14]),
            &der::set_of(vec![der::seq(&[&san])]),
        ]));
    }
    let info = der::seq(&[
        &der::tlv(der::TAG_INTEGER, &[0]),
        &subject,
        &key.spki_der(),
        &der::tlv(0xa0, &attributes.concat()),
    ]);
    let signature = key.sign(&info).map_err(IssueError::Sign)?;
    let csr = der::seq(&[
        &info,
        &key.signature_algorithm_der(),
        &der::bit_string(&signature),
    ]);
    Ok(Issued {
        pem: der::pem_encode("CERTIFICATE REQUEST", &csr),
        der: csr,
    })
}

struct Tbs<'a> {
    serial: u64,
    issuer: &'a [u8],
    subject: &'a [u8],
    not_before: i64,
    not_after: i64,
    subject_key: &'a PrivateKey,
    is_ca: bool,
    ext_key_usages: &'a [ExtKeyUsage],
    alt_names: &'a AltNames,
    authority_key_id: Option<&'a [u8]>,
}

fn sign_certificate(tbs: &Tbs<'_>, signer: &PrivateKey) -> Result<Issued, IssueError> {
    let sig_alg = signer.signature_algorithm_der();
    let mut extensions: Vec<Vec<u8>> = Vec::new();
    // keyUsage: digitalSignature | keyEncipherment (| keyCertSign), minimal bit string as Go.
    let ku = if tbs.is_ca { [0x02, 0xa4] } else { [0x05, 0xa0] };
    extensions.push(extension(
        &[2, 5, 29, 15],
        true,
        &der::tlv(der::TAG_BIT_STRING, &ku),
    ));
    if !tbs.ext_key_usages.is_empty() {
        let oids: Vec<Vec<u8>> = tbs
            .ext_key_usages
            .iter()
            .map(|u| match u {
                ExtKeyUsage::ServerAuth => der::oid(&[1, 3, 6, 1, 5, 5, 7, 3, 1]),
                ExtKeyUsage::ClientAuth => der::oid(&[1, 3, 6, 1, 5, 5, 7, 3, 2]),
            })
            .collect();
        extensions.push(extension(
            &[2, 5, 29, 37],
            false,
            &der::tlv(der::TAG_SEQUENCE, &oids.concat()),
        ));
    }
    let bc = if tbs.is_ca {
        der::seq(&[&der::tlv(der::TAG_BOOLEAN, &[0xff])])
    } else {
        der::seq(&[])
    };
    extensions.push(extension(&[2, 5, 29, 19], true, &bc));
    if tbs.is_ca {
        // Go derives a CA's subject key id as SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2 (1)).
        let digest = aws_lc_rs::digest::digest(
            &aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY,
            tbs.subject_key.public_key_raw(),
        );
        extensions.push(extension(
            &[2, 5, 29, 14],
            false,
            &der::tlv(der::TAG_OCTET_STRING, digest.as_ref()),
        ));
    }
    if let Some(akid) = tbs.authority_key_id {
        extensions.push(extension(
            &[2, 5, 29, 35],
            false,
            &der::seq(&[&der::tlv(0x80, akid)]),
        ));
    }
    if let Some(san) = san_extension(tbs.alt_names, tbs.subject.len() <= 2) {
        extensions.push(san);
    }
    let tbs_der = der::seq(&[
        &der::tlv(0xa0, &der::tlv(der::TAG_INTEGER, &[2])),
        &der::unsigned_integer(&tbs.serial.to_be_bytes()),
        &sig_alg,
        tbs.issuer,
        &der::seq(&[&der::time(tbs.not_before), &der::time(tbs.not_after)]),
        tbs.subject,
        &tbs.subject_key.spki_der(),
        &der::tlv(0xa3, &der::tlv(der::TAG_SEQUENCE, &extensions.concat())),
    ]);
    let signature = signer.sign(&tbs_der).map_err(IssueError::Sign)?;
    let cert = der::seq(&[&tbs_der, &sig_alg, &der::bit_string(&signature)]);
    Ok(Issued {
        pem: der::pem_encode("CERTIFICATE", &cert),
        der: cert,
    })
}

fn extension(oid: &[u64], critical: bool, value: &[u8]) -> Vec<u8> {
    let oid = der::oid(oid);
    let value = der::tlv(der::TAG_OCTET_STRING, value);
    if critical {
        der::seq(&[&oid, &der::tlv(der::TAG_BOOLEAN, &[0xff]), &value])
    } else {
        der::seq(&[&oid, &value])
    }
}

/// The SAN extension: DNS names then IPs (Go's order); critical when the subject is empty.
fn san_extension(alt: &AltNames, subject_empty: bool) -> Option<Vec<u8>> {
    if alt.dns_names.is_empty() && alt.ips.is_empty() {
        return None;
    }
    let mut names = Vec::new();
    for dns in &alt.dns_names {
        names.extend(der::tlv(0x82, dns.as_bytes()));
    }
    for ip in &alt.ips {
        match ip {
            IpAddr::V4(v4) => names.extend(der::tlv(0x87, &v4.octets())),
            IpAddr::V6(v6) => names.extend(der::tlv(0x87, &v6.octets())),
        }
    }
    Some(extension(
        &[2, 5, 29, 17],
        subject_empty,
        &der::tlv(der::TAG_SEQUENCE, &names),
    ))
}

/// A Name as Go's `pkix.Name.ToRDNSequence` writes CN and O: organizations first in one RDN, then
/// the common name.
fn name(common_name: &str, organization: &[String]) -> Vec<u8> {
    let mut rdns: Vec<Vec<u8>> = Vec::new();
    if !organization.is_empty() {
        let avas = organization
            .iter()
            .map(|o| der::seq(&[&der::oid(&[2, 5, 4, 10]), &der::directory_string(o)]))
            .collect();
        rdns.push(der::set_of(avas));
    }
    if !common_name.is_empty() {
        rdns.push(der::set_of(vec![der::seq(&[
            &der::oid(&[2, 5, 4, 3]),
            &der::directory_string(common_name),
        ])]));
    }
    der::tlv(der::TAG_SEQUENCE, &rdns.concat())
}
