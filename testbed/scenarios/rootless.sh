# shellcheck shell=bash
# Scenario rootless: the RootlessControlPlane feature gate on real nodes. kubeadm init on node1 with
# `featureGates: {RootlessControlPlane: true}` and --upload-certs (controlPlaneEndpoint node1's
# address), then the printed control-plane join on node2:
#   → both nodes Ready, etcd two started voters, each node has the users and groups the gate makes
#     (kubeadm-etcd, kubeadm-kas, kubeadm-kcm, kubeadm-ks, kubeadm-sa-key-readers), and every
#     control-plane process (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) runs as
#     its user: real, effective, saved and file-system IDs in /proc/PID/status, the user's group,
#     and kubeadm-sa-key-readers among the supplementary groups of the API server and the
#     controller-manager → DNS answers in a pod on node2, a write through the API reads back
#   → `kubeadm upgrade node` on node2 (same version: etcd's manifest is rewritten, etcd restarts):
#     etcd back with two voters and running as kubeadm-etcd, a write through the API
#   → `kubeadm reset -f` on node2, then node1: each node clean, and none of the users and groups
#     left in its /etc/passwd and /etc/group.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every wait is polled with a
# deadline.
#
# Binaries: the kubeadm under test runs init; TB_JOIN_KUBEADM (default: the same) the join and
# `upgrade node`; TB_RESET_KUBEADM (default: the join one) the resets.
#
# TB_ROOTLESS_FILES=DIR keeps, per node (DIR/nodeN/), what the gate decides: the four manifests and
# the kubelet's files after the join (mode, then content), the owner and mode of everything under
# /etc/kubernetes and of etcd's data directory, the users' and groups' lines, and etcd's manifest
# after `upgrade node` (DIR/node2/after-upgrade-node/): test.sh compares upstream's run with ours.
#
# Nothing a testbed node lacks is skipped for the gate: the preflight errors ignored are ha's (the
# HTTPProxyCIDR check, which the Go 1.26 build of upstream cannot run; see init-join-reset.sh).

join_kubeadm=${TB_JOIN_KUBEADM:-kubeadm}
reset_kubeadm=${TB_RESET_KUBEADM:-$join_kubeadm}
cfg=/etc/testbed/kubeadm-init.yaml
ignore="--ignore-preflight-errors=HTTPProxyCIDR"
endpoint=$(tb_node_ip 1):6443

