//! Private keys as kubeadm stores them: RSA keys as PKCS#1 `RSA PRIVATE KEY`, ECDSA P-256 keys as
//! SEC1 `EC PRIVATE KEY` (with the curve parameters and public point, as Go's `MarshalECPrivateKey`),
//! public keys as PKIX `PUBLIC KEY`. Keys arrive either fresh from the key-generation effect (PKCS#8
//! DER) or from existing files (any of the three PEM forms Go's `keyutil` accepts).

use rcgen::{KeyPair, PKCS_ECDSA_P256_SHA256, PKCS_RSA_SHA256, PublicKeyData, SignatureAlgorithm};

use super::der::{self, DerError, Reader, pem_decode_all, pem_encode};

const OID_RSA_ENCRYPTION: &[u64] = &[1, 2, 840, 113_549, 1, 1, 1];
const OID_EC_PUBLIC_KEY: &[u64] = &[1, 2, 840, 10_045, 2, 1];
const OID_PRIME256V1: &[u64] = &[1, 2, 840, 10_045, 3, 1, 7];

/// The key type of every kubeadm-generated key: RSA 2048 unless the `PublicKeysECDSA` feature gate
/// is on, then ECDSA P-256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyAlgorithm {
    /// RSA with a 2048-bit modulus, signing with SHA256WithRSA.
    Rsa2048,
    /// ECDSA on P-256, signing with ECDSAWithSHA256.
    EcdsaP256,
}

/// Why a key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// No PEM block holding a private key was found.
    #[error("data does not contain a valid RSA or ECDSA private key")]
    NoPrivateKey,
    /// The key is neither RSA nor ECDSA P-256.
    #[error("the private key is neither in RSA nor ECDSA format")]
    UnsupportedKeyType,
    /// The key's DER structure is malformed.
    #[error("malformed private key")]
    Malformed(#[from] DerError),
    /// The crypto backend rejected the key.
    #[error("invalid private key: {0}")]
    Rejected(String),
}

/// A private key ready to sign, remembering the encoding kubeadm writes it in.
#[derive(Debug)]
pub struct PrivateKey {
    pair: KeyPair,
    algorithm: KeyAlgorithm,
    /// PKCS#1 for RSA, SEC1 with parameters for ECDSA.
    traditional_der: Vec<u8>,
}

impl PrivateKey {
    /// A key from PKCS#8 DER, as the key-generation effect hands it over.
    pub fn from_pkcs8_der(pkcs8: &[u8]) -> Result<Self, KeyError> {
        let mut outer = Reader::new(pkcs8);
        let mut info = Reader::new(outer.next(der::TAG_SEQUENCE)?);
        info.next(der::TAG_INTEGER)?;
        let mut alg_id = Reader::new(info.next(der::TAG_SEQUENCE)?);
        let alg_oid = alg_id.next(der::TAG_OID)?;
        let inner = info.next(der::TAG_OCTET_STRING)?;
        if alg_oid == oid_content(OID_RSA_ENCRYPTION).as_slice() {
            let pair = load_pair(pkcs8, "PRIVATE KEY", &PKCS_RSA_SHA256)?;
            Ok(PrivateKey {
                pair,
                algorithm: KeyAlgorithm::Rsa2048,
                traditional_der: inner.to_vec(),
            })
        } else if alg_oid == oid_content(OID_EC_PUBLIC_KEY).as_slice() {
            let curve = alg_id.next(der::TAG_OID)?;
            if curve != oid_content(OID_PRIME256V1).as_slice() {
                return Err(KeyError::UnsupportedKeyType);
            }
            let pair = load_pair(pkcs8, "PRIVATE KEY", &PKCS_ECDSA_P256_SHA256)?;
            let scalar = ec_scalar(inner)?;
            let traditional_der = sec1(&scalar, pair.public_key_raw());
            Ok(PrivateKey {
                pair,
                algorithm: KeyAlgorithm::EcdsaP256,
                traditional_der,
            })
        } else {
            Err(KeyError::UnsupportedKeyType)
        }
    }

    /// A key from a PEM file: the first `RSA PRIVATE KEY`, `EC PRIVATE KEY` or `PRIVATE KEY` block,
    /// other blocks (such as `EC PARAMETERS`) skipped, as Go's `keyutil.ParsePrivateKeyPEM`.
    pub fn from_pem(text: &str) -> Result<Self, KeyError> {
        for block in pem_decode_all(text) {
            match block.label.as_str() {
                "RSA PRIVATE KEY" => {
                    let pair = load_pair(&block.der, "RSA PRIVATE KEY", &PKCS_RSA_SHA256)?;
                    return Ok(PrivateKey {
                        pair,
                        algorithm: KeyAlgorithm::Rsa2048,
                        traditional_der: block.der,
                    });
                }
                "EC PRIVATE KEY" => {
                    let scalar = ec_scalar(&block.der)?;
                    let pair = load_pair(&block.der, "EC PRIVATE KEY", &PKCS_ECDSA_P256_SHA256)?;
                    let traditional_der = sec1(&scalar, pair.public_key_raw());
                    return Ok(PrivateKey {
                        pair,
                        algorithm: KeyAlgorithm::EcdsaP256,
                        traditional_der,
                    });
                }
                "PRIVATE KEY" => return Self::from_pkcs8_der(&block.der),
                _ => {}
            }
        }
        Err(KeyError::NoPrivateKey)
    }

    /// The key type. (An RSA key read from disk may be larger than 2048 bits; it is still RSA.)
    pub fn algorithm(&self) -> KeyAlgorithm {
        self.algorithm
    }

