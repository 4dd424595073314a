//! Key generation as an effect: the randomness of a new private key is the one thing in issuing a
//! certificate that is not a function of its inputs, so it is injected, and tests can use fixed keys.
//! Keys are requested in batches so an implementation can generate them in parallel (RSA key
//! generation dominates `init phase certs all`).

/// The key type to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyAlgorithm {
    /// RSA, 2048-bit modulus, exponent 65537 (kubeadm's default).
    Rsa2048,
    /// ECDSA on NIST P-256 (the `PublicKeysECDSA` feature gate).
    EcdsaP256,
}

/// A freshly generated private key.
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedKey {
    /// The key type.
    pub algorithm: KeyAlgorithm,
    /// The key as unencrypted PKCS#8 (`PrivateKeyInfo`) DER.
    pub pkcs8_der: Vec<u8>,
}

impl std::fmt::Debug for GeneratedKey {
    // Key material never goes to logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedKey")
            .field("algorithm", &self.algorithm)
            .field("pkcs8_der", &format_args!("<{} bytes>", self.pkcs8_der.len()))
            .finish()
    }
}

/// Why keys could not be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to create private key ({algorithm:?}): {reason}")]
pub struct KeyGenError {
    /// The key type that failed.
    pub algorithm: KeyAlgorithm,
    /// The backend's reason.
    pub reason: String,
}

/// Generates private keys.
pub trait KeyGen: Send + Sync {
    /// One new key per entry of `algorithms`, in the same order.
    fn generate(&self, algorithms: &[KeyAlgorithm]) -> Result<Vec<GeneratedKey>, KeyGenError>;

    /// One new key.
    fn generate_one(&self, algorithm: KeyAlgorithm) -> Result<GeneratedKey, KeyGenError> {
        self.generate(&[algorithm])?.pop().ok_or_else(|| KeyGenError {
            algorithm,
            reason: "no key returned".to_string(),
        })
    }
}
