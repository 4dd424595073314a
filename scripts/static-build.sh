#!/usr/bin/env bash
# Builds our kubeadm as a static executable for x86_64 and aarch64 Linux (Rust's musl targets: musl's
# C library is linked in, so the binary runs on any Linux of that architecture whatever its glibc, as
# upstream's CGO_ENABLED=0 kubeadm does) and prints each binary's path, one a line.
#
#   scripts/static-build.sh [--profile PROFILE] [TARGET...]
#       default: release, x86_64-unknown-linux-musl aarch64-unknown-linux-musl
#
# Needs the targets' standard libraries (`rustup target add …`, done here when missing), musl-gcc
# (Debian's musl-tools) for the C parts (aws-lc, ring) on x86_64, and Debian's cross toolchain
# gcc-aarch64-linux-gnu for aarch64: it compiles the C parts and links, with the musl C library and
# start files Rust's target ships (self-contained linking). .ci/run installs these.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/static-build.sh [--profile PROFILE] [TARGET...]"
profile=release
if [ "${1:-}" = --profile ]; then
  profile=${2:?$usage}
  shift 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
installed=$(rustup target list --installed)
for t in "${targets[@]}"; do
  case "$t" in
    x86_64-unknown-linux-musl) ;;
    aarch64-unknown-linux-musl)
      export CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc AR_aarch64_unknown_linux_musl=aarch64-linux-gnu-ar
      export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc ;;
    *) echo "static-build.sh: unknown target $t (x86_64-unknown-linux-musl, aarch64-unknown-linux-musl)" >&2; exit 2 ;;
  esac
  grep -qx "$t" <<<"$installed" || rustup target add "$t" >&2
done
target_dir=$(cargo metadata --format-version 1 --no-deps --offline |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
case "$profile" in dev | test) outdir=debug ;; *) outdir=$profile ;; esac
# One cargo run for every target: the workspace's crates build one after another for each target,
# so two targets keep both cores busy.
target_args=()
for t in "${targets[@]}"; do target_args+=(--target "$t"); done
cargo build --locked --profile "$profile" -p kubeadm --bin kubeadm "${target_args[@]}" >&2
for t in "${targets[@]}"; do echo "$target_dir/$t/$outdir/kubeadm"; done