    /// The PEM kubeadm writes for this key (`RSA PRIVATE KEY` or `EC PRIVATE KEY`).
    pub fn to_pem(&self) -> String {
        let label = match self.algorithm {
            KeyAlgorithm::Rsa2048 => "RSA PRIVATE KEY",
            KeyAlgorithm::EcdsaP256 => "EC PRIVATE KEY",
        };
        pem_encode(label, &self.traditional_der)
    }

    /// The public key as PKIX `PUBLIC KEY` PEM (what `sa.pub` holds).
    pub fn public_key_pem(&self) -> String {
        pem_encode("PUBLIC KEY", &self.spki_der())
    }

    /// The SubjectPublicKeyInfo DER.
    pub fn spki_der(&self) -> Vec<u8> {
        self.pair.subject_public_key_info()
    }

    /// The raw subjectPublicKey bits (RSA: PKCS#1 public key; EC: uncompressed point).
    pub(crate) fn public_key_raw(&self) -> &[u8] {
        self.pair.public_key_raw()
    }

    /// The AlgorithmIdentifier of signatures made with this key, as Go picks it for the signer.
    pub(crate) fn signature_algorithm_der(&self) -> Vec<u8> {
        match self.algorithm {
            KeyAlgorithm::Rsa2048 => der::seq(&[
                &der::oid(&[1, 2, 840, 113_549, 1, 1, 11]),
                &der::tlv(der::TAG_NULL, &[]),
            ]),
            KeyAlgorithm::EcdsaP256 => der::seq(&[&der::oid(&[1, 2, 840, 10_045, 4, 3, 2])]),
        }
    }

    /// Signs `message` (SHA-256 with PKCS#1 v1.5 or ECDSA, DER signature).
    pub(crate) fn sign(&self, message: &[u8]) -> Result<Vec<u8>, KeyError> {
        use rcgen::SigningKey as _;
        self.pair
            .sign(message)
            .map_err(|e| KeyError::Rejected(e.to_string()))
    }
}

fn load_pair(der: &[u8], label: &str, alg: &'static SignatureAlgorithm) -> Result<KeyPair, KeyError> {
    KeyPair::from_pem_and_sign_algo(&pem_encode(label, der), alg)
        .map_err(|e| KeyError::Rejected(e.to_string()))
}

fn oid_content(arcs: &[u64]) -> Vec<u8> {
    // The OID's content octets, without tag and length.
    let enc = der::oid(arcs);
    enc[2..].to_vec()
}

/// The private scalar of an RFC 5915 ECPrivateKey, left-padded to the P-256 field size as Go does.
fn ec_scalar(ec_private_key: &[u8]) -> Result<Vec<u8>, KeyError> {
    let mut outer = Reader::new(ec_private_key);
    let mut r = Reader::new(outer.next(der::TAG_SEQUENCE)?);
    r.next(der::TAG_INTEGER)?;
    let scalar = r.next(der::TAG_OCTET_STRING)?;
    if scalar.len() > 32 {
        return Err(KeyError::UnsupportedKeyType);
    }
    let mut padded = vec![0u8; 32 - scalar.len()];
    padded.extend_from_slice(scalar);
    Ok(padded)
}

/// ECPrivateKey { version 1, privateKey, [0] prime256v1, [1] publicKey }, Go's shape.
fn sec1(scalar: &[u8], public_point: &[u8]) -> Vec<u8> {
    der::seq(&[
        &der::tlv(der::TAG_INTEGER, &[1]),
        &der::tlv(der::TAG_OCTET_STRING, scalar),
        &der::tlv(0xa0, &der::oid(OID_PRIME256V1)),
        &der::tlv(0xa1, &der::bit_string(public_point)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rsa_pkcs8() -> Vec<u8> {
        KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
            .expect("rsa")
            .serialize_der()
    }

    #[test]
    fn rsa_key_round_trips_through_pkcs1_pem() {
        let key = PrivateKey::from_pkcs8_der(&rsa_pkcs8()).expect("load");
        let pem = key.to_pem();
        assert!(pem.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
        let again = PrivateKey::from_pem(&pem).expect("reload");
        assert_eq!(again.spki_der(), key.spki_der());
        assert_eq!(again.to_pem(), pem);
    }

    #[test]
    fn ec_key_round_trips_through_sec1_pem_with_parameters() {
        let pkcs8 = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
            .expect("ec")
            .serialize_der();
        let key = PrivateKey::from_pkcs8_der(&pkcs8).expect("load");
        let pem = key.to_pem();
        assert!(pem.starts_with("-----BEGIN EC PRIVATE KEY-----\n"));
        let again = PrivateKey::from_pem(&pem).expect("reload");
        assert_eq!(again.spki_der(), key.spki_der());
        assert_eq!(again.to_pem(), pem);
        // version 1, 32-byte scalar, [0] curve, [1] point: the shape `openssl ec` expects.
        let blocks = pem_decode_all(&pem);
        let mut r = Reader::new(&blocks[0].der);
        let mut s = Reader::new(r.next(der::TAG_SEQUENCE).expect("seq"));
        assert_eq!(s.next(der::TAG_INTEGER).expect("v"), &[1]);
        assert_eq!(s.next(der::TAG_OCTET_STRING).expect("d").len(), 32);
        assert_eq!(s.peek_tag(), Some(0xa0));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(matches!(
            PrivateKey::from_pem("nothing here"),
            Err(KeyError::NoPrivateKey)
        ));
    }
}
