#!/usr/bin/env bash
# The project's test command: lints, the dependency-graph check and every test, including the
# differential tests that run upstream kubeadm v1.25.16 (built from Go modules when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
testbed/upstream/build.sh kubeadm
# As root, the other upstream components too (the testbed and the API-server tests run them); about
# 17 minutes cold on 2 cores, nothing when cached.
if [ "$(id -u)" = 0 ]; then testbed/upstream/build.sh all; fi
# The Go YAML oracle for the codec's property tests (a few seconds to build).
(cd testbed/goyaml && GOSUMDB=off GOFLAGS=-mod=mod go build -o goyaml .)
export KUBEADM_GOYAML="$PWD/testbed/goyaml/goyaml"
export KUBEADM_UPSTREAM="${KUBEADM_UPSTREAM:-${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/kubeadm}"
# As root, the CRI client is also tested against a real containerd it starts in a temp dir.
if [ "$(id -u)" = 0 ] && command -v containerd >/dev/null; then export KUBEADM_RS_CONTAINERD=1; fi
cargo fmt --all -- --check
python3 .ci/depgraph.py
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace
# The real-node testbed (root only): upstream kubeadm init, join and reset on nodes in namespaces.
if [ "$(id -u)" = 0 ]; then bash testbed/test.sh; else echo "testbed skipped: it needs root"; fi
