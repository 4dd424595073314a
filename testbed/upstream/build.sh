#!/usr/bin/env bash
# Builds the upstream programs the testbed runs, from Go modules, into a cache outside the repository.
#
#   testbed/upstream/build.sh [PROGRAM...]      default: kubeadm
#   testbed/upstream/build.sh all               every program below
#
# Programs: kubeadm kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
#           (Kubernetes v1.25.16, this directory's go.mod), etcd (v3.5.9, etcd/go.mod: the version
#           kubeadm v1.25.16 deploys), coredns (v1.9.3, coredns/go.mod), crictl (cri-tools v1.34.0,
#           crictl/go.mod); v1.24.17/kubeadm v1.24.17/kubelet v1.24.17/kube-apiserver
#           v1.24.17/kube-controller-manager v1.24.17/kube-scheduler v1.24.17/kube-proxy (Kubernetes
#           v1.24.17, v1.24.17/go.mod), v1.24.17/etcd (3.5.6, etcd-3.5.6/go.mod) and
#           v1.24.17/coredns (v1.8.6, coredns-1.8.6/go.mod): the cluster kubeadm v1.24.17 makes, which
#           the `upgrade` scenario takes over (they land in upstream/v1.24.17/; `all` has them);
#           v1.25.15/kube-apiserver v1.25.15/kube-controller-manager v1.25.15/kube-scheduler
#           v1.25.15/kube-proxy (Kubernetes v1.25.15, v1.25.15/go.mod: what scripts/bench.sh's
#           upgrade starts from; they land in upstream/v1.25.15/, and only when named).
#
# The binaries land in ${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/ and are built only when
# missing; all are static (CGO_ENABLED=0) so that they can be dropped into a from-scratch image. Notes:
# - Some k8s.io staging modules are not served at v0.25.16 by the module proxy reachable here
#   (cluster-bootstrap, controller-manager, kube-controller-manager, kube-proxy, sample-apiserver);
#   go.mod pins those at v0.25.15, the nearest served version.
# - The checksum database does not answer for all of them either, so go.sum (committed) is the
#   authority and GOSUMDB is off for these builds.
# - cri-tools is served only from v1.34.0 on; see crictl/tools.go.
# - v1.25.15/go.mod pins every staging module at v0.25.15 (all served); it is a module of its own so
#   that the two Kubernetes versions never share a build list.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream"
mkdir -p "$out"
export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0
linkflags="-s -w"

k8s_version=v1.25.16
k8s_commit=c5f43560a4f98f2af3743a59299fb79f07924373
k8s_ldflags="$linkflags"
for kv in "gitVersion=$k8s_version" gitMajor=1 gitMinor=25 "gitCommit=$k8s_commit" gitTreeState=clean \
          buildDate=2023-11-15T22:15:33Z; do
  k8s_ldflags="$k8s_ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

# v1.25.15: the commit of the v1.25.15 tag is in neither the module zip nor the proxy's .info (which
# has no Origin for it, unlike v1.25.16's), so gitCommit is left empty; buildDate is the tag's time
# as the module proxy reports it (`go list -m -json k8s.io/kubernetes@v1.25.15`: 2023-10-18T16:56:39Z).
# Only gitVersion matters to kubeadm (it reads the API server's /version to plan an upgrade).
# v1.24.17: kubeadm, the kubelet, the control plane and kube-proxy of the cluster the `upgrade`
# scenario takes over (made by kubeadm v1.24.17, upgraded by ours to v1.25.16). v1.24.17/go.mod
# carries k8s.io/kubernetes v1.24.17's own replace directives (the staging modules at v0.24.17 and
# every dependency at the version that release pins), so the build list is that release's. The
# commit is the one the module proxy's .info gives (Origin.Hash), buildDate the tag's time there.
k8s_v124_ldflags="$linkflags"
for kv in gitVersion=v1.24.17 gitMajor=1 gitMinor=24 gitCommit=22a9682c8fe855c321be75c5faacde343f909b04 \
          gitTreeState=clean buildDate=2023-08-23T23:35:27Z; do
  k8s_v124_ldflags="$k8s_v124_ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

