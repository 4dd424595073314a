#!/usr/bin/env bash
# The benchmark: upstream kubeadm v1.25.16 and ours on the same work, alternately, compared pair by
# pair (the ratio ours/upstream of each pair, then their median), with each side's median and spread,
# CPU time and peak RSS. Figures go to the README by hand, never into tests (the machines are shared).
#
#   scripts/bench.sh [--runs N] [--offline-only | --testbed-only] [--testbed-runs N] [--joins N] [--no-upgrade]
#
# Offline (no cluster; root, since --rootfs chroots), --runs pairs each (default 10, after one warm-up):
#   offline-phases  `init phase certs all`, `kubeconfig all`, `control-plane all`, `etcd local`
#   init-dry-run    `kubeadm init --dry-run` whole
#   version, help   start-up alone
#   binary size
# On the testbed (root; skipped with --offline-only), --testbed-runs runs of testbed/scenarios/bench.sh
# per side (default 1, the order alternating): init to exit, to node Ready, to CoreDNS available; one
# worker join to exit and to Ready; --joins workers (default 8) joining at once, to the last exit and
# to all Ready; `upgrade apply` v1.25.15 → v1.25.16 to exit (not with --no-upgrade); the peak RSS
# of each kubeadm process; and a timeline of each command's output (<out>/*.timeline).
#
# Upstream is $KUBEADM_UPSTREAM, else the cache's build (testbed/upstream/build.sh kubeadm makes it);
# ours is the release build of the workspace, built here. Keep the machine otherwise idle.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
runs=10
testbed=1
offline=1
testbed_runs=1
joins=8
upgrade=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --offline-only) testbed=0; shift ;;
    --testbed-only) offline=0; shift ;;
    --testbed-runs) testbed_runs=$2; shift 2 ;;
    --joins) joins=$2; shift 2 ;;
    --no-upgrade) upgrade=0; shift ;;
    *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench: run as root (--rootfs chroots; the testbed needs root)" >&2; exit 1; }
cache="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}"
upstream="${KUBEADM_UPSTREAM:-$cache/upstream/kubeadm}"
[ -x "$upstream" ] || "$repo/testbed/upstream/build.sh" kubeadm
[ -x "$upstream" ] || { echo "bench: no upstream kubeadm at $upstream" >&2; exit 1; }
(cd "$repo" && cargo build --release --locked -p kubeadm --bin kubeadm >&2)
ours="$repo/target/release/kubeadm"
out="${KUBEADM_BENCH_OUT:-$(mktemp -d)}"
mkdir -p "$out"

echo "bench $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "upstream: $upstream ($("$upstream" version -o short))"
echo "ours:     $ours ($("$ours" version -o short), $(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo '?'))"
if [ "$offline" = 1 ]; then
  echo "offline, $runs pairs: median wall [p25-p75]; ratio ours/upstream: median of the pairs [min-max]; cpu and peak rss upstream/ours"
  python3 "$repo/scripts/bench.py" offline --upstream "$upstream" --ours "$ours" --runs "$runs" --json "$out/offline.json"
fi

if [ "$testbed" = 1 ]; then
  : >"$out/testbed.jsonl"
  for run in $(seq 1 "$testbed_runs"); do
    order="upstream ours"
    [ $((run % 2)) = 1 ] || order="ours upstream"
    for side in $order; do
      bin=$upstream
      [ "$side" = upstream ] || bin=$ours
      TB_BENCH_OUT="$out/testbed.jsonl" TB_BENCH_SIDE=$side TB_BENCH_RUN=$run TB_BENCH_JOINS=$joins \
        TB_BENCH_UPGRADE=$upgrade "$repo/testbed/scenario.sh" bench --kubeadm "$bin" >"$out/testbed-$side-$run.log" 2>&1 ||
        { tail -n 40 "$out/testbed-$side-$run.log" >&2; echo "bench: the testbed run failed ($side, run $run; log in $out)" >&2; exit 1; }
    done
  done
  echo "testbed, $testbed_runs run(s) per side, $joins joins at once: median wall [p25-p75]; ratio ours/upstream [min-max]; peak rss of the kubeadm process"
  python3 "$repo/scripts/bench.py" summary "$out/testbed.jsonl" --json "$out/testbed.json"
fi
echo "raw results in $out"
