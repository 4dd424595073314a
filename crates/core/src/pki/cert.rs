//! Reading certificates: an owned, parsed view of the fields kubeadm checks (subject, validity, CA
//! flag, SANs, key identifiers), parsed with x509-parser, plus signature verification of a child by
//! its issuer.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::der::{self, Reader, pem_decode_all, pem_encode};
use super::spec::ExtKeyUsage;

/// Why a certificate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertParseError {
    /// No `CERTIFICATE` PEM block.
    #[error("data does not contain any valid RSA or ECDSA certificates")]
    NoCertificate,
    /// The DER does not parse.
    #[error("malformed certificate: {0}")]
    Malformed(String),
}

/// The fields of a certificate kubeadm looks at, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// The whole certificate DER.
    pub der: Vec<u8>,
    /// The subject Name, DER.
    pub raw_subject: Vec<u8>,
    /// The issuer Name, DER.
    pub raw_issuer: Vec<u8>,
    /// Subject common name (the first), empty when absent.
    pub common_name: String,
    /// Subject organizations, in order.
    pub organizations: Vec<String>,
    /// NotBefore, Unix seconds.
    pub not_before: i64,
    /// NotAfter, Unix seconds.
    pub not_after: i64,
    /// Basic constraints say CA.
    pub is_ca: bool,
    /// DNS SANs, in certificate order.
    pub dns_names: Vec<String>,
    /// IP SANs, in certificate order (4-byte entries as IPv4).
    pub ips: Vec<IpAddr>,
    /// Whether a SAN extension is present at all.
    pub has_san_extension: bool,
    /// Subject key identifier.
    pub subject_key_id: Option<Vec<u8>>,
    /// Authority key identifier (key id form).
    pub authority_key_id: Option<Vec<u8>>,
    /// SubjectPublicKeyInfo DER.
    pub spki: Vec<u8>,
    /// Server/client auth extended key usages, in certificate order (others are not kept).
    pub ext_key_usages: Vec<ExtKeyUsage>,
}

impl CertInfo {
    /// Parses one certificate from DER.
    pub fn from_der(der: &[u8]) -> Result<Self, CertParseError> {
        let (_, x) = X509Certificate::from_der(der).map_err(|e| CertParseError::Malformed(e.to_string()))?;
        let subject = x.subject();
        let attr =
            |a: &x509_parser::x509::AttributeTypeAndValue<'_>| a.as_str().unwrap_or_default().to_string();
        let mut info = CertInfo {
            der: x.as_raw().to_vec(),
            raw_subject: subject.as_raw().to_vec(),
            raw_issuer: x.issuer().as_raw().to_vec(),
            common_name: subject.iter_common_name().next().map(attr).unwrap_or_default(),
            organizations: subject.iter_organization().map(attr).collect(),
            not_before: x.validity().not_before.timestamp(),
            not_after: x.validity().not_after.timestamp(),
            is_ca: false,
            dns_names: Vec::new(),
            ips: Vec::new(),
            has_san_extension: false,
            subject_key_id: None,
            authority_key_id: None,
            spki: x.public_key().raw.to_vec(),
            ext_key_usages: Vec::new(),
        };
        for ext in x.extensions() {
            match ext.parsed_extension() {
                ParsedExtension::BasicConstraints(bc) => info.is_ca = bc.ca,
                ParsedExtension::ExtendedKeyUsage(_) => {
                    info.ext_key_usages = ext_key_usages_in_order(ext.value)
                }
                ParsedExtension::SubjectKeyIdentifier(id) => info.subject_key_id = Some(id.0.to_vec()),
                ParsedExtension::AuthorityKeyIdentifier(aki) => {
                    info.authority_key_id = aki.key_identifier.as_ref().map(|k| k.0.to_vec());
                }
                ParsedExtension::SubjectAlternativeName(san) => {
                    info.has_san_extension = true;
                    for name in &san.general_names {
                        match name {
                            GeneralName::DNSName(d) => info.dns_names.push((*d).to_string()),
                            GeneralName::IPAddress(b) => {
                                if let Ok(v4) = <[u8; 4]>::try_from(*b) {
                                    info.ips.push(IpAddr::V4(Ipv4Addr::from(v4)));
                                } else if let Ok(v6) = <[u8; 16]>::try_from(*b) {
                                    info.ips.push(IpAddr::V6(Ipv6Addr::from(v6)));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(info)
    }

    /// Every certificate in a PEM file, in order (`certutil.CertsFromFile`): the first is the
    /// certificate itself, the rest intermediates.
    pub fn chain_from_pem(text: &str) -> Result<Vec<Self>, CertParseError> {
        let certs: Vec<Self> = pem_decode_all(text)
            .into_iter()
            .filter(|b| b.label == "CERTIFICATE")
            .map(|b| Self::from_der(&b.der))
            .collect::<Result<_, _>>()?;
        if certs.is_empty() {
            return Err(CertParseError::NoCertificate);
        }
        Ok(certs)
    }

    /// The first certificate in a PEM file.
    pub fn from_pem(text: &str) -> Result<Self, CertParseError> {
        Self::chain_from_pem(text)?
            .into_iter()
            .next()
            .ok_or(CertParseError::NoCertificate)
    }

    /// This certificate re-encoded as one PEM block (`EncodeCertPEM`).
    pub fn to_pem(&self) -> String {
        pem_encode("CERTIFICATE", &self.der)
    }

    /// Whether the certificate's public key is RSA.
    pub fn spki_is_rsa(&self) -> bool {
        // rsaEncryption OID content, inside the SPKI's AlgorithmIdentifier.
        const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
        self.spki.windows(RSA.len()).take(24).any(|w| w == RSA)
    }

    /// Whether `issuer`'s key made this certificate's signature.
    pub fn is_signed_by(&self, issuer: &CertInfo) -> bool {
        let Ok((_, child)) = X509Certificate::from_der(&self.der) else {
            return false;
        };
        let Ok((_, parent)) = X509Certificate::from_der(&issuer.der) else {
            return false;
        };
        child.verify_signature(Some(parent.public_key())).is_ok()
    }
}

/// The extended key usages of an ExtKeyUsageSyntax value, in order (x509-parser only gives flags).
fn ext_key_usages_in_order(value: &[u8]) -> Vec<ExtKeyUsage> {
    let server = der::oid(&[1, 3, 6, 1, 5, 5, 7, 3, 1]);
    let client = der::oid(&[1, 3, 6, 1, 5, 5, 7, 3, 2]);
    let mut out = Vec::new();
    let mut outer = Reader::new(value);
    let Ok(seq) = outer.next(der::TAG_SEQUENCE) else {
        return out;
    };
    let mut r = Reader::new(seq);
    while let Ok((_, _, whole)) = r.next_any() {
        if whole == server.as_slice() {
            out.push(ExtKeyUsage::ServerAuth);
        } else if whole == client.as_slice() {
            out.push(ExtKeyUsage::ClientAuth);
        }
    }
    out
}
