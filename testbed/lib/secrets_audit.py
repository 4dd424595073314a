#!/usr/bin/env python3
"""The secrets audit over what kubeadm printed in the testbed's scenarios: `secrets_audit.py DIR`,
DIR being TB_AUDIT_DIR: under `exec.*/`, both streams of every kubeadm run inside a node, whatever
the scenario did with them (`tb_node_exec` keeps a copy when a `kubeadm` is among its arguments:
init, joins, resets, upgrades, token and images commands, `init.out`, `pull.*` and the rest); beside
them the `*.log` files each scenario kept (runs through `bash -c` scripts too), the kubelet's and
containerd's logs aside.

No private key (PEM, or a kubeconfig's client-key-data) may appear; a bootstrap token
([a-z0-9]{6}.[a-z0-9]{16}) only where kubeadm prints one on purpose (a join command, init's
`[bootstrap-token] Using token:` line, `token create`'s output, `token list`'s rows); a certificate
key (64 hex digits standing alone, not a sha256 digest or a container ID) only in a `--certificate-key` join command
and after `[upload-certs] Using certificate key:`. No source snippet (a line shaped `NN | …`, as YAML
libraries quote the lines around a parse error: those of a kubeconfig hold its keys). A container or sandbox ID that a CRI error names
(`container <id>`, `container "<id>"`, `RemovePodSandbox "<id>"`, …, as reset's warning quotes them) is
not a finding, unless it is one of the certificate keys the scenarios printed: those are collected
first and flagged wherever else they appear. Prints each finding (never the secret itself)
and how many files and lines it read; exits 1 on a finding, or when it read nothing.
`secrets_audit.py --selftest` runs the audit on made-up logs and checks what it finds."""
import re
import sys
from pathlib import Path

TOKEN = re.compile(r"(?<![a-z0-9])[a-z0-9]{6}\.[a-z0-9]{16}(?![a-z0-9])")
HEX64 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")
# Not kubeadm's: their container IDs and digests are 64 hex digits too.
SKIPPED = re.compile(r"^(kubelet|containerd|port-holder)")
# What precedes a container or sandbox ID in a CRI error (`failed to remove running container <id>`,
# `RemovePodSandbox "<id>"`, `failed to set removing state for container "<id>"`).
CONTAINER_ID = re.compile(r'(?:\b(?:container|pod|sandbox)|PodSandbox|Container) "?$')
# A line of a source snippet: the line's number, then ` | ` and the line.
SNIPPET = re.compile(r"^\s*\d+ +\|(?: |$)")


def token_allowed(line, token):
    s = line.strip()
    return (
        "kubeadm join" in s
        or s.startswith("[bootstrap-token] Using token: ")
        or s == token
        # token list: TOKEN TTL EXPIRES USAGES DESCRIPTION EXTRA GROUPS
        or s.startswith(token + " ")
    )


def logs(root):
    return [p for p in sorted(root.rglob("*.log")) if not SKIPPED.match(p.name)]


def certificate_keys(root):
    """Every certificate key kubeadm printed on purpose in these logs."""
    keys = set()
    for path in logs(root):
        previous = ""
        for line in path.read_text(errors="replace").splitlines():
            if "--certificate-key" in line or previous.strip() == "[upload-certs] Using certificate key:":
                keys.update(m.group(0).lower() for m in HEX64.finditer(line))
            previous = line
    return keys


def audit(root):
    problems, files, lines = [], 0, 0
    keys = certificate_keys(root)
    for path in logs(root):
        files += 1
        text = path.read_text(errors="replace").splitlines()
        previous = ""
        for number, line in enumerate(text, 1):
            lines += 1
            where = f"{path.relative_to(root)}:{number}"
            if SNIPPET.match(line):
                problems.append(f"{where}: a line of a document quoted in an error (source snippet)")
            if "PRIVATE KEY-----" in line:
                problems.append(f"{where}: a private key (PEM)")
            value = line.strip().removeprefix("client-key-data:")
            if value != line.strip() and value.strip():
                problems.append(f"{where}: a kubeconfig's client key")
            for m in TOKEN.finditer(line):
                if not token_allowed(line, m.group(0)):
                    problems.append(f"{where}: a bootstrap token outside a join command or token output")
            for m in HEX64.finditer(line):
                # A digest, or a container's ID as the CRI names it (`containerd://<64 hex>`, in
                # the Pods a dry run prints).
                if line[: m.start()].endswith(("sha256:", "://")):
                    continue
                if "--certificate-key" in line or previous.strip() == "[upload-certs] Using certificate key:":
                    continue
                if CONTAINER_ID.search(line[: m.start()]) and m.group(0).lower() not in keys:
                    continue
                problems.append(f"{where}: a certificate key (64 hex digits) outside a join command or upload-certs output")
            previous = line
    return problems, files, lines


def selftest():
    import secrets
    import tempfile

    key, container, other = (secrets.token_hex(32) for _ in range(3))
    cases = [
        # (log lines, findings expected)
        (["[upload-certs] Using certificate key:", key], 0),
        ([f"kubeadm join lb:6443 --control-plane --certificate-key {key}"], 0),
        (["[reset] Failed to remove containers: failed to remove running container "
          f'{container}: RemovePodSandbox "{container}" on unix:///run/c.sock: failed to set removing '
          f'state for container "{container}": container is in starting state'], 0),
        ([f"image sha256:{other}", f"containerID: containerd://{other}"], 0),
        ([f"the key is {other}"], 1),
        ([f"failed to remove running container {key}"], 1),  # a printed key, whatever precedes it
        (["-----BEGIN EC PRIVATE KEY-----"], 1),
        (["    client-key-data: LS0t"], 1),
        (["bootstrap token abcdef.0123456789abcdef was used"], 1),
        (["[bootstrap-token] Using token: abcdef.0123456789abcdef"], 0),
        (["error: line 11 column 4: did not find expected key", "  --> <input>:11:4", "   |",
          " 9 |   user:", "10 |     client-key-data: S0tLS0tLS0t", "11 |    bad: x", "   |    ^"], 3),
        (["failed to parse kubeconfig YAML: line 11, column 4: did not find expected key"], 0),
        (["CERTIFICATE | EXPIRES | RESIDUAL TIME", "[upgrade] 2 | 3 of the checks"], 0),
    ]
    failed = 0
    for number, (text, expected) in enumerate(cases):
        with tempfile.TemporaryDirectory() as d:
            Path(d, "init.log").write_text(f"[upload-certs] Using certificate key:\n{key}\n")
            Path(d, "case.log").write_text("\n".join(text) + "\n")
            problems, _, _ = audit(Path(d))
        if len(problems) != expected:
            failed += 1
            print(f"secrets audit selftest: case {number}: {len(problems)} findings, expected {expected}: {problems}")
    print(f"secrets audit selftest: {len(cases)} cases, {failed} failed")
    return 1 if failed else 0


if sys.argv[1:] == ["--selftest"]:
    sys.exit(selftest())
root = Path(sys.argv[1])
problems, files, lines = audit(root)
for p in problems:
    print(f"secrets audit: {p}")
print(f"secrets audit: {files} files, {lines} lines of kubeadm output read; {len(problems)} findings")
sys.exit(1 if problems or files == 0 else 0)
