#!/usr/bin/env bash
# Benchmark: upstream kubeadm and ours on `init phase certs all` + `init phase kubeconfig all`,
# each in a fresh --rootfs temp dir (wiped by hyperfine's --prepare before every run), then the
# ratio of the mean times. Needs root (--rootfs chroots) and hyperfine.
#
#   scripts/bench-certs.sh [runs]        (default 10 runs each, after 2 warm-ups)
#
# Upstream is $KUBEADM_UPSTREAM, else ~/.cache/kubeadm-rs/upstream/kubeadm; ours is the release
# build of the workspace (built here).
set -euo pipefail

runs="${1:-10}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
upstream="${KUBEADM_UPSTREAM:-$HOME/.cache/kubeadm-rs/upstream/kubeadm}"

command -v hyperfine >/dev/null || { echo "hyperfine is missing (apt-get install -y hyperfine)" >&2; exit 1; }
[ -x "$upstream" ] || { echo "upstream kubeadm not found at $upstream" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root: --rootfs chroots" >&2; exit 1; }

(cd "$repo" && cargo build --release -p kubeadm --bin kubeadm >&2)
ours="$repo/target/release/kubeadm"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
up_root="$work/up"
our_root="$work/ours"
mkdir -p "$up_root" "$our_root"

# A fixed config, so neither binary looks up a version or host facts that differ between runs.
cat >"$work/kubeadm.yaml" <<'EOF'
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.5
nodeRegistration:
  name: node1
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
EOF

cmd() { # binary root
    echo "$1 --rootfs $2 init phase certs all --config /kubeadm.yaml >/dev/null 2>&1 && $1 --rootfs $2 init phase kubeconfig all --config /kubeadm.yaml >/dev/null 2>&1"
}
prep() { # root
    echo "rm -rf $1/etc && cp $work/kubeadm.yaml $1/kubeadm.yaml"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
hyperfine --warmup 2 --runs "$runs" --export-json "$work/result.json" \
    --prepare "$(prep "$up_root")" -n upstream "$(cmd "$upstream" "$up_root")" \
    --prepare "$(prep "$our_root")" -n kubeadm-rs "$(cmd "$ours" "$our_root")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/result.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
up, ours = r["upstream"]["mean"], r["kubeadm-rs"]["mean"]
print(f"upstream {up*1000:.1f} ms, kubeadm-rs {ours*1000:.1f} ms, ratio upstream/ours = {up/ours:.2f}x")
EOF
