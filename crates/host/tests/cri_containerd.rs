//! The CRI client against a real containerd, started by each test in its own temporary directory (own
//! root, state, socket, plugin dirs; cgroupfs; `restrict_oom_score_adj`; no CNI), as the testbed notes
//! describe. Only image and sandbox-listing operations: no container is started, so nothing is created
//! under the host's `/run/containerd` either.
//!
//! The tests are ignored by default, so a plain `cargo test` lists them as ignored rather than
//! passing them silently; run them as root with Debian's `containerd` package (which also provides
//! `ctr`), as `scripts/test.sh` does:
//!
//! ```text
//! apt-get install -y containerd
//! cargo test -p kubeadm-host --test cri_containerd -- --ignored
//! ```
//!
//! A missing prerequisite fails the test with what to install.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kubeadm_effects::cri::{ApiVersion, CriCall, CriError, Runtime, SandboxRemovalError, SandboxState};
use kubeadm_host::cri::CriClient;
use sha2::{Digest, Sha256};

const RUN_CONTAINERD: &str = "/run/containerd";

/// A containerd process with everything under one temporary directory; killed on drop.
struct Containerd {
    child: Child,
    /// Sandboxes a test started and has not removed yet; removed on drop so no shim outlives the test.
    started_sandboxes: RefCell<Vec<String>>,
    /// Whether `/run/containerd` (where containerd keeps shim sockets whatever its config says) existed
    /// before; if not, its empty directories are removed on drop.
    run_containerd_existed: bool,
    dir: tempfile::TempDir,
    socket: PathBuf,
}

