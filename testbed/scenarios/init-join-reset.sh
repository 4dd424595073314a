# shellcheck shell=bash
# Scenario init-join-reset: kubeadm init on node1, kubeadm join (token discovery) on node2, whose
# kubelet is v1.24.17, one minor behind the control plane, as upstream's skew policy allows (the
# kubelet the join sees, kubeadm-flags.env's --container-runtime=remote for it, the Node's version,
# kube-proxy v1.25.16 running there), both nodes Ready, kubeadm reset -f on both; with our join, two joins on node3 and node4 staged to fail
# (a certificate signing request nobody approves, a token that expires) for the diagnosis. Sourced by scenario.sh with lib/node.sh loaded; every step is
# asserted through the API (kubectl on node1) with polling and a deadline.

kubectl1() { tb_kubectl 1 "$@"; }
pod_running() { [ "$(kubectl1 -n kube-system get pod "$1" -o 'jsonpath={.status.phase}')" = Running ]; }
node_ready() { tb_node_ready 1 "$1"; }
# DaemonSet pods scheduled on a node and Running.
ds_running_on() {
  kubectl1 -n kube-system get pods -l "k8s-app=$1" --field-selector "spec.nodeName=$2,status.phase=Running" \
    -o name | grep -q .
}
coredns_available() {
  [ "$(kubectl1 -n kube-system get deployment coredns -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
node_listed() { kubectl1 get nodes -o name | grep -qx "node/$1"; }
node_absent() { ! kubectl1 get node "$1"; }
api_down() { ! nsenter --net="$TB_RUN/ns/node1.net" -- bash -c "echo > /dev/tcp/$(tb_node_ip 1)/6443"; }
fail() { tb_log "FAIL: $*"; tb_fail_logs 1 2; exit 1; }

# Preflight errors ignored, and why (each is a way the testbed differs from a real host):
# - HTTPProxyCIDR (init only): the upstream binary here is built with Go 1.26, whose net/url rejects
#   the "https://[198.18.0.1]:1234" URL this check builds for an IPv4 CIDR ("invalid IP-literal");
#   the released v1.25.16 (Go 1.20) accepts it. No proxy is configured on the testbed anyway.
# Everything else a host provides, the testbed provides too (see the README).
init_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
join_ignore=""

tb_node_create 1
tb_node_create 2
# node2's kubelet one minor behind (kubeadm's skew-kubelet-1.24-on-1.25 workflow): the worker a
# cluster keeps while its control plane is upgraded first.
skew_kubelet=$TB_UPSTREAM/v1.24.17/kubelet
[ -x "$skew_kubelet" ] || tb_die "kubelet v1.24.17 not executable: $skew_kubelet (testbed/upstream/build.sh v1.24.17/kubelet)"
tb_node_kubelet 2 "$skew_kubelet"

{ tb_control_plane_config; tb_kube_proxy_config; } | tb_node_exec 1 sh -c 'mkdir -p /etc/testbed && cat > /etc/testbed/kubeadm-init.yaml'

tb_log "kubeadm init on node1"
if ! tb_node_exec 1 timeout 600 kubeadm init --config=/etc/testbed/kubeadm-init.yaml $init_ignore >"$TB_RUN/node1/init.log" 2>&1; then
  cat "$TB_RUN/node1/init.log" >&2
  fail "kubeadm init failed"
fi
tb_log "kubeadm init done"

for p in etcd kube-apiserver kube-controller-manager kube-scheduler; do
  tb_poll 180 "static pod $p-node1 Running" pod_running "$p-node1" || fail "$p-node1 is not Running"
done
tb_poll 60 "kubectl get nodes lists node1" node_listed node1 ||
  fail "node1 not listed by kubectl get nodes"
kubectl1 get nodes >&2

join=$(tb_join_command "$TB_RUN/node1/init.log" worker)
# TB_JOIN_KUBEADM runs join with another kubeadm (e.g. upstream's while the init under test is ours,
# which has no join yet): the printed join command is run as printed, with that binary.
# TB_RESET_KUBEADM runs reset with another kubeadm (default: the join one), e.g. ours after upstream's join.
# TB_UPGRADE_KUBEADM runs `upgrade node` on the worker with another kubeadm (default: the join one).
reset_kubeadm=${TB_RESET_KUBEADM:-${TB_JOIN_KUBEADM:-kubeadm}}
if [ -n "${TB_JOIN_KUBEADM:-}" ]; then join="$TB_JOIN_KUBEADM${join#kubeadm}"; fi
[ -n "$join" ] || fail "no join command in the output of kubeadm init"
case "$join" in *--discovery-token-ca-cert-hash*) ;; *) fail "join command without token discovery: $join" ;; esac
tb_log "kubeadm join on node2: $join"
# shellcheck disable=SC2086
if ! tb_node_exec 2 timeout 600 $join $join_ignore >"$TB_RUN/node2/join.log" 2>&1; then
  cat "$TB_RUN/node2/join.log" >&2
  fail "kubeadm join failed"
