#!/usr/bin/env python3
"""Compares what two kubeadm runs printed, file by file (testbed/test.sh: upstream's cluster-api run
against ours): `compare_output.py DIR_A DIR_B`. Masked before comparing: times, hashes, tokens and
durations; dropped: the HTTPProxyCIDR warnings of the upstream build (Go 1.26's URL parser, see
scenarios/init-join-reset.sh). The certificates a `certs` phase generates are compared as a set per
run of lines: upstream generates them in Go's map order, different in every run."""
import difflib
import os
import re
import sys

MASKS = [
    (re.compile(r"\d{4}-\d{2}-\d{2}T[\d:]+\+00:00"), "TIME"),
    (re.compile(r"sha256:[0-9a-f]{64}"), "sha256:HASH"),
    (re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"), "TOKEN"),
    (re.compile(r"after [0-9.]+ seconds"), "after N seconds"),
]


def cert_line(line):
    return line.startswith('[certs] Generating "') or "serving cert is signed for" in line


def normalise(path):
    out, run = [], []
    for line in open(path, encoding="utf-8", errors="replace").read().splitlines():
        if "[WARNING HTTPProxyCIDR]" in line:
            continue
        for pattern, repl in MASKS:
            line = pattern.sub(repl, line)
        if cert_line(line):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        out.append(line)
    out.extend(sorted(run))
    return [l + "\n" for l in out]


def main():
    a, b = sys.argv[1], sys.argv[2]
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    ok = bool(names)
    for name in names:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"{name}: only in one run")
            ok = False
            continue
        la, lb = normalise(pa), normalise(pb)
        if la != lb:
            ok = False
            sys.stdout.writelines(difflib.unified_diff(la, lb, "a/" + name, "b/" + name))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