impl Containerd {
    /// Starts containerd.
    fn start() -> Containerd {
        require_prerequisites();
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        let socket = base.join("containerd.sock");
        let config = base.join("config.toml");
        fs::write(&config, config_toml(base, &socket)).expect("write config");
        let log = fs::File::create(base.join("containerd.log")).expect("log file");
        let mut command = Command::new("containerd");
        command
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log fd"))
            .stderr(log);
        // The daemon must not reach out through a proxy: every test address is loopback.
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "NO_PROXY",
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "ALL_PROXY",
        ] {
            command.env_remove(var);
        }
        let run_containerd_existed = Path::new(RUN_CONTAINERD).exists();
        let child = command.spawn().expect("spawn containerd");
        let containerd = Containerd {
            child,
            started_sandboxes: RefCell::new(Vec::new()),
            run_containerd_existed,
            dir,
            socket,
        };
        containerd.wait_until_serving();
        containerd
    }

    fn endpoint(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    fn client(&self) -> CriClient {
        CriClient::new(&self.endpoint()).expect("valid endpoint")
    }

    /// The cgroup parent for this instance's sandboxes, so nothing is left under the shared `k8s.io`.
    fn cgroup_parent(&self) -> String {
        let name = self
            .dir
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("/kubeadm-rs-cri-test{name}")
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("containerd.log")).unwrap_or_default()
    }

    fn wait_until_serving(&self) {
        let started = Instant::now();
        loop {
            if self.socket.exists() && self.client().is_running().is_ok() {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "containerd did not serve CRI within 60 s; its log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `ctr -n k8s.io images import` of an OCI archive, into the snapshotter the CRI plugin uses.
    fn import(&self, archive: &Path) {
        let out = Command::new("ctr")
            .arg("--address")
            .arg(&self.socket)
            .args(["-n", "k8s.io", "images", "import", "--snapshotter", "native"])
            .arg(archive)
            .output()
            .expect("run ctr");
        assert!(
            out.status.success(),
            "ctr import failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        let leftovers = self.started_sandboxes.take();
        if !leftovers.is_empty() {
            let _ = self.client().remove_pod_sandboxes(&leftovers);
        }
        // Only the process this test started, by its own handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Sandboxes ran under a cgroup parent named after this test dir; runc removed their own cgroups.
        if let Ok(controllers) = fs::read_dir("/sys/fs/cgroup") {
            for controller in controllers.flatten() {
                let _ = fs::remove_dir(
                    controller
                        .path()
                        .join(self.cgroup_parent().trim_start_matches('/')),
                );
            }
        }
        // `remove_dir` only removes empty directories: anything another containerd keeps there stays.
        if !self.run_containerd_existed {
            for sub in ["runc/k8s.io", "runc", "s", "fifo", ""] {
                let _ = fs::remove_dir(Path::new(RUN_CONTAINERD).join(sub));
            }
        }
    }
}

fn require_prerequisites() {
    let uid = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(str::to_string))
        .unwrap_or_default();
    assert!(
        uid.split_whitespace().nth(1) == Some("0"),
        "not running as root: containerd needs root"
    );
    for tool in ["containerd", "ctr"] {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(found, "`{tool}` is not installed: apt-get install -y containerd");
    }
}

/// containerd's configuration: every path under `base`; cgroupfs; no CNI config, so `NetworkReady` is
/// false; `restrict_oom_score_adj` because the test VMs lack `CAP_SYS_RESOURCE`.
fn config_toml(base: &Path, socket: &Path) -> String {
    let b = base.display();
    format!(
        r#"version = 2
root = "{b}/root"
state = "{b}/state"

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{socket}.ttrpc"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "{b}/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.8"
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "native"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "{b}/cni/bin"
      conf_dir = "{b}/cni/net.d"
"#,
        socket = socket.display()
    )
}

// ---------------------------------------------------------------------------------------------------
// A deterministic OCI image archive, built here from a few hundred bytes of content.

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// Appends one ustar entry (regular file, or directory when `data` is `None`), owner 0, mtime 0.
fn tar_entry(out: &mut Vec<u8>, name: &str, data: Option<&[u8]>) {
    let mut header = [0u8; 512];
    let put = |header: &mut [u8; 512], at: usize, text: &str| {
        header[at..at + text.len()].copy_from_slice(text.as_bytes());
    };
    put(&mut header, 0, name);
    let size = data.map_or(0, <[u8]>::len);
    put(&mut header, 100, "0000755");
    put(&mut header, 108, "0000000");
    put(&mut header, 116, "0000000");
    put(&mut header, 124, &format!("{size:011o}"));
    put(&mut header, 136, "00000000000");
    put(&mut header, 148, "        ");
    header[156] = if data.is_some() { b'0' } else { b'5' };
    put(&mut header, 257, "ustar\0");
    put(&mut header, 263, "00");
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    put(&mut header, 148, &format!("{sum:06o}\0 "));
    out.extend_from_slice(&header);
    if let Some(data) = data {
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(512), 0);
    }
}

fn tar(entries: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in entries {
        tar_entry(&mut out, name, *data);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// An OCI image layout archive holding one image called `name` (`repo:tag`) with one layer of `files`
/// and the given entrypoint, and its config digest, which is the image id the CRI reports.
fn oci_archive(name: &str, files: &[(&str, &[u8])], entrypoint: &str) -> (Vec<u8>, String) {
    let tag = name.rsplit_once(':').map_or("latest", |(_, t)| t);
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let entries: Vec<(&str, Option<&[u8]>)> = files.iter().map(|(n, d)| (*n, Some(*d))).collect();
    let layer = tar(&entries);
    let layer_digest = sha256_hex(&layer);
    let config = format!(
        r#"{{"architecture":"{arch}","os":"linux","config":{{"Entrypoint":["{entrypoint}"]}},"rootfs":{{"type":"layers","diff_ids":["sha256:{layer_digest}"]}}}}"#
    );
    let config_digest = sha256_hex(config.as_bytes());
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:{config_digest}","size":{}}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:{layer_digest}","size":{}}}]}}"#,
        config.len(),
        layer.len()
    );
    let manifest_digest = sha256_hex(manifest.as_bytes());
    let index = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:{manifest_digest}","size":{},"platform":{{"architecture":"{arch}","os":"linux"}},"annotations":{{"io.containerd.image.name":"{name}","org.opencontainers.image.ref.name":"{tag}"}}}}]}}"#,
        manifest.len()
    );
    let blob = |d: &str| format!("blobs/sha256/{d}");
    let archive = tar(&[
        (
            "oci-layout",
            Some(br#"{"imageLayoutVersion":"1.0.0"}"#.as_slice()),
        ),
        ("index.json", Some(index.as_bytes())),
        ("blobs/", None),
        ("blobs/sha256/", None),
        (&blob(&layer_digest), Some(&layer)),
        (&blob(&config_digest), Some(config.as_bytes())),
        (&blob(&manifest_digest), Some(manifest.as_bytes())),
    ]);
    (archive, format!("sha256:{config_digest}"))
}

/// A 129-byte static x86-64 Linux program that waits forever (`pause(2)` in a loop), to serve as the
/// pod sandbox ("pause") process without needing a compiler or a busybox.
fn pause_elf() -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    // mov eax, 34 (pause); syscall; jmp back to the mov
    let code: [u8; 9] = [0xb8, 34, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xf7];
    let total = 64 + 56 + code.len() as u64;
    let mut elf = Vec::new();
    elf.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    elf.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    elf.extend_from_slice(&0x3eu16.to_le_bytes()); // EM_X86_64
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&(BASE + 120).to_le_bytes()); // entry: just after the headers
    elf.extend_from_slice(&64u64.to_le_bytes()); // program headers follow the ELF header
    elf.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    elf.extend_from_slice(&0u32.to_le_bytes());
    for half in [64u16, 56, 1, 64, 0, 0] {
        elf.extend_from_slice(&half.to_le_bytes());
    }
    elf.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    elf.extend_from_slice(&5u32.to_le_bytes()); // R+X
    for word in [0, BASE, BASE, total, total, 0x1000] {
        elf.extend_from_slice(&word.to_le_bytes());
    }
    elf.extend_from_slice(&code);
    elf
}

