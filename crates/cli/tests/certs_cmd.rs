//! `kubeadm certs check-expiration`, `certs renew`, `certs generate-csr` and `kubeconfig user`,
//! upstream and ours, each chrooted (`--rootfs`, needs root) into its own temporary root holding
//! the same files (a PKI written by upstream): printed output and exit codes must be equal; renewed
//! and generated files are compared per file (names, modes, and for certificates, CSRs and keys
//! everything that is not random); renewed chains must pass `openssl verify`.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use kubeadm_core::pki::{CertInfo, PrivateKey, pem_decode_all};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};
use kubeadm_testkit::pki::verify_chains;
use kubeadm_testkit::rootfs::tree;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;
use x509_parser::x509::SubjectPublicKeyInfo;

const DEFAULTS: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\napiServer:\n  certSANs: [extra.example.com, 192.168.1.1]\n";

fn external_etcd() -> String {
    format!(
        "{DEFAULTS}etcd:\n  external:\n    endpoints: [https://10.0.0.10:2379]\n    caFile: /etc/etcd/ca.crt\n    certFile: /etc/etcd/client.crt\n    keyFile: /etc/etcd/client.key\n"
    )
}

fn ecdsa() -> String {
    format!("{DEFAULTS}featureGates:\n  PublicKeysECDSA: true\n")
}

fn as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"))
}

