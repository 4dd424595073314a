//! Differential tests: upstream kubeadm v1.25.16 writes certificates, keys and kubeconfig files for a
//! configuration; we issue ours from the same inputs (and upstream's "now", read back from its CA)
//! and compare everything but the random parts: names, SANs in order, extensions in order with their
//! criticality, key usages, basic constraints, key identifiers, validity, key type and size, PEM
//! labels, file names, kubeconfig shape. `openssl verify` checks that our chains validate, including
//! certificates we sign with upstream's CA key.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use kubeadm_core::kubeconfig::{
    CLIENT_KEY_ALGORITHM, KUBECONFIG_SPECS, UserAuth, build_kubeconfig, server_url,
};
use kubeadm_core::pki::{
    CERT_SPECS, CertInfo, CertTemplate, CertsMessage, EtcdMode, ExtKeyUsage, KeyAlgorithm, PkiInputs,
    PrivateKey, SA_KEY_BASE_NAME, alt_names, cert_list, cert_spec, issue_ca, issue_csr, issue_signed,
    pem_decode_all,
};
use kubeadm_testkit::oracle::{run, upstream_kubeadm};
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;

struct Case {
    name: &'static str,
    init_extra: &'static str,
    cluster_extra: &'static str,
    inputs: PkiInputs,
}

fn inputs(advertise: &str) -> PkiInputs {
    PkiInputs {
        node_name: "node1".into(),
        advertise_address: advertise.into(),
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

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "defaults",
            init_extra: "",
            cluster_extra: "",
            inputs: inputs("10.0.0.5"),
        },
        Case {
            name: "ipv6",
            init_extra: "",
            cluster_extra: "networking:\n  serviceSubnet: fd00:10:96::/112\n",
            inputs: PkiInputs {
                service_subnet: "fd00:10:96::/112".into(),
                ..inputs("fd00::5")
            },
        },
        Case {
            name: "dns-endpoint-extra-sans",
            init_extra: "",
            cluster_extra: "controlPlaneEndpoint: lb.example.com:8443\napiServer:\n  certSANs: [extra.example.com, 192.168.1.1, \"*.wild.example.com\", 010.1.2.3, node1]\netcd:\n  local:\n    serverCertSANs: [etcd.example.com, 10.9.9.9]\n    peerCertSANs: [peer.example.com, \"::2\"]\n",
            inputs: PkiInputs {
                control_plane_endpoint: "lb.example.com:8443".into(),
                cert_sans: [
                    "extra.example.com",
                    "192.168.1.1",
                    "*.wild.example.com",
                    "010.1.2.3",
                    "node1",
                ]
                .map(String::from)
                .to_vec(),
                etcd: EtcdMode::Local {
                    server_cert_sans: vec!["etcd.example.com".into(), "10.9.9.9".into()],
                    peer_cert_sans: vec!["peer.example.com".into(), "::2".into()],
                },
                ..inputs("10.0.0.5")
            },
        },
        Case {
            name: "ip-endpoint-custom-network",
            init_extra: "",
            cluster_extra: "controlPlaneEndpoint: 10.0.0.100\nclusterName: prod\nnetworking:\n  dnsDomain: corp.local\n  serviceSubnet: 10.100.0.0/16\n",
            inputs: PkiInputs {
                control_plane_endpoint: "10.0.0.100".into(),
                cluster_name: "prod".into(),
                dns_domain: "corp.local".into(),
                service_subnet: "10.100.0.0/16".into(),
                ..inputs("10.0.0.5")
            },
        },
        Case {
            name: "ip-endpoint-port-ecdsa",
            init_extra: "",
            cluster_extra: "controlPlaneEndpoint: \"[fd00::100]:7443\"\nfeatureGates:\n  PublicKeysECDSA: true\n",
            inputs: PkiInputs {
                control_plane_endpoint: "[fd00::100]:7443".into(),
                key_algorithm: KeyAlgorithm::EcdsaP256,
                ..inputs("fd00::5")
            },
        },
        Case {
            name: "dual-stack-external-etcd",
            init_extra: "",
            cluster_extra: "networking:\n  serviceSubnet: 10.96.0.0/12,fd00:10:96::/112\n  podSubnet: 10.244.0.0/16,fd00:10:244::/56\netcd:\n  external:\n    endpoints: [https://10.0.0.7:2379]\n    caFile: /nonexistent/etcd-ca.crt\n    certFile: /nonexistent/etcd.crt\n    keyFile: /nonexistent/etcd.key\n",
            inputs: PkiInputs {
                service_subnet: "10.96.0.0/12,fd00:10:96::/112".into(),
                etcd: EtcdMode::External,
                ..inputs("10.0.0.5")
            },
        },
    ]
}

