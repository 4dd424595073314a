#!/usr/bin/env python3
"""Checks the one-way dependency graph between the workspace crates (see ARCHITECTURE.md)."""
import json
import subprocess
import sys

ALLOWED = {
    "kubeadm-yaml": set(),
    "kubeadm-api": {"kubeadm-yaml"},
    "kubeadm-core": {"kubeadm-api", "kubeadm-yaml"},
    "kubeadm-effects": {"kubeadm-api"},
    "kubeadm-workflow": set(),
    "kubeadm-phases": {"kubeadm-yaml", "kubeadm-api", "kubeadm-core", "kubeadm-effects", "kubeadm-workflow"},
    "kubeadm-host": {"kubeadm-api", "kubeadm-effects"},
    "kubeadm": {"kubeadm-yaml", "kubeadm-api", "kubeadm-core", "kubeadm-effects", "kubeadm-host", "kubeadm-workflow", "kubeadm-phases"},
    "kubeadm-testkit": {"kubeadm-yaml", "kubeadm-api", "kubeadm-effects", "kubeadm-workflow"},
}
# Heavy or effectful crates that only kubeadm-host (and the binary) may use.
HOST_ONLY = {"kube", "etcd-client", "tonic", "tokio", "k8s-cri", "hyper", "hyper-util", "rustls"}
PURE = {"kubeadm-yaml", "kubeadm-api", "kubeadm-core", "kubeadm-effects", "kubeadm-workflow", "kubeadm-phases"}

meta = json.loads(subprocess.check_output(
    ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"]))
members = {p["name"]: p for p in meta["packages"]}
bad = []
for name, pkg in members.items():
    if name not in ALLOWED:
        bad.append(f"{name}: not a known workspace crate; add it to .ci/depgraph.py with its allowed edges")
        continue
    for dep in pkg["dependencies"]:
        d = dep["name"]
        if d in ALLOWED and d != name:
            is_dev = dep.get("kind") == "dev"
            if d == "kubeadm-testkit" and is_dev:
                continue
            # Tests of the real effects may build their inputs with the pure crates.
            # The preflight tests compare the real host probe with upstream.
            if is_dev and name == "kubeadm-phases" and d == "kubeadm-host":
                continue
            if is_dev and name == "kubeadm-host" and d in {"kubeadm-yaml", "kubeadm-api", "kubeadm-core"}:
                continue
            if d not in ALLOWED[name]:
                bad.append(f"{name} -> {d}: not allowed")
        if name in PURE and d in HOST_ONLY and dep.get("kind") != "dev":
            bad.append(f"{name} -> {d}: heavy/effectful dependency outside kubeadm-host")
for line in bad:
    print("depgraph:", line, file=sys.stderr)
sys.exit(1 if bad else 0)
