#!/usr/bin/env bash
# Assembles the OCI image archives kubeadm v1.25.16 asks for, from the binaries that
# testbed/upstream/build.sh leaves in the cache, so that a node never pulls anything.
#
#   testbed/images/build.sh                  -> ${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/images/*.tar
#   testbed/images/build.sh --list [SET]     archive and image name, one per line
#
# The names are exactly those of `kubeadm config images list` for v1.25.16. Archives are rebuilt only
# when missing (they are reproducible: same inputs, same digests). Import one with
#   ctr -n k8s.io images import FILE.tar
#
# Sets for --list: `default` (no SET) is the seven images of v1.25.16, which every node imports;
# `v1.25.15` is kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy v1.25.15
# (upstream/v1.25.15/), which only the `upgrade` scenario imports (tb_node_import_images); `all` is both.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}"
bin="$cache/upstream"
out="$cache/images"
mkdir -p "$out"
mk() { python3 "$here/mkimage.py" "$@" >&2; }

# One image per entry: archive file name, image name.
declare -A names=(
  [kube-apiserver]=registry.k8s.io/kube-apiserver:v1.25.16
  [kube-controller-manager]=registry.k8s.io/kube-controller-manager:v1.25.16
  [kube-scheduler]=registry.k8s.io/kube-scheduler:v1.25.16
  [kube-proxy]=registry.k8s.io/kube-proxy:v1.25.16
  [etcd]=registry.k8s.io/etcd:3.5.9-0
  [coredns]=registry.k8s.io/coredns/coredns:v1.9.3
  [pause]=registry.k8s.io/pause:3.8
)
# The control plane and kube-proxy of v1.25.15, the version the `upgrade` scenario starts from.
declare -A old_names=(
  [kube-apiserver-v1.25.15]=registry.k8s.io/kube-apiserver:v1.25.15
  [kube-controller-manager-v1.25.15]=registry.k8s.io/kube-controller-manager:v1.25.15
  [kube-scheduler-v1.25.15]=registry.k8s.io/kube-scheduler:v1.25.15
  [kube-proxy-v1.25.15]=registry.k8s.io/kube-proxy:v1.25.15
)
if [ "${1:-}" = --list ]; then
  set="${2:-default}"
  case "$set" in default|v1.25.15|all) ;; *) echo "build.sh: unknown set $set (default, v1.25.15, all)" >&2; exit 2 ;; esac
  {
    if [ "$set" != v1.25.15 ]; then for k in "${!names[@]}"; do echo "$out/$k.tar ${names[$k]}"; done; fi
    if [ "$set" != default ]; then for k in "${!old_names[@]}"; do echo "$out/$k.tar ${old_names[$k]}"; done; fi
  } | sort
  exit 0
fi

# Control-plane images: the static pod manifests run the bare command name, found through PATH.
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  [ -s "$out/$c.tar" ] || mk "$out/$c.tar" "${names[$c]}" --file "$bin/$c:/usr/local/bin/$c" --dir /tmp
  [ -s "$out/$c-v1.25.15.tar" ] || mk "$out/$c-v1.25.15.tar" "${old_names[$c-v1.25.15]}" \
    --file "$bin/v1.25.15/$c:/usr/local/bin/$c" --dir /tmp
done
[ -s "$out/etcd.tar" ] || mk "$out/etcd.tar" "${names[etcd]}" --file "$bin/etcd:/usr/local/bin/etcd" \
  --dir /var/lib/etcd --dir /tmp
# kubeadm's CoreDNS Deployment only passes args; the image's entrypoint is /coredns.
[ -s "$out/coredns.tar" ] || mk "$out/coredns.tar" "${names[coredns]}" --file "$bin/coredns:/coredns" \
  --entrypoint '["/coredns"]'

# pause: a tiny static program of ours, rebuilt when its source changes (by content, not time: a
# fresh clone's pause.c is always newer than a kept archive, and the archive's time is part of what
# keys upstream's kept reference runs, see test.sh).
pause_source=$(sha256sum <"$here/pause.c" | cut -c1-64)
if [ ! -s "$out/pause.tar" ] || [ "$(cat "$out/pause.tar.source" 2>/dev/null)" != "$pause_source" ]; then
  tmp=$(mktemp -d)
  gcc -static -Os -o "$tmp/pause" "$here/pause.c"
  strip "$tmp/pause"
  mk "$out/pause.tar" "${names[pause]}" --file "$tmp/pause:/pause" --entrypoint '["/pause"]'
  echo "$pause_source" >"$out/pause.tar.source"
  rm -rf "$tmp"
fi

# kube-proxy runs iptables-save/-restore (and conntrack for UDP) inside its container: take the
# nf_tables flavour of Debian's iptables with its extension modules and every shared library they
# load, at the paths the dynamic loader and libxtables look in.
# kube_proxy ARCHIVE IMAGE BINARY
kube_proxy() {
  local archive=$1 image=$2 binary=$3 xt t libs l args
  xt=/usr/lib/x86_64-linux-gnu/xtables
  args=(--file "$binary:/usr/local/bin/kube-proxy" --tree "$xt:$xt"
        --file /usr/sbin/xtables-nft-multi:/usr/sbin/xtables-nft-multi
        --file /usr/sbin/conntrack:/usr/sbin/conntrack
        --link /lib:usr/lib --link /lib64:usr/lib64 --dir /run --dir /tmp)
  for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore \
           iptables-nft iptables-nft-save iptables-nft-restore ip6tables-nft ip6tables-nft-save \
           ip6tables-nft-restore; do
    args+=(--link "/usr/sbin/$t:xtables-nft-multi")
  done
  [ ! -e /etc/protocols ] || args+=(--file /etc/protocols:/etc/protocols)
  # Shared libraries: resolve through ldd, store under /usr/lib (the image's /lib links there).
  libs=$(ldd /usr/sbin/xtables-nft-multi /usr/sbin/conntrack "$xt"/*.so 2>/dev/null |
         awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
  for l in $libs; do
    case "$l" in
      */ld-linux-x86-64.so.2) args+=(--file "$l:/usr/lib64/ld-linux-x86-64.so.2") ;;
      *) args+=(--file "$l:/usr/lib/x86_64-linux-gnu/$(basename "$l")") ;;
    esac
  done
  mk "$archive" "$image" "${args[@]}"
}
[ -s "$out/kube-proxy.tar" ] || kube_proxy "$out/kube-proxy.tar" "${names[kube-proxy]}" "$bin/kube-proxy"
[ -s "$out/kube-proxy-v1.25.15.tar" ] ||
  kube_proxy "$out/kube-proxy-v1.25.15.tar" "${old_names[kube-proxy-v1.25.15]}" "$bin/v1.25.15/kube-proxy"