fn config_yaml(case: &Case, cert_dir: &Path) -> String {
    format!(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: \"{}\"\nnodeRegistration:\n  name: node1\n{}---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\ncertificatesDir: {}\n{}",
        case.inputs.advertise_address,
        case.init_extra,
        cert_dir.display(),
        case.cluster_extra
    )
}

/// Upstream writes into `dir/pki` and `dir/kc`.
fn run_upstream(case: &Case, dir: &Path) -> String {
    let cfg = dir.join("cfg.yaml");
    std::fs::write(&cfg, config_yaml(case, &dir.join("pki"))).expect("write config");
    let up = upstream_kubeadm();
    let cfg_s = cfg.to_str().expect("utf8");
    let r = run(
        &up,
        &["init", "phase", "certs", "all", "--config", cfg_s],
        dir,
        &[],
    );
    assert_eq!(r.code, 0, "{}: upstream certs failed: {}", case.name, r.stderr);
    let certs_stdout = r.stdout;
    let kc = dir.join("kc");
    let r = run(
        &up,
        &[
            "init",
            "phase",
            "kubeconfig",
            "all",
            "--config",
            cfg_s,
            "--kubeconfig-dir",
            kc.to_str().expect("utf8"),
        ],
        dir,
        &[],
    );
    assert_eq!(
        r.code, 0,
        "{}: upstream kubeconfig failed: {}",
        case.name, r.stderr
    );
    certs_stdout
}

fn new_key(alg: KeyAlgorithm) -> PrivateKey {
    let pkcs8 = match alg {
        KeyAlgorithm::Rsa2048 => {
            rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
        }
        KeyAlgorithm::EcdsaP256 => rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256),
    }
    .expect("generate")
    .serialize_der();
    PrivateKey::from_pkcs8_der(&pkcs8).expect("load generated key")
}

