#!/usr/bin/env python3
"""The harness of scripts/bench.sh: upstream kubeadm and ours on the same work, alternately, pair by pair.

    bench.py offline --upstream U --ours O [--runs N] [--items a,b,...]
    bench.py summary FILE...        (the testbed's timing lines, see testbed/scenarios/bench.sh)

Each run of an item runs both binaries back to back, the order alternating from run to run, so that a
slow moment of a shared machine falls on both. What is reported per item: each side's median wall time
with its spread (the 25th and 75th percentiles), the median of the per-pair ratios ours/upstream and
their range, the median CPU time (user + system of every process of the item), and the peak RSS of the
largest process (from wait4). Times are the harness's, from before the first process starts until the
last one exits.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

CONFIG = """\
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
localAPIEndpoint:
  advertiseAddress: 10.0.0.5
nodeRegistration:
  name: node1
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
"""

# name -> (needs a fresh --rootfs, list of argument lists; "/kubeadm.yaml" is inside the rootfs)
ITEMS = {
    # The offline phases a control plane's init runs before it needs a kubelet: 15 RSA keys (11
    # certificates and the service-account key, 4 kubeconfig files), 3 manifests and etcd's.
    "offline-phases": (True, [
        ["init", "phase", "certs", "all", "--config", "/kubeadm.yaml"],
        ["init", "phase", "kubeconfig", "all", "--config", "/kubeadm.yaml"],
        ["init", "phase", "control-plane", "all", "--config", "/kubeadm.yaml"],
        ["init", "phase", "etcd", "local", "--config", "/kubeadm.yaml"],
    ]),
    # The whole init, printed rather than done (keys still generated, into a temporary folder).
    "init-dry-run": (True, [
        ["init", "--dry-run", "--config", "/kubeadm.yaml", "--ignore-preflight-errors=all"],
    ]),
    # Start-up alone: the binary loaded, its command tree built, one short answer.
    "version": (False, [["version", "-o", "short"]]),
    "help": (False, [["--help"]]),
}


def run_item(binary, argvs, rootfs):
    """Runs the item's commands in order; returns (wall seconds, cpu seconds, peak rss KiB)."""
    cpu = 0.0
    rss = 0
    start = time.perf_counter()
    for argv in argvs:
        full = [binary] + (["--rootfs", rootfs] if rootfs else []) + argv
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.devnull, os.O_RDWR)
            os.dup2(fd, 0)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            try:
                os.execv(binary, full)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"bench: {' '.join(full)} exited {code}")
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss)
    return time.perf_counter() - start, cpu, rss


def fresh_rootfs(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "kubeadm.yaml"), "w") as f:
        f.write(CONFIG)


def quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[1], q[2]


def ms(x):
    return f"{x * 1000:.0f}"


def report(name, up, ours, unit_ms=True):
    """up/ours: lists of (wall, cpu, rss) of the same runs, pair by pair."""
    ratios = [o[0] / u[0] for u, o in zip(up, ours) if u[0] > 0]
    line = {"item": name, "runs": len(up)}
    for side, rows in (("upstream", up), ("ours", ours)):
        q1, med, q3 = quartiles([r[0] for r in rows])
        line[side] = {
            "wall_median_s": round(med, 4), "wall_p25_s": round(q1, 4), "wall_p75_s": round(q3, 4),
            "cpu_median_s": round(statistics.median(r[1] for r in rows), 4),
            "peak_rss_kib": max(r[2] for r in rows) if rows[0][2] is not None else None,
        }
    line["ratio_median"] = round(statistics.median(ratios), 3)
    line["ratio_min"] = round(min(ratios), 3)
    line["ratio_max"] = round(max(ratios), 3)
    u, o = line["upstream"], line["ours"]
    fmt = ms if unit_ms else (lambda x: f"{x:.1f}")
    unit = "ms" if unit_ms else "s"
    rss = ""
    if u["peak_rss_kib"] is not None:
        rss = f"  rss {u['peak_rss_kib'] // 1024}/{o['peak_rss_kib'] // 1024} MiB ({o['peak_rss_kib'] / u['peak_rss_kib']:.2f})"
    cpu = ""
    if u["cpu_median_s"]:
        cpu = f"  cpu {ms(u['cpu_median_s'])}/{ms(o['cpu_median_s'])} ms ({o['cpu_median_s'] / u['cpu_median_s']:.2f})"
    print(
        f"{name:<28} upstream {fmt(u['wall_median_s'])} {unit} [{fmt(u['wall_p25_s'])}-{fmt(u['wall_p75_s'])}]"
        f"  ours {fmt(o['wall_median_s'])} {unit} [{fmt(o['wall_p25_s'])}-{fmt(o['wall_p75_s'])}]"
        f"  ratio {line['ratio_median']:.2f} [{line['ratio_min']:.2f}-{line['ratio_max']:.2f}]{cpu}{rss}"
    )
    return line


