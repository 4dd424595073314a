//! Discovery against scripted clusters. Expected values come from upstream: the JWS vectors of
//! `k8s.io/cluster-bootstrap/token/jws/jws_test.go`, the CA, its pin and the kubeconfig text of
//! `cmd/kubeadm/app/discovery/token/token_test.go`, and upstream's error texts.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use kubeadm_api::v1beta3::{BootstrapTokenDiscovery, FileDiscovery, JoinConfiguration};
use kubeadm_effects::report::{Reporter, Severity};
use kubeadm_testkit::fakes::FakeCluster;

use super::*;
use crate::join::JoinData;

/// From upstream's token_test.go.
pub(crate) const CA_CERT: &str = "-----BEGIN CERTIFICATE-----
MIICyDCCAbCgAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJl
cm5ldGVzMB4XDTE5MTEyMDAwNDk0MloXDTI5MTExNzAwNDk0MlowFTETMBEGA1UE
AxMKa3ViZXJuZXRlczCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAMqQ
ctECzA8yFSuVYupOUYgrTmfQeKe/9BaDWagaq7ow9+I2IvsfWFvlrD8QQr8sea6q
xjq7TV67Vb4RxBaoYDA+yI5vIcujWUxULun64lu3Q6iC1sj2UnmUpIdgazRXXEkZ
vxA6EbAnoxA0+lBOn1CZWl23IQ4s70o2hZ7wIp/vevB88RRRjqtvgc5elsjsbmDF
LS7L1Zuye8c6gS93bR+VjVmSIfr1IEq0748tIIyXjAVCWPVCvuP41MlfPc/JVpZD
uD2+pO6ZYREcdAnOf2eD4/eLOMKko4L1dSFy9JKM5PLnOC0Zk0AYOd1vS8DTAfxj
XPEIY8OBYFhlsxf4TE8CAwEAAaMjMCEwDgYDVR0PAQH/BAQDAgKkMA8GA1UdEwEB
/wQFMAMBAf8wDQYJKoZIhvcNAQELBQADggEBAH/OYq8zyl1+zSTmuow3yI/15PL1
dl8hB7IKnZNWmC/LTdm/+noh3Sb1IdRv6HkKg/GUn0UMuRUngLhju3EO4ozJPQcX
quaxzgmTKNWJ6ErDvRvWhGX0ZcbdBfZv+dowyRqzd5nlJ49hC+NrtFFQq6P05BYn
7SemguqeXmXwIj2Sa+1DeR6lRm9o8shAYjnyThUFqaMn18kI3SANJ5vk/3DFrPEO
CKC9EzFku2kuxg2dM12PbRGZQ2o0K6HEZgrrIKTPOy3ocb8r9M0aSFhjOV/NqGA4
SaupXSW6XfvIi/UHoIbU3pNcsnUJGnQfQvip95XKk/gqcUr+m50vxgumxtA=
-----END CERTIFICATE-----";
/// Its pin, from upstream's token_test.go.
pub(crate) const CA_CERT_HASH: &str =
    "sha256:98be2e6d4d8a89aa308fb15de0c07e2531ce549c68dec1687cdd5c06f0826658";
const TOKEN: &str = "123456.abcdef1234567890";

/// Captures what is printed.
#[derive(Debug, Default, Clone)]
pub(crate) struct Captured(pub(crate) Arc<Mutex<String>>);

impl Captured {
    /// Everything printed so far.
    pub(crate) fn text(&self) -> String {
        self.0.lock().expect("lock").clone()
    }
}

impl Reporter for Captured {
    fn out(&self, text: &str) {
        self.0.lock().expect("lock").push_str(text);
    }
    fn err(&self, text: &str) {
        self.0.lock().expect("lock").push_str(text);
    }
    fn verbosity(&self) -> u8 {
        0
    }
    fn log(&self, severity: Severity, level: u8, source: &str, message: &str) {
        if level == 0 {
            self.0
                .lock()
                .expect("lock")
                .push_str(&format!("{}] {source}: {message}\n", severity.letter()));
        }
    }
}