kubectln() { local n=$1; shift; tb_kubectl "$n" --request-timeout=10s "$@"; }
fail() {
  tb_log "FAIL: $*"
  kubectln 1 get nodes,pods -A -o wide >&2 || true
  for n in 1 2; do
    echo "----- etcd members as node$n sees them" >&2
    tb_etcd_members "$n" >&2 || true
  done
  tb_fail_logs 1 2
  exit 1
}
etcd_healthy() { tb_etcd_curl "$1" https://127.0.0.1:2379/health | grep -q '"health":"true"'; }
api_writes() {
  kubectln "$1" -n default create configmap "$2" --from-literal=written-by="node$1" ||
    kubectln "$1" -n default get configmap "$2"
}
mirror_pods_listed() {
  local p
  for p in etcd kube-apiserver kube-controller-manager kube-scheduler; do
    kubectln 1 -n kube-system get pod "$p-node$1" -o name >/dev/null 2>&1 || return 1
  done
}

# The users and groups the gate makes, and which component runs as which user.
users="kubeadm-etcd kubeadm-kas kubeadm-kcm kubeadm-ks"
user_of() {
  case "$1" in
    etcd) echo kubeadm-etcd ;;
    kube-apiserver) echo kubeadm-kas ;;
    # /proc/PID/comm keeps 15 characters.
    kube-controller) echo kubeadm-kcm ;;
    kube-scheduler) echo kubeadm-ks ;;
  esac
}
# users_present N: node N's /etc/passwd and /etc/group have every user (whose primary group is the
# group of the same name) and the group kubeadm-sa-key-readers.
users_present() {
  local n=$1 u uid gid
  for u in $users; do
    IFS=: read -r _ _ uid gid _ < <(tb_node_exec "$n" getent passwd "$u") || return 1
    [ -n "$uid" ] && [ "$(tb_node_exec "$n" getent group "$gid" | cut -d: -f1)" = "$u" ] || return 1
  done
  tb_node_exec "$n" getent group kubeadm-sa-key-readers >/dev/null
}
# users_absent N: none of them is left on node N.
users_absent() {
  local n=$1 u
  for u in $users; do
    ! tb_node_exec "$n" getent passwd "$u" >/dev/null || return 1
    ! tb_node_exec "$n" getent group "$u" >/dev/null || return 1
  done
  ! tb_node_exec "$n" getent group kubeadm-sa-key-readers >/dev/null
}
# runs_as_users N: each of node N's control-plane processes runs as its user (all four user IDs and
# all four group IDs of /proc/PID/status), the API server and controller-manager with the service
# account key readers' group among their supplementary groups; each component exactly once. The
# reason of a failure is in TB_WHY.
# shellcheck disable=SC2034 # TB_WHY is for the caller
runs_as_users() {
  local n=$1 p comm u uid gid readers seen="" ids want groups
  readers=$(tb_node_exec "$n" getent group kubeadm-sa-key-readers | cut -d: -f3)
  for p in $(tb_node_pids "node$n"); do
    comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
    u=$(user_of "$comm")
    [ -n "$u" ] || continue
    IFS=: read -r _ _ uid gid _ < <(tb_node_exec "$n" getent passwd "$u")
    ids=$(awk '$1 == "Uid:" { print "uid", $2, $3, $4, $5 } $1 == "Gid:" { print "gid", $2, $3, $4, $5 }' "/proc/$p/status")
    want=$(printf 'uid %s %s %s %s\ngid %s %s %s %s' "$uid" "$uid" "$uid" "$uid" "$gid" "$gid" "$gid" "$gid")
    TB_WHY="node$n: $comm (pid $p) runs as $(echo "$ids" | tr '\n' ' '), not as $u ($uid:$gid)"
    [ "$ids" = "$want" ] || return 1
    groups=" $(awk '$1 == "Groups:" { $1 = ""; print }' "/proc/$p/status") "
    case "$comm" in
      kube-apiserver | kube-controller)
        TB_WHY="node$n: $comm (pid $p) lacks the group kubeadm-sa-key-readers ($readers):$groups"
        case "$groups" in *" $readers "*) ;; *) return 1 ;; esac ;;
    esac
    seen="$seen $comm"
  done
  TB_WHY="node$n: the control-plane processes found are:$seen"
  [ "$(echo "$seen" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')" = "etcd kube-apiserver kube-controller kube-scheduler " ]
}
# keep_files N DIR: what test.sh compares (see above) of node N, into DIR.
keep_files() {
  local n=$1 out=$2
  tb_dump_node_files "$n" "$out" /etc/kubernetes/manifests/etcd.yaml /etc/kubernetes/manifests/kube-apiserver.yaml \
    /etc/kubernetes/manifests/kube-controller-manager.yaml /etc/kubernetes/manifests/kube-scheduler.yaml \
    /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env || fail "node$n: cannot read its files"
  # shellcheck disable=SC2016 # expanded on the node
  tb_node_exec "$n" sh -c 'stat -c "%a %U:%G %n" /var/lib/etcd /var/lib/etcd/member; find /etc/kubernetes -exec stat -c "%a %U:%G %n" {} +' |
    sort -k 3 >"$out/tree" || fail "node$n: cannot list its files"
  tb_node_exec "$n" sh -c 'grep "^kubeadm-" /etc/passwd; echo; grep "^kubeadm-" /etc/group' >"$out/users" ||
    fail "node$n: cannot read its users"
}

step() {
  local n=$1 name=$2 t
  shift 2
  t=$(date +%s)
  tb_log "node$n: $*"
  if ! tb_node_exec "$n" timeout 600 "$@" >"$TB_RUN/node$n/$name.log" 2>&1; then
    cat "$TB_RUN/node$n/$name.log" >&2
    fail "node$n: $name failed"
  fi
  tb_log "node$n: $name done in $(($(date +%s) - t))s"
}

