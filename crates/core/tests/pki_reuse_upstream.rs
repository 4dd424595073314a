//! Differential tests for files that already exist and for `kubeconfig user`: upstream's verdict on
//! a certificate from another CA, the kubeconfig it prints for a token or a client certificate with
//! organizations and a validity period; plus the SAN and external-CA checks on upstream's files.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use kubeadm_core::kubeconfig::{CLIENT_KEY_ALGORITHM, UserAuth, build_kubeconfig, control_plane_endpoint};
use kubeadm_core::pki::{
    CertId, CertInfo, CertTemplate, EtcdMode, ExtKeyUsage, KeyAlgorithm, PkiInputs, PrivateKey, alt_names,
    cert_spec, check_existing_chain, check_existing_signed, external_ca_leaves, external_ca_status,
    issue_signed,
};
use kubeadm_testkit::oracle::{run, upstream_kubeadm};

fn inputs() -> PkiInputs {
    PkiInputs {
        node_name: "node1".into(),
        advertise_address: "10.0.0.5".into(),
        bind_port: 6443,
        control_plane_endpoint: String::new(),
        service_subnet: "10.96.0.0/12".into(),
        dns_domain: "cluster.local".into(),
        cert_sans: vec![],
        cluster_name: "kubernetes".into(),
        etcd: EtcdMode::Local {
            server_cert_sans: vec![],
            peer_cert_sans: vec![],
        },
        key_algorithm: KeyAlgorithm::Rsa2048,
    }
}

