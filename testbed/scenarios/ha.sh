# shellcheck shell=bash
# Scenario ha: three control planes (node1-3) behind a TCP load balancer (lib/lb.sh: haproxy on
# 198.51.100.10:6443, the controlPlaneEndpoint) and one worker (node4).
#   kubeadm init --upload-certs on node1 → the printed control-plane join (--control-plane
#   --certificate-key) on node2, then node3 → the printed worker join on node4 → every node Ready,
#   etcd has three started voting members, every API server serves a certificate for the load
#   balancer's address and the load balancer sees all three up, kubectl through it reads and writes →
#   node1 fails (kubelet stopped, its control-plane pods removed): the load balancer drops it, the API
#   through it keeps reading and writing, etcd on node2 and node3 stays healthy → node1's kubelet back:
#   its etcd member and API server rejoin → kubeadm reset -f on node3: etcd has two members, the API
#   keeps serving → reset of node4, node2 (one member left), node1 (the last one).
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every check is polled with a
# deadline (no fixed sleeps).
#
# TB_HA_UPGRADE=BIN runs `kubeadm upgrade node` with BIN on node2 and node3 once the cluster is up
# (see there).
#
# TB_HA_FILES=DIR keeps the files the joins wrote on node2-4 (manifests, kubelet configuration, with
# their modes) under DIR/nodeN/, for test.sh to compare upstream's joins with ours.
#
# Binaries: the scenario's --kubeadm runs init; TB_JOIN_KUBEADM (default: the same) runs the
# control-plane and worker joins, with the commands init printed; TB_RESET_KUBEADM (default: the join
# one) runs the resets.
#
# One worker only: the pod ranges are the four /26 of 203.0.113.0/24 (lib/node.sh routes nodes 1-4),
# and three control planes already keep this 2-core machine busy.
#
# Why node1 comes back before node3 is reset: with node1's member down, removing node3's would leave
# two members, one of them dead, and a two-member etcd needs both for a quorum: the API would stop.

lb=$TB_LB_IP
cps="1 2 3"
join_kubeadm=${TB_JOIN_KUBEADM:-$kubeadm}
reset_kubeadm=${TB_RESET_KUBEADM:-$join_kubeadm}
cfg=/etc/testbed/kubeadm-init.yaml

# Preflight errors ignored, and why:
# - HTTPProxyCIDR on init and on the control-plane joins (which run init's node checks too): the
#   upstream binary here is built with Go 1.26, whose net/url rejects the URL this check builds for an
#   IPv4 CIDR (see init-join-reset.sh and the README). No proxy is configured on the testbed anyway.
init_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
cp_join_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
worker_join_ignore=""

# kubectl on node N through its admin.conf, whose server is the load balancer; each call bounded.
kubectln() { local n=$1; shift; tb_kubectl "$n" --request-timeout=10s "$@"; }
fail() {
  local n
  tb_log "FAIL: $*"
  for n in 2 1 3; do ! kubectln "$n" get nodes,pods -A -o wide >&2 || break; done
  for n in $cps; do
    echo "----- etcd members as node$n sees them" >&2
    tb_etcd_members "$n" >&2 || true
  done
  tb_fail_logs 1 2 3 4
  tb_lb_fail_logs
  exit 1
}

etcd_healthy() { tb_etcd_curl "$1" https://127.0.0.1:2379/health | grep -q '"health":"true"'; }

lb_state_is() { [ "$(tb_lb_server_state "$1")" = "$2" ]; }
api_reads() { [ "$(kubectln "$1" get --raw /readyz)" = ok ] && kubectln "$1" get nodes -o name >/dev/null; }
# The kubelet of node $1 has created its four control-plane mirror pods (a reset finds the node's
# API endpoint in the kube-apiserver one's annotation).
mirror_pods_listed() {
  local p
  for p in etcd kube-apiserver kube-controller-manager kube-scheduler; do
    kubectln 1 -n kube-system get pod "$p-node$1" -o name >/dev/null 2>&1 || return 1
  done
}
# api_writes VIA NAME: a ConfigMap NAME in default, created through the load balancer (if an earlier
# attempt created it but its answer was lost, it is there).
api_writes() {
  kubectln "$1" -n default create configmap "$2" --from-literal=written-by="node$1" ||
    kubectln "$1" -n default get configmap "$2"
}
node_absent() { ! kubectln "$1" get node "$2"; }
# No process of the control plane left on node N (kubelet included).
cp_dead() {
  local p
  for p in $(tb_node_pids "node$1"); do
    case "$(cat "/proc/$p/comm" 2>/dev/null)" in etcd | kube-apiserver | kube-controller | kube-scheduler | kubelet) return 1 ;; esac
  done
}
lb_answers() { nsenter --net="$TB_RUN/ns/lan.net" curl -sk --max-time 3 "https://$lb:6443/readyz" | grep -qx ok; }

