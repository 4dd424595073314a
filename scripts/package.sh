#!/usr/bin/env bash
# Builds the Debian package `kubeadm` with cargo-deb and prints the .deb's path (the last line of
# standard output). The metadata (files, modes, dependencies) is `[package.metadata.deb]` in
# crates/cli/Cargo.toml; this script first builds the binaries and generates the assets cargo-deb
# packs that are not in the tree: the bash and zsh completions (`kubeadm completion bash|zsh`) and
# the man pages (`kubeadm-genman`, and kubeadm-rs(7) from crates/cli/packaging/, gzipped), into <target dir>/<profile dir>/kubeadm-deb/ (cargo-deb
# reads `target/release/…` assets from the profile's folder).
#
#   scripts/package.sh [--profile PROFILE] [--no-build]   default: release (what a user installs)
#
# The package test (crates/cli/tests/deb_package.rs) packs the `dev` profile's binaries that
# `cargo test` has built (`--profile dev --no-build`), which saves a release build (cargo-deb warns
# that the dev profile is not meant for releases). Pages are dated with SOURCE_DATE_EPOCH, by default
# the last commit's time, so that two builds of one commit give the same pages.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/package.sh [--profile PROFILE] [--no-build]"
profile=release
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?$usage}; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
command -v cargo-deb >/dev/null || { echo "package.sh: cargo-deb is missing: cargo install --locked cargo-deb" >&2; exit 1; }
target=$(cargo metadata --format-version 1 --no-deps --offline |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
case "$profile" in dev | test) outdir=debug ;; *) outdir=$profile ;; esac
[ "$build" = 0 ] || cargo build --locked --profile "$profile" -p kubeadm --bins >&2
bin="$target/$outdir"
assets="$bin/kubeadm-deb"
rm -rf "$assets"
mkdir -p "$assets/man1" "$assets/man7" "$assets/completions"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
"$bin/kubeadm-genman" "$assets/man1"
gzip -9n "$assets"/man1/*.1
gzip -9nc crates/cli/packaging/kubeadm-rs.7 >"$assets/man7/kubeadm-rs.7.gz"
"$bin/kubeadm" completion bash >"$assets/completions/kubeadm"
"$bin/kubeadm" completion zsh >"$assets/completions/_kubeadm"
# Beside the binaries (target/release/debian/): cargo-deb deletes older .debs of the package from its
# own default folder, target/debian/, on every run, the test's included.
out="$bin/debian"
mkdir -p "$out"
deb_args=(-p kubeadm --no-build --locked --profile "$profile" --output "$out")
# The dev profile's binary is large (line tables): compress it fast, for the test.
[ "$profile" = release ] || deb_args+=(--fast)
# Whoever builds the package for others is its maintainer, as Debian's tools read it.
[ -z "${DEBEMAIL:-}" ] || deb_args+=(--maintainer "${DEBFULLNAME:-kubeadm-rs packager} <$DEBEMAIL>")
deb=$(cargo deb "${deb_args[@]}" | tail -n 1)
echo "$deb"
