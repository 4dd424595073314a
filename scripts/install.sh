#!/usr/bin/env bash
# Installs our kubeadm into ~/.local/bin (cargo install). The build needs `protoc` (the CRI and etcd
# gRPC stubs are generated at build time): when it is missing it is installed from Debian's packages,
# as root or through sudo. Nothing else outside ~/.local and cargo's own directories is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v protoc >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq protobuf-compiler libprotobuf-dev >/dev/null
fi
cargo install --locked --path crates/cli --bin kubeadm --root "$HOME/.local"
