# shellcheck shell=bash
# Cluster-level helpers the scenarios share: kubectl on a node, the join commands init prints, the
# kube-proxy config, kubeadm reset with its checks, dumps, etcd's member list. Sourced by node.sh (needs its functions).

# tb_kubectl N ARGS...: upstream kubectl on node N with that node's admin.conf (whose server is the
# controlPlaneEndpoint when the cluster has one, else node1's API server).
tb_kubectl() {
  local n=$1
  shift
  tb_node_exec "$n" kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"
}

# tb_node_ready VIA NAME: the Node NAME is Ready, as kubectl on node VIA sees it.
tb_node_ready() {
  [ "$(tb_kubectl "$1" get node "$2" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# tb_no_sandboxes N: containerd on node N has no pod sandbox.
tb_no_sandboxes() { [ -z "$(tb_node_exec "$1" crictl -r unix:///var/run/containerd/containerd.sock pods -q)" ]; }

# tb_join_command LOG control-plane|worker: the join command `kubeadm init` printed in LOG, on one
# line (the backslash continuations joined, whitespace squeezed). control-plane is the one with
# --control-plane (and --certificate-key after --upload-certs), worker the one without.
tb_join_command() {
  local log=$1 kind=$2
  awk '
    /^[ \t]*kubeadm join / { cmd = ""; on = 1 }
    on {
      line = $0
      more = sub(/\\[ \t]*$/, "", line)
      cmd = cmd " " line
      if (!more) { print cmd; on = 0 }
    }' "$log" | tr -s ' \t' ' ' | sed 's/^ //; s/ $//' |
    if [ "$kind" = control-plane ]; then grep -e ' --control-plane\( \|$\)'; else grep -v -e ' --control-plane\( \|$\)'; fi |
    head -n 1
}

# tb_kube_proxy_config: the KubeProxyConfiguration document the scenarios append to init's config.
tb_kube_proxy_config() {
  cat <<CFG
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  # nf_conntrack_max is global to the machine, not per network namespace: leave it alone.
  maxPerCore: 0
CFG
}

# tb_node_reset N KUBEADM: `KUBEADM reset -f` on node N (output in $TB_RUN/nodeN/reset.log, and on
# stderr), then checks what reset must leave: the kubelet stopped, no pod sandboxes, no manifests,
# empty etcd data and certificate directories, no kubeconfig files. On failure returns 1 with the
# reason in TB_WHY.
# shellcheck disable=SC2034 # TB_WHY is for the caller
tb_node_reset() {
  local n=$1 kubeadm=$2 log
  log=$TB_RUN/node$n/reset.log
  TB_WHY=""
  tb_log "kubeadm reset -f on node$n ($kubeadm)"
  if ! tb_node_exec "$n" timeout 300 "$kubeadm" reset -f >"$log" 2>&1; then
    cat "$log" >&2
    TB_WHY="kubeadm reset on node$n failed"
    return 1
  fi
  cat "$log" >&2
  TB_WHY="node$n: kubelet still active after reset"
  [ "$(tb_node_exec "$n" systemctl is-active kubelet)" = inactive ] || return 1
  TB_WHY="node$n: pods left after reset"
  tb_poll 60 "node$n: no pod sandboxes left" tb_no_sandboxes "$n" || return 1
  TB_WHY="node$n: manifests left after reset"
  [ -z "$(tb_node_exec "$n" ls -A /etc/kubernetes/manifests 2>/dev/null)" ] || return 1
  # The stateful directories are emptied, the kubeconfigs deleted.
  TB_WHY="node$n: etcd data or certificates left after reset"
  [ -z "$(tb_node_exec "$n" find /var/lib/etcd /etc/kubernetes/pki -mindepth 1 2>/dev/null)" ] || return 1
  TB_WHY="node$n: kubeconfig files left after reset"
  [ -z "$(tb_node_exec "$n" sh -c 'ls /etc/kubernetes/*.conf' 2>/dev/null)" ] || return 1
  TB_WHY=""
}

# tb_dump_api_objects N DIR: every object kind lib/api_objects.py compares, as one JSON List per kind
# (upstream kubectl on node N, managedFields shown: their manager names tell how a client identifies
# itself), into DIR: kubeadm's ConfigMaps, Secrets, Roles and RoleBindings of kube-system and
# kube-public, ClusterRoles, ClusterRoleBindings, the coredns and kube-proxy ServiceAccounts,
# Deployment, Service and DaemonSet, and node N's Node. The same kinds as api-objects.sh's dump.
tb_dump_api_objects() {
  local n=$1 out=$2 ns kind
  mkdir -p "$out"
  for ns in kube-system kube-public; do
    for kind in configmaps secrets roles rolebindings; do
      tb_kubectl "$n" get --show-managed-fields -o json -n "$ns" "$kind" >"$out/$ns.$kind.json" || return 1
    done
  done
  tb_kubectl "$n" get --show-managed-fields -o json clusterroles >"$out/clusterroles.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json clusterrolebindings >"$out/clusterrolebindings.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json -n kube-system serviceaccounts coredns kube-proxy \
      >"$out/serviceaccounts.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json -n kube-system deployments coredns >"$out/deployments.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json -n kube-system services kube-dns >"$out/services.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json -n kube-system daemonsets kube-proxy >"$out/daemonsets.json" &&
    tb_kubectl "$n" get --show-managed-fields -o json nodes "$(tb_node_name "$n")" >"$out/nodes.json"
}

# tb_dump_node_files N DIR FILE...: each FILE of node N as DIR/BASENAME: its mode (stat %a) on the
# first line, then its bytes; an absent file gives an empty DIR/BASENAME. For `diff -r` between runs.
tb_dump_node_files() {
  local n=$1 out=$2 f
  shift 2
  mkdir -p "$out"
  for f in "$@"; do
    tb_node_exec "$n" sh -c "test ! -f $f || { stat -c %a $f && cat $f; }" >"$out/${f##*/}" || return 1
  done
}

# tb_dns_from_pod VIA N NAME: a pod NAME on node N (created through node VIA's kubectl; the node needs
# the image set `tools`) runs images/dnscheck, Go's resolver through the pod's resolv.conf, which the
# kubelet points at the cluster DNS Service: kubernetes.default.svc.cluster.local must resolve to the
# kubernetes Service's cluster IP. The pod tolerates every taint (a control plane's too). On failure
# returns 1 with the reason in TB_WHY; the pod's output is in $TB_RUN/NAME.log.
# shellcheck disable=SC2034 # TB_WHY is for the caller
tb_dns_from_pod() {
  local via=$1 n=$2 pod=$3 ip phase
  TB_WHY="no kubernetes Service"
  ip=$(tb_kubectl "$via" --request-timeout=10s -n default get service kubernetes -o 'jsonpath={.spec.clusterIP}') || return 1
  TB_WHY="creating pod $pod"
  tb_kubectl "$via" --request-timeout=10s -n default create -f - >&2 <<POD || return 1
apiVersion: v1
kind: Pod
metadata:
  name: $pod
spec:
  nodeName: $(tb_node_name "$n")
  restartPolicy: Never
  tolerations:
  - operator: Exists
  containers:
  - name: dnscheck
    image: kubeadm-rs.testbed/dnscheck:1
    imagePullPolicy: Never
    args: ["kubernetes.default.svc.cluster.local", "60"]
POD
  TB_WHY="pod $pod did not finish"
  tb_poll 90 "pod $pod done" tb_pod_finished "$via" default "$pod" || return 1
  phase=$(tb_kubectl "$via" --request-timeout=10s -n default get pod "$pod" -o 'jsonpath={.status.phase}')
  tb_kubectl "$via" --request-timeout=10s -n default logs "$pod" >"$TB_RUN/$pod.log" 2>&1
  if [ "$phase" != Succeeded ] || ! grep -qx "$ip" "$TB_RUN/$pod.log"; then
    cat "$TB_RUN/$pod.log" >&2
    TB_WHY="pod $pod: kubernetes.default.svc.cluster.local did not resolve to $ip ($phase)"
    return 1
  fi
  tb_kubectl "$via" --request-timeout=10s -n default delete pod "$pod" --wait=false >&2 || true
  tb_log "ok: DNS answers in a pod on $(tb_node_name "$n"): kubernetes.default.svc.cluster.local is $ip"
  TB_WHY=""
}
# tb_pod_finished VIA NAMESPACE POD: the pod has Succeeded or Failed.
tb_pod_finished() {
  case "$(tb_kubectl "$1" --request-timeout=10s -n "$2" get pod "$3" -o 'jsonpath={.status.phase}')" in
    Succeeded | Failed) ;;
    *) return 1 ;;
  esac
}

