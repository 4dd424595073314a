//! The Debian package: `scripts/package.sh` builds it (from the binaries `cargo test` built, see
//! the script), `dpkg --root` installs it into a throwaway root this test makes (never the
//! machine's own), every file is checked with its mode and content, the installed binary runs, and
//! `dpkg --purge` leaves nothing of it behind; lintian finds no error in it; its version is
//! `<Kubernetes release>+rs.<kubeadm-rs version>-1`, above upstream's packages; its kubeadm-rs(7)
//! page renders with `man -l`. The arm64 package of the static aarch64 executable is built and
//! checked too, when the test command built that executable. dpkg needs root; cargo-deb and lintian
//! must be installed (`.ci/run` installs them).
// Tests run programs on real files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubeadm_testkit::elf::{EM_AARCH64, EM_X86_64, elf_facts};
use kubeadm_testkit::oracle::{run, upstream_kubeadm};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs a command; panics with its output unless it succeeds; its standard output.
fn must(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every path under `root` but the dpkg database, relative, with its mode (type bits included).
fn walk(root: &Path) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for e in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).expect("under root").display().to_string();
            if rel == "var" || rel.starts_with("var/") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).expect("meta");
            out.insert(rel, meta.permissions().mode());
            if meta.is_dir() {
                pending.push(p);
            }
        }
    }
    out
}

const DIR: u32 = 0o040755;
const EXECUTABLE: u32 = 0o100755;
const FILE: u32 = 0o100644;

/// A field's value in `dpkg-deb --field` output.
fn field<'a>(info: &'a str, name: &str) -> &'a str {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {name} in {info}"))
}

/// The version scheme (crates/cli/Cargo.toml): `<Kubernetes release>+rs.<kubeadm-rs version>-1`,
/// the release kubeadm's, the kubeadm-rs version the workspace's, sorting above every upstream
/// package of that release (`1.25.16-1.1`, …) and below the next release's.
fn check_version(info: &str) {
    let version = field(info, "Version");
    let workspace = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    let ours = workspace
        .split("[workspace.package]")
        .nth(1)
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("version = ")))
        .expect("workspace version")
        .trim_matches('"');
    let release = kubeadm_api::version::KUBEADM_VERSION.trim_start_matches('v');
    assert_eq!(version, format!("{release}+rs.{ours}-1"), "{info}");
    let dpkg_compare = |a: &str, op: &str, b: &str| {
        Command::new("dpkg")
            .args(["--compare-versions", a, op, b])
            .status()
            .expect("dpkg")
            .success()
    };
    for upstream in [
        format!("{release}-00"),
        format!("{release}-1.1"),
        format!("{release}-9.9"),
    ] {
        assert!(dpkg_compare(version, "gt", &upstream), "{version} <= {upstream}");
    }
    assert!(dpkg_compare(version, "lt", "1.25.17-1.1"));
}

