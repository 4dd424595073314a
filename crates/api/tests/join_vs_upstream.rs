//! JoinConfiguration files through `kubeadm config migrate` (which loads, defaults and validates
//! them as `kubeadm join` does): same output, or the same error.

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::migrate::migrate;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};

fn check(name: &str, text: &str, failures: &mut Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.yaml");
    std::fs::write(&path, text).expect("write");
    let p = path.to_string_lossy().into_owned();
    let want = run(
        &upstream_kubeadm(),
        &["config", "migrate", "--old-config", &p],
        dir.path(),
        &[],
    );
    let host = HostFacts {
        hostname: "unused".into(),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let exists = |f: &str| std::path::Path::new(f).exists();
    match migrate("old.yaml", text, &mut inputs, &exists) {
        Ok(m) if want.code == 0 && m.text == want.stdout => {}
        Ok(m) if want.code == 0 => failures.push(format!("{name}:\n{}", diff(&want.stdout, &m.text))),
        Err(e) if want.code != 0 && want.stderr.contains(&e.to_string()) => {}
        Err(e) if want.code != 0 => {
            // Load errors carry our file:line prefix; upstream's text must follow it.
            let ours = e.to_string();
            let upstream_line = want
                .stderr
                .lines()
                .find(|l| !l.starts_with('W'))
                .unwrap_or_default();
            if !ours.ends_with(upstream_line) {
                failures.push(format!("{name}: upstream {upstream_line:?}, ours {ours:?}"));
            }
        }
        other => failures.push(format!(
            "{name}: upstream {} {:?}, ours {other:?}",
            want.code, want.stderr
        )),
    }
}

fn join(body: &str) -> String {
    format!(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\nnodeRegistration:\n  name: node-b\n  criSocket: unix:///x.sock\n{body}"
    )
}

#[test]
fn join_files_agree_with_upstream() {
    let cases = [
        (
            "token discovery",
            join(
                "discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: 10.0.0.5:6443\n    unsafeSkipCAVerification: true\n",
            ),
        ),
        ("no discovery", join("")),
        (
            "both discoveries",
            join(
                "discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: 10.0.0.5:6443\n    unsafeSkipCAVerification: true\n  file:\n    kubeConfigPath: https://x/y\n",
            ),
        ),
        (
            "unsafe discovery",
            join("discovery:\n  bootstrapToken:\n    token: abcdef\n    apiServerEndpoint: 10.0.0.5\n"),
        ),
        (
            "no endpoint",
            join(
                "discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    caCertHashes: [sha256:aa]\n",
            ),
        ),
        (
            "file url",
            join(
                "discovery:\n  file:\n    kubeConfigPath: file:///etc/hostname\n  tlsBootstrapToken: abcdef.0123456789abcdef\n",
            ),
        ),
        (
            "file http",
            join("discovery:\n  file:\n    kubeConfigPath: http://x/y\n"),
        ),
        (
            "file missing",
            join(
                "discovery:\n  file:\n    kubeConfigPath: /nonexistent/discovery.conf\n  tlsBootstrapToken: bad\n",
            ),
        ),
        (
            "relative ca path",
            join("caCertPath: ca.crt\ndiscovery:\n  file:\n    kubeConfigPath: /etc/hostname\n"),
        ),
        (
            "control plane",
            join(
                "controlPlane:\n  localAPIEndpoint:\n    advertiseAddress: 10.0.0.7\n    bindPort: 0\n  certificateKey: k\ndiscovery:\n  file:\n    kubeConfigPath: /etc/hostname\n",
            ),
        ),
        (
            "control plane bad address",
            join(
                "controlPlane:\n  localAPIEndpoint:\n    advertiseAddress: 10.0.0\ndiscovery:\n  file:\n    kubeConfigPath: /etc/hostname\n",
            ),
        ),
        (
            "v1beta2 join",
            join("discovery:\n  file:\n    kubeConfigPath: /etc/hostname\n").replace("v1beta3", "v1beta2"),
        ),
        ("v1beta1 join", join("").replace("v1beta3", "v1beta1")),
        (
            "join patches",
            join(
                "patches:\n  directory: /p\nskipPhases: [preflight]\ndiscovery:\n  file:\n    kubeConfigPath: /etc/hostname\n",
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text) in &cases {
        check(name, text, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