# tb_https_serve N PORT DIR CERT KEY: the files of DIR over HTTPS on node N's address, port PORT, with
# the certificate CERT and its key KEY (host paths), in the background in node N's network namespace
# (the teardown stops it with the node); returns once it answers. Log: $TB_RUN/nodeN/https-PORT.log.
tb_https_serve() {
  local n=$1 port=$2 dir=$3 cert=$4 key=$5 log
  log=$TB_RUN/$(tb_node_name "$n")/https-$port.log
  nsenter --net="$TB_RUN/ns/$(tb_node_name "$n").net" python3 -c '
import functools, http.server, ssl, sys
ip, port, root, cert, key = sys.argv[1:]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
server = http.server.ThreadingHTTPServer((ip, int(port)), handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()' "$(tb_node_ip "$n")" "$port" "$dir" "$cert" "$key" >"$log" 2>&1 &
  disown "$!" # the teardown kills it: no job report
  tb_poll 15 "$(tb_node_name "$n"): HTTPS on port $port" \
    nsenter --net="$TB_RUN/ns/$(tb_node_name "$n").net" curl -sk --max-time 2 -o /dev/null "https://$(tb_node_ip "$n"):$port/"
}

# etcd's v3 JSON gateway on node N's own member, with the health-check client certificate kubeadm
# writes for the etcd pod's probes (etcd trusts any client certificate of its CA).
tb_etcd_curl() {
  local n=$1
  shift
  tb_node_exec "$n" curl -sS --fail --max-time 5 --cacert /etc/kubernetes/pki/etcd/ca.crt \
    --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt --key /etc/kubernetes/pki/etcd/healthcheck-client.key \
    "$@"
}
# tb_etcd_members N: one line per member as node N's etcd lists it: name (- until it started), voter or
# learner, peer URLs, client URLs (- until it started).
tb_etcd_members() {
  local out
  out=$(tb_etcd_curl "$1" -X POST "https://127.0.0.1:2379/v3/cluster/member/list" -d '{}') || return 1
  printf '%s' "$out" | python3 -c '
import json, sys
for m in json.load(sys.stdin).get("members", []):
    print(m.get("name") or "-", "learner" if m.get("isLearner") else "voter",
          ",".join(m.get("peerURLs", [])) or "-", ",".join(m.get("clientURLs", [])) or "-")'
}
# tb_etcd_members_are VIA N...: node VIA's etcd lists exactly the members nodeN..., all started voters
# whose peer URL is their node's address (the advertise address kubeadm picked).
tb_etcd_members_are() {
  local via=$1 want="" n got
  shift
  for n in "$@"; do
    want="$want$(tb_node_name "$n") voter https://$(tb_node_ip "$n"):2380 https://$(tb_node_ip "$n"):2379"$'\n'
  done
  got=$(tb_etcd_members "$via" | sort) || return 1
  [ "$got" = "$(printf '%s' "$want" | sort)" ]
}
