#!/usr/bin/env bash
# Proves the differential runner's normalisation (needs root):
#   1. upstream against itself on the same config: no artifact may differ (exit 0);
#   2. upstream against itself with one config change (an extra API server SAN): the runner must
#      report exactly the artifacts that change (apiserver.crt and the certs phase output).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/kubeadm-rs-diff-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "diff selftest FAILED: $*" >&2; exit 1; }

"$here/diff.sh" >"$tmp/same.txt" || { cat "$tmp/same.txt"; fail "upstream vs upstream reported differences"; }
tail -n 1 "$tmp/same.txt"

sed 's/^kubernetesVersion: v1.25.16$/&\napiServer:\n  certSANs: [kubeadm-rs.test]/' "$here/diff/default.yaml" >"$tmp/san.yaml"
grep -q kubeadm-rs.test "$tmp/san.yaml" || fail "could not derive the changed config"
if "$here/diff.sh" --config-b "$tmp/san.yaml" >"$tmp/changed.txt"; then
  cat "$tmp/changed.txt"
  fail "a changed config reported no difference"
fi
got=$(grep -E '^(DIFFERS|only in)' "$tmp/changed.txt" | sort | tr '\n' ' ')
want="DIFFERS:   etc-kubernetes/pki/apiserver.crt DIFFERS:   stdout-1 "
[ "$got" = "$want" ] || { cat "$tmp/changed.txt"; fail "expected [$want], got [$got]"; }
grep -q '^    +.*DNS:kubeadm-rs.test' "$tmp/changed.txt" || fail "the diff does not show the new SAN"
echo "changed config: differences reported as expected: $got"
