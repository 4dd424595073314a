#!/usr/bin/env python3
"""Compares the API objects two `kubeadm init` runs created, for testbed/scenarios/api-objects.sh.

Each side is a directory of `kubectl get ... -o json` dumps (Lists or single objects) from one
single-node cluster. Only what must differ between two clusters is normalised:

- server-set metadata (uid, resourceVersion, creationTimestamp, generation, selfLink), the times of
  managedFields, status, and managedFields entries of the status subresource (controllers' timing);
- the node names and node IPs of each side (the control plane's first, then any worker's), replaced
  everywhere by <node-name> and <node-ip> (the first) or <node-name-2>, <node-ip-2>, ...;
- bootstrap tokens: token-id, token-secret and expiration must have their shape ([a-z0-9]{6},
  [a-z0-9]{16}, RFC3339); the expiration is always masked, the id and secret only for tokens that
  are not the one the config asked for (--token), i.e. the random upload-certs token;
- key material: the CA data of kubeconfigs in ConfigMaps, the JWS signatures of cluster-info and
  the values of the kubeadm-certs Secret must be non-empty base64 (or a JWS) and are masked;
- ownerReferences uids, also where managedFields name them (k:{"uid":...}).

Secrets' data are shown decoded so that a diff is readable. Only objects kubeadm creates are kept
(see EXCLUDED): the API server's bootstrap RBAC (label kubernetes.io/bootstrapping=rbac-defaults) and
what the API server and controller-manager create on their own are left out. Node objects are reduced
to their labels, annotations, taints and the managedFields of anyone but the kubelet and the
controller-manager, without the ownership of spec.taints (an atomic list the node lifecycle
controller takes over whenever it taints a node not-ready, e.g. while its kubelet restarts).

Prints same/DIFFERS/only in per object with a unified diff, then "N objects compared"; exits 1 when
anything differs or when an object kubeadm must create is missing on side a.
"""

import argparse
import base64
import binascii
import difflib
import json
import os
import re
import sys

# (kind, namespace or "", name) of objects that exist but are not kubeadm's: created by the API
# server (extension-apiserver-authentication) or the controller-manager (kube-root-ca.crt in every
# namespace, by the root-ca-cert-publisher).
EXCLUDED = {
    ("ConfigMap", "kube-system", "extension-apiserver-authentication"),
    ("ConfigMap", "kube-system", "kube-root-ca.crt"),
    ("ConfigMap", "kube-public", "kube-root-ca.crt"),
}

# What kubeadm init must create: a comparison without these would prove nothing.
REQUIRED = [
    ("ConfigMap", "kube-system", "kubeadm-config"),
    ("ConfigMap", "kube-system", "kubelet-config"),
    ("ConfigMap", "kube-system", "coredns"),
    ("ConfigMap", "kube-system", "kube-proxy"),
    ("ConfigMap", "kube-public", "cluster-info"),
    ("Secret", "kube-system", "kubeadm-certs"),
    ("ServiceAccount", "kube-system", "coredns"),
    ("ServiceAccount", "kube-system", "kube-proxy"),
    ("Deployment", "kube-system", "coredns"),
    ("Service", "kube-system", "kube-dns"),
    ("DaemonSet", "kube-system", "kube-proxy"),
    ("Node", "", "<node-name>"),
]

# Managers whose writes to the Node are the kubelet's and the controllers' business, not kubeadm's.
NODE_FOREIGN_MANAGERS = {"kubelet", "kube-controller-manager"}

TOKEN_ID = re.compile(r"^[a-z0-9]{6}$")
TOKEN_SECRET = re.compile(r"^[a-z0-9]{16}$")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
# A detached JWS as the bootstrap signer writes it: header..signature (base64url).
JWS_DETACHED = re.compile(r"^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$")
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CA_DATA = re.compile(r"(certificate-authority-data:\s*)(\S+)")


class Problems:
    """Shape violations found while normalising: each is a difference in its own right."""

    def __init__(self):
        self.items = []

    def add(self, where, what):
        self.items.append(f"{where}: {what}")


def load(directory):
    """Every object of every *.json dump in directory."""
    objs = []
    for f in sorted(os.listdir(directory)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(directory, f), encoding="utf-8") as fh:
            content = fh.read()
        if not content.strip():
            continue  # `kubectl get --ignore-not-found` found nothing
        doc = json.loads(content)
        objs.extend(doc.get("items", []) if doc.get("kind") == "List" else [doc])
    return objs


def is_kubeadms(obj):
    meta = obj.get("metadata", {})
    if (meta.get("labels") or {}).get("kubernetes.io/bootstrapping") == "rbac-defaults":
        return False
    return (obj["kind"], meta.get("namespace", ""), meta["name"]) not in EXCLUDED


