//! `kubeadm certs check-expiration -o json|yaml` (beyond v1.25.16: upstream added it in v1.30):
//! the `CertificateExpirationInfo` object of `output.kubeadm.k8s.io/v1alpha3` on certificates our
//! `init phase certs all` and `kubeconfig all` wrote, checked against the files themselves (names,
//! order, expiration dates, residual seconds, CA names, externally managed, missing); the YAML
//! holds the same object as the JSON; the text output stays the table (compared with upstream's in
//! `certs_cmd.rs`).
// Tests run the binary on real files.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use kubeadm_core::pki::CertInfo;
use serde_json::Value;

/// Runs our kubeadm; panics unless it succeeds; its standard output.
fn kubeadm(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubeadm"))
        .args(args)
        .env_clear()
        .output()
        .expect("run kubeadm");
    assert!(
        out.status.success(),
        "kubeadm {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// The certificate lines upstream lists (sorted by name) with their CA; `None` for a kubeconfig.
const CERTS: &[(&str, &str, Option<&str>)] = &[
    ("admin.conf", "ca", None),
    ("apiserver", "ca", Some("apiserver.crt")),
    (
        "apiserver-etcd-client",
        "etcd-ca",
        Some("apiserver-etcd-client.crt"),
    ),
    (
        "apiserver-kubelet-client",
        "ca",
        Some("apiserver-kubelet-client.crt"),
    ),
    ("controller-manager.conf", "ca", None),
    (
        "etcd-healthcheck-client",
        "etcd-ca",
        Some("etcd/healthcheck-client.crt"),
    ),
    ("etcd-peer", "etcd-ca", Some("etcd/peer.crt")),
    ("etcd-server", "etcd-ca", Some("etcd/server.crt")),
    (
        "front-proxy-client",
        "front-proxy-ca",
        Some("front-proxy-client.crt"),
    ),
    ("scheduler.conf", "ca", None),
];

const CAS: &[(&str, &str)] = &[
    ("ca", "ca.crt"),
    ("etcd-ca", "etcd/ca.crt"),
    ("front-proxy-ca", "front-proxy-ca.crt"),
];

fn not_after(path: &Path) -> i64 {
    let pem = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    CertInfo::from_pem(&pem).expect("certificate").not_after
}

/// The client certificate embedded in a kubeconfig file.
fn kubeconfig_not_after(path: &Path) -> i64 {
    let text = std::fs::read_to_string(path).expect("kubeconfig");
    let doc = kubeadm_yaml::parse_documents(&text)
        .expect("yaml")
        .remove(0)
        .value;
    let data = doc["users"][0]["user"]["client-certificate-data"]
        .as_str()
        .expect("client-certificate-data");
    use base64::Engine as _;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    CertInfo::from_pem(&String::from_utf8(pem).expect("pem"))
        .expect("certificate")
        .not_after
}

/// Checks one list of the object: names in order, and each entry's fields.
fn check_entries(list: &Value, expected: &[(&str, Option<&str>, Option<i64>, bool)], window: (i64, i64)) {
    let list = list.as_array().expect("a list");
    let names: Vec<&str> = list.iter().map(|c| c["name"].as_str().expect("name")).collect();
    let want: Vec<&str> = expected.iter().map(|e| e.0).collect();
    assert_eq!(names, want);
    for (entry, (name, ca, expires, external)) in list.iter().zip(expected) {
        let keys: Vec<&str> = entry
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        match expires {
            Some(not_after) => {
                let date = jiff::Timestamp::from_second(*not_after).expect("time");
                assert_eq!(
                    entry["expirationDate"],
                    date.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    "{name}"
                );
                let residual = entry["residualTime"].as_i64().expect("residualTime");
                // Whole seconds left when the command ran, between the clock before and after.
                assert!(
                    (not_after - window.1 - 1..=not_after - window.0).contains(&residual),
                    "{name}: residual {residual} outside the run's window"
                );
                assert_eq!(entry["missing"], false, "{name}");
                assert_eq!(entry["externallyManaged"], *external, "{name}");
                assert_eq!(entry.get("caName").and_then(Value::as_str), *ca, "{name}");
            }
            None => {
                assert_eq!(entry["expirationDate"], Value::Null, "{name}");
                assert_eq!(entry["residualTime"], 0, "{name}");
                assert_eq!(entry["missing"], true, "{name}");
                assert_eq!(entry["externallyManaged"], false, "{name}");
                assert!(
                    entry.get("caName").is_none(),
                    "{name}: a missing line has no caName"
                );
            }
        }
        let mut want_keys = vec!["name", "expirationDate", "residualTime", "externallyManaged"];
        if expires.is_some() && ca.is_some() {
            want_keys.push("caName");
        }
        want_keys.push("missing");
        assert_eq!(keys, want_keys, "{name}: fields and their order");
    }
}

/// Runs `check-expiration` with `-o json` and `-o yaml` (`args` before), checks both are the
/// same object of the right kind and returns it with the clock window of the runs.
fn outputs(args: &[&str]) -> (Value, (i64, i64)) {
    let before = now();
    let json = kubeadm(&[args, &["certs", "check-expiration", "-o", "json"]].concat());
    let yaml = kubeadm(&[args, &["certs", "check-expiration", "--experimental-output=yaml"]].concat());
    let after = now();
    assert!(json.starts_with("{\n    \"kind\": \"CertificateExpirationInfo\",\n    \"apiVersion\": \"output.kubeadm.k8s.io/v1alpha3\",\n    \"certificates\": ["), "{json}");
    assert!(json.ends_with("}\n"), "{json}");
    let object: Value = serde_json::from_str(&json).expect("JSON output");
    assert!(
        yaml.starts_with("apiVersion: output.kubeadm.k8s.io/v1alpha3\ncertificateAuthorities:\n"),
        "{yaml}"
    );
    assert!(yaml.ends_with("kind: CertificateExpirationInfo\n"), "{yaml}");
    let from_yaml = kubeadm_yaml::parse_documents(&yaml)
        .expect("YAML output")
        .remove(0)
        .value;
    // Residual seconds may differ by one between the two runs.
    let strip = |v: &Value| {
        let mut v = v.clone();
        for list in ["certificates", "certificateAuthorities"] {
            for c in v[list].as_array_mut().expect("list") {
                c["residualTime"] = Value::Null;
            }
        }
        v
    };
    assert_eq!(
        strip(&object),
        strip(&from_yaml),
        "JSON and YAML hold different objects"
    );
    let keys: Vec<&str> = object
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["kind", "apiVersion", "certificates", "certificateAuthorities"]
    );
    (object, (before, after))
}

const CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node1\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\n";

/// The text table's EXTERNALLY MANAGED column by name (`None` on a `!MISSING!` line).
fn text_external(root: &str) -> Vec<(String, Option<bool>)> {
    let text = kubeadm(&["--rootfs", root, "certs", "check-expiration"]);
    // With admin.conf there, the text starts as upstream's does when the cluster cannot be read:
    // its attempt, then its fallback line; the JSON and YAML outputs leave them out.
    assert!(
        text.starts_with("[check-expiration] Reading configuration from the cluster...\n")
            && text.contains("\n[check-expiration] Error reading configuration from the Cluster. Falling back to default configuration\n\n"),
        "{text}"
    );
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with("CERTIFICATE") && !l.starts_with('['))
        .map(|l| match l.strip_prefix("!MISSING! ") {
            Some(name) => (name.trim().to_string(), None),
            None => {
                let words: Vec<&str> = l.split_whitespace().collect();
                (words[0].to_string(), Some(words[words.len() - 1] == "yes"))
            }
        })
        .collect()
}