/// Writes a config for `dir/pki` and runs `init phase certs all`; returns the config path.
fn upstream_pki(dir: &Path) -> String {
    let cfg = dir.join("cfg.yaml");
    std::fs::write(
        &cfg,
        format!(
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\ncertificatesDir: {}\n",
            dir.join("pki").display()
        ),
    )
    .expect("write config");
    let cfg = cfg.to_str().expect("utf8").to_string();
    let r = run(
        &upstream_kubeadm(),
        &["init", "phase", "certs", "all", "--config", &cfg],
        dir,
        &[],
    );
    assert_eq!(r.code, 0, "upstream certs: {}", r.stderr);
    cfg
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

#[test]
fn certificate_from_another_ca_is_refused_with_upstreams_words() {
    let a = tempfile::tempdir().expect("tmp");
    let b = tempfile::tempdir().expect("tmp");
    let cfg = upstream_pki(a.path());
    upstream_pki(b.path());
    for f in ["ca.crt", "ca.key"] {
        std::fs::copy(b.path().join("pki").join(f), a.path().join("pki").join(f)).expect("copy");
    }
    let r = run(
        &upstream_kubeadm(),
        &["init", "phase", "certs", "apiserver", "--config", &cfg],
        a.path(),
        &[],
    );
    assert_ne!(r.code, 0);
    let ca = CertInfo::from_pem(&read(&a.path().join("pki/ca.crt"))).expect("ca");
    let err = check_existing_chain(
        "apiserver",
        "ca",
        &read(&a.path().join("pki/apiserver.crt")),
        &ca,
        now(),
    )
    .expect_err("must be refused");
    let expected = format!("error execution phase certs/apiserver: {err}\n");
    assert!(
        r.stderr.starts_with(&expected),
        "upstream said:\n{}\nwe say:\n{expected}",
        r.stderr
    );

    // The CA's own certificates are accepted, by both checks.
    let own_ca = CertInfo::from_pem(&read(&b.path().join("pki/ca.crt"))).expect("ca");
    let pki = b.path().join("pki");
    check_existing_chain(
        "apiserver",
        "ca",
        &read(&pki.join("apiserver.crt")),
        &own_ca,
        now(),
    )
    .expect("own chain");
    let expected_sans = alt_names(cert_spec(CertId::ApiServer), &inputs()).expect("sans");
    check_existing_signed(
        "apiserver",
        &read(&pki.join("apiserver.crt")),
        &read(&pki.join("apiserver.key")),
        &own_ca,
        &expected_sans,
        now(),
    )
    .expect("own cert with the same SANs");
}

#[test]
fn missing_san_is_named_like_go_hostname_error() {
    let dir = tempfile::tempdir().expect("tmp");
    upstream_pki(dir.path());
    let pki = dir.path().join("pki");
    let ca = CertInfo::from_pem(&read(&pki.join("ca.crt"))).expect("ca");
    let wanted = PkiInputs {
        cert_sans: vec!["foo.example.com".into()],
        ..inputs()
    };
    let sans = alt_names(cert_spec(CertId::ApiServer), &wanted).expect("sans");
    let err = check_existing_signed(
        "apiserver",
        &read(&pki.join("apiserver.crt")),
        &read(&pki.join("apiserver.key")),
        &ca,
        &sans,
        now(),
    )
    .expect_err("foo.example.com is not in upstream's certificate");
    assert_eq!(
        err.to_string(),
        "certificate apiserver is invalid: x509: certificate is valid for kubernetes, kubernetes.default, kubernetes.default.svc, kubernetes.default.svc.cluster.local, node1, not foo.example.com"
    );
    let wanted = PkiInputs {
        cert_sans: vec!["1.2.3.4".into()],
        ..inputs()
    };
    let sans = alt_names(cert_spec(CertId::ApiServer), &wanted).expect("sans");
    let err = check_existing_signed(
        "apiserver",
        &read(&pki.join("apiserver.crt")),
        &read(&pki.join("apiserver.key")),
        &ca,
        &sans,
        now(),
    )
    .expect_err("1.2.3.4 is not in upstream's certificate");
    assert_eq!(
        err.to_string(),
        "certificate apiserver is invalid: x509: certificate is valid for 10.96.0.1, 10.0.0.5, not 1.2.3.4"
    );
}

#[test]
fn external_ca_is_detected_from_upstream_files() {
    let dir = tempfile::tempdir().expect("tmp");
    upstream_pki(dir.path());
    let pki = dir.path().join("pki");
    let status = |pki: &Path| {
        let leaves: Vec<(&str, Option<String>, Option<String>)> = external_ca_leaves(CertId::Ca)
            .iter()
            .map(|(id, ux)| {
                let b = cert_spec(*id).base_name;
                (
                    *ux,
                    std::fs::read_to_string(pki.join(format!("{b}.crt"))).ok(),
                    std::fs::read_to_string(pki.join(format!("{b}.key"))).ok(),
                )
            })
            .collect();
        let leaves: Vec<(&str, Option<&str>, Option<&str>)> = leaves
            .iter()
            .map(|(u, c, k)| (*u, c.as_deref(), k.as_deref()))
            .collect();
        external_ca_status(
            "ca",
            "CA",
            std::fs::read_to_string(pki.join("ca.crt")).ok().as_deref(),
            pki.join("ca.key").exists(),
            &leaves,
            now(),
        )
    };
    let s = status(&pki);
    assert!(!s.external && s.error.is_none(), "{s:?}");
    std::fs::remove_file(pki.join("ca.key")).expect("rm");
    let s = status(&pki);
    assert!(s.external && s.error.is_none(), "{s:?}");
    std::fs::remove_file(pki.join("apiserver-kubelet-client.key")).expect("rm");
    let s = status(&pki);
    assert!(s.external && s.error.is_some(), "{s:?}");
}

#[test]
fn kubeconfig_user_token_matches_upstream_exactly() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = upstream_pki(dir.path());
    let r = run(
        &upstream_kubeadm(),
        &[
            "kubeconfig",
            "user",
            "--client-name",
            "alice",
            "--token",
            "abc.def",
            "--config",
            &cfg,
        ],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ca = CertInfo::from_pem(&read(&dir.path().join("pki/ca.crt"))).expect("ca");
    let (server, _) = control_plane_endpoint(&inputs()).expect("endpoint");
    let ours = build_kubeconfig(
        &server,
        "kubernetes",
        "alice",
        Some(&ca),
        &UserAuth::Token("abc.def".into()),
    );
    // `clientcmd.Write` output, then `Fprintln`.
    assert_eq!(r.stdout, format!("{}\n", kubeadm_yaml::to_string(&ours)));
}

#[test]
fn kubeconfig_user_client_cert_matches_upstream() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = upstream_pki(dir.path());
    let r = run(
        &upstream_kubeadm(),
        &[
            "kubeconfig",
            "user",
            "--client-name",
            "bob",
            "--org",
            "zeta",
            "--org",
            "alpha&co",
            "--validity-period",
            "48h",
            "--config",
            &cfg,
        ],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let issued_at = now();
    let doc = kubeadm_yaml::parse_documents(&r.stdout).expect("parse");
    let data = doc[0].value["users"][0]["user"]["client-certificate-data"]
        .as_str()
        .expect("data")
        .to_string();
    use base64::Engine as _;
    let up_pem = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("b64"),
    )
    .expect("utf8");
    let up = CertInfo::from_pem(&up_pem).expect("cert");

    let pki = dir.path().join("pki");
    let ca = CertInfo::from_pem(&read(&pki.join("ca.crt"))).expect("ca");
    let ca_key = PrivateKey::from_pem(&read(&pki.join("ca.key"))).expect("ca key");
    let pkcs8 = rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
        .expect("key")
        .serialize_der();
    let key = PrivateKey::from_pkcs8_der(&pkcs8).expect("key");
    assert_eq!(key.algorithm(), CLIENT_KEY_ALGORITHM);
    let template = CertTemplate {
        common_name: "bob".into(),
        organization: vec!["zeta".into(), "alpha&co".into()],
        alt_names: Default::default(),
        ext_key_usages: vec![ExtKeyUsage::ClientAuth],
    };
    let ours = issue_signed(
        &template,
        &ca,
        &ca_key,
        &key,
        issued_at,
        Some(issued_at + 48 * 3600),
        9,
    )
    .expect("issue");
    let ours = CertInfo::from_der(&ours.der).expect("parse");
    // Byte-equal subject: one RDN holding both organizations in DER set order, UTF8String for `&`.
    assert_eq!(up.raw_subject, ours.raw_subject);
    assert_eq!(up.organizations, ours.organizations);
    assert_eq!(up.not_before, ours.not_before);
    assert!(
        (up.not_after - ours.not_after).abs() < 60,
        "{} vs {}",
        up.not_after,
        ours.not_after
    );
}

