//! The real key generator: aws-lc-rs, with a batch spread over every core (`std::thread::scope`),
//! since a cold `init` needs about fourteen RSA keys and each costs tens of milliseconds.

use std::num::NonZeroUsize;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use kubeadm_effects::keygen::{GeneratedKey, KeyAlgorithm, KeyGen, KeyGenError};

/// Generates keys with aws-lc-rs on all available cores.
#[derive(Debug, Clone, Copy, Default)]
pub struct AwsLcKeyGen;

fn generate_key(algorithm: KeyAlgorithm) -> Result<GeneratedKey, KeyGenError> {
    let fail = |reason: String| KeyGenError { algorithm, reason };
    let pkcs8_der = match algorithm {
        KeyAlgorithm::Rsa2048 => {
            let pair =
                aws_lc_rs::rsa::KeyPair::generate(KeySize::Rsa2048).map_err(|e| fail(e.to_string()))?;
            pair.as_der().map_err(|e| fail(e.to_string()))?.as_ref().to_vec()
        }
        KeyAlgorithm::EcdsaP256 => {
            let pair =
                EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).map_err(|e| fail(e.to_string()))?;
            // Keep the public key next to the private one, as every other encoder does.
            debug_assert!(!pair.public_key().as_ref().is_empty());
            pair.to_pkcs8v1()
                .map_err(|e| fail(e.to_string()))?
                .as_ref()
                .to_vec()
        }
    };
    Ok(GeneratedKey { algorithm, pkcs8_der })
}

impl KeyGen for AwsLcKeyGen {
    fn generate(&self, algorithms: &[KeyAlgorithm]) -> Result<Vec<GeneratedKey>, KeyGenError> {
        let workers = std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(algorithms.len());
        if workers <= 1 {
            return algorithms.iter().map(|a| generate_key(*a)).collect();
        }
        // Interleave the work so each thread gets a similar mix; results are put back in order.
        let mut slots: Vec<Option<Result<GeneratedKey, KeyGenError>>> = vec![None; algorithms.len()];
        // RSA key generation time varies a lot from key to key (the prime search is random), so
        // workers take the next key from a shared counter rather than a fixed share.
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let next = &next;
                    scope.spawn(move || {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(algorithm) = algorithms.get(i) else { break };
                            done.push((i, generate_key(*algorithm)));
                        }
                        done
                    })
                })
                .collect();
            for handle in handles {
                // A panicking worker leaves its slots empty: reported below.
                if let Ok(results) = handle.join() {
                    for (i, r) in results {
                        slots[i] = Some(r);
                    }
                }
            }
        });
        slots
            .into_iter()
            .zip(algorithms)
            .map(|(slot, a)| {
                slot.unwrap_or_else(|| {
                    Err(KeyGenError {
                        algorithm: *a,
                        reason: "key generation thread panicked".to_string(),
                    })
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_keeps_order_and_types() {
        let algs = [
            KeyAlgorithm::EcdsaP256,
            KeyAlgorithm::Rsa2048,
            KeyAlgorithm::EcdsaP256,
        ];
        let keys = AwsLcKeyGen.generate(&algs).expect("keys");
        assert_eq!(keys.iter().map(|k| k.algorithm).collect::<Vec<_>>(), algs);
        // PKCS#8 DER: a SEQUENCE; RSA-2048 keys are ~1.2 kB, P-256 keys well under 200 bytes.
        assert!(keys.iter().all(|k| k.pkcs8_der[0] == 0x30));
        assert!(keys[1].pkcs8_der.len() > 1000);
        assert!(keys[0].pkcs8_der.len() < 200);
        assert_ne!(keys[0].pkcs8_der, keys[2].pkcs8_der);
    }
}
