#!/usr/bin/env bash
# The testbed's test suite (root only): builds what is missing, proves the differential runner, and
# runs every scenario with the upstream kubeadm (or --kubeadm PATH), and, without --kubeadm, the
# scenarios about our files (static-pods) with our binary too. Ends with "testbed: N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=("$@")
passed=0 failed=0 failures=""
check() {
  local name=$1
  shift
  echo "=== testbed: $name" >&2
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures="$failures
  FAILED: $name"
    echo "=== testbed: $name FAILED" >&2
  fi
}
"$here/upstream/build.sh" all && "$here/images/build.sh" || { echo "testbed: 0 passed, 1 failed"; exit 1; }
check "diff selftest" "$here/diff/selftest.sh"
# What the joins of `ha` wrote, by run, to compare upstream's with ours.
ha_files=$(mktemp -d)
trap 'rm -rf "$ha_files"' EXIT
for s in $("$here/scenario.sh" --list); do
  check "scenario $s" env TB_HA_FILES="$ha_files/upstream" "$here/scenario.sh" "$s" "${args[@]}"
done
# Scenarios whose point is our kubeadm's files on real nodes also run with our binary when no --kubeadm
# was given (cargo builds it, a no-op after `cargo test`).
ours_scenarios="static-pods api-objects images-pull"
if [ ${#args[@]} = 0 ]; then
  # cargo resolves a relative CARGO_TARGET_DIR from the workspace, where it runs here.
  if ! ours=$(cd "$here/.." && cargo build -q -p kubeadm >&2 && readlink -e "${CARGO_TARGET_DIR:-target}/debug/kubeadm"); then
    failed=$((failed + 1))
    failures="$failures
  FAILED: cargo build -p kubeadm"
    echo "=== testbed: cargo build -p kubeadm FAILED" >&2
  else
    for s in $ours_scenarios; do
      check "scenario $s (our kubeadm)" "$here/scenario.sh" "$s" --kubeadm "$ours"
    done
    # Each side of a join with the other's: our init, then upstream's join (with the command ours
    # printed); upstream's init, then our join (with the command upstream printed). Our reset after both.
    upstream="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/kubeadm"
    check "scenario init-join-reset (our init, upstream join, our upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$upstream" TB_UPGRADE_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --kubeadm "$ours"
    check "scenario init-join-reset (upstream init, our join, upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --kubeadm "$upstream"
    # And ours alone, from init to reset.
    check "scenario init-join-reset (our init, join, upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --kubeadm "$ours"
    # ha (three control planes behind the load balancer, a worker): ours alone, upstream's init with our
    # joins, our init with upstream's joins; our resets in all three.
    check "scenario ha (our init, joins, upgrade node on control planes and resets)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" TB_HA_FILES="$ha_files/ours" TB_HA_UPGRADE="$ours" \
      "$here/scenario.sh" ha --kubeadm "$ours"
    # Byte for byte and mode: the manifests (etcd's with its --initial-cluster) and the kubelet's files
    # our control-plane and worker joins wrote, against upstream's on the same nodes.
    check "ha: our joins wrote upstream's manifests and kubelet files" diff -r "$ha_files/upstream" "$ha_files/ours"
    check "scenario ha (upstream init, our joins and resets)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" "$here/scenario.sh" ha --kubeadm "$upstream"
    check "scenario ha (our init, upstream joins, our resets)" \
      env TB_JOIN_KUBEADM="$upstream" TB_RESET_KUBEADM="$ours" "$here/scenario.sh" ha --kubeadm "$ours"
  fi
fi
# The failures again at the very end, where a truncated log still shows them.
[ -z "$failures" ] || echo "testbed: failures:$failures"
echo "testbed: $passed passed, $failed failed"
[ "$failed" = 0 ]
