#!/usr/bin/env python3
"""The CIS Kubernetes Benchmark's file checks (v1.8: 1.1 control-plane node configuration files,
4.1 worker node configuration files) on the trees the `ha` scenario's joins left:
`cis_modes.py DIR...`, each DIR holding nodeN/tree files of "mode user:group path" lines
(nodes 2 and 3 joined as control planes, node 4 as a worker).

Each tree must fail exactly the checks upstream v1.25.16 fails by design (DEVIATIONS, with the
reason); run on upstream's trees too, so that the list cannot go stale. Prints every failure."""
import sys
from pathlib import Path

# (id, which nodes, a path or a (folder, suffix) pair, the most permissive mode, the owner or None)
CONTROL, ALL = "control-plane", "all"
CHECKS = [
    ("1.1.1", CONTROL, "/etc/kubernetes/manifests/kube-apiserver.yaml", 0o600, "root:root"),
    ("1.1.3", CONTROL, "/etc/kubernetes/manifests/kube-controller-manager.yaml", 0o600, "root:root"),
    ("1.1.5", CONTROL, "/etc/kubernetes/manifests/kube-scheduler.yaml", 0o600, "root:root"),
    ("1.1.7", CONTROL, "/etc/kubernetes/manifests/etcd.yaml", 0o600, "root:root"),
    ("1.1.11", CONTROL, "/var/lib/etcd", 0o700, None),
    ("1.1.12", CONTROL, "/var/lib/etcd", 0o7777, "etcd:etcd"),
    ("1.1.13", CONTROL, "/etc/kubernetes/admin.conf", 0o600, "root:root"),
    ("1.1.15", CONTROL, "/etc/kubernetes/scheduler.conf", 0o600, "root:root"),
    ("1.1.17", CONTROL, "/etc/kubernetes/controller-manager.conf", 0o600, "root:root"),
    ("1.1.19", CONTROL, ("/etc/kubernetes/pki", ""), 0o7777, "root:root"),
    ("1.1.20", CONTROL, ("/etc/kubernetes/pki", ".crt"), 0o600, None),
    ("1.1.21", CONTROL, ("/etc/kubernetes/pki", ".key"), 0o600, None),
    ("4.1.5", ALL, "/etc/kubernetes/kubelet.conf", 0o600, "root:root"),
    ("4.1.7", ALL, "/etc/kubernetes/pki/ca.crt", 0o600, "root:root"),
    ("4.1.9", ALL, "/var/lib/kubelet/config.yaml", 0o600, "root:root"),
]
DEVIATIONS = {
    "1.1.12": "etcd's data folder stays root's: kubeadm runs etcd as root in its static pod",
    "1.1.20": "certificates are written 0644 (public material that clients and tools read)",
    "4.1.7": "the cluster CA certificate is written 0644, as every certificate",
    "4.1.9": "the kubelet's config.yaml is written 0644",
}
NODES = {"node2": CONTROL, "node3": CONTROL, "node4": "worker"}


def failures(root):
    failed, covered = {}, set()
    for node, role in NODES.items():
        entries = {}
        for line in (root / node / "tree").read_text().splitlines():
            mode, owner, path = line.split(" ", 2)
            entries[path] = (int(mode, 8), owner)
        for cid, which, target, most, owner in CHECKS:
            if which == CONTROL and role != CONTROL:
                continue
            if isinstance(target, tuple):
                folder, suffix = target
                paths = [p for p in entries if (p == folder or p.startswith(folder + "/")) and p.endswith(suffix)]
            else:
                paths = [target] if target in entries else []
            if not paths:
                failed.setdefault(cid, []).append(f"{node}: nothing to check ({target})")
                continue
            covered.add(cid)
            for p in paths:
                mode, own = entries[p]
                if mode & ~most or (owner and own != owner):
                    failed.setdefault(cid, []).append(f"{node}: {p} is {mode:o} {own}")
    return failed, covered


ok = True
for arg in sys.argv[1:]:
    failed, covered = failures(Path(arg))
    for cid, why in sorted(failed.items()):
        state = "fails, as upstream" if cid in DEVIATIONS else "FAILS"
        print(f"{arg}: CIS {cid} {state}: {'; '.join(why[:3])}{' …' if len(why) > 3 else ''}")
    unexpected = set(failed) - set(DEVIATIONS)
    stale = set(DEVIATIONS) - set(failed)
    for cid in sorted(stale):
        print(f"{arg}: CIS {cid} passes: remove it from DEVIATIONS ({DEVIATIONS[cid]})")
    print(f"{arg}: {len(covered)} checks, {len(covered) - len(failed)} passed, "
          f"{len(set(failed) & set(DEVIATIONS))} failed as upstream's by design")
    ok = ok and not unexpected and not stale
sys.exit(0 if ok else 1)