# kubeadm STEP on node N in the background (one at a time; output in $TB_RUN/nodeN/STEP.log), so
# that the next node is created meanwhile: creating a node is mostly importing the images (7-12 s).
step_start() {
  step_n=$1 step_name=$2 step_t=$(date +%s)
  shift 2
  tb_node_exec "$step_n" timeout 600 "$@" >"$TB_RUN/node$step_n/$step_name.log" 2>&1 &
  step_pid=$!
}
step_wait() {
  if ! wait "$step_pid"; then
    cat "$TB_RUN/node$step_n/$step_name.log" >&2
    fail "kubeadm $step_name on node$step_n failed"
  fi
  tb_log "node$step_n: kubeadm $step_name done in $(($(date +%s) - step_t))s"
}

# The worker joins by HTTPS discovery (kubeadm's `discovery` workflow): node1 serves the cluster-info
# kubeconfig (kube-public/cluster-info's, as init made it) on :8443 with a certificate of a CA that
# node4 trusts (added to node4's /etc/ssl/certs/ca-certificates.crt, which Go's and rustls's native
# roots read), and on :8444 with a self-signed one nothing trusts (a leaf: basicConstraints CA:FALSE;
# see docs/limitations.md for a self-signed CA certificate). A join against :8444 must fail
# before it writes anything (no kubeconfig, certificate or kubelet file);
# the worker then joins through :8443 with `--tls-bootstrap-token` (the token of the printed
# command), and its files are compared with upstream's as the others are.
https_discovery() {
  local d=$TB_RUN/https rc=0 left
  mkdir -p "$d/www"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=testbed-ca -keyout "$d/ca.key" -out "$d/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null &&
    openssl req -newkey rsa:2048 -nodes -subj /CN=node1 -keyout "$d/srv.key" -out "$d/srv.csr" 2>/dev/null &&
    openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -days 1 -out "$d/srv.crt" \
      -extfile <(printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$(tb_node_ip 1)") 2>/dev/null &&
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=node1 -keyout "$d/self.key" -out "$d/self.crt" \
      -addext basicConstraints=critical,CA:FALSE -addext "subjectAltName=IP:$(tb_node_ip 1)" 2>/dev/null ||
    fail "openssl: the HTTPS discovery certificates"
  kubectln 1 -n kube-public get configmap cluster-info -o 'jsonpath={.data.kubeconfig}' >"$d/www/cluster-info.yaml" ||
    fail "no kube-public/cluster-info"
  grep -q "server: https://$lb:6443" "$d/www/cluster-info.yaml" || fail "cluster-info does not name the load balancer"
  tb_https_serve 1 8443 "$d/www" "$d/srv.crt" "$d/srv.key" || fail "node1: no HTTPS server on :8443"
  tb_https_serve 1 8444 "$d/www" "$d/self.crt" "$d/self.key" || fail "node1: no HTTPS server on :8444"
  tb_node_exec 4 sh -c 'cat >> /etc/ssl/certs/ca-certificates.crt' <"$d/ca.crt" || fail "node4: trusting the testbed CA"
  tb_log "kubeadm join on node4 ($join_kubeadm), discovery file https://$(tb_node_ip 1):8444/cluster-info.yaml (untrusted)"
  tb_node_exec 4 timeout 120 "$join_kubeadm" join --discovery-file "https://$(tb_node_ip 1):8444/cluster-info.yaml" \
    --tls-bootstrap-token "$token" >"$TB_RUN/node4/join-untrusted.log" 2>&1 || rc=$?
  cat "$TB_RUN/node4/join-untrusted.log" >&2
  [ "$rc" != 0 ] || fail "node4: the join through a server nothing trusts succeeded"
  grep -q "x509: certificate signed by unknown authority" "$TB_RUN/node4/join-untrusted.log" ||
    fail "node4: the refused join does not say the certificate's authority is unknown"
  left=$(tb_node_exec 4 find /etc/kubernetes /var/lib/kubelet -mindepth 1 -not -type d) || fail "node4: listing its files"
  [ -z "$left" ] || fail "node4: the refused join left files: $left"
  tb_log "ok: node4: the join through an untrusted HTTPS server failed (exit $rc) and wrote nothing"
}

t0=$(date +%s)
tb_node_create 1
# shellcheck disable=SC2086
tb_lb_start 6443 $cps
{ tb_control_plane_config | sed -e "s/^kind: ClusterConfiguration\$/&\ncontrolPlaneEndpoint: $lb:6443/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"
tb_log "kubeadm init --upload-certs on node1 ($kubeadm), controlPlaneEndpoint $lb:6443"
# shellcheck disable=SC2086
step_start 1 init kubeadm init --config="$cfg" --upload-certs $init_ignore
tb_node_create 2
step_wait
cp_join=$(tb_join_command "$TB_RUN/node1/init.log" control-plane)
worker_join=$(tb_join_command "$TB_RUN/node1/init.log" worker)
case "$cp_join" in
  "kubeadm join $lb:6443 "*--discovery-token-ca-cert-hash*--control-plane*--certificate-key*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no control-plane join command with --certificate-key for $lb:6443: '$cp_join'" ;;
esac
case "$worker_join" in
  "kubeadm join $lb:6443 "*--discovery-token-ca-cert-hash*) ;;
  *) fail "no worker join command for $lb:6443: '$worker_join'" ;;