def offline(args):
    items = args.items.split(",") if args.items else list(ITEMS)
    for i in items:
        if i not in ITEMS:
            sys.exit(f"bench: no item {i!r} (items: {', '.join(ITEMS)})")
    binaries = {"upstream": args.upstream, "ours": args.ours}
    work = tempfile.mkdtemp(prefix="kubeadm-bench-")
    results = []
    try:
        for name in items:
            needs_root, argvs = ITEMS[name]
            rows = {"upstream": [], "ours": []}
            for run in range(args.warmup + args.runs):
                order = ["upstream", "ours"] if run % 2 == 0 else ["ours", "upstream"]
                for side in order:
                    root = os.path.join(work, side) if needs_root else None
                    if root:
                        fresh_rootfs(root)
                    row = run_item(binaries[side], argvs, root)
                    if run >= args.warmup:
                        rows[side].append(row)
            results.append(report(name, rows["upstream"], rows["ours"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sizes = {side: os.path.getsize(b) for side, b in binaries.items()}
    print(
        f"{'binary size':<28} upstream {sizes['upstream'] / 2**20:.1f} MiB  ours {sizes['ours'] / 2**20:.1f} MiB"
        f"  ratio {sizes['ours'] / sizes['upstream']:.2f}"
    )
    results.append({"item": "binary-size", "upstream_bytes": sizes["upstream"], "ours_bytes": sizes["ours"]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


def summary(args):
    """Timing lines of the testbed scenario: {"kubeadm": "upstream"|"ours", "run": N, "item": ..., "s": ...}."""
    rows = {}
    for path in args.files:
        with open(path) as f:
            for raw in f:
                if raw.strip():
                    r = json.loads(raw)
                    rows.setdefault(r["item"], {}).setdefault(r["run"], {})[r["kubeadm"]] = (r["s"], 0.0, r.get("rss_kib"))
    results = []
    for item, runs in rows.items():
        pairs = [(v["upstream"], v["ours"]) for _, v in sorted(runs.items()) if "upstream" in v and "ours" in v]
        if not pairs:
            print(f"{item:<28} (not measured on both sides)")
            continue
        up = [p[0] for p in pairs]
        ours = [p[1] for p in pairs]
        if any(r[2] is None for r in up + ours):
            up = [(w, c, None) for w, c, _ in up]
            ours = [(w, c, None) for w, c, _ in ours]
        results.append(report(item, up, ours, unit_ms=False))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("offline")
    o.add_argument("--upstream", required=True)
    o.add_argument("--ours", required=True)
    o.add_argument("--runs", type=int, default=10)
    o.add_argument("--warmup", type=int, default=1)
    o.add_argument("--items", default="")
    o.add_argument("--json", default="")
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", default="")
    args = p.parse_args()
    offline(args) if args.cmd == "offline" else summary(args)


if __name__ == "__main__":
    main()
