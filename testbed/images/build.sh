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
#   testbed/images/build.sh v1.25.15         also the v1.25.15 set (scripts/bench.sh's upgrade)
#
# Sets for --list: `default` (no SET) is the seven images of v1.25.16, which every node imports;
# `v1.24.17` is what kubeadm v1.24.17 deploys (kube-apiserver, kube-controller-manager,
# kube-scheduler and kube-proxy v1.24.17, etcd 3.5.6-0, CoreDNS v1.8.6, pause 3.7: upstream/v1.24.17/),
# which only the `upgrade` scenario imports (TB_NODE_IMAGE_SETS); `v1.25.15` is kube-apiserver,
# kube-controller-manager, kube-scheduler and kube-proxy v1.25.15 (upstream/v1.25.15/), which only the
# benchmark's upgrade imports and which are built only when asked for; `tools` is the testbed's own
# programs run as pods (dnscheck); `all` is default, v1.24.17 and tools.
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
# What kubeadm v1.24.17 deploys: the cluster the `upgrade` scenario takes over.
declare -A v124_names=(
  [kube-apiserver-v1.24.17]=registry.k8s.io/kube-apiserver:v1.24.17
  [kube-controller-manager-v1.24.17]=registry.k8s.io/kube-controller-manager:v1.24.17
  [kube-scheduler-v1.24.17]=registry.k8s.io/kube-scheduler:v1.24.17
  [kube-proxy-v1.24.17]=registry.k8s.io/kube-proxy:v1.24.17
  [etcd-3.5.6-0]=registry.k8s.io/etcd:3.5.6-0
  [coredns-v1.8.6]=registry.k8s.io/coredns/coredns:v1.8.6
  [pause-3.7]=registry.k8s.io/pause:3.7
)
# The testbed's own tools, run as pods: dnscheck (dnscheck/main.go) looks a name up from inside a pod.
declare -A tool_names=(
  [dnscheck]=kubeadm-rs.testbed/dnscheck:1
)
if [ "${1:-}" = --list ]; then
  set="${2:-default}"
  case "$set" in default|v1.24.17|v1.25.15|tools|all) ;;
    *) echo "build.sh: unknown set $set (default, v1.24.17, v1.25.15, tools, all)" >&2; exit 2 ;; esac
  {
    case "$set" in default|all) for k in "${!names[@]}"; do echo "$out/$k.tar ${names[$k]}"; done ;; esac
    case "$set" in v1.24.17|all) for k in "${!v124_names[@]}"; do echo "$out/$k.tar ${v124_names[$k]}"; done ;; esac
    case "$set" in tools|all) for k in "${!tool_names[@]}"; do echo "$out/$k.tar ${tool_names[$k]}"; done ;; esac
    case "$set" in v1.25.15) for k in "${!old_names[@]}"; do echo "$out/$k.tar ${old_names[$k]}"; done ;; esac
  } | sort
  exit 0
fi
with_v125_15=""
case "${1:-}" in "") ;; v1.25.15) with_v125_15=1 ;; *) echo "build.sh: unknown argument $1" >&2; exit 2 ;; esac

# Control-plane images: the static pod manifests run the bare command name, found through PATH.
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  [ -s "$out/$c.tar" ] || mk "$out/$c.tar" "${names[$c]}" --file "$bin/$c:/usr/local/bin/$c" --dir /tmp
  [ -s "$out/$c-v1.24.17.tar" ] || mk "$out/$c-v1.24.17.tar" "${v124_names[$c-v1.24.17]}" \
    --file "$bin/v1.24.17/$c:/usr/local/bin/$c" --dir /tmp
  [ -z "$with_v125_15" ] || [ -s "$out/$c-v1.25.15.tar" ] || mk "$out/$c-v1.25.15.tar" "${old_names[$c-v1.25.15]}" \
    --file "$bin/v1.25.15/$c:/usr/local/bin/$c" --dir /tmp
done
[ -s "$out/etcd.tar" ] || mk "$out/etcd.tar" "${names[etcd]}" --file "$bin/etcd:/usr/local/bin/etcd" \
  --dir /var/lib/etcd --dir /tmp
[ -s "$out/etcd-3.5.6-0.tar" ] || mk "$out/etcd-3.5.6-0.tar" "${v124_names[etcd-3.5.6-0]}" \
  --file "$bin/v1.24.17/etcd:/usr/local/bin/etcd" --dir /var/lib/etcd --dir /tmp
# kubeadm's CoreDNS Deployment only passes args; the image's entrypoint is /coredns.
[ -s "$out/coredns.tar" ] || mk "$out/coredns.tar" "${names[coredns]}" --file "$bin/coredns:/coredns" \
  --entrypoint '["/coredns"]'
[ -s "$out/coredns-v1.8.6.tar" ] || mk "$out/coredns-v1.8.6.tar" "${v124_names[coredns-v1.8.6]}" \
  --file "$bin/v1.24.17/coredns:/coredns" --entrypoint '["/coredns"]'

# pause: a tiny static program of ours, rebuilt when its source changes (by content, not time: a
# fresh clone's pause.c is always newer than a kept archive, and the archive's time is part of what
# keys upstream's kept reference runs, see test.sh).
pause_source=$(sha256sum <"$here/pause.c" | cut -c1-64)
if [ ! -s "$out/pause.tar" ] || [ ! -s "$out/pause-3.7.tar" ] || [ "$(cat "$out/pause.tar.source" 2>/dev/null)" != "$pause_source" ]; then
  tmp=$(mktemp -d)
  gcc -static -Os -o "$tmp/pause" "$here/pause.c"
  strip "$tmp/pause"
  mk "$out/pause.tar" "${names[pause]}" --file "$tmp/pause:/pause" --entrypoint '["/pause"]'
  # The same program as pause 3.7, the sandbox image kubeadm v1.24.17 gives its kubelets.
  mk "$out/pause-3.7.tar" "${v124_names[pause-3.7]}" --file "$tmp/pause:/pause" --entrypoint '["/pause"]'
  echo "$pause_source" >"$out/pause.tar.source"
  rm -rf "$tmp"
fi

# dnscheck: rebuilt when its source changes (by content, as pause).
dnscheck_source=$(cat "$here/dnscheck/main.go" "$here/dnscheck/go.mod" | sha256sum | cut -c1-64)
if [ ! -s "$out/dnscheck.tar" ] || [ "$(cat "$out/dnscheck.tar.source" 2>/dev/null)" != "$dnscheck_source" ]; then
  tmp=$(mktemp -d)
  (cd "$here/dnscheck" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$tmp/dnscheck" .)
  mk "$out/dnscheck.tar" "${tool_names[dnscheck]}" --file "$tmp/dnscheck:/dnscheck" --entrypoint '["/dnscheck"]'
  echo "$dnscheck_source" >"$out/dnscheck.tar.source"
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
[ -s "$out/kube-proxy-v1.24.17.tar" ] ||
  kube_proxy "$out/kube-proxy-v1.24.17.tar" "${v124_names[kube-proxy-v1.24.17]}" "$bin/v1.24.17/kube-proxy"
[ -z "$with_v125_15" ] || [ -s "$out/kube-proxy-v1.25.15.tar" ] ||
  kube_proxy "$out/kube-proxy-v1.25.15.tar" "${old_names[kube-proxy-v1.25.15]}" "$bin/v1.25.15/kube-proxy"