/// A join context whose clients are all `cluster`; `sources` records what each was made from.
pub(crate) fn data_with(
    cfg: JoinConfiguration,
    cluster: Arc<FakeCluster>,
    sources: Arc<Mutex<Vec<String>>>,
    output: Captured,
) -> JoinData {
    JoinData {
        cfg,
        dry_run: false,
        ignore_preflight_errors: Default::default(),
        kubeconfig_dir: "/etc/kubernetes".into(),
        kubelet_dir: "/var/lib/kubelet".into(),
        hostname: "node".into(),
        host: Default::default(),
        patches: None,
        runtime: Box::new(kubeadm_host::cri::CriClient::new("unix:///nonexistent.sock").expect("client")),
        connect: Box::new(move |source| {
            sources.lock().expect("lock").push(match source {
                ClientSource::InsecureAnonymous(s, _) => format!("insecure {s}"),
                ClientSource::Kubeconfig(text) => format!("kubeconfig {text}"),
                ClientSource::File(p) => format!("file {}", p.display()),
            });
            Ok(Box::new(cluster.clone()) as Box<dyn Cluster>)
        }),
        fetch_url: Box::new(|url, _| Err(format!("Get {url:?}: no HTTPS in this test"))),
        tls_bootstrap: None,
        tls_bootstrap_timeout: crate::join::kubelet_start::TLS_BOOTSTRAP_TIMEOUT,
        init_cfg: None,
        control_plane_context: Box::new(|_| Err("no control plane in this test".into())),
        control_plane: None,
        effects: kubeadm_effects::Effects {
            fs: Arc::new(kubeadm_host::fs::RealFs),
            init_system: Arc::new(kubeadm_host::init_system::HostInitSystem::detect()),
            host_probe: Arc::new(kubeadm_host::host_probe::RealHostProbe),
            cri: Arc::new(|endpoint| panic!("discovery opened a runtime at {endpoint}")),
            etcd: Arc::new(|_, _| Err("no etcd in this test".into())),
            keygen: Arc::new(kubeadm_host::keygen::AwsLcKeyGen),
            clock: Arc::new(|| 0),
            random: || 42,
            reporter: Arc::new(output),
        },
    }
}

