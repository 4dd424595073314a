#!/usr/bin/env bash
# The testbed's test suite (root only): builds what is missing, proves the differential runner, and
# runs every scenario with the upstream kubeadm (or --kubeadm PATH). Ends with "testbed: N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=("$@")
passed=0 failed=0
check() {
  local name=$1
  shift
  echo "=== testbed: $name" >&2
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "=== testbed: $name FAILED" >&2; fi
}
"$here/upstream/build.sh" all && "$here/images/build.sh" || { echo "testbed: 0 passed, 1 failed"; exit 1; }
check "diff selftest" "$here/diff/selftest.sh"
for s in $("$here/scenario.sh" --list); do
  check "scenario $s" "$here/scenario.sh" "$s" "${args[@]}"
done
echo "testbed: $passed passed, $failed failed"
[ "$failed" = 0 ]
