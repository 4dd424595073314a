//! Random secrets printed by `kubeadm token generate` and `kubeadm certs certificate-key`.

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
