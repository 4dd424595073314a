//! The cli's random source: the secrets `kubeadm token generate` and `kubeadm certs certificate-key`
//! print, the bootstrap tokens defaulting gives a configuration that has none, and the random values
//! certificate serial numbers are made from. No other module of the cli calls `rand` (its
//! `clippy.toml` says so).

/// The characters of a bootstrap token.
const TOKEN_CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

fn random_chars(n: usize) -> String {
    (0..n)
        .map(|_| char::from(TOKEN_CHARS[rand::random_range(0..TOKEN_CHARS.len())]))
        .collect()
}

/// A bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`.
pub(crate) fn bootstrap_token() -> String {
    format!("{}.{}", random_chars(6), random_chars(16))
}

/// A certificate key: 32 random bytes (an AES-256 key), hex-encoded.
pub(crate) fn certificate_key() -> String {
    let mut key = [0u8; 32];
    rand::fill(&mut key);
    hex::encode(key)
}

/// A random bootstrap token, for the defaulting of configurations that have none.
pub(crate) fn new_token() -> kubeadm_api::v1beta3::BootstrapTokenString {
    kubeadm_api::v1beta3::BootstrapTokenString::generate(rand::random::<u8>)
}

/// A random 64-bit value (certificate serial numbers are made from them).
pub(crate) fn random_u64() -> u64 {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shape() {
        let t = bootstrap_token();
        let (id, secret) = t.split_once('.').expect("dot");
        assert_eq!((id.len(), secret.len()), (6, 16));
        assert!(t.bytes().all(|b| b == b'.' || TOKEN_CHARS.contains(&b)));
        assert_ne!(t, bootstrap_token());
    }

    #[test]
    fn key_shape() {
        let k = certificate_key();
        assert_eq!(k.len(), 64);
        assert!(
            k.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}
