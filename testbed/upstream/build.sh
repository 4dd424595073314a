#!/usr/bin/env bash
# Builds upstream Kubernetes v1.25.16 commands from Go modules into a cache outside the repository.
#
#   testbed/upstream/build.sh [COMMAND...]      default: kubeadm
#
# The binaries land in ${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/ and are built only when
# missing. Notes:
# - Some k8s.io staging modules are not served at v0.25.16 by the module proxy reachable here
#   (cluster-bootstrap, controller-manager, kube-controller-manager, kube-proxy, sample-apiserver);
#   go.mod pins those at v0.25.15, the nearest served version.
# - The checksum database does not answer for all of them either, so go.sum (committed) is the
#   authority and GOSUMDB is off for these builds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream"
mkdir -p "$out"
export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0
version=v1.25.16
commit=c5f43560a4f98f2af3743a59299fb79f07924373
ldflags="-s -w"
for kv in "gitVersion=$version" gitMajor=1 gitMinor=25 "gitCommit=$commit" gitTreeState=clean \
          buildDate=2023-11-15T22:15:33Z; do
  ldflags="$ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(kubeadm)
cd "$here"
for c in "${cmds[@]}"; do
  if [ -x "$out/$c" ]; then continue; fi
  echo "building upstream $c $version" >&2
  go build -trimpath -ldflags "$ldflags" -o "$out/$c.tmp" "k8s.io/kubernetes/cmd/$c"
  mv "$out/$c.tmp" "$out/$c"
done