#[test]
fn json_and_yaml_describe_the_certificates_on_disk() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "this test chroots with --rootfs and must run as root"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("utf-8");
    std::fs::write(dir.path().join("kubeadm.yaml"), CONFIG).expect("config");
    for phase in ["certs", "kubeconfig"] {
        kubeadm(&[
            "--rootfs",
            root,
            "init",
            "phase",
            phase,
            "all",
            "--config",
            "/kubeadm.yaml",
        ]);
    }
    let k8s = dir.path().join("etc/kubernetes");
    let pki = k8s.join("pki");
    // A missing kubeconfig and an external front-proxy CA (its key gone).
    std::fs::remove_file(k8s.join("scheduler.conf")).expect("rm scheduler.conf");
    std::fs::remove_file(pki.join("front-proxy-ca.key")).expect("rm front-proxy-ca.key");

    // admin.conf is there: the text output would start with upstream's fallback line, which the
    // structured outputs leave out (they parse).
    let (object, window) = outputs(&["--rootfs", root]);
    let external = |name: &str| name.starts_with("front-proxy");
    let expected: Vec<_> = CERTS
        .iter()
        .map(|(name, ca, file)| {
            let expires = match file {
                Some(f) => Some(not_after(&pki.join(f))),
                None if *name == "scheduler.conf" => None,
                None => Some(kubeconfig_not_after(&k8s.join(name))),
            };
            (*name, Some(*ca), expires, external(name))
        })
        .collect();
    check_entries(&object["certificates"], &expected, window);
    let cas: Vec<_> = CAS
        .iter()
        .map(|(name, file)| (*name, None, Some(not_after(&pki.join(file))), external(name)))
        .collect();
    check_entries(&object["certificateAuthorities"], &cas, window);

    // The same facts as the text table (which certs_cmd.rs compares with upstream's).
    let from_json: Vec<(String, Option<bool>)> = ["certificates", "certificateAuthorities"]
        .iter()
        .flat_map(|list| object[list].as_array().expect("list").iter())
        .map(|c| {
            let missing = c["missing"].as_bool().expect("missing");
            (
                c["name"].as_str().expect("name").to_string(),
                (!missing).then(|| c["externallyManaged"].as_bool().expect("bool")),
            )
        })
        .collect();
    assert_eq!(from_json, text_external(root));
}

#[test]
fn bad_output_formats_are_refused() {
    let bad = Command::new(env!("CARGO_BIN_EXE_kubeadm"))
        .args(["certs", "check-expiration", "-o", "xml"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with(
        "could not construct output printer: unable to match a printer suitable for the output format \"xml\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,text,yaml\n"
    ));
    let template = Command::new(env!("CARGO_BIN_EXE_kubeadm"))
        .args(["certs", "check-expiration", "-o", "jsonpath"])
        .output()
        .expect("run");
    assert_eq!(template.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&template.stderr).starts_with(
        "could not construct output printer: template format specified but no template given\n"
    ));
}