t0=$(date +%s)
TB_NODE_IMAGE_SETS=tools tb_node_create 1
TB_NODE_IMAGE_SETS=tools tb_node_create 2
{ tb_control_plane_config |
    sed -e "s/^kind: ClusterConfiguration\$/&\ncontrolPlaneEndpoint: $endpoint\nfeatureGates:\n  RootlessControlPlane: true/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"
# shellcheck disable=SC2086
step 1 init kubeadm init --config="$cfg" --upload-certs $ignore
cp_join=$(tb_join_command "$TB_RUN/node1/init.log" control-plane)
case "$cp_join" in
  "kubeadm join $endpoint "*--discovery-token-ca-cert-hash*--control-plane*--certificate-key*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no control-plane join command with --certificate-key: '$cp_join'" ;;
esac
# shellcheck disable=SC2086
step 2 join "$join_kubeadm" ${cp_join#kubeadm } $ignore

for n in 1 2; do
  tb_poll 180 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n did not become Ready"
done
tb_poll 60 "etcd (asked on node2): node1 and node2 started voting members" tb_etcd_members_are 2 1 2 ||
  fail "etcd members are not node1 and node2"
for n in 1 2; do
  users_present "$n" || fail "node$n: the users and groups of the gate are not all there"
  tb_poll 150 "node$n: its control-plane mirror pods listed" mirror_pods_listed "$n" ||
    fail "node$n's kubelet did not create its control-plane mirror pods"
  tb_poll 60 "node$n: every control-plane process runs as its user" runs_as_users "$n" || fail "$TB_WHY"
  tb_log "ok: node$n's etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as their users"
  [ -z "${TB_ROOTLESS_FILES:-}" ] || keep_files "$n" "$TB_ROOTLESS_FILES/node$n"
done
tb_dns_from_pod 1 2 dns-rootless || fail "$TB_WHY"
tb_poll 30 "kubectl on node2 writes" api_writes 2 rootless-up || fail "no write through the API"
[ "$(kubectln 1 -n default get configmap rootless-up -o 'jsonpath={.data.written-by}')" = node2 ] ||
  fail "the ConfigMap written through node2 does not read back on node1"

# upgrade node on node2: the control-plane manifests come out the same and are skipped, etcd's does
# not (written without the other member in --initial-cluster, as upstream does): etcd restarts
# from the new manifest, which must keep it rootless.
step 2 upgrade-node "$join_kubeadm" upgrade node
grep -q "The control plane instance for this node was successfully updated" "$TB_RUN/node2/upgrade-node.log" ||
  { cat "$TB_RUN/node2/upgrade-node.log" >&2; fail "node2: upgrade node did not say the control plane was updated"; }
tb_poll 60 "etcd on node2 healthy" etcd_healthy 2 || fail "etcd on node2 is not healthy after upgrade node"
tb_poll 60 "etcd (asked on node2): node1 and node2 started voting members" tb_etcd_members_are 2 1 2 ||
  fail "etcd lost a member in upgrade node on node2"
tb_poll 60 "node2: every control-plane process runs as its user" runs_as_users 2 || fail "$TB_WHY"
if [ -n "${TB_ROOTLESS_FILES:-}" ]; then
  tb_dump_node_files 2 "$TB_ROOTLESS_FILES/node2/after-upgrade-node" /etc/kubernetes/manifests/etcd.yaml ||
    fail "node2: cannot read etcd's manifest"
fi
tb_poll 30 "kubectl on node1 writes" api_writes 1 rootless-after-upgrade-node || fail "no write after upgrade node"
tb_log "cluster up and upgraded $(($(date +%s) - t0))s after the start"

tb_node_reset 2 "$reset_kubeadm" || fail "$TB_WHY"
users_absent 2 || fail "node2: users or groups of the gate left after reset"
tb_poll 30 "etcd (asked on node1): node1 only" tb_etcd_members_are 1 1 || fail "etcd members after node2's reset"
tb_poll 60 "kubectl on node1 writes" api_writes 1 rootless-node2-reset || fail "no write after node2's reset"
tb_node_reset 1 "$reset_kubeadm" || fail "$TB_WHY"
users_absent 1 || fail "node1: users or groups of the gate left after reset"
tb_log "ok: reset removed the gate's users and groups on both nodes"
tb_log "scenario rootless done $(($(date +%s) - t0))s after the start"
