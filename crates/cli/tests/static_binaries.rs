//! The static executables (`scripts/static-build.sh`, Rust's musl targets): each has no program
//! interpreter (so no shared C library to need), is of its architecture, and runs `version` and
//! `init --dry-run` where a binary linked against this machine's glibc does not start:
//!
//! - x86_64: inside a Debian 11 root (glibc 2.31, `scripts/old-glibc-root.sh`), through chroot,
//!   where the dynamically linked test build (`CARGO_BIN_EXE_kubeadm`) fails for want of a newer
//!   glibc, which shows the root is really older;
//! - aarch64: under `qemu-aarch64-static` (Debian's qemu-user-static), in the same root.
//!
//! The test command builds them first and names them: `KUBEADM_STATIC_X86_64`,
//! `KUBEADM_STATIC_AARCH64`, `KUBEADM_OLD_GLIBC_ROOT`. Without those (a plain `cargo test`) it says
//! so and passes, but under CI (`CI` set) their absence fails it.
// Tests run programs on real files.
#![allow(clippy::disallowed_methods)]

use kubeadm_testkit::elf::{EM_AARCH64, EM_X86_64, elf_facts};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The test's inputs, or None (said on stderr) when a plain `cargo test` has none.
fn inputs() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let get = |name: &str| std::env::var_os(name).map(PathBuf::from);
    match (
        get("KUBEADM_STATIC_X86_64"),
        get("KUBEADM_STATIC_AARCH64"),
        get("KUBEADM_OLD_GLIBC_ROOT"),
    ) {
        (Some(x), Some(a), Some(r)) => Some((x, a, r)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the static binaries' test: set KUBEADM_STATIC_X86_64, KUBEADM_STATIC_AARCH64 and KUBEADM_OLD_GLIBC_ROOT (scripts/test.sh does)"
            );
            eprintln!(
                "static binaries not checked: KUBEADM_STATIC_X86_64, KUBEADM_STATIC_AARCH64 or KUBEADM_OLD_GLIBC_ROOT is unset (scripts/test.sh sets them)"
            );
            None
        }
    }
}

/// Copies `bin` into `root`'s /tmp under `name`; its path inside the root.
fn place(root: &Path, bin: &Path, name: &str) -> String {
    let dir = root.join("tmp/kubeadm-static-test");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(bin, dir.join(name)).unwrap_or_else(|e| panic!("copy {}: {e}", bin.display()));
    format!("/tmp/kubeadm-static-test/{name}")
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `version` as the host's build prints it, the platform made `platform`.
fn expected_version(platform: &str) -> String {
    let out = run(Command::new(env!("CARGO_BIN_EXE_kubeadm")).arg("version"));
    assert!(out.status.success());
    text(&out.stdout).replace("Platform:\"linux/amd64\"", &format!("Platform:\"{platform}\""))
}

/// What `init --dry-run` must have done, from its standard output: the certificates, manifests and
/// join command of a whole dry run.
fn assert_dry_run_whole(what: &str, out: &Output) {
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: init --dry-run failed ({:?}):\n{stdout}{}",
        out.status,
        text(&out.stderr)
    );
    for needle in [
        "[certs] Generating \"ca\" certificate and key",
        "[dryrun] Would write file \"/etc/kubernetes/manifests/kube-apiserver.yaml\"",
        "Your Kubernetes control-plane has initialized successfully!",
        "kubeadm join ",
    ] {
        assert!(
            stdout.contains(needle),
            "{what}: init --dry-run printed no {needle:?}:\n{stdout}"
        );
    }
}

#[test]
fn the_static_binaries_run_where_a_dynamic_one_does_not() {
    let Some((x86, arm, root)) = inputs() else { return };
    assert!(kubeadm_testkit::rootfs::is_root(), "chroot needs root");
    assert_eq!(
        elf_facts(&x86),
        (EM_X86_64, false),
        "{}: x86_64 and static",
        x86.display()
    );
    assert_eq!(
        elf_facts(&arm),
        (EM_AARCH64, false),
        "{}: aarch64 and static",
        arm.display()
    );
    let host = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    assert!(
        elf_facts(&host).1,
        "the test build is dynamically linked (else this test shows nothing)"
    );

    // The root is older than this machine: the dynamically linked build does not start there.
    let dynamic = place(&root, &host, "kubeadm-dynamic");
    let out = run(Command::new("chroot").arg(&root).arg(&dynamic).arg("version"));
    assert!(
        !out.status.success(),
        "the dynamically linked kubeadm started in the old root"
    );
    assert!(
        text(&out.stderr).contains("GLIBC_"),
        "expected the loader's complaint about glibc, got: {}",
        text(&out.stderr)
    );

    let amd = place(&root, &x86, "kubeadm-amd64");
    let out = run(Command::new("chroot").arg(&root).arg(&amd).arg("version"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), expected_version("linux/amd64"));
    let out = run(Command::new("chroot")
        .args([root.as_os_str(), amd.as_ref()])
        .args(["init", "--dry-run", "--ignore-preflight-errors=all"]));
    assert_dry_run_whole("x86_64 in the old root", &out);

    // aarch64 under user-mode emulation, inside the same root (the emulator is static too).
    let qemu = place(
        &root,
        Path::new("/usr/bin/qemu-aarch64-static"),
        "qemu-aarch64-static",
    );
    let arm64 = place(&root, &arm, "kubeadm-arm64");
    let out = run(Command::new("chroot").arg(&root).args([&qemu, &arm64, "version"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), expected_version("linux/arm64"));
    let out = run(Command::new("chroot").arg(&root).args([
        &qemu,
        &arm64,
        "init",
        "--dry-run",
        "--ignore-preflight-errors=all",
    ]));
    assert_dry_run_whole("aarch64 under qemu in the old root", &out);
    let _ = std::fs::remove_dir_all(root.join("tmp/kubeadm-static-test"));
}
