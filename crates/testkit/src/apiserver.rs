//! A real, throw-away API server for tests: upstream etcd and kube-apiserver v1.25.16 started as
//! plain processes in a temp dir, listening on 127.0.0.1 only, on free ports.
//!
//! The PKI, the admin kubeconfig and the two static Pod manifests are written by upstream kubeadm
//! itself (`--rootfs <tmp> init phase certs all | kubeconfig admin | etcd local | control-plane
//! apiserver`); the flags are then taken from the manifests, with paths moved under the temp root
//! and every address and port rewritten to loopback. In the chroot kubeadm cannot read the host's
//! routes, which it needs for a loopback `advertiseAddress`, so the config names a placeholder
//! address (rewritten away, and checked to be gone) and `controlPlaneEndpoint: 127.0.0.1:<port>`,
//! which is what `admin.conf` and the serving certificate's SANs use.
//!
//! Both processes are killed when the [`ApiServer`] is dropped.

use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::oracle::upstream_kubeadm;

/// Stands for the advertise address in the generated config; must not survive the rewrite.
const PLACEHOLDER_ADDRESS: &str = "10.254.254.254";
/// How long etcd and kube-apiserver get to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A running etcd + kube-apiserver pair.
#[derive(Debug)]
pub struct ApiServer {
    dir: tempfile::TempDir,
    etcd: Option<Child>,
    apiserver: Option<Child>,
    port: u16,
    etcd_client_port: u16,
    startup: Duration,
    /// How etcd and kube-apiserver were started, to start them again.
    commands: [(PathBuf, Vec<String>); 2],
}

/// The directory holding upstream's `etcd` and `kube-apiserver`: next to upstream kubeadm.
/// Panics with instructions when one is missing (a test that needs them must not pass silently).
pub fn upstream_bin(name: &str) -> PathBuf {
    let kubeadm = upstream_kubeadm();
    let path = kubeadm
        .parent()
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from(name));
    assert!(
        path.is_file(),
        "upstream {name} not found at {}: run `testbed/upstream/build.sh etcd kube-apiserver`",
        path.display()
    );
    path
}

impl ApiServer {
    /// Brings up etcd and kube-apiserver and waits until `/readyz` answers 200. Panics with the
    /// processes' log tails when they do not come up within a minute.
    pub fn start() -> ApiServer {
        Self::start_with(&upstream_kubeadm())
    }

    /// Like [`ApiServer::start`], with the certificates, kubeconfig and manifests written by the
    /// given `kubeadm` binary: with ours, etcd and kube-apiserver become real consumers of our PKI.
    pub fn start_with(kubeadm: &std::path::Path) -> ApiServer {
        let began = Instant::now();
        let etcd_bin = upstream_bin("etcd");
        let apiserver_bin = upstream_bin("kube-apiserver");
        let dir = tempfile::Builder::new()
            .prefix("kubeadm-rs-apiserver")
            .tempdir()
            .expect("temp dir");
        let root = dir.path().join("root");
        fs::create_dir_all(&root).expect("rootfs dir");
        let [port, client, peer, metrics] = free_ports();

        fs::write(root.join("kubeadm.yaml"), config(port)).expect("write kubeadm config");
        for phase in [
            &["certs", "all"][..],
            &["kubeconfig", "admin"],
            &["etcd", "local"],
            &["control-plane", "apiserver"],
        ] {
            crate::rootfs::init_phase(kubeadm, &root, phase, "/kubeadm.yaml");
        }

        let manifests = root.join("etc/kubernetes/manifests");
        let etcd_args: Vec<String> = manifest_flags(&manifests.join("etcd.yaml"))
            .into_iter()
            .map(|(k, v)| {
                let v = match k.as_str() {
                    "advertise-client-urls" | "listen-client-urls" => format!("https://127.0.0.1:{client}"),
                    "initial-advertise-peer-urls" | "listen-peer-urls" => format!("https://127.0.0.1:{peer}"),
                    "listen-metrics-urls" => format!("http://127.0.0.1:{metrics}"),
                    "initial-cluster" => {
                        let name = v.split('=').next().unwrap_or_default();
                        format!("{name}=https://127.0.0.1:{peer}")
                    }
                    _ => rooted(&root, &v),
                };
                format!("--{k}={v}")
            })
            .collect();
        let mut apiserver_args: Vec<String> = manifest_flags(&manifests.join("kube-apiserver.yaml"))
            .into_iter()
            .map(|(k, v)| {
                let v = match k.as_str() {
                    "advertise-address" => "127.0.0.1".to_string(),
                    "etcd-servers" => format!("https://127.0.0.1:{client}"),
                    "secure-port" => port.to_string(),
                    _ => rooted(&root, &v),
                };
                format!("--{k}={v}")
            })
            .collect();
        apiserver_args.push("--bind-address=127.0.0.1".to_string());
        for arg in etcd_args.iter().chain(&apiserver_args) {
            assert!(
                !arg.contains(PLACEHOLDER_ADDRESS),
                "flag {arg} still names a non-loopback address"
            );
        }

        let logs = dir.path().join("logs");
        fs::create_dir_all(&logs).expect("logs dir");
        let mut server = ApiServer {
            dir,
            etcd: None,
            etcd_client_port: client,
            apiserver: None,
            port,
            startup: Duration::ZERO,
            commands: [(etcd_bin, etcd_args), (apiserver_bin, apiserver_args)],
        };
        server.launch();
        server.startup = began.elapsed();
        server
    }

