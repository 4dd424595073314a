#!/usr/bin/env bash
# The project's test command: lints, the dependency-graph check and every test, including the
# differential tests that run upstream kubeadm v1.25.16 (built from Go modules when missing).
# `--long` also runs the testbed's runs CI leaves out (see testbed/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=10
case "${1:-}" in
  --long) export TB_LONG=1 fuzz_seconds=60 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--long]" >&2; exit 2 ;;
esac
# Each stage's duration, printed at the end (also when a stage fails), so that a slow stage shows in
# CI's log. The testbed prints its checks' durations in its own summary.
stages=()
stage() {
  local name=$1 start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  stages+=("$(printf '%6ds  %s%s' $(($(date +%s) - start)) "$name" "$([ $rc = 0 ] || echo "  (failed, exit $rc)")")")
  return $rc
}
summary() {
  echo "test.sh: stage durations"
  local l
  for l in "${stages[@]}"; do echo "  $l"; done
  echo "  $(printf '%6ds' $(($(date +%s) - test_start)))  in all"
}
test_start=$(date +%s)
trap summary EXIT
stage "upstream kubeadm build" testbed/upstream/build.sh kubeadm
# As root, the other upstream components too (the testbed and the API-server tests run them); about
# 17 minutes cold on 2 cores, nothing when cached.
if [ "$(id -u)" = 0 ]; then stage "upstream builds (all)" testbed/upstream/build.sh all; fi
# The Go YAML oracle for the codec's property tests (a few seconds to build).
stage "Go YAML oracle build" bash -c 'cd testbed/goyaml && GOSUMDB=off GOFLAGS=-mod=mod go build -o goyaml .'
export KUBEADM_GOYAML="$PWD/testbed/goyaml/goyaml"
export KUBEADM_UPSTREAM="${KUBEADM_UPSTREAM:-${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/kubeadm}"
stage "rustfmt" cargo fmt --all -- --check
stage "rustfmt (fuzz)" cargo fmt --manifest-path fuzz/Cargo.toml -- --check
stage "dependency graph" python3 .ci/depgraph.py
stage "module cycles" python3 .ci/modcycles.py
stage "workflow folders" python3 .ci/workflows.py
stage "dependency audit (cargo deny)" scripts/deny.sh --selftest
stage "clippy" cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" stage "rustdoc" cargo doc --workspace --no-deps --quiet
# The static executables for x86_64 and aarch64 (dev profile: the release build's flags, without its
# optimisation time) and, as root, a Debian 11 root (glibc 2.31) for their smoke test in
# crates/cli/tests/static_binaries.rs; the testbed's package carries the x86_64 one.
stage "static builds (x86_64, aarch64)" scripts/static-build.sh --profile dev >"${TMPDIR:-/tmp}/kubeadm-static-bins"
{ read -r KUBEADM_STATIC_X86_64; read -r KUBEADM_STATIC_AARCH64; } <"${TMPDIR:-/tmp}/kubeadm-static-bins"
export KUBEADM_STATIC_X86_64 KUBEADM_STATIC_AARCH64
if [ "$(id -u)" = 0 ]; then
  stage "old-glibc root" scripts/old-glibc-root.sh >"${TMPDIR:-/tmp}/kubeadm-old-root"
  KUBEADM_OLD_GLIBC_ROOT=$(cat "${TMPDIR:-/tmp}/kubeadm-old-root")
  export KUBEADM_OLD_GLIBC_ROOT
fi
# With the tests ignored by default because they need something a plain `cargo test` does not have:
# the Go YAML oracle (built above) and, as root, a real containerd the CRI tests start in a temp dir.
# In the same run as the rest (a second `cargo test -p …` resolved other features and rebuilt).
# In a network of their own (scripts/offline.sh): nothing a test runs reaches outside the machine,
# and both kubeadms see the same host address whatever the machine's is.
if [ "$(id -u)" = 0 ]; then
  stage "cargo test" scripts/offline.sh cargo test --workspace -- --include-ignored
else
  stage "cargo test" scripts/offline.sh cargo test --workspace
  stage "YAML oracle property tests" cargo test --workspace --test oracle_proptest -- --ignored
fi
# The fuzz targets of fuzz/ (cargo fuzz, installed by .ci/run): every regression input (each crash
# found before), then FUZZ_SECONDS of fuzzing each from a fixed seed (FUZZ_SEED): 10 here, for CI's
# time (from a fixed seed and a fresh corpus a run explores what the previous one did, so its
# seconds only catch a regression near the seeds; 30 before); `--long` gives them 60, and the long
# run is `scripts/fuzz.sh -t 450` (an hour over the eight targets, random seeds).
if cargo fuzz --version >/dev/null 2>&1; then
  FUZZ_SEED="${FUZZ_SEED:-1}" stage "fuzz targets" scripts/fuzz.sh -t "${FUZZ_SECONDS:-$fuzz_seconds}"
else
  echo "fuzz skipped: cargo fuzz is not installed (cargo install --locked cargo-fuzz)"
fi
# The real-node testbed (root only): upstream's and our kubeadm init, join, upgrade and reset on
# nodes in namespaces.
if [ "$(id -u)" = 0 ]; then stage "testbed" bash testbed/test.sh; else echo "testbed skipped: it needs root"; fi
