//! Bootstrap tokens: `id.secret` strings, and tokens read back from their Secrets (`token list`,
//! `token delete`). A token that parses prints as its input; a token read from a Secret is written
//! to a Secret that reads back as the same token. Input: token string NUL Secret (YAML or JSON).
#![no_main]

use kubeadm_api::timestamp::Time;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_core::cluster::bootstrap_token::{token_from_secret, token_secret};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [token, secret] = kubeadm_fuzz::parts(data, 2)[..] else {
        unreachable!()
    };
    let token = kubeadm_fuzz::text(token);
    if let Ok(t) = BootstrapTokenString::parse(&token) {
        assert_eq!(format!("{}.{}", t.id, t.secret), token);
    }
    let Some(secret) = kubeadm_fuzz::document(secret) else {
        return;
    };
    if let Ok(read) = token_from_secret(&secret) {
        let now = Time::from_unix_seconds(1_700_000_000).expect("a valid time");
        if let Ok(written) = token_secret(&read, 0, now) {
            let again = token_from_secret(&written).expect("a Secret kubeadm writes reads back");
            assert_eq!(again, read, "the token changed on the way through its Secret");
        }
    }
});
