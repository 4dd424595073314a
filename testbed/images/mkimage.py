#!/usr/bin/env python3
"""Writes a single-layer OCI image layout as a tar archive, byte-for-byte reproducible.

    mkimage.py OUT.tar NAME:TAG [options]
      --file SRC:DST        copy a host file (following symlinks) to DST in the image
      --tree SRC:DST        copy a host directory tree to DST (symlinks kept as symlinks)
      --link DST:TARGET     a symlink DST -> TARGET
      --dir DST             an empty directory
      --entrypoint JSON     e.g. '["/coredns"]'
      --cmd JSON
      --env K=V             (repeatable; PATH is set by default)

The archive is what `ctr images import` reads: oci-layout, index.json (with the
io.containerd.image.name annotation, so the image gets NAME:TAG), blobs/sha256/*. The layer is an
uncompressed tar: compressing ~100 MB binaries only to unpack them again right away costs time and
buys nothing here. Every tar header has mtime 0, uid/gid 0 and entries are sorted, so the same
inputs always give the same digests.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def parent_dirs(path):
    parts = path.strip("/").split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


class Layer:
    """Collects entries by path, then writes them sorted with normalised headers."""

    def __init__(self):
        self.entries = {}  # path (no leading slash) -> (kind, payload, mode)

    def add_dir(self, dst, mode=0o755):
        for p in parent_dirs(dst) + [dst.strip("/")]:
            if p and p not in self.entries:
                self.entries[p] = ("dir", None, mode)

    def add_file(self, src, dst):
        with open(src, "rb") as f:
            data = f.read()
        mode = os.stat(src).st_mode & 0o777
        self.add_dir("/".join(dst.strip("/").split("/")[:-1]))
        self.entries[dst.strip("/")] = ("file", data, mode)

    def add_link(self, dst, target):
        self.add_dir("/".join(dst.strip("/").split("/")[:-1]))
        self.entries[dst.strip("/")] = ("link", target, 0o777)

    def add_tree(self, src, dst):
        for root, dirs, files in os.walk(src):
            rel = os.path.relpath(root, src)
            base = dst.rstrip("/") if rel == "." else dst.rstrip("/") + "/" + rel
            self.add_dir(base)
            for name in dirs + files:
                full = os.path.join(root, name)
                if os.path.islink(full):
                    self.add_link(base + "/" + name, os.readlink(full))
                elif os.path.isfile(full):
                    self.add_file(full, base + "/" + name)

    def tar_bytes(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries):
                kind, payload, mode = self.entries[path]
                info = tarfile.TarInfo(path)
                info.mtime = 0
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = mode
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif kind == "link":
                    info.type = tarfile.SYMTYPE
                    info.linkname = payload
                    tar.addfile(info)
                else:
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        return buf.getvalue()


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("name")
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--tree", action="append", default=[])
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--dir", action="append", default=[])
    ap.add_argument("--entrypoint")
    ap.add_argument("--cmd")
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args(argv)

    layer = Layer()
    for d in a.dir:
        layer.add_dir(d)
    for spec in a.tree:
        src, dst = spec.split(":", 1)
        layer.add_tree(src, dst)
    for spec in a.file:
        src, dst = spec.split(":", 1)
        layer.add_file(src, dst)
    for spec in a.link:
        dst, target = spec.split(":", 1)
        layer.add_link(dst, target)
    layer_digest, layer_data = blob(layer.tar_bytes())

    env = ["PATH=" + DEFAULT_PATH] + a.env
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": env},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    if a.entrypoint:
        config["config"]["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd:
        config["config"]["Cmd"] = json.loads(a.cmd)
    config_digest, config_data = blob(canonical(config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": len(config_data),
        },
        "layers": [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": layer_digest,
                "size": len(layer_data),
            }
        ],
    }
    manifest_digest, manifest_data = blob(canonical(manifest))
    tag = a.name.rsplit(":", 1)[1]
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": manifest_digest,
                "size": len(manifest_data),
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {
                    "io.containerd.image.name": a.name,
                    "org.opencontainers.image.ref.name": tag,
                },
            }
        ],
    }
    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        add_bytes(tar, "oci-layout", canonical({"imageLayoutVersion": "1.0.0"}))
        add_bytes(tar, "index.json", canonical(index))
        for digest, data in sorted([(config_digest, config_data), (layer_digest, layer_data),
                                    (manifest_digest, manifest_data)]):
            add_bytes(tar, "blobs/sha256/" + digest.split(":", 1)[1], data)
    os.replace(tmp, a.out)
    print(f"{a.name} {manifest_digest} {a.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