fi

# Beyond upstream, with our join: two joins that cannot finish their kubelet's TLS bootstrap, run in
# the background while node2 goes on, each of which our diagnosis must name. kubeadm's ClusterRoleBinding
# that lets the controller-manager approve the kubelets' certificate signing requests is removed
# (node1's and node2's kubelets have their certificates already), and each join waits 60 s for its
# kubelet (KUBEADM_TLS_BOOTSTRAP_TIMEOUT; upstream's 5 minutes otherwise): node3 with the printed
# command, its request left pending; node4 with a token of its own that expires 40 s after it is
# made, while node4's kubelet waits.
join_bin=${TB_JOIN_KUBEADM:-$kubeadm}
staged=
if [ "$(readlink -f "$join_bin" 2>/dev/null || echo "$join_bin")" != "$(readlink -f "$TB_UPSTREAM/kubeadm")" ]; then
  staged=1
  tb_node_create 3
  tb_node_create 4
  kubectl1 delete clusterrolebinding kubeadm:node-autoapprove-bootstrap >&2 ||
    fail "could not remove the ClusterRoleBinding kubeadm:node-autoapprove-bootstrap"
  short=$(tb_node_exec 1 kubeadm token create --ttl 40s --print-join-command) || fail "kubeadm token create --ttl 40s"
  short="$join_bin${short#kubeadm}"
  staged_join() {
    local n=$1 rc=0
    shift
    tb_node_exec "$n" env KUBEADM_TLS_BOOTSTRAP_TIMEOUT=60s timeout 300 "$@" >"$TB_RUN/node$n/join.log" 2>&1 || rc=$?
    echo "$rc" >"$TB_RUN/node$n/join.rc"
  }
  # shellcheck disable=SC2086
  staged_join 3 $join &
  staged3=$!
  # shellcheck disable=SC2086
  staged_join 4 $short &
  staged4=$!
fi

tb_poll 180 "node2 Ready" node_ready node2 || fail "node2 did not become Ready"
tb_poll 60 "node1 Ready" node_ready node1 || fail "node1 did not become Ready"
for n in node1 node2; do
  tb_poll 120 "kube-proxy Running on $n" ds_running_on kube-proxy "$n" || fail "kube-proxy not Running on $n"
done
# The skewed kubelet: the Node says v1.24.17 (node1's v1.25.16); join wrote the flag a 1.24 or 1.25
# kubelet needs, --container-runtime=remote; kube-proxy v1.25.16 runs on it.
[ "$(kubectl1 get node node2 -o 'jsonpath={.status.nodeInfo.kubeletVersion}')" = v1.24.17 ] ||
  fail "node2's kubelet is not v1.24.17: $(kubectl1 get node node2 -o 'jsonpath={.status.nodeInfo.kubeletVersion}')"
[ "$(kubectl1 get node node1 -o 'jsonpath={.status.nodeInfo.kubeletVersion}')" = v1.25.16 ] ||
  fail "node1's kubelet is not v1.25.16"
tb_node_exec 2 grep -q -- "--container-runtime=remote " /var/lib/kubelet/kubeadm-flags.env ||
  fail "node2: kubeadm-flags.env lacks --container-runtime=remote: $(tb_node_exec 2 cat /var/lib/kubelet/kubeadm-flags.env)"