k8s_old_version=v1.25.15
k8s_old_ldflags="$linkflags"
for kv in "gitVersion=$k8s_old_version" gitMajor=1 gitMinor=25 gitCommit= gitTreeState=clean \
          buildDate=2023-10-18T16:56:39Z; do
  k8s_old_ldflags="$k8s_old_ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

# build NAME MODULE_DIR PACKAGE LDFLAGS
build() {
  local name=$1 dir=$2 pkg=$3 flags=$4 start
  if [ -x "$out/$name" ]; then return 0; fi
  echo "building upstream $name ($pkg)" >&2
  start=$(date +%s)
  mkdir -p "$(dirname "$out/$name")"
  (cd "$dir" && go build -trimpath -ldflags "$flags" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
  echo "built $name in $(( $(date +%s) - start ))s" >&2
}

old=(v1.25.15/kube-apiserver v1.25.15/kube-controller-manager v1.25.15/kube-scheduler v1.25.15/kube-proxy)
v124=(v1.24.17/kubeadm v1.24.17/kubelet v1.24.17/kube-apiserver v1.24.17/kube-controller-manager
      v1.24.17/kube-scheduler v1.24.17/kube-proxy v1.24.17/etcd v1.24.17/coredns)
# `all` is what the test suite needs; the v1.25.15 programs are built only for the benchmark's upgrade.
all=(kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet etcd coredns crictl
     "${v124[@]}")
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(kubeadm)
[ "${progs[*]}" != all ] || progs=("${all[@]}")
for p in "${progs[@]}"; do
  case "$p" in
    kubeadm|kubectl|kube-apiserver|kube-controller-manager|kube-scheduler|kube-proxy|kubelet)
      build "$p" "$here" "k8s.io/kubernetes/cmd/$p" "$k8s_ldflags" ;;
    v1.25.15/kube-apiserver|v1.25.15/kube-controller-manager|v1.25.15/kube-scheduler|v1.25.15/kube-proxy)
      build "$p" "$here/v1.25.15" "k8s.io/kubernetes/cmd/${p#*/}" "$k8s_old_ldflags" ;;
    v1.24.17/kubeadm|v1.24.17/kubelet|v1.24.17/kube-apiserver|v1.24.17/kube-controller-manager|v1.24.17/kube-scheduler|v1.24.17/kube-proxy)
      build "$p" "$here/v1.24.17" "k8s.io/kubernetes/cmd/${p#*/}" "$k8s_v124_ldflags" ;;
    # etcd 3.5.6 and CoreDNS v1.8.6: what kubeadm v1.24.17 deploys (constants.DefaultEtcdVersion
    # 3.5.6-0, constants.CoreDNSVersion v1.8.6).
    v1.24.17/etcd)
      build "$p" "$here/etcd-3.5.6" go.etcd.io/etcd/server/v3 "$linkflags" ;;
    v1.24.17/coredns)
      build "$p" "$here/coredns-1.8.6" github.com/coredns/coredns \
        "$linkflags -checklinkname=0 -X github.com/coredns/coredns/coremain.GitCommit=v1.8.6" ;;
    etcd)
      build etcd "$here/etcd" go.etcd.io/etcd/server/v3 "$linkflags" ;;
    coredns)
      # CoreDNS v1.9.3's golang.org/x/net reaches syscall.recvmsg through //go:linkname, which Go
      # 1.23+ refuses at link time ("invalid reference to syscall.recvmsg") unless told not to check.
      build coredns "$here/coredns" github.com/coredns/coredns \
        "$linkflags -checklinkname=0 -X github.com/coredns/coredns/coremain.GitCommit=v1.9.3" ;;
    crictl)
      build crictl "$here/crictl" sigs.k8s.io/cri-tools/cmd/crictl \
        "$linkflags -X sigs.k8s.io/cri-tools/pkg/version.Version=v1.34.0" ;;
    *) echo "build.sh: unknown program $p (known: ${all[*]} ${old[*]})" >&2; exit 2 ;;
  esac
done