esac
cp_join="$join_kubeadm${cp_join#kubeadm}"
token=$(printf '%s\n' "$worker_join" | sed -n 's/.* --token \([^ ]*\).*/\1/p')
[ -n "$token" ] || fail "no --token in the worker join command: '$worker_join'"

# The control planes one after the other, each joining while the next node is created.
tb_log "kubeadm join --control-plane on node2 ($join_kubeadm)"
# shellcheck disable=SC2086
step_start 2 join $cp_join $cp_join_ignore
tb_node_create 3
step_wait
tb_log "kubeadm join --control-plane on node3 ($join_kubeadm)"
# shellcheck disable=SC2086
step_start 3 join $cp_join $cp_join_ignore
tb_node_create 4
step_wait
https_discovery
tb_log "kubeadm join on node4 ($join_kubeadm), discovery file https://$(tb_node_ip 1):8443/cluster-info.yaml"
# shellcheck disable=SC2086
step_start 4 join "$join_kubeadm" join --discovery-file "https://$(tb_node_ip 1):8443/cluster-info.yaml" \
  --tls-bootstrap-token "$token" $worker_join_ignore
step_wait

for n in $cps 4; do
  tb_poll 180 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n did not become Ready"
done
# The files the joins wrote (mode, then content), for test.sh to compare one run's with another's.
if [ -n "${TB_HA_FILES:-}" ]; then
  for n in 2 3 4; do
    mkdir -p "$TB_HA_FILES/node$n"
    for f in /etc/kubernetes/manifests/etcd.yaml /etc/kubernetes/manifests/kube-apiserver.yaml \
      /etc/kubernetes/manifests/kube-controller-manager.yaml /etc/kubernetes/manifests/kube-scheduler.yaml \
      /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env; do
      tb_node_exec "$n" sh -c "test ! -f $f || { stat -c %a $f && cat $f; }" >"$TB_HA_FILES/node$n/${f##*/}" ||
        fail "node$n: cannot read $f"
    done
    # Mode and owner of everything the join left under /etc/kubernetes, of etcd's data folder and
    # of the kubelet's files from kubeadm, for the CIS file checks and upstream's modes (test.sh).
    # shellcheck disable=SC2016 # expanded on the node
    tb_node_exec "$n" sh -c 'for p in /var/lib/etcd /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env; do
        [ ! -e "$p" ] || stat -c "%a %U:%G %n" "$p"; done; find /etc/kubernetes -exec stat -c "%a %U:%G %n" {} +' |
      sort -k 3 >"$TB_HA_FILES/node$n/tree" || fail "node$n: cannot list its files"
  done