/// The TLS bootstrap kubeconfig discovery makes with the bootstrap token for the test server.
fn token_kubeconfig() -> Value {
    kc::create_with_token(
        "https://127.0.0.1:6443",
        "kubernetes",
        "tls-bootstrap-token-user",
        &b64(CA_CERT),
        TOKEN,
    )
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// The kubeconfig `kubeadm init` puts in `cluster-info`, for the test CA.
pub(crate) fn info_kubeconfig() -> String {
    kubeadm_core::cluster::cluster_info::cluster_info_kubeconfig(CA_CERT.as_bytes(), "https://127.0.0.1:6443")
}

/// `cluster-info` with `data`.
pub(crate) fn cluster_info(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"}, "data": data})
}

/// `cluster-info` signed for `token` (id.secret).
pub(crate) fn signed_cluster_info(token: &str) -> Value {
    let (id, secret) = token.split_once('.').expect("token");
    let kc = info_kubeconfig();
    let sig = detached_jws(&kc, id, secret);
    cluster_info(json!({"kubeconfig": kc, format!("jws-kubeconfig-{id}"): sig}))
}

fn token_cfg(token: &str, hashes: &[&str]) -> JoinConfiguration {
    let mut cfg = JoinConfiguration::default();
    cfg.discovery.bootstrap_token = Some(BootstrapTokenDiscovery {
        token: token.into(),
        api_server_endpoint: "127.0.0.1:6443".into(),
        ca_cert_hashes: hashes.iter().map(|s| s.to_string()).collect(),
        unsafe_skip_ca_verification: hashes.is_empty(),
    });
    cfg.discovery.tls_bootstrap_token = token.into();
    cfg.discovery.timeout = Some(kubeadm_api::duration::Duration::from_nanos(60_000_000_000));
    cfg
}

fn discover(cfg: JoinConfiguration, cm: Option<Value>) -> (Result<Value, DiscoveryError>, Vec<String>) {
    let mut fake = FakeCluster::new();
    if let Some(cm) = cm {
        fake = fake.with_object(&Resource::config_maps(), cm);
    }
    let sources = Arc::new(Mutex::new(Vec::new()));
    let data = data_with(cfg, Arc::new(fake), sources.clone(), Captured::default());
    let r = tls_bootstrap_config(&data);
    let s = sources.lock().expect("lock").clone();
    (r, s)
}

/// Upstream's jws_test.go vectors: the signature verifies; altered, it does not.
#[test]
fn jws_vectors_of_upstream() {
    let content = "Hello from the other side. I must have called a thousand times.";
    let token = BootstrapTokenString {
        id: "joshua".into(),
        secret: "my voice is my passcode".into(),
    };
    let sig = "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8";
    let cm = cluster_info(json!({"kubeconfig": content, "jws-kubeconfig-joshua": sig}));
    assert_eq!(verify_cluster_info(&cm, &token).expect("valid"), content);
    let cm = cluster_info(json!({"kubeconfig": content, "jws-kubeconfig-joshua": format!("{sig}foo")}));
    assert_eq!(
        verify_cluster_info(&cm, &token).expect_err("altered").to_string(),
        "failed to verify JWS signature of received cluster info object, can't trust this API Server"
    );
    let wrong = BootstrapTokenString {
        secret: "my voice is not my passcode".into(),
        ..token.clone()
    };
    let cm = cluster_info(json!({"kubeconfig": content, "jws-kubeconfig-joshua": sig}));
    assert!(matches!(
        verify_cluster_info(&cm, &wrong),
        Err(DiscoveryError::BadSignature)
    ));
}

#[test]
fn missing_signature_or_kubeconfig_in_upstreams_words() {
    let token = BootstrapTokenString::parse(TOKEN).expect("token");
    let cm = cluster_info(json!({"kubeconfig": "foo"}));
    assert_eq!(
        verify_cluster_info(&cm, &token)
            .expect_err("no signature")
            .to_string(),
        "token id \"123456\" is invalid for this cluster or it has expired. Use \"kubeadm token create\" on the control-plane node to create a new valid token"
    );
    let cm = cluster_info(json!({"jws-kubeconfig-123456": "bar"}));
    assert_eq!(
        verify_cluster_info(&cm, &token)
            .expect_err("no kubeconfig")
            .to_string(),
        "there is no kubeconfig key in the cluster-info ConfigMap. This API Server isn't set up for token bootstrapping, can't connect"
    );
}

/// The kubeconfig upstream's `buildSecureBootstrapKubeConfig` writes (token_test.go's expected text).
#[test]
fn secure_bootstrap_kubeconfig_as_upstream_writes_it() {
    let doc = kc::create_basic(
        "https://127.0.0.1",
        "somecluster",
        "token-bootstrap-client",
        &b64(CA_CERT),
    );
    let text = kc::to_text(&doc);
    assert!(text.starts_with("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUN5RENDQWJDZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwKY201bGRHVnpNQjRYRFRFNU1URXlNREF3TkRrME1sb1hEVEk1TVRFeE56QXdORGswTWxvd0ZURVRNQkVHQTFVRQpBeE1LYTNWaVpYSnVaWFJsY3pDQ0FTSXdEUVlKS29aSWh2Y05BUUVCQlFBRGdnRVBBRENDQVFvQ2dnRUJBTXFRCmN0RUN6QTh5RlN1Vll1cE9VWWdyVG1mUWVLZS85QmFEV2FnYXE3b3c5K0kySXZzZldGdmxyRDhRUXI4c2VhNnEKeGpxN1RWNjdWYjRSeEJhb1lEQSt5STV2SWN1aldVeFVMdW42NGx1M1E2aUMxc2oyVW5tVXBJZGdhelJYWEVrWgp2eEE2RWJBbm94QTArbEJPbjFDWldsMjNJUTRzNzBvMmhaN3dJcC92ZXZCODhSUlJqcXR2Z2M1ZWxzanNibURGCkxTN0wxWnV5ZThjNmdTOTNiUitWalZtU0lmcjFJRXEwNzQ4dElJeVhqQVZDV1BWQ3Z1UDQxTWxmUGMvSlZwWkQKdUQyK3BPNlpZUkVjZEFuT2YyZUQ0L2VMT01La280TDFkU0Z5OUpLTTVQTG5PQzBaazBBWU9kMXZTOERUQWZ4agpYUEVJWThPQllGaGxzeGY0VEU4Q0F3RUFBYU1qTUNFd0RnWURWUjBQQVFIL0JBUURBZ0trTUE4R0ExVWRFd0VCCi93UUZNQU1CQWY4d0RRWUpLb1pJaHZjTkFRRUxCUUFEZ2dFQkFIL09ZcTh6eWwxK3pTVG11b3czeUkvMTVQTDEKZGw4aEI3SUtuWk5XbUMvTFRkbS8rbm9oM1NiMUlkUnY2SGtLZy9HVW4wVU11UlVuZ0xoanUzRU80b3pKUFFjWApxdWF4emdtVEtOV0o2RXJEdlJ2V2hHWDBaY2JkQmZaditkb3d5UnF6ZDVubEo0OWhDK05ydEZGUXE2UDA1QlluCjdTZW1ndXFlWG1Yd0lqMlNhKzFEZVI2bFJtOW84c2hBWWpueVRoVUZxYU1uMThrSTNTQU5KNXZrLzNERnJQRU8KQ0tDOUV6Rmt1Mmt1eGcyZE0xMlBiUkdaUTJvMEs2SEVaZ3JySUtUUE95M29jYjhyOU0wYVNGaGpPVi9OcUdBNApTYXVwWFNXNlhmdklpL1VIb0liVTNwTmNzblVKR25RZlF2aXA5NVhLay9ncWNVcittNTB2eGd1bXh0QT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQ==\n"), "{text}");
    assert!(
        text.ends_with(
            "    server: https://127.0.0.1
  name: somecluster
contexts:
- context:
    cluster: somecluster
    user: token-bootstrap-client
  name: token-bootstrap-client@somecluster
current-context: token-bootstrap-client@somecluster
kind: Config
preferences: {}
users: null
"
        ),
        "{text}"
    );
}

#[test]
fn pins_of_upstream() {
    let ca = b64(CA_CERT);
    let pins = parse_pins(&[CA_CERT_HASH.to_uppercase().replace("SHA256", "sha256")]).expect("pin");
    check_pins(&ca, &pins).expect("the pinned CA");
    let other = parse_pins(&[format!("sha256:{}", "0".repeat(64))]).expect("pin");
    assert_eq!(
        check_pins(&ca, &other).expect_err("not pinned").to_string(),
        format!(
            "cluster CA found in cluster-info ConfigMap is invalid: none of the public keys \"{CA_CERT_HASH}\" are pinned"
        )
    );
    // Upstream's messages for malformed pins.
    for (pin, message) in [
        (
            "foo",
            "invalid hash, expected \"format:hex-value\". Known format(s) are: sha256",
        ),
        (
            "md5:abc",
            "unknown hash format \"md5\". Known format(s) are: sha256",
        ),
        (
            "sha256:abc",
            "invalid hash \"sha256:abc\", expected a 32 byte SHA-256 hash, found 1 bytes",
        ),
    ] {
        assert_eq!(
            parse_pins(&[pin.to_string()]).expect_err(pin).to_string(),
            format!("invalid discovery token CA certificate hash: {message}")
        );
    }
}

/// Upstream's `TestRetrieveValidatedConfigInfo` cases, through `discovery.For`; and which clients
/// were used: TLS unverified only for the first read.
#[test]
fn token_discovery_table() {
    // Pinned: read anonymously without verification, then again verifying against the pinned CA.
    let (r, sources) = discover(
        token_cfg(TOKEN, &[CA_CERT_HASH]),
        Some(signed_cluster_info(TOKEN)),
    );
    let tls = r.expect("pinned discovery");
    assert_eq!(sources.len(), 2, "{sources:?}");
    assert_eq!(sources[0], "insecure https://127.0.0.1:6443");
    assert!(sources[1].starts_with("kubeconfig "), "{sources:?}");
    assert!(
        sources[1].contains(&b64(CA_CERT)),
        "the second read verifies TLS against the CA"
    );
    assert!(!sources[1].contains("insecure-skip-tls-verify"));
    // The TLS bootstrap kubeconfig upstream builds (`CreateWithToken`).
    assert_eq!(tls, token_kubeconfig());

    // Unpinned: one read, its kubeconfig used as signed.
    let (r, sources) = discover(token_cfg(TOKEN, &[]), Some(signed_cluster_info(TOKEN)));
    r.expect("unpinned discovery");
    assert_eq!(sources, ["insecure https://127.0.0.1:6443"]);

    let error = |cfg, cm| discover(cfg, cm).0.expect_err("fails").to_string();
    let identity = "couldn't validate the identity of the API Server: ";
    assert_eq!(
        error(token_cfg("foo.bar", &[]), Some(signed_cluster_info(TOKEN))),
        format!(
            "{identity}the bootstrap token \"foo.bar\" was not of the form \"\\\\A([a-z0-9]{{6}})\\\\.([a-z0-9]{{16}})\\\\z\""
        )
    );
    assert!(
        error(token_cfg(TOKEN, &[]), None)
            .starts_with(&format!("{identity}configmaps \"cluster-info\" not found")),
        "missing cluster-info"
    );
    assert_eq!(
        error(
            token_cfg(TOKEN, &[]),
            Some(cluster_info(
                json!({"kubeconfig": "foo", "jws-kubeconfig-123456": "bar"})
            ))
        ),
        format!(
            "{identity}failed to verify JWS signature of received cluster info object, can't trust this API Server"
        )
    );
    assert_eq!(
        error(
            token_cfg(TOKEN, &[]),
            Some(cluster_info(json!({"kubeconfig": "foo"})))
        ),
        format!(
            "{identity}could not find a JWS signature in the cluster-info ConfigMap for token ID \"123456\""
        )
    );
    assert_eq!(
        error(token_cfg(TOKEN, &["foo"]), Some(signed_cluster_info(TOKEN))),
        format!(
            "{identity}invalid discovery token CA certificate hash: invalid hash, expected \"format:hex-value\". Known format(s) are: sha256"
        )
    );
    // Signed with another token's secret.
    assert_eq!(
        error(
            token_cfg(TOKEN, &[]),
            Some(signed_cluster_info("123456.0000000000000000"))
        ),
        format!(
            "{identity}failed to verify JWS signature of received cluster info object, can't trust this API Server"
        )
    );
}

/// A signed `cluster-info` kubeconfig with other than one cluster is refused (upstream's
/// "to have a single cluster" check), a list that is not one counting as none.
#[test]
fn cluster_info_with_other_than_one_cluster_is_refused() {
    let (id, secret) = TOKEN.split_once('.').expect("token");
    for (clusters, count) in [
        (
            "[{name: a, cluster: {server: x}}, {name: b, cluster: {server: y}}]",
            2,
        ),
        ("[]", 0),
        ("not-a-list", 0),
    ] {
        let kubeconfig = format!("apiVersion: v1\nkind: Config\nclusters: {clusters}\n");
        let sig = detached_jws(&kubeconfig, id, secret);
        let cm = cluster_info(json!({"kubeconfig": kubeconfig, format!("jws-kubeconfig-{id}"): sig}));
        let err = discover(token_cfg(TOKEN, &[]), Some(cm))
            .0
            .expect_err("refused")
            .to_string();
        assert_eq!(
            err,
            format!(
                "couldn't validate the identity of the API Server: expected the kubeconfig file in the cluster-info ConfigMap to have a single cluster, but it had {count}"
            ),
            "{clusters}"
        );
    }
}

fn file_cfg(path: &std::path::Path, tls_token: &str) -> JoinConfiguration {
    let mut cfg = JoinConfiguration::default();
    cfg.discovery.file = Some(FileDiscovery {
        kube_config_path: path.display().to_string(),
    });
    cfg.discovery.tls_bootstrap_token = tls_token.into();
    cfg.discovery.timeout = Some(kubeadm_api::duration::Duration::from_nanos(60_000_000_000));
    cfg
}

/// A discovery file carrying credentials is the bootstrap kubeconfig, with the files it names
/// embedded; without credentials, the TLS bootstrap token is needed.
#[test]
fn file_discovery_with_and_without_embedded_auth() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, CA_CERT).expect("ca");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "file-token").expect("token");
    let with_auth = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'https://10.0.0.1:6443', certificate-authority: '{}'}}
