# shellcheck shell=bash
# Scenario crash-restart: the kubeadm under test killed with SIGKILL (as a timeout or a power loss
# stops it) at three moments of a real `kubeadm init` on node1: while it writes the certificates and
# keys, while it waits for the control plane, and while it applies the addons. After the first two,
# the documented recovery: `kubeadm reset -f` (which must leave the node clean), then init again.
# After the third, without a reset, the phase that was cut short run alone (`init phase addon all`,
# which upstream allows): CoreDNS and kube-proxy must then be in place. Last, after a reset, a whole
# `kubeadm init` must succeed and its node be listed, and a final reset leaves the node clean.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every wait is polled with a
# deadline.

kubectl1() { tb_kubectl 1 "$@"; }
fail() { tb_log "FAIL: $*"; tb_fail_logs 1; exit 1; }
node_listed() { kubectl1 get nodes -o name | grep -qx "node/$1"; }
cfg=/etc/testbed/crash-init.yaml
# HTTPProxyCIDR: see init-join-reset.sh (a Go 1.26 build artefact of the upstream binary).
ignore=--ignore-preflight-errors=HTTPProxyCIDR

tb_node_create 1
{ tb_control_plane_config; tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"

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
  done < <(tb_node_exec 1 timeout 600 kubeadm init --config="$cfg" "$ignore" 2>&1)
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
kubectl1 -n kube-system get deployment coredns >&2 || fail "no CoreDNS Deployment"
kubectl1 -n kube-system get daemonset kube-proxy >&2 || fail "no kube-proxy DaemonSet"
tb_node_reset 1 kubeadm || fail "after the addons: $TB_WHY"

tb_log "kubeadm init on node1, whole"
if ! tb_node_exec 1 timeout 600 kubeadm init --config="$cfg" "$ignore" >"$TB_RUN/node1/init.log" 2>&1; then
  cat "$TB_RUN/node1/init.log" >&2
  fail "kubeadm init after the kills and resets failed"
fi
tb_poll 60 "node1 listed" node_listed node1 || fail "node1 not listed after init"
tb_node_reset 1 kubeadm || fail "$TB_WHY"
