#!/usr/bin/env python3
"""A tiny read-only OCI distribution registry over the testbed's image archives (stdlib only).

    serve.py --listen 127.0.0.1:PORT [--port-file FILE] [--log FILE] ARCHIVE.tar...

Each ARCHIVE is an OCI image layout as testbed/images/mkimage.py writes it: oci-layout, index.json
(one manifest, named by its io.containerd.image.name annotation) and blobs/sha256/*, all stored
uncompressed in the tar, so a blob is served straight from its offset in the archive without
reading it into memory. For an image named HOST/REPO:TAG the registry serves repository REPO
(the host is whoever resolves to us: containerd's mirror for that host) with:

    GET  /v2/                                  200 (API version check)
    GET|HEAD /v2/REPO/manifests/TAG|DIGEST     the manifest, with its media type and digest
    GET|HEAD /v2/REPO/blobs/DIGEST             the manifest's config and layers

Anything else is a 404 with a distribution-spec error body, or 405 for methods that would write.
It is meant to listen on a loopback address inside a testbed node's network namespace, never on
the machine's own network. With PORT 0 the kernel picks a port, written to --port-file once the
socket listens (the file appears only when the registry is ready). Each request is logged, one
line each ("METHOD PATH STATUS"), to --log (default stderr), so a test can see what was pulled.
"""
import argparse
import hashlib
import http.server
import json
import os
import sys
import tarfile
import threading

CHUNK = 1 << 20


class Blob:
    """Where one blob sits inside an archive."""

    def __init__(self, archive, offset, size, media_type):
        self.archive = archive
        self.offset = offset
        self.size = size
        self.media_type = media_type


class Repository:
    """One repository: its tags, manifests (kept in memory, they are small) and blobs."""

    def __init__(self):
        self.tags = {}  # tag -> manifest digest
        self.manifests = {}  # digest -> (media type, bytes)
        self.blobs = {}  # digest -> Blob


def split_name(name):
    """registry.k8s.io/coredns/coredns:v1.9.3 -> ("coredns/coredns", "v1.9.3")."""
    repo, tag = name.rsplit(":", 1)
    if "/" in tag:  # the colon was a host port, there is no tag
        raise ValueError(f"image name without a tag: {name}")
    first, _, rest = repo.partition("/")
    # A first component with a dot or a colon (or "localhost") names the registry host.
    if rest and ("." in first or ":" in first or first == "localhost"):
        repo = rest
    return repo, tag


def read_blob(archive, blob):
    with open(archive, "rb") as f:
        f.seek(blob.offset)
        return f.read(blob.size)


def load(archives):
    """Indexes every archive; refuses archives whose blobs do not match their digests' sizes."""
    repos = {}
    for archive in archives:
        with tarfile.open(archive, "r:") as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile()}
            index = json.load(tar.extractfile(members["index.json"]))
        for desc in index["manifests"]:
            name = desc.get("annotations", {}).get("io.containerd.image.name")
            if not name:
                raise SystemExit(f"{archive}: a manifest without io.containerd.image.name")
            repo_name, tag = split_name(name)
            repo = repos.setdefault(repo_name, Repository())

            def blob_of(d, archive=archive, members=members):
                algo, hexd = d["digest"].split(":", 1)
                m = members.get(f"blobs/{algo}/{hexd}")
                if m is None or m.size != d["size"]:
                    raise SystemExit(f"{archive}: blob {d['digest']} missing or of the wrong size")
                return Blob(archive, m.offset_data, m.size, d["mediaType"])

            mblob = blob_of(desc)
            data = read_blob(archive, mblob)
            if "sha256:" + hashlib.sha256(data).hexdigest() != desc["digest"]:
                raise SystemExit(f"{archive}: manifest {desc['digest']} does not match its digest")
            repo.tags[tag] = desc["digest"]
            repo.manifests[desc["digest"]] = (desc["mediaType"], data)
            manifest = json.loads(data)
            for d in [manifest["config"]] + manifest["layers"]:
                repo.blobs[d["digest"]] = blob_of(d)
    return repos


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "testbed-registry"
    repos = {}
    log = sys.stderr
    log_lock = threading.Lock()

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass  # one line per request is written by respond(), not the default access log

    def respond(self, status, headers, body=None, length=None, send_body=True):
        self.send_response(status)
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if body is not None else length))
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)
        with self.log_lock:
            print(f"{self.command} {self.path} {status}", file=self.log, flush=True)

    def error(self, status, code, message, send_body=True):
        body = json.dumps({"errors": [{"code": code, "message": message, "detail": self.path}]}).encode()
        self.respond(status, {"Content-Type": "application/json"}, body, send_body=send_body)

    def route(self, send_body):
        path = self.path.split("?", 1)[0]
        if path in ("/v2", "/v2/"):
            return self.respond(200, {"Content-Type": "application/json"}, b"{}", send_body=send_body)
        if not path.startswith("/v2/"):
            return self.error(404, "NOT_FOUND", "not a registry path", send_body)
        rest = path[len("/v2/"):]
        for kind in ("manifests", "blobs"):
            marker = f"/{kind}/"
            if marker in rest:
                name, ref = rest.rsplit(marker, 1)
                break
        else:
            return self.error(404, "NOT_FOUND", "unknown endpoint", send_body)
        repo = self.repos.get(name)
        if repo is None:
            return self.error(404, "NAME_UNKNOWN", f"repository {name} not known to registry", send_body)
        if kind == "manifests":
            digest = ref if ref.startswith("sha256:") else repo.tags.get(ref)
            if digest not in repo.manifests:
                return self.error(404, "MANIFEST_UNKNOWN", f"manifest {ref} unknown", send_body)
            media_type, data = repo.manifests[digest]
            headers = {"Content-Type": media_type, "Docker-Content-Digest": digest}
            return self.respond(200, headers, data, send_body=send_body)
        blob = repo.blobs.get(ref)
        if blob is None:
            return self.error(404, "BLOB_UNKNOWN", f"blob {ref} unknown", send_body)
        headers = {"Content-Type": "application/octet-stream", "Docker-Content-Digest": ref}
        self.respond(200, headers, length=blob.size, send_body=False)
        if send_body:
            with open(blob.archive, "rb") as f:
                f.seek(blob.offset)
                left = blob.size
                while left:
                    chunk = f.read(min(CHUNK, left))
                    if not chunk:
                        raise OSError(f"{blob.archive}: archive shorter than its index says")
                    self.wfile.write(chunk)
                    left -= len(chunk)

    def do_GET(self):  # noqa: N802 (the base class's naming)
        self.route(send_body=True)

    def do_HEAD(self):  # noqa: N802
        self.route(send_body=False)

    def read_only(self):
        self.close_connection = True
        self.error(405, "UNSUPPORTED", "this registry is read-only")

    do_POST = do_PUT = do_PATCH = do_DELETE = read_only


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--listen", required=True, help="HOST:PORT, an IPv4 loopback address")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("archives", nargs="+")
    a = ap.parse_args(argv)
    host, port = a.listen.rsplit(":", 1)
    if not host.startswith("127."):
        raise SystemExit(f"refusing to listen on {host}: loopback addresses only")
    Handler.repos = load(a.archives)
    if a.log:
        Handler.log = open(a.log, "a", buffering=1)
    server = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{server.server_address[1]}\n")
        os.replace(tmp, a.port_file)
    names = sorted(f"{r}:{t}" for r, repo in Handler.repos.items() for t in repo.tags)
    print(f"serving {len(names)} images on {host}:{server.server_address[1]}: {' '.join(names)}",
          file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