contexts:
- name: ctx
  context: {{cluster: c, user: u}}
current-context: ctx
users:
- name: u
  user: {{tokenFile: '{}'}}
",
        ca.display(),
        token_file.display()
    );
    let path = dir.path().join("discovery.conf");
    std::fs::write(&path, &with_auth).expect("file");
    // The cluster answers with another server and CA: synced into the file's cluster.
    let cm = cluster_info(json!({"kubeconfig": info_kubeconfig()}));
    let (r, sources) = discover(file_cfg(&path, ""), Some(cm.clone()));
    let tls = r.expect("file discovery");
    assert_eq!(sources.len(), 1);
    assert!(sources[0].contains("token: file-token"), "{sources:?}");
    let user = &tls["users"][0]["user"];
    assert_eq!(user["token"], "file-token");
    assert_eq!(user["tokenFile"], "");
    let cluster = &tls["clusters"][0]["cluster"];
    assert_eq!(cluster["server"], "https://127.0.0.1:6443");
    assert_eq!(cluster["certificate-authority-data"], b64(CA_CERT));
    assert_eq!(cluster["certificate-authority"], "");

    // No credentials, no TLS bootstrap token.
    let bare = dir.path().join("bare.conf");
    std::fs::write(&bare, info_kubeconfig()).expect("file");
    let (r, sources) = discover(file_cfg(&bare, ""), Some(cm.clone()));
    assert_eq!(
        r.expect_err("no credentials").to_string(),
        "couldn't find authentication credentials for the TLS boostrap process. Please use Token discovery, a discovery file with embedded authentication credentials or a discovery file without authentication credentials but with the TLSBootstrapToken flag"
    );
    assert!(
        sources[0].contains("user: ''") || sources[0].contains("user: \"\""),
        "anonymous: {sources:?}"
    );
    // With one.
    let (r, _) = discover(file_cfg(&bare, TOKEN), Some(cm));
    assert_eq!(r.expect("token"), token_kubeconfig());

    // Unusable files, in upstream's words.
    let no_clusters = dir.path().join("none.conf");
    std::fs::write(&no_clusters, "apiVersion: v1\nkind: Config\n").expect("file");
    let (r, _) = discover(file_cfg(&no_clusters, TOKEN), None);
    assert_eq!(
        r.expect_err("no cluster").to_string(),
        "couldn't validate the identity of the API Server: the provided kubeconfig file must have at least one Cluster defined"
    );
    let bad_ca = dir.path().join("bad-ca.conf");
    std::fs::write(
        &bad_ca,
        "clusters: [{name: '', cluster: {server: 'https://x', certificate-authority: /nonexistent/ca.crt}}]\n",
    )
    .expect("file");
    let (r, _) = discover(file_cfg(&bad_ca, TOKEN), None);
    assert_eq!(
        r.expect_err("no CA file").to_string(),
        "couldn't validate the identity of the API Server: invalid configuration: unable to read certificate-authority /nonexistent/ca.crt for  due to open /nonexistent/ca.crt: no such file or directory"
    );
}

