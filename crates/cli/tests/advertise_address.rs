//! The address `kubeadm init` advertises when none (or an unspecified one) is given, on real network
//! layouts: for each layout a network namespace gets its interfaces, addresses and routes (only
//! documentation ranges), then upstream v1.25.16 and ours run `init --dry-run` in it, each chrooted
//! (`--rootfs`) into an empty root where the namespace's `/proc` and `/sys` are bound, and must give
//! the same exit code, the same printed output (API server, etcd and kubelet files, certificate lines,
//! join command), the same warning or error about the address, and certificates with the same SANs
//! (upstream's dry run leaves its certificates in its temporary folder; ours writes none, so ours
//! come from `init phase certs all` with the same flags).
// clippy.toml keeps the binary's handlers off the host; tests run binaries on real files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kubeadm_testkit::dryrun::dry_run_whole;
use kubeadm_testkit::oracle::{Run, diff, expected_code, stderr_lines, upstream_kubeadm};
use kubeadm_testkit::rootfs::is_root;

/// A network layout: `ip` commands (run with `ip -n <namespace>`; each `veth NAME` line makes a veth
/// pair NAME/NAMEp, both up) and the advertise addresses to try (`""`: the flag not given).
struct Layout {
    name: &'static str,
    setup: &'static [&'static str],
    requests: &'static [&'static str],
    /// Whether the root gets the namespace's `/proc`: without it, `/proc/net/route` does not exist
    /// and upstream scans every interface instead of following the default routes.
    route_table: bool,
}

const UNSPECIFIED: &[&str] = &["", "0.0.0.0", "::"];

const LAYOUTS: &[Layout] = &[
    Layout {
        name: "IPv4 default route, global IPv6 address without an IPv6 default route",
        setup: &[
            "veth e0",
            "addr add 192.0.2.10/24 dev e0",
            "-6 addr add 2001:db8::10/64 dev e0 nodad",
            "route add default via 192.0.2.1",
        ],
        requests: &["", "0.0.0.0", "::", "2001:db8::10", "203.0.113.250"],
        route_table: true,
    },
    Layout {
        name: "IPv4 and IPv6 default routes",
        setup: &[
            "veth e0",
            "addr add 192.0.2.10/24 dev e0",
            "-6 addr add 2001:db8::10/64 dev e0 nodad",
            "route add default via 192.0.2.1",
            "-6 route add default via 2001:db8::1 dev e0",
        ],
        requests: &["", "0.0.0.0", "::", "192.0.2.10", "2001:db8:ffff::9"],
        route_table: true,
    },
    Layout {
        name: "IPv6 default route only",
        setup: &[
            "veth e0",
            "addr add 192.0.2.10/24 dev e0",
            "-6 addr add 2001:db8::10/64 dev e0 nodad",
            "-6 route add default via 2001:db8::1 dev e0",
        ],
        requests: UNSPECIFIED,
        route_table: true,
    },
    Layout {
        name: "no default route, several interfaces",
        setup: &[
            "veth e0",
            "veth e1",
            "addr add 192.0.2.10/24 dev e0",
            "addr add 203.0.113.10/24 dev e1",
            "-6 addr add 2001:db8:1::10/64 dev e1 nodad",
        ],
        requests: &["", "0.0.0.0", "::", "203.0.113.10"],
        route_table: true,
    },
    Layout {
        name: "IPv4 default route, IPv6 default route over link-local addresses only",
        setup: &[
            "veth e0",
            "veth e1",
            "addr add 192.0.2.10/24 dev e0",
            "route add default via 192.0.2.1",
            "-6 addr add fe80::10/64 dev e1 nodad",
            "-6 route add default via fe80::1 dev e1",
        ],
        requests: UNSPECIFIED,
        route_table: true,
    },
    Layout {
        name: "an interface down",
        setup: &[
            "veth e0",
            "veth e1",
            "addr add 192.0.2.10/24 dev e0",
            "addr add 203.0.113.10/24 dev e1",
            "route add default via 203.0.113.1",
            "link set e0 down",
        ],
        requests: UNSPECIFIED,
        route_table: true,
    },
    Layout {
        name: "two interfaces, the default routes on the second",
        setup: &[
            "veth e0",
            "veth e1",
            "addr add 192.0.2.10/24 dev e0",
            "-6 addr add 2001:db8::10/64 dev e0 nodad",
            "addr add 203.0.113.10/24 dev e1",
            "-6 addr add 2001:db8:1::10/64 dev e1 nodad",
            "route add default via 203.0.113.1",
            "-6 route add default via 2001:db8:1::1 dev e1",
        ],
        requests: UNSPECIFIED,
        route_table: true,
    },
    Layout {
        name: "loopback only",
        setup: &[],
        requests: &["", "::", "127.0.0.1"],
        route_table: true,
    },
    Layout {
        name: "default routes over link-local addresses, the host's addresses on lo (RFC 5549)",
        setup: &[
            "veth e0",
            "addr add 169.254.1.10/16 dev e0",
            "route add default via 169.254.0.1 dev e0",
            "-6 route add default via fe80::1 dev e0",
            "addr add 203.0.113.7/32 dev lo",
            "-6 addr add 2001:db8:9::7/128 dev lo nodad",
        ],
        requests: &["", "::", "127.0.0.1", "::1"],
        route_table: true,
    },
    Layout {
        name: "default routes, no global address anywhere",
        setup: &[
            "veth e0",
            "addr add 169.254.1.10/16 dev e0",
            "route add default via 169.254.0.1 dev e0",
        ],
        requests: &["", "::", "127.0.0.1", "192.0.2.99"],
        route_table: true,
    },
    Layout {
        name: "no route table: every interface scanned",
        setup: &[
            "veth e0",
            "veth e1",
            "veth e2",
            "addr add 192.0.2.10/24 dev e0",
            "link set e0 down",
            "-6 addr add 2001:db8::10/64 dev e1 nodad",
            "addr add 203.0.113.10/24 dev e2",
            "addr add 198.18.0.7/32 dev lo",
        ],
        requests: UNSPECIFIED,
        route_table: false,
    },
];