fi
tb_poll 60 "etcd (asked on node1): node1, node2, node3 started voting members" tb_etcd_members_are 1 1 2 3 ||
  fail "etcd members are not node1, node2, node3"
tb_etcd_members 1 >&2
for n in $cps; do
  sans=$(tb_node_exec "$n" openssl x509 -noout -ext subjectAltName -in /etc/kubernetes/pki/apiserver.crt) ||
    fail "node$n: no readable apiserver.crt"
  case "$sans," in *"IP Address:$lb,"*) ;; *) fail "node$n: apiserver.crt has no SAN for $lb: $sans" ;; esac
  tb_poll 60 "load balancer: node$n UP" lb_state_is "node$n" UP || fail "the load balancer does not see node$n's API server"
  [ "$(kubectln "$n" config view -o 'jsonpath={.clusters[0].cluster.server}')" = "https://$lb:6443" ] ||
    fail "node$n: admin.conf does not point at the load balancer"
done
# The kubelet creates a static pod's mirror pod in a sync of that pod once its Node object exists;
# a static pod started before the node registered (a joining control plane's) is synced again only
# at its resync, every 60-90 s (syncFrequency 1m, jitter 0.5), so the wait may take up to 90 s
# after the node is Ready, whichever kubeadm joined it.
for n in $cps; do
  tb_poll 150 "node$n: its control-plane mirror pods listed" mirror_pods_listed "$n" ||
    fail "node$n's kubelet did not create its control-plane mirror pods"
done
tb_poll 30 "kubectl on node3 through the load balancer reads" api_reads 3 || fail "no API through the load balancer"
tb_poll 30 "kubectl on node2 through the load balancer writes" api_writes 2 ha-all-up ||
  fail "no write through the load balancer"
# TB_HA_UPGRADE=BIN: `kubeadm upgrade node` with BIN on the second and third control planes, as after
# an `upgrade apply` on the first. The cluster already runs v1.25.16, so the control-plane manifests
# come out the same and are skipped; etcd's does not (upgrade writes it without the other members in
# --initial-cluster, as upstream does), so etcd is backed up, its certificates renewed, its manifest
# swapped and the new Pod waited for: etcd must keep its three members and the API keep serving.
if [ -n "${TB_HA_UPGRADE:-}" ]; then
  for n in 2 3; do
    tb_log "kubeadm upgrade node on node$n ($TB_HA_UPGRADE)"
    step_start "$n" upgrade-node "$TB_HA_UPGRADE" upgrade node
    step_wait
    grep -q "The control plane instance for this node was successfully updated" "$TB_RUN/node$n/upgrade-node.log" || {
      cat "$TB_RUN/node$n/upgrade-node.log" >&2
      fail "node$n: upgrade node did not say the control plane was updated"
    }
    tb_node_exec "$n" sh -c 'ls -d /etc/kubernetes/tmp/kubeadm-backup-etcd-*/etcd/member' >/dev/null ||
      fail "node$n: no copy of etcd's data in /etc/kubernetes/tmp"
    tb_poll 60 "etcd on node$n healthy" etcd_healthy "$n" || fail "etcd on node$n is not healthy after upgrade node"
    tb_poll 60 "etcd (asked on node$n): node1, node2, node3 started voting members" tb_etcd_members_are "$n" 1 2 3 ||
      fail "etcd lost a member in upgrade node on node$n"
  done
  tb_poll 30 "kubectl on node3 through the load balancer writes" api_writes 3 ha-after-upgrade-node ||
    fail "no write through the load balancer after upgrade node"
fi
tb_kubectl 1 get nodes -o wide >&2
total=0
for n in $cps 4; do
  rss=$(tb_rss "node$n")
  total=$((total + rss))
  tb_log "node$n: $rss MiB resident"
done
tb_log "load balancer: $(tb_rss lb) MiB resident; the four nodes: $total MiB"
tb_log "cluster up $(($(date +%s) - t0))s after the start"

