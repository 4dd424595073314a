//! The CRI client against sockets where no runtime answers: the errors must say that the runtime is not
//! running, name the call and the socket, and come back quickly. Needs no containerd.

use std::io;
use std::os::unix::net::UnixListener;
use std::time::Duration;

use kubeadm_effects::cri::{CriCall, CriError, Runtime};
use kubeadm_host::cri::CriClient;

fn not_running_kind(e: &CriError) -> Option<io::ErrorKind> {
    match e {
        CriError::NotRunning { source, .. } => Some(source.kind()),
        _ => None,
    }
}

#[test]
fn a_missing_socket_means_the_runtime_is_not_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let endpoint = format!("unix://{}/containerd.sock", dir.path().display());
    let client = CriClient::new(&endpoint).expect("valid endpoint");
    let err = client.is_running().expect_err("nothing there");
    assert_eq!(not_running_kind(&err), Some(io::ErrorKind::NotFound), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("container runtime is not running: Status on unix://"),
        "{text}"
    );
    assert!(text.contains("No such file or directory"), "{text}");
}

#[test]
fn a_stale_socket_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stale.sock");
    drop(UnixListener::bind(&path).expect("bind"));
    assert!(path.exists(), "the socket file stays after the listener is gone");
    // A bare path is accepted, as crictl accepts it.
    let client = CriClient::new(path.to_str().expect("utf-8")).expect("valid endpoint");
    let err = client
        .image_exists("registry.k8s.io/pause:3.8")
        .expect_err("refused");
    assert_eq!(
        not_running_kind(&err),
        Some(io::ErrorKind::ConnectionRefused),
        "{err:?}"
    );
    match &err {
        CriError::NotRunning {
            call, path: dialled, ..
        } => {
            assert_eq!(*call, CriCall::ImageStatus("registry.k8s.io/pause:3.8".into()));
            assert_eq!(dialled, &path.display().to_string());
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_listener_that_never_answers_times_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("silent.sock");
    // Bound and listening, so the kernel completes the connection, but nobody ever reads or writes.
    let _listener = UnixListener::bind(&path).expect("bind");
    let client = CriClient::new(&format!("unix://{}", path.display()))
        .expect("valid endpoint")
        .with_timeouts(Duration::from_millis(300), Duration::from_millis(300));
    let err = client.status().expect_err("no answer");
    match &err {
        CriError::Timeout {
            call: CriCall::Version,
            ..
        } => {}
        CriError::NotRunning { source, .. } if source.kind() == io::ErrorKind::TimedOut => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn pulls_against_a_missing_socket_stop_after_the_retries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = CriClient::new(&format!("unix://{}/none.sock", dir.path().display())).expect("valid");
    let err = client
        .pull_image("registry.k8s.io/pause:3.8")
        .expect_err("no runtime");
    assert!(
        matches!(
            &err,
            CriError::NotRunning {
                call: CriCall::PullImage(_),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn calls_work_from_inside_a_tokio_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = CriClient::new(&format!("unix://{}/none.sock", dir.path().display())).expect("valid");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    // A plain `block_on` inside would panic; the client must move to its own thread instead.
    let err = runtime
        .block_on(async { client.list_pod_sandboxes() })
        .expect_err("no runtime");
    assert_eq!(not_running_kind(&err), Some(io::ErrorKind::NotFound), "{err:?}");
}

#[test]
fn non_unix_endpoints_are_refused_up_front() {
    for endpoint in [
        "tcp://127.0.0.1:10000",
        "npipe:////./pipe/containerd-containerd",
        "unix://",
    ] {
        let err = CriClient::new(endpoint).expect_err(endpoint);
        assert!(
            matches!(err, CriError::InvalidEndpoint { .. }),
            "{endpoint}: {err:?}"
        );
    }
}
