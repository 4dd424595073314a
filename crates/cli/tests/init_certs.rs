//! `kubeadm init phase certs …` and `init phase kubeconfig …`, upstream and ours, each chrooted
//! (`--rootfs`, which needs root) into its own temporary root with the same configuration and the
//! same files already present: printed lines and exit codes must be equal, and per file the names,
//! modes, and for certificates everything that is not random (subject, issuer, SANs in order, key
//! usages, extended key usages, basic constraints, extension order, validity to the minute, key
//! type and size, PEM labels); kubeconfig files structurally with the base64 data masked.
//! `openssl verify` checks every chain we write.
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubeadm_core::pki::{CertInfo, PrivateKey, pem_decode_all};
use kubeadm_testkit::oracle::{diff, run, upstream_kubeadm};
use kubeadm_testkit::rootfs::tree;
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;
use x509_parser::x509::SubjectPublicKeyInfo;

const INIT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n";
const CLUSTER: &str =
    "---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\n";

/// What is on disk before the commands run (the same in both roots).
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    Empty,
    /// A whole PKI and kubeconfigs written by upstream, then `ca.key` removed.
    ExternalCa,
    /// As `ExternalCa`, without `scheduler.conf`: upstream refuses to start.
    ExternalCaNoKubeconfig,
    /// A PKI written by upstream with `ca.crt`/`ca.key` replaced by another CA.
    WrongCa,
    /// A PKI written by upstream with `apiserver.crt` issued without the extra SAN now configured.
    MissingSan,
}

struct Case {
    name: &'static str,
    config: String,
    setup: Setup,
    commands: Vec<Vec<&'static str>>,
}

fn cfg(init_extra: &str, cluster_extra: &str) -> String {
    format!("{INIT}{init_extra}{CLUSTER}{cluster_extra}")
}

fn all_phases() -> Vec<Vec<&'static str>> {
    vec![
        vec!["init", "phase", "certs", "all"],
        vec!["init", "phase", "kubeconfig", "all"],
        // Everything exists now: the reuse lines.
        vec!["init", "phase", "certs", "all"],
        vec!["init", "phase", "kubeconfig", "all"],
    ]
}

