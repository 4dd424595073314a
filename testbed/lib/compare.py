#!/usr/bin/env python3
"""Compares two artifact trees written by two kubeadm runs, artifact by artifact.

    compare.py DIR_A DIR_B

Before comparing, each file is normalised so that only what must differ between two honest runs
disappears, and nothing else:
- certificates (PEM, or base64 PEM inside kubeconfig files) become openssl's text dump without
  serial number, validity dates (replaced by the validity length in hours) and signature bytes; the
  lines of hex (the public key's bytes) keep their place with the value masked; key identifiers
  become what they relate: a subject key identifier "<own key>", an authority key identifier the
  subject of the certificate in the same tree whose subject key identifier it is (or "<a key not in
  this tree>"), so that each certificate's chain to its CA is compared; subject, issuer, SANs,
  usages, key type and size remain;
- private and public keys become their PEM header and key type/size;
- text: klog timestamps (the severity letter stays), bootstrap tokens, sha256 CA hashes and dry-run
  temp dir names are masked;
- each file's permission bits are part of what is compared.
Prints one line per artifact ("same", "DIFFERS", "only in a/b") and a unified diff for each
difference. Exit status 0 when all are the same, 1 otherwise.
"""
import base64
import datetime
import difflib
import os
import re
import subprocess
import sys

PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----\n.*?-----END \1-----\n?", re.S)
HEX_LINE = re.compile(r"^\s+([0-9A-Fa-f]{2}:)+[0-9A-Fa-f]{0,2}\s*$")
KUBECONFIG_DATA = re.compile(r"^(\s*)(certificate-authority-data|client-certificate-data|client-key-data): (\S+)$")
MASKS = [
    (re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ([^\]]*\])?", re.M), r"\1<klog> "),
    (re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"), "<token>"),
    (re.compile(r"sha256:[0-9a-f]{64}"), "sha256:<hash>"),
    (re.compile(r"kubeadm-(init|join|upgrade|reset)-dryrun\d+"), r"kubeadm-\1-dryrun<n>"),
]


def openssl(args, data):
    r = subprocess.run(["openssl"] + args, input=data, capture_output=True, text=True)
    if r.returncode != 0:
        return "<openssl failed: %s>" % r.stderr.strip().splitlines()[-1:]
    return r.stdout


# Subject key identifier -> the subject of the certificate that has it, in the tree being normalised
# (set by main() for each tree before its files are read).
SUBJECTS_BY_KEY = {}
KEY_ID = re.compile(r"^(\s*)(keyid:)?((?:[0-9A-Fa-f]{2}:)+[0-9A-Fa-f]{2})\s*$")


def key_ids(pem):
    """(subject, subject key identifier) of a certificate, as openssl prints them."""
    text = openssl(["x509", "-noout", "-subject", "-ext", "subjectKeyIdentifier"], pem)
    subject, ski = "", ""
    for line in text.splitlines():
        if line.startswith("subject="):
            subject = line[len("subject="):].strip()
        elif KEY_ID.match(line):
            ski = KEY_ID.match(line).group(3).upper()
    return subject, ski


def describe_cert(pem):
    text = openssl(["x509", "-noout", "-text", "-certopt", "no_serial,no_validity,no_sigdump"], pem)
    lines, section = [], ""
    for l in text.splitlines():
        if "Subject Key Identifier" in l or "Authority Key Identifier" in l:
            section = l.strip()
            lines.append(l)
            continue
        m = KEY_ID.match(l)
        if m and section.startswith("X509v3 Subject Key Identifier"):
            lines.append(m.group(1) + "<own key>")
        elif m and section.startswith("X509v3 Authority Key Identifier"):
            owner = SUBJECTS_BY_KEY.get(m.group(3).upper())
            lines.append(m.group(1) + ("key of " + owner if owner else "<a key not in this tree>"))
        elif HEX_LINE.match(l):
            lines.append(re.match(r"^\s*", l).group(0) + "<hex>")
        else:
            lines.append(l)
        if not l.startswith("                "):
            section = ""
    dates = openssl(["x509", "-noout", "-startdate", "-enddate"], pem)
    found = dict(l.split("=", 1) for l in dates.splitlines() if "=" in l)
    try:
        fmt = "%b %d %H:%M:%S %Y %Z"
        start = datetime.datetime.strptime(" ".join(found["notBefore"].split()), fmt)
        end = datetime.datetime.strptime(" ".join(found["notAfter"].split()), fmt)
        lines.append("        Validity: %d hours" % round((end - start).total_seconds() / 3600))
    except (KeyError, ValueError):
        lines.append("        Validity: <unreadable>")
    return "\n".join(lines)


