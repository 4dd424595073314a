#!/usr/bin/env bash
# The project's test command: lints, the dependency-graph check and every test, including the
# differential tests that run upstream kubeadm v1.25.16 (built from Go modules when missing).
# `--long` also runs the testbed's runs CI leaves out (see testbed/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  --long) export TB_LONG=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--long]" >&2; exit 2 ;;
esac
testbed/upstream/build.sh kubeadm
# As root, the other upstream components too (the testbed and the API-server tests run them); about
# 17 minutes cold on 2 cores, nothing when cached.
if [ "$(id -u)" = 0 ]; then testbed/upstream/build.sh all; fi
# The Go YAML oracle for the codec's property tests (a few seconds to build).
(cd testbed/goyaml && GOSUMDB=off GOFLAGS=-mod=mod go build -o goyaml .)
export KUBEADM_GOYAML="$PWD/testbed/goyaml/goyaml"
export KUBEADM_UPSTREAM="${KUBEADM_UPSTREAM:-${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/kubeadm}"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
python3 .ci/depgraph.py
python3 .ci/modcycles.py
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace
# The tests ignored by default because they need something a plain `cargo test` does not have: the
# Go YAML oracle (built above) and, as root, a real containerd the CRI tests start in a temp dir.
cargo test -p kubeadm-yaml --test oracle_proptest -- --ignored
if [ "$(id -u)" = 0 ]; then cargo test -p kubeadm-host --test cri_containerd -- --ignored; fi
# The fuzz targets of fuzz/ (cargo fuzz, installed by .ci/run), FUZZ_SECONDS each: 30 here, to keep
# CI's time, from a fixed seed (FUZZ_SEED); the long run is `scripts/fuzz.sh -t 450` (an hour over
# the eight targets, random seeds).
if cargo fuzz --version >/dev/null 2>&1; then
  FUZZ_SEED="${FUZZ_SEED:-1}" scripts/fuzz.sh -t "${FUZZ_SECONDS:-30}"
else
  echo "fuzz skipped: cargo fuzz is not installed (cargo install --locked cargo-fuzz)"
fi
# The real-node testbed (root only): upstream's and our kubeadm init, join, upgrade and reset on
# nodes in namespaces.
if [ "$(id -u)" = 0 ]; then bash testbed/test.sh; else echo "testbed skipped: it needs root"; fi
