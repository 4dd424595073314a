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
#
# TB_API_OBJECTS_FLAGS=1 drives everything by flags alone, as most people run kubeadm: `init` with a
# realistic set of flags and no config file (kube-proxy skipped), then a worker joining each cluster
# with flags alone (node3 by upstream's join to node1, node4 by the join under test to node2), then
# `token create` with each of its flags on each cluster. The workers' Node objects join the comparison,
# and their kubelet files (config.yaml, kubeadm-flags.env) must be the same apart from name and address.
# Without a KubeletConfiguration the kubelet gets kubeadm's systemd cgroup driver and default eviction
# thresholds; the testbed's kubelets override those with command-line flags in /etc/default/kubelet,
# which kubeadm never reads or writes.

upstream=$TB_UPSTREAM/kubeadm
flags=${TB_API_OBJECTS_FLAGS:-}
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
    getn "$n" -n kube-system serviceaccounts coredns ${flags:+--ignore-not-found} kube-proxy >"$out/serviceaccounts.json" &&
    getn "$n" -n kube-system deployments coredns >"$out/deployments.json" &&
    getn "$n" -n kube-system services kube-dns >"$out/services.json" &&
    getn "$n" -n kube-system daemonsets ${flags:+--ignore-not-found} kube-proxy >"$out/daemonsets.json" &&
    getn "$n" nodes "$(tb_node_name "$n")" ${flags:+"$(tb_node_name $((n + 2)))"} >"$out/nodes.json"
}

# The kubelet settings the testbed needs (see lib/node.sh's config), as kubelet flags, for a kubeadm
# given no KubeletConfiguration.
kubelet_overrides() {
  tb_node_exec "$1" sed -i 's#"$# --cgroup-driver=cgroupfs --image-gc-high-threshold=100 --eviction-hard=memory.available<100Mi,nodefs.available<1%,nodefs.inodesFree<1%,imagefs.available<1%"#' /etc/default/kubelet
}

for n in 1 2 ${flags:+3 4}; do
  tb_node_create "$n"
  [ -z "$flags" ] || kubelet_overrides "$n"
done

# The scenarios' control-plane config, moved to node N, with a fixed token and kube-proxy leaving
# the machine-wide nf_conntrack_max alone (as in init-join-reset); or, with flags, the same cluster
# described by flags (kube-proxy skipped: it would change the machine-wide nf_conntrack_max).
init_args() {
  local n=$1
  if [ -z "$flags" ]; then
    echo "--config=$cfg"
    return
  fi
  echo "--kubernetes-version=v1.25.16 --node-name=$(tb_node_name "$n")
    --apiserver-advertise-address=$(tb_node_ip "$n") --apiserver-bind-port=6443
    --control-plane-endpoint=$(tb_node_ip "$n"):6443 --apiserver-cert-extra-sans=kubernetes.testbed,10.0.0.1
    --pod-network-cidr=$TB_POD_SUBNET --service-cidr=$TB_SERVICE_SUBNET --service-dns-domain=cluster.testbed
    --cri-socket=unix:///var/run/containerd/containerd.sock --image-repository=registry.k8s.io
    --token=$token --token-ttl=2h --feature-gates=PublicKeysECDSA=true --skip-phases=addon/kube-proxy"
}
if [ -z "$flags" ]; then
  for n in 1 2; do
    { tb_control_plane_config "$n" | sed -e "s/^kind: InitConfiguration\$/&\nbootstrapTokens:\n- token: $token/"
      tb_kube_proxy_config
    } | tb_node_exec "$n" sh -c "mkdir -p /etc/testbed && cat > $cfg"
  done
  tb_node_exec 2 cat "$cfg" >&2
fi

# Both inits at once (see lib/node.sh for why the nodes never disturb each other). HTTPProxyCIDR:
# see init-join-reset.sh (a Go 1.26 build artefact of the upstream binary).
t0=$(date +%s)
tb_log "kubeadm init: upstream on node1, $kubeadm on node2: $(init_args 2 | tr -s ' \n' ' ')"
# shellcheck disable=SC2046
tb_node_exec 1 timeout 600 "$upstream" init $(init_args 1) --upload-certs \
  --ignore-preflight-errors=HTTPProxyCIDR >"$TB_RUN/node1/init.log" 2>&1 &
pid1=$!
# shellcheck disable=SC2046
tb_node_exec 2 timeout 600 kubeadm init $(init_args 2) --upload-certs \
  --ignore-preflight-errors=HTTPProxyCIDR >"$TB_RUN/node2/init.log" 2>&1 &