/// `man -l` of a page, plain text with runs of white space as one space; panics when man fails
/// or warns.
fn render_man(page: &Path) -> String {
    let out = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("LANG", "C.UTF-8")
        .env("MANWIDTH", "80")
        .env_remove("MAN_KEEP_FORMATTING")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .expect("man (Debian's man-db; .ci/run installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "man -l {}: {}: {stderr}",
        page.display(),
        out.status
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// lintian on the package: every error fails (warnings are printed only; the overrides and their
/// reasons are crates/cli/packaging/lintian-overrides, an unused one is printed). Not
/// `--show-overrides`: lintian then counts an overridden error in its exit status.
fn check_lintian(deb: &Path) {
    let out = Command::new("lintian")
        .args(["--display-info", "--no-cfg"])
        .arg(deb)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => panic!("lintian cannot run ({e}): apt-get install lintian (.ci/run installs it)"),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("lintian:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("E: ")).collect();
    assert!(errors.is_empty(), "lintian errors:\n{}", errors.join("\n"));
    // Exit 2 is lintian's verdict on errors, any other failure is its own.
    assert!(out.status.success(), "lintian exited {}: {text}", out.status);
}

/// A throwaway root with an empty dpkg database, and `dpkg --root` on it.
struct DpkgRoot {
    root: tempfile::TempDir,
}

impl DpkgRoot {
    fn new() -> DpkgRoot {
        let root = tempfile::tempdir().expect("root");
        let admin = root.path().join("var/lib/dpkg");
        std::fs::create_dir_all(admin.join("info")).expect("admin dir");
        std::fs::create_dir_all(admin.join("updates")).expect("admin dir");
        std::fs::write(admin.join("status"), "").expect("status");
        DpkgRoot { root }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    fn dpkg(&self) -> Command {
        let mut c = Command::new("dpkg");
        // The throwaway root's database has no libc6: install anyway. Log nowhere (dpkg's log is
        // the machine's own otherwise).
        c.arg(format!("--root={}", self.path().display()))
            .args(["--log=/dev/null", "--force-depends"]);
        c
    }

    fn status(&self) -> String {
        std::fs::read_to_string(self.path().join("var/lib/dpkg/status")).expect("status")
    }
}

/// The arm64 package (`scripts/package.sh --target aarch64-unknown-linux-musl`) of the static
/// aarch64 executable the test command builds (`KUBEADM_STATIC_AARCH64`): architecture arm64, no
/// lintian error, the same files as the amd64 package's, an aarch64 executable with no program
/// interpreter that runs under qemu-user (Debian's qemu-user-static) and says what upstream says.
/// Without the static build this test says so and passes; under CI (`CI` set) it fails.
#[test]
fn the_arm64_package_carries_the_static_aarch64_executable() {
    if std::env::var_os("KUBEADM_STATIC_AARCH64").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must build the arm64 package: set KUBEADM_STATIC_AARCH64 (scripts/test.sh does)"
        );
        eprintln!("skipped: KUBEADM_STATIC_AARCH64 is not set (scripts/static-build.sh)");
        return;
    }
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "dpkg --root needs root: run this test as root"
    );
    let printed = must(
        Command::new("bash")
            .arg(workspace().join("scripts/package.sh"))
            .args([
                "--profile",
                "dev",
                "--target",
                "aarch64-unknown-linux-musl",
                "--no-build",
            ]),
    );
    let deb = PathBuf::from(printed.lines().last().expect("a path").trim());
    let info = must(Command::new("dpkg-deb").arg("--field").arg(&deb).args([
        "Package",
        "Version",
        "Architecture",
        "Depends",
    ]));
    assert!(info.contains("Package: kubeadm\n"), "{info}");
    assert_eq!(field(&info, "Architecture"), "arm64", "{info}");
    check_version(&info);
    check_lintian(&deb);

    let root = DpkgRoot::new();
    must(root.dpkg().arg("--force-architecture").arg("--install").arg(&deb));
    let tree = walk(root.path());
    assert_eq!(tree.get("usr/bin/kubeadm"), Some(&EXECUTABLE), "{tree:?}");
    for file in [
        "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "usr/share/bash-completion/completions/kubeadm",
        "usr/share/doc/kubeadm/copyright",
        "usr/share/doc/kubeadm/changelog.Debian.gz",
        "usr/share/man/man1/kubeadm-init.1.gz",
        "usr/share/man/man7/kubeadm-rs.7.gz",
    ] {
        assert_eq!(tree.get(file), Some(&FILE), "{file} in {tree:?}");
    }
    let installed = root.path().join("usr/bin/kubeadm");
    let (machine, interp) = elf_facts(&installed);
    assert_eq!(
        machine, EM_AARCH64,
        "the arm64 package carries another machine's kubeadm"
    );
    assert!(!interp, "the packaged arm64 kubeadm is dynamically linked");

    let dir = tempfile::tempdir().expect("dir");
    let qemu = Path::new("/usr/bin/qemu-aarch64-static");
    assert!(
        qemu.exists(),
        "qemu-aarch64-static is missing (.ci/run installs qemu-user-static)"
    );
    let ours = run(
        qemu,
        &[installed.to_str().expect("utf-8"), "version", "-o", "short"],
        dir.path(),
        &[],
    );
    let upstream = run(&upstream_kubeadm(), &["version", "-o", "short"], dir.path(), &[]);
    assert_eq!(ours, upstream);

    must(root.dpkg().args(["--purge", "kubeadm"]));
    assert_eq!(walk(root.path()).len(), 0, "left after purge");
    assert!(!root.status().contains("Package: kubeadm"));
}

#[test]
fn the_package_installs_runs_and_purges_cleanly() {
    assert!(
        kubeadm_testkit::rootfs::is_root(),
        "dpkg --root needs root: run this test as root"
    );
    assert!(
        Command::new("cargo")
            .args(["deb", "--version"])
            .output()
            .is_ok_and(|o| o.status.success()),
        "cargo-deb is missing: `cargo install --locked cargo-deb` (.ci/run installs it)"
    );
    // The package of the binaries this test run was built with.
    assert!(Path::new(env!("CARGO_BIN_EXE_kubeadm-genman")).exists());
    // The test command builds the static x86_64 executable users install (scripts/static-build.sh)
    // and names it: the package carries it then, as a release package does; a plain `cargo test`
    // packs this machine's own build.
    let static_build = std::env::var_os("KUBEADM_STATIC_X86_64").is_some();
    let target = if static_build {
        "x86_64-unknown-linux-musl"
    } else {
        "host"
    };
    let printed = must(
        Command::new("bash")
            .arg(workspace().join("scripts/package.sh"))
            .args(["--profile", "dev", "--target", target, "--no-build"]),
    );
    let deb = PathBuf::from(printed.lines().last().expect("a path").trim());
    assert!(
        deb.is_file() && deb.extension().is_some_and(|e| e == "deb"),
        "{printed}"
    );

    let info = must(Command::new("dpkg-deb").arg("--field").arg(&deb).args([
        "Package",
        "Version",
        "Maintainer",
        "Depends",
        "Recommends",
    ]));
    assert!(info.contains("Package: kubeadm\n"), "{info}");
    assert!(!info.contains("example"), "a placeholder maintainer: {info}");
    check_version(&info);
    assert!(!info.contains("cri-tools"), "no dependency on cri-tools: {info}");
    assert!(!info.contains("kubelet"), "Debian has no kubelet package: {info}");

    check_lintian(&deb);

    let root = DpkgRoot::new();
    let dpkg = || root.dpkg();
    must(dpkg().arg("--install").arg(&deb));

    // Every file, directory and mode.
    let tree = walk(root.path());
    // The assets package.sh generated, beside the .deb's folder (<target>/[<triple>/]debug/).
    let assets = deb
        .parent()
        .and_then(Path::parent)
        .expect("the .deb's folder")
        .join("kubeadm-deb");
    let pages: Vec<String> = std::fs::read_dir(assets.join("man1"))
        .expect("generated man pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(pages.len() > 100, "{} man pages", pages.len());
    let mut expected: BTreeMap<String, u32> = BTreeMap::new();
    for dir in [
        "usr",
        "usr/bin",
        "usr/lib",
        "usr/lib/systemd",
        "usr/lib/systemd/system",
        "usr/lib/systemd/system/kubelet.service.d",
        "usr/share",
        "usr/share/bash-completion",
        "usr/share/bash-completion/completions",
        "usr/share/doc",
        "usr/share/doc/kubeadm",
        "usr/share/man",
        "usr/share/man/man1",
        "usr/share/man/man7",
        "usr/share/lintian",
        "usr/share/lintian/overrides",
        "usr/share/zsh",
        "usr/share/zsh/vendor-completions",
    ] {
        expected.insert(dir.to_string(), DIR);
    }
    expected.insert("usr/bin/kubeadm".into(), EXECUTABLE);
    for file in [
        "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "usr/share/bash-completion/completions/kubeadm",
        "usr/share/zsh/vendor-completions/_kubeadm",
        "usr/share/doc/kubeadm/copyright",
        "usr/share/doc/kubeadm/changelog.Debian.gz",
        "usr/share/doc/kubeadm/differences.md",
        "usr/share/doc/kubeadm/limitations.md",
        "usr/share/lintian/overrides/kubeadm",
        "usr/share/man/man7/kubeadm-rs.7.gz",
    ] {
        expected.insert(file.into(), FILE);
    }
    for page in &pages {
        assert!(page.ends_with(".1.gz"), "{page}");
        expected.insert(format!("usr/share/man/man1/{page}"), FILE);
    }
    let show = |m: &BTreeMap<String, u32>| -> String {
        m.iter().map(|(p, mode)| format!("{mode:o} {p}\n")).collect()
    };
    assert_eq!(show(&tree), show(&expected), "installed files and modes");

    // Contents: upstream's drop-in, the completions and pages of this binary.
    let at = |p: &str| root.path().join(p);
    let dropin = std::fs::read_to_string(at("usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"))
        .expect("drop-in");
    for line in [
        "[Service]",
        r#"Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf""#,
        r#"Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml""#,
        "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env",
        "EnvironmentFile=-/etc/default/kubelet",
        "ExecStart=",
        "ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS",
    ] {
        assert!(
            dropin.lines().any(|l| l == line),
            "drop-in lacks {line:?}:\n{dropin}"
        );
    }
    // The reset comes before the command line, as systemd needs to replace kubelet.service's.
    let reset = dropin.lines().position(|l| l == "ExecStart=");
    let start = dropin
        .lines()
        .position(|l| l.starts_with("ExecStart=/usr/bin/kubelet"));
    assert!(reset < start);
    let installed = at("usr/bin/kubeadm");
    if static_build {
        // No program interpreter: nothing to load, whatever the host's C library.
        let (machine, interp) = elf_facts(&installed);
        assert_eq!(machine, EM_X86_64);
        assert!(!interp, "the packaged kubeadm is dynamically linked");
    }
    for (shell, file) in [
        ("bash", "usr/share/bash-completion/completions/kubeadm"),
        ("zsh", "usr/share/zsh/vendor-completions/_kubeadm"),
    ] {
        let script = std::fs::read_to_string(at(file)).expect("completion");
        assert_eq!(
            script,
            must(Command::new(&installed).args(["completion", shell])),
            "{file}"
        );
    }
    let page = must(
        Command::new("gzip")
            .arg("-dc")
            .arg(at("usr/share/man/man1/kubeadm-init-phase-certs-apiserver.1.gz")),
    );
    assert!(
        page.contains(".SH NAME\nkubeadm\\-init\\-phase\\-certs\\-apiserver \\- "),
        "{page}"
    );

    // The copyright file (DEP-5) credits the Kubernetes Authors for the texts that come from them,
    // under Apache-2.0 (whose text Debian keeps in common-licenses: lintian refuses a copy).
    let copyright = std::fs::read_to_string(at("usr/share/doc/kubeadm/copyright")).expect("copyright");
    for needle in [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n",
        "Files: *\n",
        "The Kubernetes Authors",
        "Files: crates/cli/packaging/10-kubeadm.conf\n",
        "License: Apache-2.0\n",
        "/usr/share/common-licenses/Apache-2.0",
    ] {
        assert!(
            copyright.contains(needle),
            "copyright lacks {needle:?}:\n{copyright}"
        );
    }
    // The Debian changelog's latest entry is this version's.
    let changelog = must(
        Command::new("gzip")
            .arg("-dc")
            .arg(at("usr/share/doc/kubeadm/changelog.Debian.gz")),
    );
    let version = field(&info, "Version");
    assert!(
        changelog.starts_with(&format!("kubeadm ({version}) ")),
        "the changelog's first entry is not {version}:\n{changelog}"
    );
    // kubeadm-rs(7) renders, and says how to tell this kubeadm apart and what it reads.
    let page = render_man(&at("usr/share/man/man7/kubeadm-rs.7.gz"));
    for needle in [
        "NAME kubeadm-rs - ",
        "TELLING IT APART",
        "KUBEADM_TLS_BOOTSTRAP_TIMEOUT",
        "KUBEADM_UPGRADE_MANIFESTS_TIMEOUT",
        "EXIT STATUS",
        "differences.md",
    ] {
        assert!(page.contains(needle), "kubeadm-rs(7) lacks {needle:?}:\n{page}");
    }

    // The installed binary runs, and says what upstream v1.25.16 says.
    let dir = tempfile::tempdir().expect("dir");
    let ours = run(&installed, &["version", "-o", "short"], dir.path(), &[]);
    let upstream = run(&upstream_kubeadm(), &["version", "-o", "short"], dir.path(), &[]);
    assert_eq!(ours, upstream);
    assert_eq!(ours.stdout, "v1.25.16\n");
    // ... but its `-v=1` log names kubeadm-rs and the package's version.
    let verbose = run(&installed, &["version", "-v=1", "-o", "short"], dir.path(), &[]);
    let upstream_version = version.strip_suffix("-1").expect("revision 1");
    assert!(
        verbose
            .stderr
            .contains(&format!("] [version] kubeadm-rs {upstream_version}: ")),
        "{}",
        verbose.stderr
    );

    // Purged, nothing of it is left.
    must(dpkg().args(["--purge", "kubeadm"]));
    assert_eq!(show(&walk(root.path())), "", "left after purge");
    let status = root.status();
    assert!(!status.contains("Package: kubeadm"), "{status}");
}