fn url_cfg(url: &str, tls_token: &str) -> JoinConfiguration {
    let mut cfg = file_cfg(std::path::Path::new(url), tls_token);
    cfg.discovery.file = Some(FileDiscovery {
        kube_config_path: url.into(),
    });
    cfg
}

/// Discovery from `cfg` whose `https://` URLs answer `answer`; what was fetched and which clients
/// were made.
fn discover_https(
    cfg: JoinConfiguration,
    answer: Result<&str, &str>,
    cm: Option<Value>,
) -> (Result<Value, DiscoveryError>, Vec<String>, Vec<String>) {
    let mut fake = FakeCluster::new();
    if let Some(cm) = cm {
        fake = fake.with_object(&Resource::config_maps(), cm);
    }
    let sources = Arc::new(Mutex::new(Vec::new()));
    let mut data = data_with(cfg, Arc::new(fake), sources.clone(), Captured::default());
    let fetched = Arc::new(Mutex::new(Vec::new()));
    let (seen, answer) = (
        fetched.clone(),
        answer.map(str::to_string).map_err(str::to_string),
    );
    data.fetch_url = Box::new(move |url, _| {
        seen.lock().expect("lock").push(url.to_string());
        answer.clone().map(String::into_bytes)
    });
    let r = tls_bootstrap_config(&data);
    let s = sources.lock().expect("lock").clone();
    let f = fetched.lock().expect("lock").clone();
    (r, f, s)
}