pid2=$!
rc1=0 rc2=0
wait "$pid1" || rc1=$?
wait "$pid2" || rc2=$?
tb_log "kubeadm init exited: upstream $rc1, under test $rc2, after $(($(date +%s) - t0))s"
[ "$rc1" = 0 ] || { cat "$TB_RUN/node1/init.log" >&2; fail "upstream kubeadm init failed on node1"; }
[ "$rc2" = 0 ] || { cat "$TB_RUN/node2/init.log" >&2; fail "kubeadm init under test failed on node2"; }

if [ -n "$flags" ]; then
  # A worker each, by flags alone: node3 joins node1 with upstream's kubeadm, node4 joins node2 with
  # the one under test, with the discovery hash each init printed.
  hash_of() { grep -o 'sha256:[0-9a-f]\{64\}' "$TB_RUN/node$1/init.log" | head -n 1; }
  join_args() {
    echo "$(tb_node_ip "$1"):6443 --token=$token --discovery-token-ca-cert-hash=$(hash_of "$1")
      --node-name=$(tb_node_name $(($1 + 2))) --cri-socket=unix:///var/run/containerd/containerd.sock"
  }
  [ -n "$(hash_of 1)" ] && [ -n "$(hash_of 2)" ] || fail "no discovery hash in an init's output"
  # shellcheck disable=SC2046
  tb_node_exec 3 timeout 600 "$upstream" join $(join_args 1) >"$TB_RUN/node3/join.log" 2>&1 &
  pid1=$!
  # shellcheck disable=SC2046
  tb_node_exec 4 timeout 600 kubeadm join $(join_args 2) >"$TB_RUN/node4/join.log" 2>&1 &
  pid2=$!
  rc1=0 rc2=0
  wait "$pid1" || rc1=$?
  wait "$pid2" || rc2=$?
  tb_log "kubeadm join exited: upstream $rc1 (node3), under test $rc2 (node4)"
  [ "$rc1" = 0 ] || { cat "$TB_RUN/node3/join.log" >&2; fail "upstream kubeadm join failed on node3"; }
  [ "$rc2" = 0 ] || { cat "$TB_RUN/node4/join.log" >&2; fail "kubeadm join under test failed on node4"; }
  # The kubelet files each join wrote, the same apart from the node's name and address.
  for f in /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env; do
    a=$(tb_node_exec 3 cat "$f" | sed -e "s/$(tb_node_ip 3)/<node-ip>/g" -e "s/node3/<node-name>/g") ||
      fail "node3: no $f"
    b=$(tb_node_exec 4 cat "$f" | sed -e "s/$(tb_node_ip 4)/<node-ip>/g" -e "s/node4/<node-name>/g") ||
      fail "node4: no $f"
    [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") >&2; fail "$f differs (node3 upstream, node4 under test)"; }
  done
  # token create with each of its flags, on both clusters, and --print-join-command (a random token).
  for n in 1 2; do
    bin=$upstream
    [ "$n" = 1 ] || bin=kubeadm
    tb_node_exec "$n" "$bin" token create fedcba.0123456789abcdef --ttl=3h --usages=signing,authentication \
      --groups=system:bootstrappers:testbed --description="created by flags" >"$TB_RUN/node$n/token.log" 2>&1 &&
      tb_node_exec "$n" "$bin" token create --print-join-command >>"$TB_RUN/node$n/token.log" 2>&1 ||
      { cat "$TB_RUN/node$n/token.log" >&2; fail "node$n: token create failed"; }
  done
  # Ready, without the not-ready taint and with the TTL annotation: what the controllers add must be
  # there on both sides before the dump.
  worker_settled() {
    local c=$1 name=$2
    [ "$(kubectln "$c" get node "$name" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ] &&
      ! kubectln "$c" get node "$name" -o 'jsonpath={.spec.taints[*].key}' | grep -q not-ready &&
      kubectln "$c" get node "$name" -o 'jsonpath={.metadata.annotations}' | grep -q 'node.alpha.kubernetes.io/ttl'
  }
  for n in 3 4; do
    tb_poll 180 "node$n Ready and settled" worker_settled $((n - 2)) "node$n" || fail "node$n did not settle"
  done
fi

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
# With flags, each side's worker is the second node named (node3 on upstream's side, node4 on ours).
nodes() { echo "$(tb_node_name "$1")${flags:+,$(tb_node_name $(($1 + 2)))}"; }
ips() { echo "$(tb_node_ip "$1")${flags:+,$(tb_node_ip $(($1 + 2)))}"; }
if ! python3 "$TB_LIB/api_objects.py" ${flags:+--without-kube-proxy} \
  --a "$TB_RUN/dump1" --a-node "$(nodes 1)" --a-ip "$(ips 1)" \
  --b "$TB_RUN/dump2" --b-node "$(nodes 2)" --b-ip "$(ips 2)" --token "$token"; then
  keep
  tb_die "API objects differ (a: upstream on node1, b: $kubeadm on node2)"
fi
keep