fn cases() -> Vec<Case> {
    let v6_init = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: \"2001:db8::10\"\n  bindPort: 6444\nnodeRegistration:\n  name: v6-node\n";
    vec![
        Case {
            name: "defaults",
            config: cfg("", ""),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "ipv6",
            config: format!(
                "{v6_init}{CLUSTER}networking:\n  podSubnet: fd00:10:244::/56\n  serviceSubnet: fd00:10:96::/112\n"
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "dual-stack",
            config: cfg(
                "",
                "networking:\n  podSubnet: 10.244.0.0/16,fd00:10:244::/56\n  serviceSubnet: 10.96.0.0/16,fd00:10:96::/112\n",
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "extra-sans",
            config: cfg(
                "",
                "apiServer:\n  certSANs: [extra.example.com, 192.168.1.1, \"*.wild.example.com\", 010.1.2.3, node1, Bad_Name]\netcd:\n  local:\n    serverCertSANs: [etcd.example.com, 10.9.9.9]\n    peerCertSANs: [peer.example.com, \"::2\"]\n",
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "cpe-name-port",
            config: cfg("", "controlPlaneEndpoint: lb.example.com:8443\n"),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "cpe-ip",
            config: cfg("", "controlPlaneEndpoint: 10.0.0.100\nclusterName: prod\n"),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "dns-domain-service-cidr",
            config: cfg(
                "",
                "networking:\n  dnsDomain: corp.local\n  serviceSubnet: 10.100.0.0/16\n",
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "external-etcd",
            config: cfg(
                "",
                "etcd:\n  external:\n    endpoints: [https://10.0.0.10:2379]\n    caFile: /etc/etcd/ca.crt\n    certFile: /etc/etcd/client.crt\n    keyFile: /etc/etcd/client.key\n",
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "ecdsa",
            config: cfg(
                "",
                "controlPlaneEndpoint: \"[fd00::100]:7443\"\nfeatureGates:\n  PublicKeysECDSA: true\n",
            ),
            setup: Setup::Empty,
            commands: all_phases(),
        },
        Case {
            name: "single-phases",
            config: cfg("", ""),
            setup: Setup::Empty,
            commands: vec![
                vec!["init", "phase", "certs", "apiserver"],
                vec!["init", "phase", "certs", "ca"],
                vec!["init", "phase", "certs", "etcd-server"],
                vec!["init", "phase", "certs", "etcd-ca"],
                vec!["init", "phase", "certs", "etcd-server"],
                vec!["init", "phase", "certs", "sa"],
                vec!["init", "phase", "kubeconfig", "scheduler"],
                vec!["init", "phase", "certs", "apiserver"],
                vec!["init", "phase", "kubeconfig", "admin"],
            ],
        },
        Case {
            name: "external-ca",
            config: cfg("", ""),
            setup: Setup::ExternalCa,
            commands: all_phases(),
        },
        Case {
            name: "external-ca-no-kubeconfig",
            config: cfg("", ""),
            setup: Setup::ExternalCaNoKubeconfig,
            commands: vec![
                vec!["init", "phase", "certs", "all"],
                vec!["init", "phase", "kubeconfig", "admin"],
            ],
        },
        Case {
            name: "wrong-ca",
            config: cfg("", ""),
            setup: Setup::WrongCa,
            commands: vec![
                vec!["init", "phase", "certs", "apiserver"],
                vec!["init", "phase", "certs", "all"],
                vec!["init", "phase", "kubeconfig", "all"],
            ],
        },
        Case {
            name: "missing-san",
            config: cfg("", "apiServer:\n  certSANs: [new.example.com]\n"),
            setup: Setup::MissingSan,
            commands: vec![
                vec!["init", "phase", "certs", "apiserver"],
                vec!["init", "phase", "kubeconfig", "admin"],
            ],
        },
    ]
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

/// Upstream's PKI and kubeconfigs for `config`, in `root/etc/kubernetes`.
fn seed(config: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("seed");
    std::fs::write(root.path().join("kubeadm.yaml"), config).expect("config");
    for phase in ["certs", "kubeconfig"] {
        let r = run(
            &upstream_kubeadm(),
            &[
                "--rootfs",
                root.path().to_str().expect("utf8"),
                "init",
                "phase",
                phase,
                "all",
                "--config",
                "/kubeadm.yaml",
            ],
            root.path(),
            &[],
        );
        assert_eq!(r.code, 0, "seed {phase}: {}", r.stderr);
    }
    root
}

fn prepare(case: &Case, root: &Path) {
    std::fs::write(root.join("kubeadm.yaml"), &case.config).expect("config");
    let kube = root.join("etc/kubernetes");
    match case.setup {
        Setup::Empty => {}
        Setup::ExternalCa | Setup::ExternalCaNoKubeconfig => {
            let s = seed(&case.config);
            copy_dir(&s.path().join("etc/kubernetes"), &kube);
            std::fs::remove_file(kube.join("pki/ca.key")).expect("rm ca.key");
            if case.setup == Setup::ExternalCaNoKubeconfig {
                std::fs::remove_file(kube.join("scheduler.conf")).expect("rm scheduler.conf");
            }
        }
        Setup::WrongCa => {
            let a = seed(&case.config);
            let b = seed(&case.config);
            copy_dir(&a.path().join("etc/kubernetes"), &kube);
            for f in ["ca.crt", "ca.key"] {
                std::fs::copy(
                    b.path().join("etc/kubernetes/pki").join(f),
                    kube.join("pki").join(f),
                )
                .expect("copy ca");
            }
        }
        Setup::MissingSan => {
            let a = seed(&cfg("", ""));
            copy_dir(&a.path().join("etc/kubernetes"), &kube);
            for f in ["apiserver.crt", "apiserver.key"] {
                std::fs::remove_file(kube.join("pki").join(f)).expect("rm");
            }
            // A key without its certificate: upstream's "exists but cannot be validated" path.
            std::fs::copy(
                a.path().join("etc/kubernetes/pki/apiserver-kubelet-client.key"),
                kube.join("pki/apiserver.key"),
            )
            .expect("copy key");
        }
    }
}

/// Stdout of every command, then its exit code and the last stderr line when it failed.
fn run_case(bin: &Path, case: &Case, root: &Path) -> String {
    let mut transcript = String::new();
    for cmd in &case.commands {
        let mut args = vec!["--rootfs", root.to_str().expect("utf8")];
        args.extend_from_slice(cmd);
        args.extend_from_slice(&["--config", "/kubeadm.yaml"]);
        let r = run(bin, &args, root, &[]);
        transcript.push_str(&format!("$ {}\n{}", cmd.join(" "), r.stdout));
        if r.code != 0 {
            let last = r
                .stderr
                .lines()
                // Our validation errors add lines that say where each field is in the file
                // (tab-indented, after upstream's message): compare upstream's message.
                .rfind(|l| !l.starts_with("To see the stack trace") && !l.starts_with('\t'))
                .unwrap_or_default();
            transcript.push_str(&format!("exit {}: {last}\n", r.code));
        }
    }
    transcript
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

/// Everything about a certificate that is not random, validity as (NotBefore, NotAfter) in minutes.
fn cert_profile(der: &[u8]) -> (String, i64, i64) {
    let (_, x) = X509Certificate::from_der(der).expect("parse");
    let info = CertInfo::from_der(der).expect("info");
    let eku = x.extended_key_usage().expect("eku").map(|e| {
        let mut v = Vec::new();
        if e.value.server_auth {
            v.push("serverAuth");
        }
        if e.value.client_auth {
            v.push("clientAuth");
        }
        v
    });
    let text = format!(
        "subject={} issuer={} exts={:?} ku={:?} eku={eku:?} bc={:?} dns={:?} ips={:?} sig={} key={} skid={} akid={}",
        hex(x.subject().as_raw()),
        hex(x.issuer().as_raw()),
        x.extensions()
            .iter()
            .map(|e| (e.oid.to_id_string(), e.critical))
            .collect::<Vec<_>>(),
        x.key_usage().expect("ku").map(|k| k.value.flags),
        x.basic_constraints().expect("bc").map(|b| b.value.ca),
        info.dns_names,
        info.ips,
        x.signature_algorithm.algorithm.to_id_string(),
        key_kind(x.public_key().raw),
        info.subject_key_id.is_some(),
        info.authority_key_id.is_some(),
    );
    (
        text,
        x.validity().not_before.timestamp(),
        x.validity().not_after.timestamp(),
    )
}

fn pem_profile(bytes: &[u8]) -> Result<String, String> {
    let text = String::from_utf8_lossy(bytes);
    let blocks = pem_decode_all(&text);
    let labels: Vec<&str> = blocks.iter().map(|b| b.label.as_str()).collect();
    let mut out = format!("labels={labels:?}");
    for b in &blocks {
        match b.label.as_str() {
            "CERTIFICATE" => out.push_str(&format!(" cert[{}]", cert_profile(&b.der).0)),
            "PUBLIC KEY" => out.push_str(&format!(" pub[{}]", key_kind(&b.der))),
            _ => {
                let key = PrivateKey::from_pem(&text).map_err(|e| e.to_string())?;
                out.push_str(&format!(" key[{}]", key_kind(&key.spki_der())));
            }
        }
    }
    Ok(out)
}

/// A kubeconfig with base64 data replaced by a profile of what it holds.
fn kubeconfig_profile(bytes: &[u8]) -> String {
    use base64::Engine as _;
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .map(|l| match l.split_once("-data: ") {
            Some((k, v)) => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(v.trim())
                    .expect("base64");
                format!("{k}-data: {}", pem_profile(&decoded).unwrap_or_else(|e| e))
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn validity_of(bytes: &[u8]) -> Option<(i64, i64)> {
    let text = String::from_utf8_lossy(bytes);
    let block = pem_decode_all(&text)
        .into_iter()
        .find(|b| b.label == "CERTIFICATE")?;
    let (_, nb, na) = cert_profile(&block.der);
    Some((nb, na))
}

/// Verifies every certificate we wrote against its CA, kubeconfig client certificates included.
fn verify_chains(root: &Path) -> Vec<String> {
    kubeadm_testkit::pki::verify_chains(
        root,
        true,
        &[
            "admin.conf",
            "kubelet.conf",
            "controller-manager.conf",
            "scheduler.conf",
        ],
    )
}

fn as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

#[test]
fn certs_and_kubeconfig_phases_match_upstream() {
    assert!(as_root(), "this test chroots with --rootfs and must run as root");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in cases() {
        let up_root = tempfile::tempdir().expect("root");
        let our_root = tempfile::tempdir().expect("root");
        prepare(&case, up_root.path());
        // The same starting files in both roots.
        if case.setup != Setup::Empty {
            copy_dir(
                &up_root.path().join("etc/kubernetes"),
                &our_root.path().join("etc/kubernetes"),
            );
        }
        std::fs::write(our_root.path().join("kubeadm.yaml"), &case.config).expect("config");
        let up_out = run_case(&upstream_kubeadm(), &case, up_root.path());
        let our_out = run_case(&ours, &case, our_root.path());
        let name = case.name;
        if up_out != our_out {
            failures.push(format!("{name}: output\n{}", diff(&up_out, &our_out)));
        }
        let up_tree = tree(up_root.path(), &["etc/kubernetes"]);
        let our_tree = tree(our_root.path(), &["etc/kubernetes"]);
        let names = |t: &BTreeMap<String, (u32, Vec<u8>)>| t.keys().cloned().collect::<Vec<_>>();
        if names(&up_tree) != names(&our_tree) {
            failures.push(format!(
                "{name}: files\n{}",
                diff(&names(&up_tree).join("\n"), &names(&our_tree).join("\n"))
            ));
        }
        for (path, (mode, bytes)) in &up_tree {
            let Some((our_mode, our_bytes)) = our_tree.get(path) else {
                continue;
            };
            compared += 1;
            if mode != our_mode {
                failures.push(format!("{name}: {path} mode {our_mode:o}, upstream {mode:o}"));
            }
            if bytes.is_empty() && our_bytes.is_empty() {
                continue;
            }
            let (up_p, our_p) = if path.ends_with(".conf") {
                (kubeconfig_profile(bytes), kubeconfig_profile(our_bytes))
            } else {
                (
                    pem_profile(bytes).unwrap_or_else(|e| e),
                    pem_profile(our_bytes).unwrap_or_else(|e| e),
                )
            };
            if up_p != our_p {
                failures.push(format!("{name}: {path}\n{}", diff(&up_p, &our_p)));
            }
            // Validity to the minute: both runs happen within a few seconds of each other.
            if let (Some((unb, una)), Some((onb, ona))) = (validity_of(bytes), validity_of(our_bytes))
                && ((unb - onb).abs() > 90
                    || (una - ona).abs() > 90
                    || ((una - unb) - (ona - onb)).abs() > 60)
            {
                failures.push(format!(
                    "{name}: {path} validity {onb}..{ona}, upstream {unb}..{una}"
                ));
            }
        }
        // The wrong-CA case keeps upstream's leftovers, which by design do not verify.
        if case.setup == Setup::WrongCa {
            continue;
        }
        failures.extend(
            verify_chains(our_root.path())
                .into_iter()
                .map(|e| format!("{name}: {e}")),
        );
    }
    assert!(compared >= 200, "only {compared} files compared");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