#[test]
fn kubeconfig_with_another_ca_is_refused_with_upstreams_words() {
    let a = tempfile::tempdir().expect("tmp");
    let b = tempfile::tempdir().expect("tmp");
    let cfg = upstream_pki(a.path());
    upstream_pki(b.path());
    let kc = a.path().join("kc");
    let kc_s = kc.to_str().expect("utf8");
    let up = upstream_kubeadm();
    let r = run(
        &up,
        &[
            "init",
            "phase",
            "kubeconfig",
            "admin",
            "--config",
            &cfg,
            "--kubeconfig-dir",
            kc_s,
        ],
        a.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let admin = kc.join("admin.conf");
    let existing = kubeadm_yaml::parse_documents(&read(&admin)).expect("parse")[0]
        .value
        .clone();
    let (server, _) = control_plane_endpoint(&inputs()).expect("endpoint");
    let same_ca = CertInfo::from_pem(&read(&a.path().join("pki/ca.crt"))).expect("ca");
    let auth = UserAuth::Token("unused".into());
    let path = admin.to_str().expect("utf8");

    // Same CA, other server: reused with upstream's warning.
    let moved = build_kubeconfig(
        "https://10.0.0.9:6443",
        "kubernetes",
        "kubernetes-admin",
        Some(&same_ca),
        &auth,
    );
    let warning =
        kubeadm_core::kubeconfig::check_existing_kubeconfig(path, &existing, &moved).expect("reusable");
    assert_eq!(
        warning.as_deref(),
        Some(format!("a kubeconfig file {path:?} exists already but has an unexpected API Server URL: expected: https://10.0.0.9:6443, got: {server}").as_str())
    );

    // Another CA: refused, in upstream's words.
    for f in ["ca.crt", "ca.key"] {
        std::fs::copy(b.path().join("pki").join(f), a.path().join("pki").join(f)).expect("copy");
    }
    let r = run(
        &up,
        &[
            "init",
            "phase",
            "kubeconfig",
            "admin",
            "--config",
            &cfg,
            "--kubeconfig-dir",
            kc_s,
        ],
        a.path(),
        &[],
    );
    assert_ne!(r.code, 0);
    let other_ca = CertInfo::from_pem(&read(&a.path().join("pki/ca.crt"))).expect("ca");
    let expected = build_kubeconfig(&server, "kubernetes", "kubernetes-admin", Some(&other_ca), &auth);
    let err = kubeadm_core::kubeconfig::check_existing_kubeconfig(path, &existing, &expected)
        .expect_err("wrong CA");
    let line = format!("error execution phase kubeconfig/admin: {err}\n");
    assert!(
        r.stderr.starts_with(&line),
        "upstream said:\n{}\nwe say:\n{line}",
        r.stderr
    );
}

#[test]
fn generate_csr_kubeconfigs_match_upstream() {
    use kubeadm_core::kubeconfig::{KUBECONFIG_SPECS, server_url};
    use kubeadm_core::pki::{issue_csr, pem_decode_all};
    use x509_parser::prelude::FromDer as _;
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("cfg.yaml");
    std::fs::write(
        &cfg,
        format!(
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\ncontrolPlaneEndpoint: lb.example.com\ncertificatesDir: {}\n",
            dir.path().join("pki").display()
        ),
    )
    .expect("write");
    let kc = dir.path().join("kc");
    let r = run(
        &upstream_kubeadm(),
        &[
            "certs",
            "generate-csr",
            "--config",
            cfg.to_str().expect("utf8"),
            "--kubeconfig-dir",
            kc.to_str().expect("utf8"),
        ],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let inputs = PkiInputs {
        control_plane_endpoint: "lb.example.com".into(),
        ..inputs()
    };
    let mask = |t: &str| -> String {
        t.lines()
            .map(|l| {
                l.split_once("-data: ")
                    .map_or(l.to_string(), |(k, _)| format!("{k}-data: DATA"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for spec in &KUBECONFIG_SPECS {
        let up_text = read(&kc.join(spec.file_name));
        let pkcs8 = rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
            .expect("key")
            .serialize_der();
        let key = PrivateKey::from_pkcs8_der(&pkcs8).expect("key");
        let user = spec.client_name(&inputs);
        let ours = build_kubeconfig(
            &server_url(spec, &inputs).expect("server"),
            "kubernetes",
            &user,
            None,
            &UserAuth::KeyOnly {
                key_pem: key.to_pem(),
            },
        );
        assert_eq!(
            mask(&up_text),
            mask(&kubeadm_yaml::to_string(&ours)),
            "{}",
            spec.file_name
        );

        let up_csr = read(&kc.join(format!("{}.csr", spec.file_name)));
        let template = CertTemplate {
            common_name: user,
            organization: spec.organizations.iter().map(|s| (*s).to_string()).collect(),
            alt_names: Default::default(),
            ext_key_usages: vec![ExtKeyUsage::ClientAuth],
        };
        let our_csr = issue_csr(&template, &key).expect("csr");
        let subject = |der: &[u8]| {
            let (_, c) =
                x509_parser::certification_request::X509CertificationRequest::from_der(der).expect("csr");
            c.certification_request_info.subject.as_raw().to_vec()
        };
        assert_eq!(
            subject(&pem_decode_all(&up_csr)[0].der),
            subject(&our_csr.der),
            "{} CSR subject",
            spec.file_name
        );
    }
}

#[test]
fn renewal_keeps_what_upstream_keeps() {
    let dir = tempfile::tempdir().expect("tmp");
    let pki = dir.path().join("pki");
    // Issue with extra SANs, then renew with a config that has none: upstream keeps the old SANs.
    let cfg = upstream_pki(dir.path());
    let with_sans = read(Path::new(&cfg)).replace(
        "certificatesDir:",
        "apiServer:\n  certSANs: [foo.example.com, 1.2.3.4]\ncertificatesDir:",
    );
    let cfg_sans = dir.path().join("cfg-sans.yaml");
    std::fs::write(&cfg_sans, with_sans).expect("write");
    for f in ["apiserver.crt", "apiserver.key"] {
        std::fs::remove_file(pki.join(f)).expect("rm");
    }
    let up = upstream_kubeadm();
    let r = run(
        &up,
        &[
            "init",
            "phase",
            "certs",
            "apiserver",
            "--config",
            cfg_sans.to_str().expect("utf8"),
        ],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = CertInfo::from_pem(&read(&pki.join("apiserver.crt"))).expect("before");
    let r = run(
        &up,
        &["certs", "renew", "apiserver", "--config", &cfg],
        dir.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let renewed = CertInfo::from_pem(&read(&pki.join("apiserver.crt"))).expect("renewed");
    let at = now();

    let ca = CertInfo::from_pem(&read(&pki.join("ca.crt"))).expect("ca");
    let ca_key = PrivateKey::from_pem(&read(&pki.join("ca.key"))).expect("ca key");
    let pkcs8 = rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
        .expect("key")
        .serialize_der();
    let key = PrivateKey::from_pkcs8_der(&pkcs8).expect("key");
    let ours = issue_signed(
        &CertTemplate::from_existing(&before),
        &ca,
        &ca_key,
        &key,
        at,
        None,
        3,
    )
    .expect("renew");
    let ours = CertInfo::from_der(&ours.der).expect("parse");
    assert!(
        renewed.dns_names.contains(&"foo.example.com".to_string()),
        "upstream kept the SAN"
    );
    assert_eq!(renewed.raw_subject, ours.raw_subject);
    assert_eq!(renewed.raw_issuer, ours.raw_issuer);
    assert_eq!(renewed.dns_names, ours.dns_names);
    assert_eq!(renewed.ips, ours.ips);
    assert_eq!(renewed.ext_key_usages, ours.ext_key_usages);
    assert_eq!(renewed.authority_key_id, ours.authority_key_id);
    assert_eq!(renewed.not_before, ours.not_before);
    assert!((renewed.not_after - ours.not_after).abs() < 60);
}