/// Runs a host-network pod sandbox the way kubelet would for a static pod, with CRI v1 directly (the
/// client under test has no reason to create sandboxes). Returns its id.
fn run_host_network_sandbox(socket: &Path, cgroup_parent: &str, name: &str, namespace: &str) -> String {
    use k8s_cri::v1 as pb;
    let socket = socket.to_path_buf();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let connector = tower::service_fn(move |_: tonic::transport::Uri| {
            let socket = socket.clone();
            async move {
                tokio::net::UnixStream::connect(socket)
                    .await
                    .map(hyper_util::rt::TokioIo::new)
            }
        });
        let endpoint = tonic::transport::Endpoint::from_static("http://localhost");
        let channel = endpoint.connect_with_connector(connector).await.expect("connect");
        let config = pb::PodSandboxConfig {
            metadata: Some(pb::PodSandboxMetadata {
                name: name.into(),
                uid: format!("uid-{name}"),
                namespace: namespace.into(),
                attempt: 0,
            }),
            // Host network pods get no hostname of their own (no private UTS namespace).
            labels: [("io.kubernetes.pod.namespace".to_string(), namespace.to_string())].into(),
            linux: Some(pb::LinuxPodSandboxConfig {
                security_context: Some(pb::LinuxSandboxSecurityContext {
                    namespace_options: Some(pb::NamespaceOption {
                        network: pb::NamespaceMode::Node as i32,
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                cgroup_parent: cgroup_parent.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let request = pb::RunPodSandboxRequest {
            config: Some(config),
            runtime_handler: String::new(),
        };
        let mut client = pb::runtime_service_client::RuntimeServiceClient::new(channel);
        match client.run_pod_sandbox(request).await {
            Ok(response) => response.into_inner().pod_sandbox_id,
            Err(status) => panic!("RunPodSandbox: {status:?}"),
        }
    })
}

// ---------------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs root and containerd: run with --ignored, as scripts/test.sh does as root"]
fn status_and_version_of_a_fresh_containerd() {
    let containerd = Containerd::start();
    let client = containerd.client();

    let version = client.version().expect("Version");
    assert_eq!(version.runtime_name, "containerd");
    assert_eq!(version.api, ApiVersion::V1, "containerd 1.6 serves runtime.v1");
    assert_eq!(version.runtime_api_version, "v1");
    assert!(!version.runtime_version.is_empty());
    assert_eq!(client.api_version(), Some(ApiVersion::V1));

    let status = client.status().expect("Status");
    assert!(status.runtime_ready(), "{status:?}");
    // No CNI configuration in conf_dir: the network is not ready, with containerd's reason.
    assert!(!status.network_ready(), "{status:?}");
    let network = status.condition("NetworkReady").expect("NetworkReady reported");
    assert_eq!(network.reason, "NetworkPluginNotReady");
    // The verbose map carries containerd's configuration, where the sandbox image can be read.
    let config = status.info.get("config").expect("verbose Status has config");
    assert!(
        config.contains(r#""sandboxImage":"registry.k8s.io/pause:3.8""#),
        "{config}"
    );
    client.is_running().expect("running");
}

#[test]
#[ignore = "needs root and containerd: run with --ignored, as scripts/test.sh does as root"]
fn an_imported_image_is_listed_and_found() {
    let containerd = Containerd::start();
    let client = containerd.client();
    let name = "registry.k8s.io/kubeadm-rs-cri-test:1.0";

    assert!(
        client.list_images().expect("ListImages").is_empty(),
        "a fresh root has no images"
    );
    assert!(!client.image_exists(name).expect("ImageStatus"));

    let files: &[(&str, &[u8])] = &[("hello.txt", b"hello from a kubeadm-rs CRI test\n")];
    let (archive, config_digest) = oci_archive(name, files, "/hello.txt");
    assert_eq!(
        oci_archive(name, files, "/hello.txt").0,
        archive,
        "the archive is deterministic"
    );
    let path = containerd.dir.path().join("image.oci.tar");
    fs::write(&path, &archive).expect("write archive");
    containerd.import(&path);

    assert!(client.image_exists(name).expect("ImageStatus"));
    assert!(
        !client
            .image_exists("registry.k8s.io/kubeadm-rs-cri-test:2.0")
            .expect("ImageStatus")
    );
    let image = client.image_status(name).expect("ImageStatus").expect("present");
    assert_eq!(
        image.id, config_digest,
        "the runtime's image id is our config digest"
    );
    assert_eq!(image.repo_tags, vec![name.to_string()]);

    let images = client.list_images().expect("ListImages");
    let listed: BTreeMap<_, _> = images
        .iter()
        .map(|i| (i.id.clone(), i.repo_tags.clone()))
        .collect();
    assert_eq!(
        listed.get(&config_digest),
        Some(&vec![name.to_string()]),
        "{images:?}"
    );
    // The image id also resolves, as `crictl inspecti <id>` does.
    assert!(client.image_exists(&config_digest).expect("ImageStatus by id"));
}

#[test]
#[ignore = "needs root and containerd: run with --ignored, as scripts/test.sh does as root"]
fn a_pull_that_cannot_succeed_fails_with_the_runtime_message() {
    let containerd = Containerd::start();
    let client = containerd.client();
    // A loopback port nobody listens on: the runtime's resolve is refused at once, no traffic leaves.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let image = format!("127.0.0.1:{port}/nothing:1");

    let started = Instant::now();
    let err = client.pull_image(&image).expect_err("nothing to pull from");
    let elapsed = started.elapsed();
    eprintln!("5 pull attempts failed in {elapsed:?}: {err}");
    match &err {
        CriError::Rpc { call, message, .. } => {
            assert_eq!(*call, CriCall::PullImage(image.clone()));
            assert!(message.contains("connection refused"), "{message}");
        }
        other => panic!("expected the runtime's error, got {other:?}"),
    }
    assert!(
        err.to_string()
            .contains(&format!("PullImage {image:?} on unix://")),
        "{err}"
    );
    assert!(!client.image_exists(&image).expect("ImageStatus"));
}

#[test]
#[ignore = "needs root and containerd: run with --ignored, as scripts/test.sh does as root"]
fn sandboxes_of_an_empty_runtime() {
    let containerd = Containerd::start();
    let client = containerd.client();
    assert_eq!(client.list_pod_sandboxes().expect("ListPodSandbox"), vec![]);
    client.remove_pod_sandboxes(&[]).expect("nothing to remove");

    // An unknown sandbox: the stop fails on every attempt, so the remove is never tried.
    let err = client
        .stop_and_remove_pod_sandbox("0123456789abcdef")
        .expect_err("unknown sandbox");
    match &err {
        SandboxRemovalError::Stop { id, source } => {
            assert_eq!(id, "0123456789abcdef");
            assert!(
                matches!(&**source, CriError::Rpc { code, .. } if code == "NotFound"),
                "{err}"
            );
        }
        other => panic!("expected a stop failure, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("failed to stop running pod 0123456789abcdef: StopPodSandbox"),
        "{err}"
    );
}

/// What `kubeadm reset` does: list every sandbox, then stop and remove each.
#[test]
#[ignore = "needs root and containerd: run with --ignored, as scripts/test.sh does as root"]
fn reset_removes_a_running_sandbox() {
    let containerd = Containerd::start();
    assert_eq!(
        std::env::consts::ARCH,
        "x86_64",
        "the sandbox test's pause program is x86-64 machine code"
    );
    let client = containerd.client();
    let pause = pause_elf();
    let (archive, _) = oci_archive("registry.k8s.io/pause:3.8", &[("pause", &pause)], "/pause");
    let path = containerd.dir.path().join("pause.oci.tar");
    fs::write(&path, &archive).expect("write archive");
    containerd.import(&path);

    let id = run_host_network_sandbox(
        &containerd.socket,
        &containerd.cgroup_parent(),
        "etcd-node",
        "kube-system",
    );
    containerd.started_sandboxes.borrow_mut().push(id.clone());
    let listed = client.list_pod_sandboxes().expect("ListPodSandbox");
    assert_eq!(listed.len(), 1, "{listed:?}");
    let sandbox = &listed[0];
    assert_eq!(
        (
            sandbox.id.as_str(),
            sandbox.name.as_str(),
            sandbox.namespace.as_str(),
            sandbox.state
        ),
        (id.as_str(), "etcd-node", "kube-system", SandboxState::Ready)
    );
    assert_eq!(
        sandbox
            .labels
            .get("io.kubernetes.pod.namespace")
            .map(String::as_str),
        Some("kube-system")
    );

    let ids: Vec<String> = listed.iter().map(|s| s.id.clone()).collect();
    client.remove_pod_sandboxes(&ids).expect("stop and remove");
    assert_eq!(client.list_pod_sandboxes().expect("ListPodSandbox"), vec![]);
    containerd.started_sandboxes.borrow_mut().clear();
}
