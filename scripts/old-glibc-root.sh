#!/usr/bin/env bash
# Makes (once) a Debian 11 "bullseye" root, whose C library is glibc 2.31 (as Ubuntu 20.04's and older
# than RHEL 9's), for the static binaries' smoke test (crates/cli/tests/static_binaries.rs): a
# dynamically linked kubeadm built on this machine (glibc 2.36) does not start there. Prints the
# root's path. Kept in ${KUBEADM_RS_CACHE:-~/.cache/kubeadm-rs}/roots/bullseye; root only
# (debootstrap). The Debian mirror is the one this machine's apt uses, read from its sources.
set -euo pipefail
root="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/roots/bullseye"
if [ -f "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "old-glibc-root.sh: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "old-glibc-root.sh: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
mirror=$({ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
  grep -oE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' |
  grep -oE '[a-z]+://[^[:space:]]+' | head -n 1)
[ -n "$mirror" ] || { echo "old-glibc-root.sh: no Debian mirror in apt's sources" >&2; exit 1; }
rm -rf "$root" "$root.tmp"
mkdir -p "$(dirname "$root")"
echo "old-glibc-root.sh: debootstrap bullseye (minbase) into $root" >&2
debootstrap --variant=minbase bullseye "$root.tmp" "$mirror" >"$root.log" 2>&1 ||
  { tail -n 20 "$root.log" >&2; exit 1; }
touch "$root.tmp/.complete"
mv "$root.tmp" "$root"
echo "$root"
