# shellcheck shell=bash
# Scenario crash-restart: the kubeadm under test killed with SIGKILL (as a timeout or a power loss
# stops it) at three moments of a real `kubeadm init` on node1: while it writes the certificates and
# keys, while it waits for the control plane, and while it applies the addons. After the first two,
# the documented recovery: `kubeadm reset -f` (which must leave the node clean), then init again.
# After the third, without a reset, the phase that was cut short run alone (`init phase addon all`,
# which upstream allows): the recovered cluster's API objects and node1's files (manifests, kubelet
# files, what /etc/kubernetes holds and with which modes) are dumped. Last, after a reset, a whole
# `kubeadm init`, whose objects and files must be the recovered ones (lib/api_objects.py, as
# api-objects.sh compares clusters: only what must differ between two clusters normalised), and a
# final reset that leaves the node clean. Every init has --upload-certs and a fixed token, so that
# the comparison covers the kubeadm-certs Secret and tells the two tokens apart.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every wait is polled with a
# deadline.

kubectl1() { tb_kubectl 1 --request-timeout=10s "$@"; }
fail() { tb_log "FAIL: $*"; tb_fail_logs 1; exit 1; }
node_listed() { kubectl1 get nodes -o name | grep -qx "node/$1"; }
cfg=/etc/testbed/crash-init.yaml
# HTTPProxyCIDR: see init-join-reset.sh (a Go 1.26 build artefact of the upstream binary).
ignore=--ignore-preflight-errors=HTTPProxyCIDR
# The token the config asks for (--upload-certs makes a random one of its own).
token=abcdef.0123456789abcdef

tb_node_create 1
{ tb_control_plane_config | sed -e "s/^kind: InitConfiguration\$/&\nbootstrapTokens:\n- token: $token/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"

# What the controllers add on their own must be there before a dump (as in api-objects.sh): node1
# Ready without the not-ready taint, its TTL annotation, the Deployment's revision, cluster-info's JWS.
settled() {
  TB_WHY="node1 not Ready"
  tb_node_ready 1 node1 || return 1
  TB_WHY="node1 still has the not-ready taint"
  ! kubectl1 get node node1 -o 'jsonpath={.spec.taints[*].key}' | grep -q not-ready || return 1
  TB_WHY="node1 has no node.alpha.kubernetes.io/ttl annotation"
  kubectl1 get node node1 -o 'jsonpath={.metadata.annotations}' | grep -q 'node.alpha.kubernetes.io/ttl' || return 1
  TB_WHY="Deployment coredns has no revision annotation"
  kubectl1 -n kube-system get deployment coredns -o 'jsonpath={.metadata.annotations}' |
    grep -q 'deployment.kubernetes.io/revision' || return 1
  TB_WHY="ConfigMap cluster-info has no jws-kubeconfig-${token%%.*}"
  kubectl1 -n kube-public get configmap cluster-info -o 'jsonpath={.data}' | grep -q "jws-kubeconfig-${token%%.*}" || return 1
  TB_WHY=""
}
# dump NAME: the settled cluster's API objects into $TB_RUN/NAME/api and node1's files into
# $TB_RUN/NAME/files: the manifests and kubelet files (mode, then bytes) and a listing of
# /etc/kubernetes (each path with its mode and type: a leftover temporary file shows there).
dump() {
  local out=$TB_RUN/$1
  tb_poll 180 "node1 settled for the dump ($1)" settled || fail "$1: not settled: $TB_WHY"
  tb_dump_api_objects 1 "$out/api" || fail "$1: dumping the API objects"
  tb_dump_node_files 1 "$out/files" /etc/kubernetes/manifests/etcd.yaml \
    /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests/kube-controller-manager.yaml \
    /etc/kubernetes/manifests/kube-scheduler.yaml /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env ||
    fail "$1: dumping node1's files"
  tb_node_exec 1 sh -c 'cd /etc/kubernetes && find . -printf "%m %y %p\n" | sort -k3' >"$out/files/etc-kubernetes.list" ||
    fail "$1: listing /etc/kubernetes"
}

# init_killed_at WHAT PATTERN: kubeadm init on node1, killed with SIGKILL as soon as a line of its
# output matches PATTERN (a bash regular expression). Its output is read line by line as it comes
# (each line is flushed as written), so the kill follows the line within milliseconds: in time to
# land inside what comes next, even where the rest of init is quick (the addons).
init_killed_at() {
  local what=$1 pattern=$2 out=$TB_RUN/node1/init-killed-$1.log line killed=
  tb_log "kubeadm init on node1, to be killed at: $pattern"
  : >"$out"
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$out"
    if [ -z "$killed" ] && [[ $line =~ $pattern ]]; then
      pkill -KILL -f -- "kubeadm init --config=$cfg" && killed=1
    fi
  done < <(tb_node_exec 1 timeout 600 kubeadm init --config="$cfg" --upload-certs "$ignore" 2>&1)
  [ -n "$killed" ] || { cat "$out" >&2; fail "$what: init was not killed (it ended, or never printed the line)"; }
  if grep -q '^Your Kubernetes control-plane has initialized successfully' "$out"; then
    cat "$out" >&2
    fail "$what: init finished before the kill"
  fi
  tb_log "killed during $what, after: $(grep '^\[' "$out" | tail -n 1)"
}

init_killed_at certs '^\[certs\] Generating "ca" certificate and key'
tb_node_reset 1 kubeadm || fail "after the kill during certs: $TB_WHY"

init_killed_at wait-control-plane '^\[wait-control-plane\] Waiting for the kubelet'
tb_node_reset 1 kubeadm || fail "after the kill during wait-control-plane: $TB_WHY"

init_killed_at addons '^\[addons\] Applied essential addon: CoreDNS'
tb_log "kubeadm init phase addon all on node1, without a reset"
if ! tb_node_exec 1 timeout 300 kubeadm init phase addon all --config="$cfg" >"$TB_RUN/node1/addon.log" 2>&1; then
  cat "$TB_RUN/node1/addon.log" >&2
  fail "init phase addon all after the kill during the addons failed"
fi
cat "$TB_RUN/node1/addon.log" >&2
dump recovered
tb_node_reset 1 kubeadm || fail "after the addons: $TB_WHY"

tb_log "kubeadm init on node1, whole"
if ! tb_node_exec 1 timeout 600 kubeadm init --config="$cfg" --upload-certs "$ignore" >"$TB_RUN/node1/init.log" 2>&1; then
  cat "$TB_RUN/node1/init.log" >&2
  fail "kubeadm init after the kills and resets failed"
fi
tb_poll 60 "node1 listed" node_listed node1 || fail "node1 not listed after init"
dump whole
# a: the uninterrupted init; b: the one killed during its addons and recovered by the addon phase.
ip=$(tb_node_ip 1)
python3 "$TB_LIB/api_objects.py" --a "$TB_RUN/whole/api" --a-node node1 --a-ip "$ip" \
  --b "$TB_RUN/recovered/api" --b-node node1 --b-ip "$ip" --token "$token" ||
  tb_die "the recovered cluster's API objects are not an uninterrupted init's"
diff -r "$TB_RUN/whole/files" "$TB_RUN/recovered/files" >&2 ||
  tb_die "node1's files after the recovery are not an uninterrupted init's"
tb_log "ok: the recovered cluster's API objects and node1's files are an uninterrupted init's"
tb_node_reset 1 kubeadm || fail "$TB_WHY"