/// `--discovery-file https://…`: the fetched kubeconfig goes through the checks of a local file
/// (credentials used, server and CA synced from `cluster-info`); fetch errors name the URL.
#[test]
fn https_discovery_validates_the_fetched_kubeconfig_as_a_file() {
    const URL: &str = "https://192.0.2.1/discovery.yaml";
    let with_auth = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'https://10.0.0.1:6443', certificate-authority-data: '{}'}}
contexts:
- name: ctx
  context: {{cluster: c, user: u}}
current-context: ctx
users:
- name: u
  user: {{token: fetched-token}}
",
        b64(CA_CERT)
    );
    let cm = cluster_info(json!({"kubeconfig": info_kubeconfig()}));
    let (r, fetched, sources) = discover_https(url_cfg(URL, ""), Ok(&with_auth), Some(cm.clone()));
    let tls = r.expect("HTTPS discovery");
    assert_eq!(fetched, [URL]);
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert!(sources[0].contains("token: fetched-token"), "{sources:?}");
    assert_eq!(tls["users"][0]["user"]["token"], "fetched-token");
    assert_eq!(tls["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443");

    // Upstream's `url.Parse` lowers the scheme.
    let upper = "HTTPS://192.0.2.1/discovery.yaml";
    let (r, fetched, _) = discover_https(url_cfg(upper, ""), Ok(&with_auth), Some(cm.clone()));
    r.expect("HTTPS discovery");
    assert_eq!(fetched, [upper]);

    // Without credentials the TLS bootstrap token is used, as for a file.
    let (r, _, sources) = discover_https(url_cfg(URL, TOKEN), Ok(&info_kubeconfig()), Some(cm));
    assert_eq!(r.expect("token"), token_kubeconfig());
    assert!(
        sources[0].contains("user: ''") || sources[0].contains("user: \"\""),
        "{sources:?}"
    );

    // The fetch error, as the fetcher words it, and nothing else tried.
    let refused = format!("Get {URL:?}: dial tcp 192.0.2.1:443: connect: connection refused");
    let (r, _, sources) = discover_https(url_cfg(URL, TOKEN), Err(&refused), None);
    assert_eq!(
        r.expect_err("fetch fails").to_string(),
        format!("couldn't validate the identity of the API Server: {refused}")
    );
    assert!(sources.is_empty(), "{sources:?}");
}

