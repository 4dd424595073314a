# shellcheck shell=bash
# Scenario api-objects: `kubeadm init` with upstream kubeadm v1.25.16 on node1 and with the kubeadm
# under test on node2 (two separate single-node clusters, the same config apart from node name and
# address, with --upload-certs and a fixed bootstrap token), then every API object kubeadm creates is
# dumped with upstream kubectl on each node and compared by lib/api_objects.py after normalising only
# what must differ (uids, times, node name and IP, token ids and secrets, key material). Any difference
# fails the run, with a readable diff. With the upstream binary under test both sides are upstream,
# which checks the normaliser. Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set.
# TB_API_OBJECTS_KEEP=DIR copies both raw dumps (dump1: upstream, dump2: under test) to DIR, so that
# lib/api_objects.py can be rerun on them by hand.

upstream=$TB_UPSTREAM/kubeadm
cfg=/etc/testbed/kubeadm-init.yaml
# The token the config asks for; init with --upload-certs also creates a random one of its own.
token=abcdef.0123456789abcdef
kubectln() { tb_kubectl "$@"; }
# kubectl hides managedFields unless asked: their manager names tell how the client identifies itself.
getn() { local n=$1; shift; kubectln "$n" get --show-managed-fields -o json "$@"; }
fail() {
  tb_log "FAIL: $*"
  for n in 1 2; do kubectln "$n" get nodes,pods -A -o wide >&2 || true; done
  tb_fail_logs 1 2
  exit 1
}

# What the controllers add on their own must be there on both sides before the dump, or the
# comparison would race them: the node Ready without the not-ready taint, its TTL annotation, the
# Deployment's revision, and the JWS signature the bootstrap signer adds to cluster-info.
settled() {
  local n=$1 name why=$TB_RUN/node$1/settled.why
  name=$(tb_node_name "$n")
  echo "node $name not Ready" >"$why"
  [ "$(kubectln "$n" get node "$name" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ] || return 1
  echo "node $name still has the not-ready taint" >"$why"
  kubectln "$n" get node "$name" -o 'jsonpath={.spec.taints[*].key}' >"$why.out" && ! grep -q not-ready "$why.out" || return 1
  echo "node $name has no node.alpha.kubernetes.io/ttl annotation" >"$why"
  kubectln "$n" get node "$name" -o 'jsonpath={.metadata.annotations}' >"$why.out" &&
    grep -q 'node.alpha.kubernetes.io/ttl' "$why.out" || return 1
  echo "Deployment coredns has no revision annotation" >"$why"
  kubectln "$n" -n kube-system get deployment coredns -o 'jsonpath={.metadata.annotations}' >"$why.out" &&
    grep -q 'deployment.kubernetes.io/revision' "$why.out" || return 1
  echo "ConfigMap cluster-info has no jws-kubeconfig-${token%%.*}" >"$why"
  kubectln "$n" -n kube-public get configmap cluster-info -o 'jsonpath={.data}' >"$why.out" &&
    grep -q "jws-kubeconfig-${token%%.*}" "$why.out" || return 1
  rm -f "$why" "$why.out"
}

# dump N: every object kind the comparison covers, as one JSON List per kind, into $TB_RUN/dumpN/.
dump() {
  local n=$1 out=$TB_RUN/dump$1 ns
  mkdir -p "$out"
  for ns in kube-system kube-public; do
    for kind in configmaps secrets roles rolebindings; do
      getn "$n" -n "$ns" "$kind" >"$out/$ns.$kind.json" || return 1
    done
  done
  getn "$n" clusterroles >"$out/clusterroles.json" &&
    getn "$n" clusterrolebindings >"$out/clusterrolebindings.json" &&
    getn "$n" -n kube-system serviceaccounts coredns kube-proxy >"$out/serviceaccounts.json" &&
    getn "$n" -n kube-system deployments coredns >"$out/deployments.json" &&
    getn "$n" -n kube-system services kube-dns >"$out/services.json" &&
    getn "$n" -n kube-system daemonsets kube-proxy >"$out/daemonsets.json" &&
    getn "$n" nodes "$(tb_node_name "$n")" >"$out/nodes.json"
}

tb_node_create 1
tb_node_create 2

# The scenarios' control-plane config, moved to node N, with a fixed token and kube-proxy leaving
# the machine-wide nf_conntrack_max alone (as in init-join-reset).
for n in 1 2; do
  { tb_control_plane_config | sed -e "s/^  name: node1\$/  name: $(tb_node_name "$n")/" \
      -e "s/^  advertiseAddress: $(tb_node_ip 1)\$/  advertiseAddress: $(tb_node_ip "$n")/" \
      -e "s/^kind: InitConfiguration\$/&\nbootstrapTokens:\n- token: $token/"
    tb_kube_proxy_config
  } | tb_node_exec "$n" sh -c "mkdir -p /etc/testbed && cat > $cfg"
done
tb_node_exec 2 cat "$cfg" >&2

# Both inits at once (see lib/node.sh for why the nodes never disturb each other). HTTPProxyCIDR:
# see init-join-reset.sh (a Go 1.26 build artefact of the upstream binary).
t0=$(date +%s)
tb_log "kubeadm init: upstream on node1, $kubeadm on node2"
tb_node_exec 1 timeout 600 "$upstream" init --config="$cfg" --upload-certs \
  --ignore-preflight-errors=HTTPProxyCIDR >"$TB_RUN/node1/init.log" 2>&1 &
pid1=$!
tb_node_exec 2 timeout 600 kubeadm init --config="$cfg" --upload-certs \
  --ignore-preflight-errors=HTTPProxyCIDR >"$TB_RUN/node2/init.log" 2>&1 &
pid2=$!
rc1=0 rc2=0
wait "$pid1" || rc1=$?
wait "$pid2" || rc2=$?
tb_log "kubeadm init exited: upstream $rc1, under test $rc2, after $(($(date +%s) - t0))s"
[ "$rc1" = 0 ] || { cat "$TB_RUN/node1/init.log" >&2; fail "upstream kubeadm init failed on node1"; }
[ "$rc2" = 0 ] || { cat "$TB_RUN/node2/init.log" >&2; fail "kubeadm init under test failed on node2"; }

for n in 1 2; do
  tb_poll 180 "node$n: API server answers, node Ready and controllers settled" settled "$n" ||
    fail "node$n did not settle: $(cat "$TB_RUN/node$n/settled.why")"
done
tb_log "both control planes settled after $(($(date +%s) - t0))s"
# Memory: resident set of each node's processes (containerd, kubelet, the control plane, the addons).
for n in 1 2; do
  tb_log "node$n: $(tb_rss "node$n") MiB resident"
done
for n in 1 2; do dump "$n" || fail "dumping node$n's objects"; done
keep() { [ -z "${TB_API_OBJECTS_KEEP:-}" ] || cp -r "$TB_RUN/dump1" "$TB_RUN/dump2" "$TB_API_OBJECTS_KEEP/"; }
# Both clusters are up and fine here: a difference is the kubeadm's, so no cluster logs on failure.
if ! python3 "$TB_LIB/api_objects.py" \
  --a "$TB_RUN/dump1" --a-node "$(tb_node_name 1)" --a-ip "$(tb_node_ip 1)" \
  --b "$TB_RUN/dump2" --b-node "$(tb_node_name 2)" --b-ip "$(tb_node_ip 2)" --token "$token"; then
  keep
  tb_die "API objects differ (a: upstream on node1, b: $kubeadm on node2)"
fi
keep
