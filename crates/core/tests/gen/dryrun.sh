#!/bin/sh
# Regenerates the golden `kubeadm init --dry-run` outputs the cluster_* tests read, from the
# upstream kubeadm binary. Run as root from the repository root (upstream's dry-run still writes a
# scratch directory under /etc/kubernetes/tmp and reads /etc/kubernetes/pki, which should not exist):
#
#   KUBEADM_UPSTREAM=/path/to/upstream/kubeadm sh crates/core/tests/gen/dryrun.sh
#
# default.yaml runs without --upload-certs; the others with it. external.yaml runs with proxy
# variables in the environment, which upstream passes on to kube-proxy (cluster_dryrun.rs
# passes the same list). The host must not run systemd-resolved (it changes the kubelet config).
set -eu
dir=crates/core/tests/golden/cluster
bin=${KUBEADM_UPSTREAM:-$HOME/.cache/kubeadm-rs/upstream/kubeadm}
scratch=$(mktemp -d)
for cfg in "$dir"/*.yaml; do
    name=$(basename "$cfg" .yaml)
    extra=--upload-certs
    [ "$name" = default ] && extra=
    proxy=
    [ "$name" = external ] && proxy="HTTPS_PROXY=http://proxy.example:3128 no_proxy=localhost,10.0.0.0/8"
    (cd "$scratch" && env -u HTTP_PROXY -u HTTPS_PROXY -u NO_PROXY -u http_proxy -u https_proxy -u no_proxy \
        $proxy "$bin" init --dry-run --ignore-preflight-errors=all $extra --config "$OLDPWD/$cfg") \
        > "$dir/$name.dryrun.txt" 2>/dev/null
done
rm -rf "$scratch"
