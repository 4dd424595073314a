#!/usr/bin/env bash
# Differential runner: runs two kubeadm binaries on a config, each in its own isolated root, and
# compares what they wrote and printed after normalising only what must differ between two runs
# (key material, serial numbers, signatures, key identifiers, timestamps, tokens, CA hashes).
#
#   testbed/diff.sh [--a KUBEADM] [--b KUBEADM] [--config FILE | --config-a FILE --config-b FILE]
#                   [--phase 'init phase certs all' ...] [--out DIR]
#
# Defaults: both sides upstream kubeadm v1.25.16; testbed/diff/default.yaml; the phases below, run in
# order in the same root: init phase certs all, kubeconfig all, control-plane all, etcd local,
# kubelet-start (against the testbed's fake systemctl), and the stdout of config images list.
# "--config=FILE" is appended to each phase that takes it. Each root is a fresh mount, UTS and
# network namespace (tmpfs over /etc/kubernetes, /var/lib/kubelet, /var/lib/etcd, overlays over /etc
# and /var, hostname "testbed-node", no network at all). Artifacts are copied out to DIR/{a,b}
# (default: a temporary directory, removed afterwards) and compared artifact by artifact.
# Exit status: 0 when every artifact matches, 1 when some differ, 2 on a usage or run error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}
a=$cache/upstream/kubeadm
b=$cache/upstream/kubeadm
config_a=$here/diff/default.yaml
config_b=""
out=""
phases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a=$(readlink -f "$2"); shift 2 ;;
    --b) b=$(readlink -f "$2"); shift 2 ;;
    --config) config_a=$(readlink -f "$2"); config_b=""; shift 2 ;;
    --config-a) config_a=$(readlink -f "$2"); shift 2 ;;
    --config-b) config_b=$(readlink -f "$2"); shift 2 ;;
    --phase) phases+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "diff.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$config_b" ] || config_b=$config_a
[ ${#phases[@]} -gt 0 ] || phases=("init phase certs all" "init phase kubeconfig all"
  "init phase control-plane all" "init phase etcd local" "init phase kubelet-start"
  "config images list")
[ "$(id -u)" = 0 ] || { echo "diff.sh needs root (namespaces, mounts)" >&2; exit 2; }
for f in "$a" "$b" "$config_a" "$config_b"; do [ -e "$f" ] || { echo "diff.sh: missing $f" >&2; exit 2; }; done
cleanup_out=""
if [ -z "$out" ]; then out=$(mktemp -d /tmp/kubeadm-rs-diff.XXXXXX); cleanup_out=$out; fi
mkdir -p "$out"
out=$(readlink -f "$out")
trap '[ -z "$cleanup_out" ] || rm -rf "$cleanup_out"' EXIT

# run_side NAME KUBEADM CONFIG: all phases in one fresh root, artifacts to $out/NAME.
run_side() {
  local side=$1 kubeadm=$2 config=$3 dir=$out/$1
  rm -rf "$dir"
  mkdir -p "$dir"/{bin,scratch,testbed-node,artifacts}
  cp "$here/lib/systemctl" "$dir/bin/systemctl"
  ln -s "$kubeadm" "$dir/bin/kubeadm"
  echo active >"$dir/testbed-node/kubelet.state"
  cp "$config" "$dir/config.yaml"
  printf '%s\n' "${phases[@]}" >"$dir/phases"
  unshare --mount --uts --net --propagation private bash -e -c '
    dir=$1
    hostname testbed-node
    ip link set lo up
    s=$dir/scratch
    mount -t tmpfs kt-diff "$s"
    for d in etc var; do
      mkdir -p "$s/$d/upper" "$s/$d/work"
      mount -t overlay "kt-diff-$d" -o "lowerdir=/$d,upperdir=$s/$d/upper,workdir=$s/$d/work" "/$d"
    done
    for d in /etc/kubernetes /var/lib/kubelet /var/lib/etcd; do mkdir -p "$d"; mount -t tmpfs kt-diff "$d"; done
    export PATH=$dir/bin:$PATH
    i=0
    while IFS= read -r phase; do
      i=$((i + 1))
      args=()
      case "$phase" in "config print"*|version*) ;; *) args=(--config="$dir/config.yaml") ;; esac
      # shellcheck disable=SC2086
      set +e
      kubeadm $phase "${args[@]}" >"$dir/artifacts/stdout-$i" 2>&1
      echo "exit status: $?" >>"$dir/artifacts/stdout-$i"
      set -e
      echo "kubeadm $phase" >"$dir/artifacts/command-$i"
    done <"$dir/phases"
    cp -a /etc/kubernetes "$dir/artifacts/etc-kubernetes"
    cp -a /var/lib/kubelet "$dir/artifacts/var-lib-kubelet"
    umount /etc/kubernetes /var/lib/kubelet /var/lib/etcd /var /etc "$s"
  ' _ "$dir"
}

run_side a "$a" "$config_a"
run_side b "$b" "$config_b"
python3 "$here/lib/compare.py" "$out/a/artifacts" "$out/b/artifacts"