[ "$(kubectl1 -n kube-system get pods -l k8s-app=kube-proxy --field-selector spec.nodeName=node2 \
  -o 'jsonpath={.items[0].spec.containers[0].image}')" = registry.k8s.io/kube-proxy:v1.25.16 ] ||
  fail "node2's kube-proxy is not v1.25.16"
tb_log "ok: node2 runs kubelet v1.24.17 in the v1.25.16 cluster, with kube-proxy v1.25.16"
# CoreDNS Ready means pod networking, the service VIP through kube-proxy's rules and the API all work.
tb_poll 180 "CoreDNS Available (2 replicas)" coredns_available || fail "CoreDNS did not become Available"
kubectl1 get nodes -o wide >&2
kubectl1 -n kube-system get pods -o wide >&2

# kubeadm upgrade node on the worker (TB_UPGRADE_KUBEADM, default: the join one): it rewrites the
# kubelet's config.yaml from the cluster's kubelet-config ConfigMap, which must give the bytes join
# wrote from the same ConfigMap; the kubelet, restarted on it, keeps the node Ready.
upgrade_kubeadm=${TB_UPGRADE_KUBEADM:-${TB_JOIN_KUBEADM:-kubeadm}}
before=$(tb_node_exec 2 cat /var/lib/kubelet/config.yaml) || fail "node2: no kubelet config.yaml"
tb_log "kubeadm upgrade node on node2 ($upgrade_kubeadm)"
if ! tb_node_exec 2 timeout 300 "$upgrade_kubeadm" upgrade node >"$TB_RUN/node2/upgrade.log" 2>&1; then
  cat "$TB_RUN/node2/upgrade.log" >&2
  fail "kubeadm upgrade node on node2 failed"
fi
cat "$TB_RUN/node2/upgrade.log" >&2
grep -q "^\[upgrade\] The configuration for this node was successfully updated!" "$TB_RUN/node2/upgrade.log" ||
  fail "kubeadm upgrade node did not say it updated node2"
[ "$(tb_node_exec 2 cat /var/lib/kubelet/config.yaml)" = "$before" ] ||
  fail "node2: config.yaml after upgrade node differs from the one join wrote"
tb_node_exec 2 systemctl restart kubelet || fail "node2: kubelet restart"
tb_poll 120 "node2 Ready after upgrade node" node_ready node2 || fail "node2 not Ready after upgrade node"

if [ -n "$staged" ]; then
  wait "$staged3" "$staged4"
  for n in 3 4; do
    tb_log "node$n: the join exited $(cat "$TB_RUN/node$n/join.rc")"
    echo "----- node$n: join's output (from the failure on)" >&2
    sed -n '/^\[kubelet-start\] Waiting/,$p' "$TB_RUN/node$n/join.log" >&2
    [ "$(cat "$TB_RUN/node$n/join.rc")" = 1 ] || fail "node$n: the join did not fail with exit code 1"
  done
  grep -q "^	- CAUSE: the kubelet's certificate signing request csr-[a-z0-9]* is pending: nothing approved it" "$TB_RUN/node3/join.log" ||
    fail "node3: the diagnosis does not name the pending certificate signing request"
  grep -q "^	- CAUSE: the API server does not accept the bootstrap credentials .*: the token has expired or was deleted" "$TB_RUN/node4/join.log" ||
    fail "node4: the diagnosis does not name the expired token"
fi

# A worker leaves the way the docs say: delete its Node, then reset it.
kubectl1 delete node node2 >&2 || fail "kubectl delete node node2"
tb_poll 60 "node2 gone from the API" node_absent node2 ||
  fail "node2 still listed"
# Reset and its checks (lib/cluster.sh): no kubelet, pod sandboxes, manifests, etcd data (node1
# only has some), certificates or kubeconfig files left.
for n in 2 1; do
  tb_node_reset "$n" "$reset_kubeadm" || fail "$TB_WHY"
done
tb_poll 30 "API server on node1 gone" api_down ||
  fail "API server still answers after reset"