/// A network namespace, deleted when dropped.
struct Netns(String);

impl Netns {
    fn new(index: usize) -> Netns {
        let name = format!("kubeadm-rs-addr-{}-{index}", std::process::id());
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        ns.ip("link set lo up");
        ns
    }

    /// `ip -n <ns> <args>`; `veth NAME` makes the pair NAME/NAMEp, both up.
    fn ip(&self, args: &str) {
        if let Some(name) = args.strip_prefix("veth ") {
            let peer = format!("{name}p");
            self.ip(&format!("link add {name} type veth peer name {peer}"));
            self.ip(&format!("link set {peer} up"));
            self.ip(&format!("link set {name} up"));
            return;
        }
        let mut all = vec!["-n", &self.0];
        all.extend(args.split_whitespace());
        ip(&all);
    }

    /// Runs `kubeadm --rootfs <root> <args>` in the namespace, the namespace's `/sys` (and `/proc`
    /// when `proc`) bound into the root, in a mount namespace of its own (`ip netns exec` makes one).
    fn kubeadm(&self, kubeadm: &Path, root: &Path, proc: bool, args: &[&str]) -> Run {
        for d in ["proc", "sys"] {
            std::fs::create_dir_all(root.join(d)).expect("mount point");
        }
        let script = if proc {
            "mount --bind /proc \"$0/proc\" && mount --rbind /sys \"$0/sys\" && exec \"$@\""
        } else {
            "mount --rbind /sys \"$0/sys\" && exec \"$@\""
        };
        let out = Command::new("ip")
            .args(["netns", "exec", &self.0, "sh", "-c", script])
            .arg(root)
            .arg(kubeadm)
            .arg("--rootfs")
            .arg(root)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("HOME", root)
            .stdin(Stdio::null())
            .output()
            .expect("run ip netns exec");
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What stderr says about the address: the warning when there is no default route, and the error a
/// failed run ends with.
fn address_lines(run: &Run) -> Vec<String> {
    let lines = stderr_lines(&run.stderr);
    let mut out: Vec<String> = lines
        .iter()
        .filter(|l| l.contains("bind address") || l.contains("advertise"))
        .cloned()
        .collect();
    if run.code != 0 {
        out.extend(lines.last().cloned());
    }
    out
}

/// The IP SANs of the apiserver, etcd server and etcd peer certificates under `dir`, as openssl
/// prints them.
fn sans(dir: &Path) -> Vec<String> {
    ["apiserver.crt", "etcd/server.crt", "etcd/peer.crt"]
        .iter()
        .map(|c| {
            let out = Command::new("openssl")
                .args(["x509", "-noout", "-ext", "subjectAltName", "-in"])
                .arg(dir.join(c))
                .output()
                .expect("run openssl");
            assert!(out.status.success(), "{c} in {}", dir.display());
            let text = String::from_utf8_lossy(&out.stdout);
            let ips: Vec<String> = text
                .split([',', '\n'])
                .filter_map(|s| s.trim().strip_prefix("IP Address:"))
                .map(|ip| {
                    ip.parse::<std::net::IpAddr>()
                        .map_or_else(|_| ip.to_string(), |ip| ip.to_string())
                })
                .collect();
            format!("{c}: {}", ips.join(" "))
        })
        .collect()
}

/// The folder upstream's dry run left its files in, under `root`.
fn upstream_dry_run_dir(root: &Path) -> PathBuf {
    std::fs::read_dir(root.join("etc/kubernetes/tmp"))
        .expect("upstream's dry-run folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("kubeadm-init-dryrun"))
        .expect("upstream's dry-run folder")
}

/// The `--advertise-address=` of the API server manifest a dry run printed.
fn advertised(stdout: &str) -> Option<&str> {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("- --advertise-address="))
}

/// One comparison: `args` after `init --dry-run` and `init phase certs all`, `dry_run_only` after the
/// former alone; `config` written to `/config.yaml` in the roots.
fn compare(
    ns: &Netns,
    layout: &Layout,
    what: &str,
    (args, dry_run_only): (&[&str], &[&str]),
    config: Option<&str>,
) -> Option<String> {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_kubeadm"));
    let roots: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().expect("root")).collect();
    if let Some(config) = config {
        for r in &roots {
            std::fs::write(r.path().join("config.yaml"), config).expect("config");
        }
    }
    let mut dry_run = vec!["init", "--dry-run", "--ignore-preflight-errors=all"];
    dry_run.extend_from_slice(args);
    dry_run.extend_from_slice(dry_run_only);
    let mut certs = vec!["init", "phase", "certs", "all"];
    certs.extend_from_slice(args);
    let proc = layout.route_table;
    let (theirs, mine) = std::thread::scope(|s| {
        let theirs = s.spawn(|| ns.kubeadm(&upstream_kubeadm(), roots[0].path(), proc, &dry_run));
        let mine = ns.kubeadm(&ours, roots[1].path(), proc, &dry_run);
        (theirs.join().expect("upstream run"), mine)
    });
    let case = format!("{} / {what}", layout.name);
    let mut problems = Vec::new();
    if mine.code != expected_code(&theirs) {
        problems.push(format!(
            "exit {} (upstream) vs {} (ours)\nupstream stderr:\n{}\nour stderr:\n{}",
            theirs.code, mine.code, theirs.stderr, mine.stderr
        ));
    }
    let (want, got) = (address_lines(&theirs), address_lines(&mine));
    if want != got {
        problems.push(format!(
            "stderr about the address: {want:?} (upstream) vs {got:?} (ours)"
        ));
    }
    let (want, got) = (dry_run_whole(&theirs.stdout), dry_run_whole(&mine.stdout));
    if want != got {
        problems.push(format!("output differs:\n{}", diff(&want, &got)));
    }
    if theirs.code == 0 {
        assert!(want.lines().count() > 300, "{case}: too little compared:\n{want}");
        let address = advertised(&theirs.stdout).expect("upstream's --advertise-address");
        let want = sans(&upstream_dry_run_dir(roots[0].path()));
        assert!(
            want[0].split(' ').any(|ip| ip == address) || address == "0.0.0.0",
            "{case}: upstream's apiserver certificate lacks {address}: {want:?}"
        );
        let mine_certs = ns.kubeadm(&ours, roots[2].path(), proc, &certs);
        if mine_certs.code != 0 {
            problems.push(format!("init phase certs all failed:\n{}", mine_certs.stderr));
        } else {
            let got = sans(&roots[2].path().join("etc/kubernetes/pki"));
            if want != got {
                problems.push(format!("SANs: {want:?} (upstream) vs {got:?} (ours)"));
            }
        }
    }
    (!problems.is_empty()).then(|| format!("{case}:\n{}", problems.join("\n")))
}

/// Every comparison of one layout, in a namespace of its own: how many, and the failures.
fn run_layout(i: usize, layout: &Layout) -> (usize, Vec<String>) {
    let ns = Netns::new(i);
    for cmd in layout.setup {
        ns.ip(cmd);
    }
    let mut failures = Vec::new();
    for request in layout.requests {
        let flag = format!("--apiserver-advertise-address={request}");
        let mut args = vec!["--kubernetes-version=v1.25.16"];
        if !request.is_empty() {
            args.push(&flag);
        }
        // ECDSA keys: RSA key generation would take most of the test's time.
        let gates: &[&str] = &["--feature-gates=PublicKeysECDSA=true"];
        failures.extend(compare(
            &ns,
            layout,
            &format!("{request:?}"),
            (&args, gates),
            None,
        ));
    }
    let mut compared = layout.requests.len();
    // The configuration file's `localAPIEndpoint.advertiseAddress` goes the same way as the flag.
    if i == 1 {
        let config = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: \"::\"\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.16\n";
        compared += 1;
        failures.extend(compare(
            &ns,
            layout,
            "advertiseAddress: \"::\" in --config",
            (&["--config=/config.yaml"], &[]),
            Some(config),
        ));
    }
    (compared, failures)
}

#[test]
#[ignore = "needs root (network namespaces, --rootfs): run with --ignored, as scripts/test.sh does as root"]
fn init_advertises_the_address_upstream_chooses() {
    assert!(
        is_root(),
        "this test makes network namespaces and chroots: run it as root"
    );
    // Three layouts at a time: a run waits on more than the processor.
    const WORKERS: usize = 3;
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                s.spawn(move || {
                    let mut compared = 0;
                    let mut failures = Vec::new();
                    for (i, layout) in LAYOUTS.iter().enumerate().skip(w).step_by(WORKERS) {
                        let (n, f) = run_layout(i, layout);
                        compared += n;
                        failures.extend(f);
                    }
                    (compared, failures)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).collect()
    });
    let compared: usize = results.iter().map(|(n, _)| n).sum();
    let failures: Vec<String> = results.into_iter().flat_map(|(_, f)| f).collect();
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ from upstream:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