    /// Starts etcd and kube-apiserver with the flags of the manifests and waits until ready.
    fn launch(&mut self) {
        let logs = self.dir.path().join("logs");
        let [(etcd_bin, etcd_args), (apiserver_bin, apiserver_args)] = &self.commands;
        self.etcd = Some(spawn(
            etcd_bin,
            etcd_args,
            &logs.join("etcd.log"),
            self.dir.path(),
        ));
        self.apiserver = Some(spawn(
            apiserver_bin,
            apiserver_args,
            &logs.join("kube-apiserver.log"),
            self.dir.path(),
        ));
        self.wait_ready(&self.root().join("etc/kubernetes/pki/ca.crt"));
    }

    /// Stops etcd and kube-apiserver and starts them again (etcd keeps its data), as a node reboot
    /// does: they read their certificates and keys afresh. Panics unless they come back ready.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    fn stop(&mut self) {
        for child in [self.apiserver.take(), self.etcd.take()].into_iter().flatten() {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// etcd's client URL (`https://127.0.0.1:<port>`), which wants a client certificate signed by
    /// the etcd CA.
    pub fn etcd_client_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.etcd_client_port)
    }

    /// The admin kubeconfig (`cluster-admin` client certificate, server `https://127.0.0.1:<port>`).
    pub fn kubeconfig(&self) -> PathBuf {
        self.root().join("etc/kubernetes/admin.conf")
    }

    /// `admin.conf` trusting another CA (the front proxy's) instead of the cluster's: a client
    /// made from it must refuse the server's certificate.
    pub fn untrusting_kubeconfig(&self) -> String {
        use base64::Engine as _;
        let admin = fs::read_to_string(self.kubeconfig()).expect("admin.conf");
        let other_ca = fs::read(self.root().join("etc/kubernetes/pki/front-proxy-ca.crt")).expect("CA");
        let other_ca = base64::engine::general_purpose::STANDARD.encode(other_ca);
        admin
            .lines()
            .map(|l| match l.split_once("certificate-authority-data: ") {
                Some((indent, _)) => format!("{indent}certificate-authority-data: {other_ca}\n"),
                None => format!("{l}\n"),
            })
            .collect()
    }

    /// Creates the kube-apiserver mirror Pod of `node` as the kubelet leaves it for a static
    /// Pod (its advertise-address annotation naming this server's port), with `image`.
    pub fn create_apiserver_mirror_pod(&self, node: &str, image: &str) {
        let port = self.port;
        let pod = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": format!("kube-apiserver-{node}"),
                "namespace": "kube-system",
                "labels": {"component": "kube-apiserver", "tier": "control-plane"},
                "annotations": {
                    "kubernetes.io/config.mirror": "0123456789abcdef",
                    "kubernetes.io/config.source": "file",
                    "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint":
                        format!("{PLACEHOLDER_ADDRESS}:{port}"),
                },
            },
            "spec": {"nodeName": node, "containers": [{"name": "kube-apiserver", "image": image}]},
        });
        let manifest = self.root().join(format!("apiserver-pod-{node}.json"));
        fs::write(&manifest, pod.to_string()).expect("pod manifest");
        self.kubectl(&["create", "-f", &manifest.to_string_lossy()]);
    }

    /// Runs upstream `kubectl` with the admin kubeconfig and returns its standard output; panics
    /// with its error output when it fails. Its discovery cache goes under the temp root.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new(upstream_bin("kubectl"))
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .args(args)
            .env_clear()
            .env("HOME", self.root())
            .output()
            .expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Creates a Node as its kubelet registers it (with the `kubernetes.io/hostname` label, which
    /// kubeadm waits for before it patches a Node), with `annotations` (a JSON object).
    pub fn create_node(&self, name: &str, annotations: serde_json::Value) {
        let node = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name},
                "annotations": annotations,
            },
        });
        let manifest = self.root().join(format!("node-{name}.json"));
        fs::write(&manifest, node.to_string()).expect("node manifest");
        self.kubectl(&["create", "-f", &manifest.to_string_lossy()]);
    }

    /// The temp root upstream kubeadm wrote into (`etc/kubernetes/pki`, …).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// The API server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// How long [`ApiServer::start`] took, from kubeadm's first phase to `/readyz` answering.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// Kills kube-apiserver (etcd stays up), as if it crashed.
    pub fn kill_apiserver(&mut self) {
        if let Some(mut child) = self.apiserver.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills etcd (kube-apiserver stays up, answering with its etcd check failing).
    pub fn kill_etcd(&mut self) {
        if let Some(mut child) = self.etcd.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_ready(&mut self, ca: &Path) {
        let tls = tls_config(ca);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let mut exited = None;
            for (name, child) in [("etcd", &mut self.etcd), ("kube-apiserver", &mut self.apiserver)] {
                if let Some(c) = child
                    && let Ok(Some(status)) = c.try_wait()
                {
                    exited = Some(format!("{name} exited with {status} during start-up"));
                }
            }
            if let Some(what) = exited {
                panic!("{what}\n{}", self.log_tails());
            }
            if readyz(&tls, self.port) == Some(200) {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "kube-apiserver not ready after {READY_TIMEOUT:?}\n{}",
                    self.log_tails()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tails(&self) -> String {
        let mut out = String::new();
        for name in ["etcd.log", "kube-apiserver.log"] {
            let text = fs::read_to_string(self.dir.path().join("logs").join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(20)..].join("\n");
            out.push_str(&format!("--- {name} (last 20 lines)\n{tail}\n"));
        }
        out
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn config(port: u16) -> String {
    InitConfig::default().render(port)
}

/// A kubeadm configuration for phases run against a test server: its endpoint (`127.0.0.1:<port>`,
/// in the certificates' SANs), a control-plane node and a version, plus what a test adds.
#[derive(Debug, Clone)]
pub struct InitConfig<'a> {
    /// `nodeRegistration.name`.
    pub node: &'a str,
    /// `kubernetesVersion`.
    pub version: &'a str,
    /// Lines added at the top of the InitConfiguration (e.g. `bootstrapTokens`).
    pub init_extra: &'a str,
    /// Lines added at the end of the ClusterConfiguration, and any documents after it.
    pub cluster_extra: &'a str,
}

impl Default for InitConfig<'_> {
    fn default() -> Self {
        InitConfig {
            node: "apiserver-test",
            version: "v1.25.16",
            init_extra: "",
            cluster_extra: "",
        }
    }
}

impl InitConfig<'_> {
    /// The YAML for a server on `port`.
    pub fn render(&self, port: u16) -> String {
        let InitConfig {
            node,
            version,
            init_extra,
            cluster_extra,
        } = self;
        format!(
            "apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
{init_extra}localAPIEndpoint:
  advertiseAddress: {PLACEHOLDER_ADDRESS}
  bindPort: {port}
nodeRegistration:
  name: {node}
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: {version}
controlPlaneEndpoint: 127.0.0.1:{port}
apiServer:
  certSANs: [127.0.0.1]
{cluster_extra}"
        )
    }
}

/// Four distinct free ports on 127.0.0.1 (held open together so they differ, then released).
fn free_ports() -> [u16; 4] {
    let listeners: Vec<TcpListener> = (0..4)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a free port"))
        .collect();
    let ports: Vec<u16> = listeners
        .iter()
        .map(|l| l.local_addr().expect("local addr").port())
        .collect();
    [ports[0], ports[1], ports[2], ports[3]]
}

/// The `--key=value` flags of a static Pod manifest's first container command, in order.
fn manifest_flags(path: &Path) -> Vec<(String, String)> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .skip_while(|l| l.trim() != "- command:")
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("- "))
        .filter_map(|l| l.trim_start().strip_prefix("- --"))
        .map(|flag| match flag.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (flag.to_string(), String::new()),
        })
        .collect()
}