# Failure: node1's kubelet stopped and its control-plane pods (etcd, API server, controller-manager,
# scheduler) stopped and removed, as when the machine dies with its containers.
tb_log "failure: node1's kubelet stopped, its control-plane pods removed"
tb_node_exec 1 systemctl stop kubelet || fail "node1: systemctl stop kubelet"
ids=$(tb_node_exec 1 crictl pods --label tier=control-plane -q)
[ -n "$ids" ] || fail "node1: no control-plane pod sandboxes to remove"
# shellcheck disable=SC2086
tb_node_exec 1 crictl stopp $ids >/dev/null || fail "node1: stopping the control-plane pods"
# shellcheck disable=SC2086
tb_node_exec 1 crictl rmp $ids >/dev/null || fail "node1: removing the control-plane pods"
tb_poll 30 "node1: no kubelet, etcd or control-plane process left" cp_dead 1 || fail "node1's control plane still runs"
tb_poll 30 "load balancer: node1 DOWN" lb_state_is node1 DOWN || fail "the load balancer still sends to node1"
tb_poll 60 "kubectl on node2 through the load balancer reads" api_reads 2 || fail "no API through the load balancer without node1"
tb_poll 60 "kubectl on node3 through the load balancer writes" api_writes 3 ha-node1-down ||
  fail "no write through the load balancer without node1"
for n in 2 3; do
  tb_poll 30 "etcd on node$n healthy" etcd_healthy "$n" || fail "etcd on node$n unhealthy without node1"
done
tb_etcd_members 2 >&2

# node1 back: the kubelet starts the static pods again; its etcd member rejoins with its data.
tb_log "node1's kubelet started again"
tb_node_exec 1 systemctl start kubelet || fail "node1: systemctl start kubelet"
tb_poll 120 "etcd on node1 healthy again" etcd_healthy 1 || fail "etcd on node1 did not come back"
tb_poll 60 "load balancer: node1 UP again" lb_state_is node1 UP || fail "node1's API server did not come back"
tb_poll 60 "node1 Ready again" tb_node_ready 2 node1 || fail "node1 not Ready again"
tb_poll 30 "etcd (asked on node3): three started voting members" tb_etcd_members_are 3 1 2 3 ||
  fail "etcd members after node1 came back"

# A control plane leaves: reset removes its etcd member.
tb_node_reset 3 "$reset_kubeadm" || fail "$TB_WHY"
tb_poll 30 "etcd (asked on node2): node1 and node2 only" tb_etcd_members_are 2 1 2 || fail "etcd members after node3's reset"
tb_etcd_members 2 >&2
tb_poll 30 "load balancer: node3 DOWN" lb_state_is node3 DOWN || fail "the load balancer still sends to node3"
tb_poll 60 "kubectl on node1 through the load balancer reads" api_reads 1 || fail "no API after node3's reset"
tb_poll 60 "kubectl on node2 through the load balancer writes" api_writes 2 ha-node3-reset ||
  fail "no write after node3's reset"
kubectln 1 delete node node3 >&2 || fail "kubectl delete node node3"

# The others: the worker, then node2 (node1's member is the last), then node1.
tb_node_reset 4 "$reset_kubeadm" || fail "$TB_WHY"
kubectln 1 delete node node4 >&2 || fail "kubectl delete node node4"
tb_node_reset 2 "$reset_kubeadm" || fail "$TB_WHY"
tb_poll 30 "etcd (asked on node1): node1 only" tb_etcd_members_are 1 1 || fail "etcd members after node2's reset"
tb_poll 60 "kubectl on node1 through the load balancer writes" api_writes 1 ha-node2-reset ||
  fail "no write after node2's reset"
kubectln 1 delete node node2 >&2 || fail "kubectl delete node node2"
tb_node_reset 1 "$reset_kubeadm" || fail "$TB_WHY"
for n in $cps; do
  tb_poll 30 "load balancer: node$n DOWN" lb_state_is "node$n" DOWN || fail "node$n's API server still answers after the resets"
done
! lb_answers || fail "the load balancer still answers after every reset"
tb_log "scenario ha done $(($(date +%s) - t0))s after the start"