/// Runs `args` chrooted into `root`; stdout, then the exit code and last stderr line on failure.
fn kubeadm(bin: &Path, root: &Path, args: &[&str]) -> String {
    let mut all = vec!["--rootfs", root.to_str().expect("utf8")];
    all.extend_from_slice(args);
    let r = run(bin, &all, root, &[]);
    let mut out = r.stdout;
    if r.code != 0 {
        let last = r
            .stderr
            .lines()
            .rfind(|l| !l.starts_with("To see the stack trace"))
            .unwrap_or_default();
        out.push_str(&format!("exit {}: {last}\n", r.code));
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

/// Two roots holding the same upstream-written PKI and kubeconfigs for `config`, after `edit`.
fn twin_roots(config: &str, edit: &dyn Fn(&Path)) -> (tempfile::TempDir, tempfile::TempDir) {
    let up = tempfile::tempdir().expect("root");
    std::fs::write(up.path().join("kubeadm.yaml"), config).expect("config");
    for phase in ["certs", "kubeconfig"] {
        let out = kubeadm(
            &upstream_kubeadm(),
            up.path(),
            &["init", "phase", phase, "all", "--config", "/kubeadm.yaml"],
        );
        assert!(!out.contains("exit "), "seed: {out}");
    }
    edit(&up.path().join("etc/kubernetes"));
    let our = tempfile::tempdir().expect("root");
    copy_dir(up.path(), our.path());
    (up, our)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn key_kind(spki: &[u8]) -> String {
    let (_, spki) = SubjectPublicKeyInfo::from_der(spki).expect("spki");
    match spki.parsed().expect("key") {
        PublicKey::RSA(k) => format!("RSA-{}", k.key_size()),
        PublicKey::EC(k) => format!("EC-{}", k.key_size()),
        _ => "other".into(),
    }
}

/// A certificate's non-random fields; validity as its length in minutes.
fn cert_profile(der: &[u8]) -> String {
    let (_, x) = X509Certificate::from_der(der).expect("parse");
    let info = CertInfo::from_der(der).expect("info");
    format!(
        "subject={} issuer={} exts={:?} ku={:?} eku={:?} bc={:?} dns={:?} ips={:?} sig={} key={} minutes={}",
        hex(x.subject().as_raw()),
        hex(x.issuer().as_raw()),
        x.extensions()
            .iter()
            .map(|e| (e.oid.to_id_string(), e.critical))
            .collect::<Vec<_>>(),
        x.key_usage().expect("ku").map(|k| k.value.flags),
        info.ext_key_usages,
        x.basic_constraints().expect("bc").map(|b| b.value.ca),
        info.dns_names,
        info.ips,
        x.signature_algorithm.algorithm.to_id_string(),
        key_kind(x.public_key().raw),
        (x.validity().not_after.timestamp() - x.validity().not_before.timestamp() + 30) / 60,
    )
}

fn csr_profile(der: &[u8]) -> String {
    let (_, csr) = X509CertificationRequest::from_der(der).expect("csr");
    let info = &csr.certification_request_info;
    let mut sans = Vec::new();
    if let Some(exts) = csr.requested_extensions() {
        for e in exts {
            if let ParsedExtension::SubjectAlternativeName(san) = e {
                for n in &san.general_names {
                    match n {
                        GeneralName::DNSName(d) => sans.push(format!("DNS:{d}")),
                        GeneralName::IPAddress(b) => sans.push(format!("IP:{}", hex(b))),
                        other => sans.push(format!("{other:?}")),
                    }
                }
            }
        }
    }
    format!(
        "subject={} sans={sans:?} sig={} key={} attrs={}",
        hex(info.subject.as_raw()),
        csr.signature_algorithm.algorithm.to_id_string(),
        key_kind(info.subject_pki.raw),
        info.attributes().len(),
    )
}

fn pem_profile(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let blocks = pem_decode_all(&text);
    let mut out = format!(
        "labels={:?}",
        blocks.iter().map(|b| b.label.as_str()).collect::<Vec<_>>()
    );
    for b in &blocks {
        match b.label.as_str() {
            "CERTIFICATE" => out.push_str(&format!(" cert[{}]", cert_profile(&b.der))),
            "CERTIFICATE REQUEST" => out.push_str(&format!(" csr[{}]", csr_profile(&b.der))),
            "PUBLIC KEY" => out.push_str(&format!(" pub[{}]", key_kind(&b.der))),
            _ => match PrivateKey::from_pem(&text) {
                Ok(k) => out.push_str(&format!(" key[{}]", key_kind(&k.spki_der()))),
                Err(e) => out.push_str(&format!(" key[{e}]")),
            },
        }
    }
    out
}

fn file_profile(path: &str, bytes: &[u8]) -> String {
    if !path.ends_with(".conf") {
        return pem_profile(bytes);
    }
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| match l.split_once("-data: ") {
            Some((k, v)) => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(v.trim())
                    .expect("base64");
                format!("{k}-data: {}", pem_profile(&decoded))
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Differences between the two trees (names, modes, profiles).
fn compare_trees(name: &str, up: &Path, our: &Path, failures: &mut Vec<String>) -> usize {
    let (u, o) = (tree(up, &["etc/kubernetes"]), tree(our, &["etc/kubernetes"]));
    let names = |t: &BTreeMap<String, (u32, Vec<u8>)>| t.keys().cloned().collect::<Vec<_>>().join("\n");
    if names(&u) != names(&o) {
        failures.push(format!("{name}: files\n{}", diff(&names(&u), &names(&o))));
    }
    let mut compared = 0;
    for (path, (mode, bytes)) in &u {
        let Some((our_mode, our_bytes)) = o.get(path) else {
            continue;
        };
        compared += 1;
        if mode != our_mode {
            failures.push(format!("{name}: {path} mode {our_mode:o}, upstream {mode:o}"));
        }
        let (a, b) = (file_profile(path, bytes), file_profile(path, our_bytes));
        if a != b {
            failures.push(format!("{name}: {path}\n{}", diff(&a, &b)));
        }
    }
    compared
}

fn verify_renewed(root: &Path) -> Vec<String> {
    verify_chains(
        root,
        false,
        &["admin.conf", "controller-manager.conf", "scheduler.conf"],
    )
}

/// The EXPIRES and RESIDUAL TIME columns masked (renewals made at different moments).
fn mask_dates(table: &str) -> String {
    table
        .lines()
        .map(|l| {
            let mut s = l.to_string();
            for m in [
                "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
            ] {
                if let Some(i) = s.find(&format!("{m} ")) {
                    let end = s[i..].find(" UTC").map_or(s.len(), |e| i + e + 4);
                    s.replace_range(i..end, "<date>");
                }
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct Case {
    name: &'static str,
    config: String,
    edit: fn(&Path),
    commands: Vec<Vec<&'static str>>,
}

fn no_edit(_: &Path) {}

fn rm(kube: &Path, files: &[&str]) {
    for f in files {
        std::fs::remove_file(kube.join(f)).expect("rm");
    }
}

#[test]
fn certs_commands_match_upstream() {
    assert!(as_root(), "this test chroots with --rootfs and must run as root");
    let ce: Vec<&str> = vec!["certs", "check-expiration", "--config", "/kubeadm.yaml"];
    let renew_all: Vec<&str> = vec!["certs", "renew", "all", "--config", "/kubeadm.yaml"];
    let cases = vec![
        Case {
            name: "defaults",
            config: DEFAULTS.to_string(),
            edit: no_edit,
            commands: vec![ce.clone(), renew_all.clone(), ce.clone()],
        },
        Case {
            name: "external-etcd",
            config: external_etcd(),
            edit: no_edit,
            commands: vec![
                ce.clone(),
                vec!["certs", "renew", "etcd-server", "--config", "/kubeadm.yaml"],
                renew_all.clone(),
                ce.clone(),
            ],
        },
        Case {
            name: "ecdsa",
            config: ecdsa(),
            edit: no_edit,
            commands: vec![renew_all.clone(), ce.clone()],
        },
        Case {
            name: "external-ca",
            config: DEFAULTS.to_string(),
            edit: |k| rm(k, &["pki/ca.key"]),
            commands: vec![
                ce.clone(),
                vec!["certs", "renew", "admin.conf", "--config", "/kubeadm.yaml"],
                renew_all.clone(),
            ],
        },
        Case {
            name: "missing-files",
            config: DEFAULTS.to_string(),
            edit: |k| {
                rm(
                    k,
                    &[
                        "pki/apiserver.crt",
                        "pki/apiserver.key",
                        "scheduler.conf",
                        "pki/etcd/ca.crt",
                    ],
                )
            },
            commands: vec![
                vec!["certs", "renew", "apiserver", "--config", "/kubeadm.yaml"],
                vec!["certs", "renew", "scheduler.conf", "--config", "/kubeadm.yaml"],
                vec![
                    "certs",
                    "renew",
                    "front-proxy-client",
                    "--config",
                    "/kubeadm.yaml",
                ],
                ce.clone(),
            ],
        },
        Case {
            name: "single-renewals",
            config: DEFAULTS.to_string(),
            edit: no_edit,
            commands: vec![
                vec!["certs", "renew", "apiserver", "--config", "/kubeadm.yaml"],
                vec![
                    "certs",
                    "renew",
                    "controller-manager.conf",
                    "--config",
                    "/kubeadm.yaml",
                ],
                vec!["certs", "renew", "etcd-peer", "--config", "/kubeadm.yaml"],
            ],
        },
    ];
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in &cases {
        let (up, our) = twin_roots(&case.config, &case.edit);
        let mut up_out = String::new();
        let mut our_out = String::new();
        for cmd in &case.commands {
            up_out.push_str(&format!("$ {}\n", cmd.join(" ")));
            our_out.push_str(&format!("$ {}\n", cmd.join(" ")));
            up_out.push_str(&kubeadm(&upstream_kubeadm(), up.path(), cmd));
            our_out.push_str(&kubeadm(&ours(), our.path(), cmd));
        }
        let (up_out, our_out) = (mask_dates(&up_out), mask_dates(&our_out));
        if up_out != our_out {
            failures.push(format!("{}: output\n{}", case.name, diff(&up_out, &our_out)));
        }
        compared += compare_trees(case.name, up.path(), our.path(), &mut failures);
        failures.extend(
            verify_renewed(our.path())
                .into_iter()
                .map(|e| format!("{}: {e}", case.name)),
        );
    }
    assert!(compared >= 100, "only {compared} files compared");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Dates are left unmasked: the files are the same in both roots, so the tables must be equal.
#[test]
fn check_expiration_is_byte_identical_on_the_same_files() {
    assert!(as_root(), "this test chroots with --rootfs and must run as root");
    let (up, our) = twin_roots(DEFAULTS, &|k: &Path| rm(k, &["pki/front-proxy-ca.key"]));
    let args = ["certs", "check-expiration", "--config", "/kubeadm.yaml"];
    let a = kubeadm(&upstream_kubeadm(), up.path(), &args);
    let b = kubeadm(&ours(), our.path(), &args);
    assert_eq!(a, b, "{}", diff(&a, &b));
    assert!(a.contains("front-proxy-ca "), "{a}");
}

/// Upstream prints the generated names in Go map order; compare them sorted.
fn sorted_lines(s: &str) -> String {
    let mut v: Vec<&str> = s.lines().collect();
    v.sort_unstable();
    v.join("\n")
}

#[test]
fn generate_csr_matches_upstream() {
    assert!(as_root(), "this test chroots with --rootfs and must run as root");
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, config) in [
        ("defaults", DEFAULTS.to_string()),
        (
            "ecdsa-external-etcd",
            format!("{}featureGates:\n  PublicKeysECDSA: true\n", external_etcd()),
        ),
    ] {
        let up = tempfile::tempdir().expect("root");
        let our = tempfile::tempdir().expect("root");
        let args = ["certs", "generate-csr", "--config", "/kubeadm.yaml"];
        let mut outs = Vec::new();
        for (bin, root) in [(upstream_kubeadm(), up.path()), (ours(), our.path())] {
            std::fs::write(root.join("kubeadm.yaml"), &config).expect("config");
            let first = kubeadm(&bin, root, &args);
            // A second run finds the files and fails; upstream names the first file it meets in
            // Go map order, so only the directory is compared.
            let second = kubeadm(&bin, root, &args);
            let second = match second.find("key or CSR ") {
                Some(i) => format!("{}key or CSR /etc/kubernetes/pki/…\n", &second[..i]),
                None => second,
            };
            outs.push(format!("{}\n--\n{second}", sorted_lines(&first)));
        }
        if outs[0] != outs[1] {
            failures.push(format!("{name}: output\n{}", diff(&outs[0], &outs[1])));
        }
        compared += compare_trees(name, up.path(), our.path(), &mut failures);
    }
    assert!(compared >= 30, "only {compared} files compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn kubeconfig_user_matches_upstream() {
    assert!(as_root(), "this test chroots with --rootfs and must run as root");
    let (up, our) = twin_roots(
        &format!("{DEFAULTS}controlPlaneEndpoint: lb.example.com:7443\nclusterName: prod\n"),
        &no_edit,
    );
    let runs: [&[&str]; 4] = [
        &[
            "kubeconfig",
            "user",
            "--client-name",
            "alice",
            "--config",
            "/kubeadm.yaml",
        ],
        &[
            "kubeconfig",
            "user",
            "--client-name",
            "bob",
            "--org",
            "dev,ops",
            "--org",
            "qa",
            "--validity-period",
            "48h",
            "--config",
            "/kubeadm.yaml",
        ],
        &[
            "kubeconfig",
            "user",
            "--client-name",
            "carol",
            "--token",
            "abcdef.0123456789abcdef",
            "--config",
            "/kubeadm.yaml",
        ],
        &["kubeconfig", "user", "--client-name", "dave"],
    ];
    let mut failures = Vec::new();
    for args in runs {
        let a = kubeadm(&upstream_kubeadm(), up.path(), args);
        let b = kubeadm(&ours(), our.path(), args);
        let (pa, pb) = (
            file_profile("x.conf", a.as_bytes()),
            file_profile("x.conf", b.as_bytes()),
        );
        if pa != pb {
            failures.push(format!("{args:?}\n{}", diff(&pa, &pb)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