/// A body that is not a usable kubeconfig (a 404 page, an empty answer) fails exactly as the same
/// text in a local file fails.
#[test]
fn https_body_that_is_not_a_kubeconfig_fails_as_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    for body in ["404 page not found\n", "", "apiVersion: v1\nkind: Config\n"] {
        let path = dir.path().join("body.conf");
        std::fs::write(&path, body).expect("file");
        let (from_file, _) = discover(file_cfg(&path, TOKEN), None);
        let from_file = from_file.expect_err("not a kubeconfig").to_string();
        let (r, fetched, _) = discover_https(url_cfg("https://192.0.2.1/x", TOKEN), Ok(body), None);
        assert_eq!(fetched.len(), 1);
        assert_eq!(
            r.expect_err("not a kubeconfig").to_string(),
            from_file,
            "{body:?}"
        );
    }
}

/// Only `https` is fetched: `http://…` is a local path, as upstream's `isHTTPSURL` decides.
#[test]
fn http_url_is_a_local_path() {
    let (r, fetched, _) = discover_https(url_cfg("http://192.0.2.1/x", TOKEN), Ok(""), None);
    assert!(fetched.is_empty(), "{fetched:?}");
    assert_eq!(
        r.expect_err("no such file").to_string(),
        "couldn't validate the identity of the API Server: open http://192.0.2.1/x: no such file or directory"
    );
}

/// Records the verbose log (`-v=1` and above) too.
#[derive(Debug, Default, Clone)]
struct Verbose(Arc<Mutex<Vec<String>>>);

impl Reporter for Verbose {
    fn out(&self, _: &str) {}
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        1
    }
    fn log(&self, _: Severity, level: u8, _: &str, message: &str) {
        self.0.lock().expect("lock").push(format!("{level} {message}"));
    }
}

fn file_with_user(dir: &std::path::Path, user: &str) -> std::path::PathBuf {
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'https://127.0.0.1:1', certificate-authority-data: '{}'}}
contexts:
- name: ctx
  context: {{cluster: c, user: u}}
current-context: ctx
users:
- name: u
  user: {user}