/// An absolute path moved under the temp root; other values unchanged.
fn rooted(root: &Path, value: &str) -> String {
    match value.strip_prefix('/') {
        Some(rel) => root.join(rel).to_string_lossy().into_owned(),
        None => value.to_string(),
    }
}

fn spawn(bin: &Path, args: &[String], log: &Path, cwd: &Path) -> Child {
    let out = fs::File::create(log).expect("log file");
    let err = out.try_clone().expect("log file");
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        // No proxy or other settings from the test's environment reach the components.
        .env_clear()
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()))
}

fn tls_config(ca: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).expect("read ca.crt") {
        roots.add(cert.expect("parse ca.crt")).expect("add ca.crt");
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// The HTTP status of an anonymous `GET /readyz` (allowed by the default RBAC), verifying the
/// serving certificate against the cluster CA; `None` when there is no answer yet.
fn readyz(tls: &Arc<rustls::ClientConfig>, port: u16) -> Option<u16> {
    let name = rustls::pki_types::ServerName::IpAddress(Ipv4Addr::LOCALHOST.into());
    let conn = rustls::ClientConnection::new(tls.clone(), name).ok()?;
    let sock =
        TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), Duration::from_secs(1)).ok()?;
    sock.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut stream = rustls::StreamOwned::new(conn, sock);
    let request = format!("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    // The server closes after the answer; a TLS close without close_notify is fine here.
    let _ = stream.read_to_end(&mut response);
    let head = String::from_utf8_lossy(&response);
    head.lines().next()?.split_whitespace().nth(1)?.parse().ok()
}