def b64(value):
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def text(raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "<binary %d bytes>" % len(raw)


class Side:
    """One cluster's dump, normalised."""

    def __init__(self, label, directory, nodes, ips, token, problems):
        self.label = label
        self.nodes = nodes
        self.ips = ips
        self.token_id, self.token_secret = token.split(".")
        self.problems = problems
        self.subst = {}  # random token id -> placeholder
        raw = [o for o in load(directory) if is_kubeadms(o)]
        self.find_random_tokens(raw)
        self.objects = {}
        for o in raw:
            n = self.normalise(o)
            key = (n["kind"], n["metadata"].get("namespace", ""), n["metadata"]["name"])
            if key in self.objects:
                problems.add(f"{label} {key}", "two objects normalise to the same key")
            self.objects[key] = n

    def find_random_tokens(self, raw):
        """Placeholders for bootstrap tokens other than the configured one, ordered by description."""
        found = []
        for o in raw:
            if o["kind"] == "Secret" and o.get("type") == "bootstrap.kubernetes.io/token":
                data = {k: text(b64(v) or b"") for k, v in (o.get("data") or {}).items()}
                tid = data.get("token-id", "")
                if tid != self.token_id:
                    found.append((data.get("description", ""), tid))
        for i, (_, tid) in enumerate(sorted(found)):
            self.subst[tid] = f"<random-token-id-{i}>"

    def scrub(self, value):
        """Node name, node IP and random token ids replaced in every string, keys included."""
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        if isinstance(value, str):
            for i, ip in enumerate(self.ips):
                value = re.sub(r"(?<![0-9.])" + re.escape(ip) + r"(?![0-9])", placeholder("node-ip", i), value)
            for i, node in enumerate(self.nodes):
                value = re.sub(r"\b" + re.escape(node) + r"\b", placeholder("node-name", i), value)
            for tid, ph in self.subst.items():
                value = re.sub(r"\b" + re.escape(tid) + r"\b", ph, value)
        return value

    def normalise(self, o):
        o = json.loads(json.dumps(o))
        where = f"{self.label} {o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        meta = o["metadata"]
        for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink"):
            meta.pop(k, None)
        o.pop("status", None)
        fields = [f for f in meta.get("managedFields", []) if f.get("subresource") != "status"]
        for f in fields:
            f.pop("time", None)
            # An ownerReference's field key names its uid: k:{"uid":"..."}.
            if "fieldsV1" in f:
                f["fieldsV1"] = json.loads(UID.sub("<uid>", json.dumps(f["fieldsV1"])))
        if fields:
            meta["managedFields"] = fields
        else:
            meta.pop("managedFields", None)
        for ref in meta.get("ownerReferences", []):
            if "uid" in ref:
                ref["uid"] = "<uid>"
        kind = o["kind"]
        if kind == "Secret":
            self.secret(o, where)
        elif kind == "ConfigMap":
            self.configmap(o, where)
        elif kind == "Node":
            o = self.node_obj(o)
        return self.scrub(o)

    def secret(self, o, where):
        data = o.get("data") or {}
        if o["metadata"]["name"] == "kubeadm-certs":
            # Encrypted with a random certificate key: only the key set and the shape can match.
            for k, v in data.items():
                raw = b64(v)
                if not raw:
                    self.problems.add(where, f"data[{k}] is not non-empty base64")
                data[k] = "<non-empty base64>"
            return
        decoded = {}
        for k, v in data.items():
            raw = b64(v)
            if raw is None:
                self.problems.add(where, f"data[{k}] is not base64")
                decoded[k] = v
            else:
                decoded[k] = text(raw)
        if o.get("type") == "bootstrap.kubernetes.io/token":
            tid, secret = decoded.get("token-id", ""), decoded.get("token-secret", "")
            if not TOKEN_ID.match(tid):
                self.problems.add(where, f"token-id {tid!r} is not [a-z0-9]{{6}}")
            if not TOKEN_SECRET.match(secret):
                self.problems.add(where, f"token-secret is not [a-z0-9]{{16}}")
            if tid != self.token_id and "token-secret" in decoded:
                decoded["token-secret"] = "<random-token-secret>"
            if "expiration" in decoded:
                if not RFC3339.match(decoded["expiration"]):
                    self.problems.add(where, f"expiration {decoded['expiration']!r} is not RFC3339")
                decoded["expiration"] = "<RFC3339>"
        if data:
            o["data"] = {k: "(base64 of) " + v for k, v in decoded.items()}

    def configmap(self, o, where):
        data = o.get("data") or {}
        for k, v in list(data.items()):
            if k.startswith("jws-kubeconfig-"):
                if not JWS_DETACHED.match(v):
                    self.problems.add(where, f"data[{k}] is not a detached JWS")
                data[k] = "<detached JWS>"
                continue

            def ca(m, k=k):
                if not BASE64.match(m.group(2)) or not b64(m.group(2)):
                    self.problems.add(where, f"data[{k}]: certificate-authority-data is not base64")
                return m.group(1) + "<non-empty base64>"

            data[k] = CA_DATA.sub(ca, v)

    def node_obj(self, o):
        meta = o["metadata"]
        kept = {k: meta[k] for k in ("name", "labels", "annotations") if k in meta}
        fields = [f for f in meta.get("managedFields", []) if f.get("manager") not in NODE_FOREIGN_MANAGERS]
        for f in fields:
            # spec.taints is an atomic list: whoever wrote it last owns all of it. The node
            # lifecycle controller adds and removes node.kubernetes.io/not-ready while a kubelet
            # restarts, so whether kubeadm still owns the list after an upgrade is timing; the
            # taints themselves are compared below.
            spec = f.get("fieldsV1", {}).get("f:spec")
            if isinstance(spec, dict):
                spec.pop("f:taints", None)
                if not spec:
                    f["fieldsV1"].pop("f:spec")
        fields = [f for f in fields if f.get("fieldsV1") != {}]
        if fields:
            kept["managedFields"] = fields
        return {
            "apiVersion": o["apiVersion"],
            "kind": "Node",
            "metadata": kept,
            "spec": {"taints": o.get("spec", {}).get("taints", [])},
        }


def placeholder(what, i):
    """<what> for a side's first node, <what-2> for its second, ..."""
    return f"<{what}>" if i == 0 else f"<{what}-{i + 1}>"


def for_display(value):
    """Multi-line strings (config files, kubeconfigs) as lists of lines, so that a diff points at the line."""
    if isinstance(value, dict):
        return {k: for_display(v) for k, v in value.items()}
    if isinstance(value, list):
        return [for_display(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return ["(lines of a string)"] + value.split("\n")
    return value


def lines(obj):
    return json.dumps(for_display(obj), indent=2, sort_keys=True).splitlines()


def show(key):
    kind, ns, name = key
    return f"{kind} {ns + '/' if ns else ''}{name}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for s in ("a", "b"):
        p.add_argument(f"--{s}", required=True, help=f"directory of side {s}'s dumps")
        p.add_argument(f"--{s}-node", required=True, help="node names, comma-separated, control plane first")
        p.add_argument(f"--{s}-ip", required=True, help="their IPs, in the same order")
    p.add_argument("--token", required=True, help="the bootstrap token both configs ask for")
    p.add_argument("--without-kube-proxy", action="store_true", help="kube-proxy was skipped on both sides")
    args = p.parse_args()
    problems = Problems()
    sides = []
    for label, d, nodes, ips in (("a", args.a, args.a_node, args.a_ip), ("b", args.b, args.b_node, args.b_ip)):
        nodes, ips = nodes.split(","), ips.split(",")
        if len(nodes) != len(ips):
            p.error(f"--{label}-node and --{label}-ip name different numbers of nodes")
        sides.append(Side(label, d, nodes, ips, args.token, problems))
    a, b = sides
    required = [k for k in REQUIRED if not (args.without_kube_proxy and k[2] == "kube-proxy")]
    required += [("Node", "", placeholder("node-name", i)) for i in range(1, len(a.nodes))]
    for key in required + [("Secret", "kube-system", "bootstrap-token-" + args.token.split(".")[0])]:
        if key not in a.objects:
            problems.add("a", f"{show(key)} missing: the dump cannot prove anything")
    differ = 0
    for key in sorted(set(a.objects) | set(b.objects)):
        if key not in b.objects:
            print(f"only in a: {show(key)}")
            differ += 1
        elif key not in a.objects:
            print(f"only in b: {show(key)}")
            differ += 1
        else:
            if a.objects[key] == b.objects[key]:
                print(f"same: {show(key)}")
            else:
                differ += 1
                print(f"DIFFERS: {show(key)}")
                ja, jb = lines(a.objects[key]), lines(b.objects[key])
                for line in difflib.unified_diff(ja, jb, "a/" + show(key), "b/" + show(key), n=4, lineterm=""):
                    print("    " + line)
    for item in problems.items:
        print(f"PROBLEM: {item}")
    compared = len(set(a.objects) & set(b.objects))
    if differ or problems.items:
        print(f"{compared} objects compared: {differ} differ, {len(problems.items)} problems")
        return 1
    print(f"{compared} objects compared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