def describe_key(kind, pem):
    args = ["pkey", "-noout", "-text"] + (["-pubin"] if "PUBLIC" in kind else [])
    first = openssl(args, pem).splitlines()[:1]
    return "<%s: %s>" % (kind, first[0].strip() if first else "?")


def normalise_pem(text):
    def one(m):
        kind, pem = m.group(1), m.group(0)
        if kind == "CERTIFICATE":
            return describe_cert(pem) + "\n"
        if "KEY" in kind:
            return describe_key(kind, pem) + "\n"
        return "<%s block>\n" % kind

    return PEM.sub(one, text)


def normalise_text(text):
    out = []
    for line in text.splitlines():
        m = KUBECONFIG_DATA.match(line)
        if m:
            try:
                decoded = base64.b64decode(m.group(3)).decode()
            except ValueError:
                decoded = "<undecodable>"
            out.append("%s%s: |" % (m.group(1), m.group(2)))
            out.extend(m.group(1) + "  " + l for l in normalise_pem(decoded).splitlines())
        else:
            out.append(line)
    text = normalise_pem("\n".join(out) + "\n")
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def normalise(path):
    st = os.lstat(path)
    head = "mode: %04o" % (st.st_mode & 0o7777)
    if os.path.islink(path):
        return [head, "symlink -> " + os.readlink(path)]
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return [head, "<binary, %d bytes>" % len(data)]
    return [head] + normalise_text(text).splitlines()


def tree(root):
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            files[os.path.relpath(full, root)] = full
    return files


def certificates(path):
    """The PEM certificates in a file, kubeconfig data included."""
    try:
        with open(path) as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return []
    found = [m.group(0) for m in PEM.finditer(text) if m.group(1) == "CERTIFICATE"]
    for line in text.splitlines():
        m = KUBECONFIG_DATA.match(line)
        if m and m.group(2) != "client-key-data":
            try:
                decoded = base64.b64decode(m.group(3)).decode()
            except ValueError:
                continue
            found += [c.group(0) for c in PEM.finditer(decoded) if c.group(1) == "CERTIFICATE"]
    return found


def key_owners(files):
    owners = {}
    for path in files.values():
        if os.path.islink(path):
            continue
        for pem in certificates(path):
            subject, ski = key_ids(pem)
            if ski:
                owners.setdefault(ski, subject)
    return owners


def main(a_root, b_root):
    a, b = tree(a_root), tree(b_root)
    owners = {"a": key_owners(a), "b": key_owners(b)}
    differ = 0
    for rel in sorted(set(a) | set(b)):
        if rel not in b:
            print("only in a: %s" % rel)
            differ += 1
            continue
        if rel not in a:
            print("only in b: %s" % rel)
            differ += 1
            continue
        SUBJECTS_BY_KEY.clear()
        SUBJECTS_BY_KEY.update(owners["a"])
        la = normalise(a[rel])
        SUBJECTS_BY_KEY.clear()
        SUBJECTS_BY_KEY.update(owners["b"])
        lb = normalise(b[rel])
        if la == lb:
            print("same:      %s" % rel)
            continue
        differ += 1
        print("DIFFERS:   %s" % rel)
        for line in difflib.unified_diff(la, lb, "a/" + rel, "b/" + rel, lineterm="", n=2):
            print("    " + line)
    print("%d artifacts compared, %d differ" % (len(set(a) | set(b)), differ))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