",
        b64(CA_CERT)
    );
    let path = dir.join("discovery.conf");
    std::fs::write(&path, text).expect("file");
    path
}

/// Discovery with `file` and its verbose log, against a cluster answering `cluster-info`.
fn discover_logged(file: &std::path::Path) -> (Result<Value, DiscoveryError>, Vec<String>, Vec<String>) {
    let cm = cluster_info(json!({"kubeconfig": info_kubeconfig()}));
    let fake = FakeCluster::new().with_object(&Resource::config_maps(), cm);
    let sources = Arc::new(Mutex::new(Vec::new()));
    let mut data = data_with(
        file_cfg(file, ""),
        Arc::new(fake),
        sources.clone(),
        Captured::default(),
    );
    let log = Verbose::default();
    data.effects.reporter = Arc::new(log.clone());
    let r = tls_bootstrap_config(&data);
    let s = sources.lock().expect("lock").clone();
    let l = log.0.lock().expect("lock").clone();
    (r, s, l)
}

/// A discovery file whose user names an auth provider fails as upstream's (client-go finds no
/// such plugin in kubeadm), before any client is made, so its `cmd-path` never runs.
#[test]
fn an_auth_provider_in_a_discovery_file_is_refused_before_any_client_is_made() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("ran");
    let user = format!(
        "{{auth-provider: {{name: gcp, config: {{cmd-path: /bin/sh, cmd-args: '-c :>{}'}}}}}}",
        marker.display()
    );
    let (r, sources, _) = discover_logged(&file_with_user(dir.path(), &user));
    assert_eq!(
        r.expect_err("refused").to_string(),
        "couldn't validate the identity of the API Server: failed to create API client: no Auth Provider found for name \"gcp\""
    );
    assert_eq!(sources, Vec::<String>::new(), "a client was made");
    assert!(!marker.exists());
}

/// An exec plugin is kept (upstream runs it), and the verbose log says which command runs.
#[test]
fn an_exec_plugin_in_a_discovery_file_is_logged_with_its_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let user = "{exec: {command: /usr/local/bin/get-token, args: [--secret-arg], apiVersion: client.authentication.k8s.io/v1beta1}}";
    let (r, sources, log) = discover_logged(&file_with_user(dir.path(), user));
    let tls = r.expect("exec discovery");
    assert_eq!(
        tls["users"][0]["user"]["exec"]["command"],
        "/usr/local/bin/get-token"
    );
    assert_eq!(sources.len(), 1);
    let line = "1 [discovery] The discovery file's user authenticates with an exec credential plugin: running \"/usr/local/bin/get-token\"";
    assert!(log.iter().any(|l| l == line), "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("--secret-arg")), "{log:#?}");
}

/// The discovery timeout counts the time the reads take, as the clock shows it, not only the
/// pauses between them: with reads that take 20 s each, a 60 s timeout allows three reads (counting
/// pauses alone, twelve).
#[test]
fn slow_reads_count_against_the_discovery_timeout() {
    let seconds = Arc::new(Mutex::new(0i64));
    let clock = {
        let seconds = seconds.clone();
        Arc::new(move || {
            let mut s = seconds.lock().expect("lock");
            *s += 20;
            *s
        })
    };
    let fake = Arc::new(FakeCluster::new());
    let mut data = data_with(
        token_cfg(TOKEN, &[]),
        fake.clone(),
        Arc::new(Mutex::new(Vec::new())),
        Captured::default(),
    );
    data.effects.clock = clock.clone();
    let err = tls_bootstrap_config(&data).expect_err("no cluster-info");
    assert!(err.to_string().contains("cluster-info"), "{err}");
    assert_eq!(fake.calls().len(), 3, "{:?}", fake.calls());

    // File discovery's wait as well.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("discovery.conf");
    std::fs::write(&path, info_kubeconfig()).expect("write");
    let fake = Arc::new(FakeCluster::new());
    let mut data = data_with(
        file_cfg(&path, TOKEN),
        fake.clone(),
        Arc::new(Mutex::new(Vec::new())),
        Captured::default(),
    );
    data.effects.clock = clock;
    let err = tls_bootstrap_config(&data).expect_err("no cluster-info");
    assert!(err.to_string().contains("after timeout of 1m0s"), "{err}");
    assert!(fake.calls().len() <= 3, "{:?}", fake.calls());
}