/// Everything about a certificate that is not random.
#[derive(Debug, PartialEq)]
struct Profile {
    raw_subject: String,
    raw_issuer: String,
    extensions: Vec<(String, bool)>,
    key_usage: Option<u16>,
    ext_key_usage: Vec<&'static str>,
    basic_constraints_ca: Option<bool>,
    dns: Vec<String>,
    ips: Vec<String>,
    signature_algorithm: String,
    key: String,
    has_subject_key_id: bool,
    authority_key_id: Option<Vec<u8>>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn profile(der: &[u8]) -> (Profile, i64, i64) {
    let (_, x) = X509Certificate::from_der(der).expect("parse");
    let mut p = Profile {
        raw_subject: hex(x.subject().as_raw()),
        raw_issuer: hex(x.issuer().as_raw()),
        extensions: x
            .extensions()
            .iter()
            .map(|e| (e.oid.to_id_string(), e.critical))
            .collect(),
        key_usage: x.key_usage().expect("ku").map(|k| k.value.flags),
        ext_key_usage: vec![],
        basic_constraints_ca: x.basic_constraints().expect("bc").map(|b| b.value.ca),
        dns: vec![],
        ips: vec![],
        signature_algorithm: x.signature_algorithm.algorithm.to_id_string(),
        key: match x.public_key().parsed().expect("key") {
            PublicKey::RSA(k) => format!("RSA-{}", k.key_size()),
            PublicKey::EC(k) => format!("EC-{}", k.key_size()),
            _ => "other".into(),
        },
        has_subject_key_id: false,
        authority_key_id: None,
    };
    if let Some(eku) = x.extended_key_usage().expect("eku") {
        if eku.value.server_auth {
            p.ext_key_usage.push("serverAuth");
        }
        if eku.value.client_auth {
            p.ext_key_usage.push("clientAuth");
        }
    }
    let info = CertInfo::from_der(der).expect("info");
    p.dns = info.dns_names.clone();
    p.ips = info.ips.iter().map(ToString::to_string).collect();
    p.has_subject_key_id = info.subject_key_id.is_some();
    p.authority_key_id = info.authority_key_id.clone();
    (
        p,
        x.validity().not_before.timestamp(),
        x.validity().not_after.timestamp(),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn labels(text: &str) -> Vec<String> {
    pem_decode_all(text).into_iter().map(|b| b.label).collect()
}

fn openssl_verify(ca: &Path, leaf: &Path) {
    kubeadm_testkit::pki::openssl_verify(ca, leaf).unwrap_or_else(|e| panic!("{e}"));
}

/// Our whole PKI for `inputs` at `now`, written under `dir` like upstream's layout.
struct Ours {
    certs: BTreeMap<&'static str, (String, String)>,
}

/// `now_of(ca base name)` is upstream's clock when it created that CA and its certificates.
fn issue_all(inputs: &PkiInputs, now_of: &dyn Fn(&str) -> i64, dir: &Path) -> Ours {
    let mut certs: BTreeMap<&'static str, (String, String)> = BTreeMap::new();
    let mut cas: BTreeMap<&'static str, (CertInfo, PrivateKey)> = BTreeMap::new();
    for (i, spec) in cert_list(&inputs.etcd).enumerate() {
        let key = new_key(inputs.key_algorithm);
        let serial = 1000 + i as u64;
        let now = now_of(cert_spec(spec.ca.unwrap_or(spec.id)).base_name);
        let issued = match spec.ca {
            None => issue_ca(spec, inputs, &key, now, serial).expect("issue ca"),
            Some(ca) => {
                let (ca_cert, ca_key) = &cas[cert_spec(ca).base_name];
                let template = CertTemplate::for_spec(spec, inputs).expect("template");
                issue_signed(&template, ca_cert, ca_key, &key, now, None, serial).expect("issue")
            }
        };
        let info = CertInfo::from_der(&issued.der).expect("parse ours");
        assert_eq!(
            x509_parser::parse_x509_certificate(&issued.der)
                .expect("p")
                .1
                .tbs_certificate
                .raw_serial(),
            &serial.to_be_bytes()[6..],
            "serial is the injected one"
        );
        let crt = dir.join(format!("{}.crt", spec.base_name));
        std::fs::create_dir_all(crt.parent().expect("parent")).expect("mkdir");
        std::fs::write(&crt, &issued.pem).expect("write");
        std::fs::write(dir.join(format!("{}.key", spec.base_name)), key.to_pem()).expect("write");
        certs.insert(spec.base_name, (issued.pem.clone(), key.to_pem()));
        if spec.is_ca() {
            cas.insert(spec.base_name, (info, key));
        }
    }
    let sa = new_key(inputs.key_algorithm);
    certs.insert(SA_KEY_BASE_NAME, (sa.public_key_pem(), sa.to_pem()));
    Ours { certs }
}

#[test]
fn certificates_match_upstream() {
    for case in cases() {
        let tmp = tempfile::tempdir().expect("tmp");
        let up_stdout = run_upstream(&case, tmp.path());
        let up_dir = tmp.path().join("pki");
        // The printed lines: every `[certs]` line upstream printed, rebuilt from the table.
        let mut lines = vec![format!(
            "[certs] {}",
            CertsMessage::UsingCertificateDir(up_dir.display().to_string())
        )];
        for spec in &CERT_SPECS {
            if case.inputs.etcd == EtcdMode::External && spec.is_etcd() {
                let base = spec.base_name.to_string();
                let msg = if spec.is_ca() {
                    CertsMessage::ExternalEtcdSkipCa(base)
                } else {
                    CertsMessage::ExternalEtcdSkipCert(base)
                };
                lines.push(format!("[certs] {msg}"));
                continue;
            }
            lines.push(format!(
                "[certs] {}",
                CertsMessage::Generating(spec.base_name.to_string())
            ));
            if spec.has_server_auth() {
                let alt = alt_names(spec, &case.inputs).expect("alt names");
                lines.push(format!("[certs] {}", alt.serving_message(spec.base_name)));
            }
        }
        lines.push(format!("[certs] {}", CertsMessage::GeneratingSa));
        assert_eq!(up_stdout, lines.join("\n") + "\n", "{}: printed lines", case.name);
        let up_ca = CertInfo::from_pem(&read(&up_dir.join("ca.crt"))).expect("upstream ca");
        // Upstream's clock when it made the CA: NotBefore is now − 5 minutes.
        let now = up_ca.not_before + 300;
        let our_dir = tmp.path().join("ours");
        let now_of = |ca_base: &str| {
            CertInfo::from_pem(&read(&up_dir.join(format!("{ca_base}.crt"))))
                .expect("upstream ca")
                .not_before
                + 300
        };
        let ours = issue_all(&case.inputs, &now_of, &our_dir);

        for spec in cert_list(&case.inputs.etcd) {
            let up_pem = read(&up_dir.join(format!("{}.crt", spec.base_name)));
            let (our_pem, our_key) = &ours.certs[spec.base_name];
            assert_eq!(
                labels(&up_pem),
                labels(our_pem),
                "{} {}: cert PEM labels",
                case.name,
                spec.name
            );
            let up_key = read(&up_dir.join(format!("{}.key", spec.base_name)));
            assert_eq!(
                labels(&up_key),
                labels(our_key),
                "{} {}: key PEM labels",
                case.name,
                spec.name
            );
            let up_der = &pem_decode_all(&up_pem)[0].der;
            let our_der = &pem_decode_all(our_pem)[0].der;
            let (mut up_p, up_nb, up_na) = profile(up_der);
            let (mut our_p, our_nb, our_na) = profile(our_der);
            // Key ids are hashes of different random keys: compare their presence and their link.
            if let Some(ca) = spec.ca {
                let ca_base = cert_spec(ca).base_name;
                let up_ca = CertInfo::from_pem(&read(&up_dir.join(format!("{ca_base}.crt")))).expect("ca");
                let our_ca = CertInfo::from_pem(&ours.certs[ca_base].0).expect("ca");
                assert_eq!(
                    up_p.authority_key_id, up_ca.subject_key_id,
                    "upstream akid = ca skid"
                );
                assert_eq!(
                    our_p.authority_key_id, our_ca.subject_key_id,
                    "{} {}: akid = ca skid",
                    case.name, spec.name
                );
                up_p.authority_key_id = None;
                our_p.authority_key_id = None;
            }
            assert_eq!(up_p, our_p, "{} {}: certificate profile", case.name, spec.name);
            assert_eq!(up_nb, our_nb, "{} {}: NotBefore", case.name, spec.name);
            assert!(
                (up_na - our_na).abs() < 60,
                "{} {}: NotAfter {up_na} vs {our_na}",
                case.name,
                spec.name
            );
            // The key we wrote loads back and belongs to the certificate.
            let reloaded = PrivateKey::from_pem(our_key).expect("reload key");
            assert_eq!(
                reloaded.spki_der(),
                CertInfo::from_der(our_der).expect("c").spki,
                "key matches cert"
            );
            if let Some(ca) = spec.ca {
                let ca_base = cert_spec(ca).base_name;
                openssl_verify(
                    &our_dir.join(format!("{ca_base}.crt")),
                    &our_dir.join(format!("{}.crt", spec.base_name)),
                );
            }
        }
        // sa.pub / sa.key encodings.
        let (sa_pub, sa_key) = &ours.certs[SA_KEY_BASE_NAME];
        assert_eq!(
            labels(&read(&up_dir.join("sa.pub"))),
            labels(sa_pub),
            "{}: sa.pub",
            case.name
        );
        assert_eq!(
            labels(&read(&up_dir.join("sa.key"))),
            labels(sa_key),
            "{}: sa.key",
            case.name
        );
        let pub_len = |t: &str| pem_decode_all(t)[0].der.len();
        assert_eq!(
            pub_len(&read(&up_dir.join("sa.pub"))),
            pub_len(sa_pub),
            "{}: sa.pub DER size",
            case.name
        );
        // Upstream's own keys load, and certificates we sign with upstream's CA key verify with openssl.
        let up_ca_key = PrivateKey::from_pem(&read(&up_dir.join("ca.key"))).expect("load upstream ca key");
        assert_eq!(
            up_ca_key.spki_der(),
            up_ca.spki,
            "{}: upstream CA key matches its cert",
            case.name
        );
        let spec = cert_spec(kubeadm_core::pki::CertId::ApiServer);
        let template = CertTemplate::for_spec(spec, &case.inputs).expect("template");
        let leaf = issue_signed(
            &template,
            &up_ca,
            &up_ca_key,
            &new_key(case.inputs.key_algorithm),
            now,
            None,
            7,
        )
        .expect("sign with upstream ca");
        let leaf_path = tmp.path().join("cross.crt");
        std::fs::write(&leaf_path, &leaf.pem).expect("write");
        openssl_verify(&up_dir.join("ca.crt"), &leaf_path);
        // Upstream's leaf passes our "existing certificate" checks against its CA.
        let up_api = read(&up_dir.join("apiserver.crt"));
        let up_api_key = read(&up_dir.join("apiserver.key"));
        let expected = alt_names(spec, &case.inputs).expect("alt");
        kubeadm_core::pki::check_existing_signed("apiserver", &up_api, &up_api_key, &up_ca, &expected, now)
            .unwrap_or_else(|e| panic!("{}: existing apiserver rejected: {e}", case.name));
    }
}

fn decode_data(v: &serde_json::Value) -> String {
    let b = base64::engine::general_purpose::STANDARD
        .decode(v.as_str().expect("string"))
        .expect("base64");
    String::from_utf8(b).expect("utf8")
}

/// Replaces the base64 blobs so two kubeconfigs can be compared as text.
fn mask(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once("-data: ") {
            Some((k, _)) => format!("{k}-data: DATA"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn kubeconfigs_match_upstream() {
    for case in cases() {
        let tmp = tempfile::tempdir().expect("tmp");
        run_upstream(&case, tmp.path());
        let up_ca = CertInfo::from_pem(&read(&tmp.path().join("pki/ca.crt"))).expect("ca");
        let up_ca_key = PrivateKey::from_pem(&read(&tmp.path().join("pki/ca.key"))).expect("ca key");
        let now = up_ca.not_before + 300;
        for spec in &KUBECONFIG_SPECS {
            let up_text = read(&tmp.path().join("kc").join(spec.file_name));
            let up_doc = kubeadm_yaml::parse_documents(&up_text).expect("parse upstream kubeconfig");
            let up = &up_doc[0].value;

            let user = spec.client_name(&case.inputs);
            let key = new_key(CLIENT_KEY_ALGORITHM);
            let template = CertTemplate {
                common_name: user.clone(),
                organization: spec.organizations.iter().map(|s| (*s).to_string()).collect(),
                alt_names: Default::default(),
                ext_key_usages: vec![ExtKeyUsage::ClientAuth],
            };
            let cert = issue_signed(&template, &up_ca, &up_ca_key, &key, now, None, 42).expect("client cert");
            let server = server_url(spec, &case.inputs).expect("server");
            let ours = build_kubeconfig(
                &server,
                &case.inputs.cluster_name,
                &user,
                Some(&up_ca),
                &UserAuth::ClientCert {
                    cert_pem: cert.pem.clone(),
                    key_pem: key.to_pem(),
                },
            );
            let ctx = format!("{} {}", case.name, spec.file_name);
            assert_eq!(
                mask(&up_text),
                mask(&kubeadm_yaml::to_string(&ours)),
                "{ctx}: kubeconfig text"
            );
            let cluster = |v: &serde_json::Value| v["clusters"][0]["cluster"].clone();
            assert_eq!(cluster(up)["server"], cluster(&ours)["server"], "{ctx}: server");
            assert_eq!(
                decode_data(&cluster(up)["certificate-authority-data"]),
                decode_data(&cluster(&ours)["certificate-authority-data"]),
                "{ctx}: CA data"
            );
            let user_of = |v: &serde_json::Value| v["users"][0]["user"].clone();
            let up_cert = decode_data(&user_of(up)["client-certificate-data"]);
            let embedded = kubeadm_core::kubeconfig::embedded_client_certificate(up).expect("embedded cert");
            assert_eq!(embedded.to_pem(), up_cert, "{ctx}: embedded client certificate");
            let our_cert = decode_data(&user_of(&ours)["client-certificate-data"]);
            let (mut up_p, up_nb, up_na) = profile(&pem_decode_all(&up_cert)[0].der);
            let (mut our_p, our_nb, our_na) = profile(&pem_decode_all(&our_cert)[0].der);
            up_p.authority_key_id = None;
            our_p.authority_key_id = None;
            assert_eq!(up_p, our_p, "{ctx}: client certificate");
            assert_eq!(up_nb, our_nb, "{ctx}: NotBefore");
            assert!((up_na - our_na).abs() < 60, "{ctx}: NotAfter");
            assert_eq!(
                labels(&decode_data(&user_of(up)["client-key-data"])),
                labels(&decode_data(&user_of(&ours)["client-key-data"])),
                "{ctx}: key PEM label"
            );
        }
    }
}

#[test]
fn csrs_match_upstream() {
    let case = &cases()[2];
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, config_yaml(case, &tmp.path().join("pki"))).expect("write");
    let r = run(
        &upstream_kubeadm(),
        &[
            "certs",
            "generate-csr",
            "--config",
            cfg.to_str().expect("utf8"),
            "--kubeconfig-dir",
            tmp.path().join("kc").to_str().expect("utf8"),
        ],
        tmp.path(),
        &[],
    );
    assert_eq!(r.code, 0, "upstream generate-csr: {}", r.stderr);
    for spec in cert_list(&case.inputs.etcd).filter(|s| !s.is_ca()) {
        let up = read(&tmp.path().join(format!("pki/{}.csr", spec.base_name)));
        let key = new_key(KeyAlgorithm::Rsa2048);
        let template = CertTemplate::for_spec(spec, &case.inputs).expect("template");
        let ours = issue_csr(&template, &key).expect("csr");
        assert_eq!(labels(&up), vec!["CERTIFICATE REQUEST".to_string()]);
        let up_der = &pem_decode_all(&up)[0].der;
        // Same shape: everything before the public key (version, subject) and the attributes.
        let (_, up_csr) =
            x509_parser::certification_request::X509CertificationRequest::from_der(up_der).expect("parse");
        let (_, our_csr) = x509_parser::certification_request::X509CertificationRequest::from_der(&ours.der)
            .expect("parse ours");
        assert_eq!(
            up_csr.certification_request_info.subject.as_raw(),
            our_csr.certification_request_info.subject.as_raw(),
            "{}: CSR subject",
            spec.name
        );
        let attrs = |c: &x509_parser::certification_request::X509CertificationRequest<'_>| -> Vec<u8> {
            let raw = c.certification_request_info.raw;
            // The attributes are the [0] element at the end of CertificationRequestInfo.
            let spki = c.certification_request_info.subject_pki.raw;
            let pos = raw
                .windows(spki.len())
                .position(|w| w == spki)
                .expect("spki in info");
            raw[pos + spki.len()..].to_vec()
        };
        assert_eq!(
            hex(&attrs(&up_csr)),
            hex(&attrs(&our_csr)),
            "{}: CSR attributes",
            spec.name
        );
        let out = Command::new("openssl")
            .args(["req", "-verify", "-noout"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write as _;
                c.stdin.take().expect("stdin").write_all(ours.pem.as_bytes())?;
                c.wait_with_output()
            })
            .expect("openssl req");
        assert!(
            out.status.success(),
            "{}: openssl req -verify: {}",
            spec.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn check_expiration_table_matches_upstream() {
    use kubeadm_core::pki::{
        ExpirationRow, expiration_entries, external_ca_leaves, external_ca_status, render_expiration_table,
    };
    let case = &cases()[0];
    let tmp = tempfile::tempdir().expect("tmp");
    run_upstream(case, tmp.path());
    let pki = tmp.path().join("pki");
    // A missing certificate and an externally managed CA (certificate without key).
    for f in ["etcd/peer.crt", "etcd/peer.key", "front-proxy-ca.key"] {
        std::fs::remove_file(pki.join(f)).expect("remove");
    }
    // The kubeconfig files are read from the fixed /etc/kubernetes; this test expects them absent.
    let kdir = Path::new("/etc/kubernetes");
    for f in ["admin.conf", "controller-manager.conf", "scheduler.conf"] {
        assert!(!kdir.join(f).exists(), "test needs /etc/kubernetes/{f} absent");
    }
    let r = run(
        &upstream_kubeadm(),
        &[
            "certs",
            "check-expiration",
            "--config",
            tmp.path().join("cfg.yaml").to_str().expect("utf8"),
        ],
        tmp.path(),
        &[],
    );
    assert_eq!(r.code, 0, "upstream check-expiration: {}", r.stderr);
    let now_time = std::time::SystemTime::now();
    let now = now_time
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;

    let opt_read = |p: &Path| std::fs::read_to_string(p).ok();
    let external = |ca: kubeadm_core::pki::CertId| {
        let base = cert_spec(ca).base_name;
        let leaves: Vec<(&str, Option<String>, Option<String>)> = external_ca_leaves(ca)
            .iter()
            .map(|(id, ux)| {
                let b = cert_spec(*id).base_name;
                (
                    *ux,
                    opt_read(&pki.join(format!("{b}.crt"))),
                    opt_read(&pki.join(format!("{b}.key"))),
                )
            })
            .collect();
        let leaves: Vec<(&str, Option<&str>, Option<&str>)> = leaves
            .iter()
            .map(|(u, c, k)| (*u, c.as_deref(), k.as_deref()))
            .collect();
        let status = external_ca_status(
            base,
            "CA",
            opt_read(&pki.join(format!("{base}.crt"))).as_deref(),
            pki.join(format!("{base}.key")).exists(),
            &leaves,
            now,
        );
        assert!(status.error.is_none(), "external CA check: {:?}", status.error);
        status.external
    };
    let (cert_entries, ca_entries) = expiration_entries(&case.inputs.etcd);
    let row = |e: &kubeadm_core::pki::ExpirationEntry| {
        let path = if e.in_kubeconfig {
            kdir.join(&e.file)
        } else {
            pki.join(format!("{}.crt", e.file))
        };
        let found = opt_read(&path).map(|text| {
            let not_after = CertInfo::from_pem(&text).expect("cert").not_after;
            let ext = match e.ca {
                Some(ca) => external(ca),
                None => external(
                    kubeadm_core::pki::CERT_SPECS
                        .iter()
                        .find(|s| s.name == e.name)
                        .expect("ca")
                        .id,
                ),
            };
            (not_after, ext)
        });
        ExpirationRow {
            name: e.name.clone(),
            ca_name: e.ca_name.map(String::from),
            found,
        }
    };
    let certs: Vec<ExpirationRow> = cert_entries.iter().map(row).collect();
    let cas: Vec<ExpirationRow> = ca_entries.iter().map(row).collect();
    let ours = render_expiration_table(&certs, &cas, now_time);
    assert_eq!(
        r.stdout,
        ours,
        "diff:\n{}",
        kubeadm_testkit::oracle::diff(&r.stdout, &ours)
    );
    assert!(
        ours.contains("front-proxy-client                  ") && ours.contains("yes"),
        "{ours}"
    );
}
