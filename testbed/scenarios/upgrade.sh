# shellcheck shell=bash
# Scenario upgrade: the takeover. A cluster that upstream kubeadm v1.24.17 made (kubelets v1.24.17,
# etcd 3.5.6-0, CoreDNS v1.8.6, `imageRepository: k8s.gcr.io`, both taints on its control planes),
# with its control planes behind a load balancer, upgraded to v1.25.16 node by node as the upgrade
# guide says, while it serves; then an upgrade that fails and is rolled back.
#   The load balancer (lib/lb.sh) → kubeadm v1.24.17 init on node1 (kubernetesVersion v1.24.17,
#   imageRepository k8s.gcr.io, controlPlaneEndpoint the load balancer, --upload-certs, a fixed token)
#   → the printed control-plane join on node2 (and node3 with TB_UPGRADE_CONTROL_PLANES=3) and the
#   printed worker join on the last node → every node Ready on kubelet v1.24.17, the API says
#   v1.24.17, both taints on the control planes, a ConfigMap written → a poller reads that ConfigMap
#   through the load balancer every half second until the end →
#   `upgrade plan` (offers v1.25.16; its output kept for the comparison), `upgrade diff v1.25.16` and
#   `upgrade node --dry-run` on node1 change nothing → `upgrade apply v1.25.16 -y` on node1: the four
#   manifests and mirror pods run registry.k8s.io's v1.25.16 images (etcd 3.5.9-0), kube-proxy and
#   CoreDNS v1.9.3 roll out, kubeadm-config says registry.k8s.io and v1.25.16, no master taint on any
#   node and the control-plane taint on every control plane → node1's kubelet swapped to v1.25.16 →
#   `upgrade node` on each other control plane, then on the worker, each followed by its kubelet's
#   swap → every node Ready on kubelet v1.25.16, etcd's members all started voters, the ConfigMap
#   written before reads back, every control plane's certificates renewed and no CA →
#   rollback: `upgrade apply v1.25.16 -y --patches DIR` with a kube-apiserver patch adding an unknown
#   flag fails, kube-apiserver.yaml is back byte for byte, the API serves again.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every check is polled with a
# deadline (no fixed sleeps).
#
# Binaries: kubeadm v1.24.17 (TB_UPGRADE_FROM_KUBEADM, default the testbed's build of it) runs init and
# the joins; the scenario's --kubeadm, or TB_UPGRADE_KUBEADM, runs every upgrade command (plan, diff,
# node --dry-run, apply, node, the failing apply).
# TB_UPGRADE_CONTROL_PLANES=2 (default) or 3: how many control planes; one worker after them.
# TB_UPGRADE_DUMP=DIR keeps, once every node is upgraded, the API objects (DIR/api/, the dumps
# lib/api_objects.py reads), the files the upgrade wrote (DIR/files/nodeN/: the control planes'
# manifests, every node's config.yaml and kubeadm-flags.env, each with its mode on its first line;
# each control plane's renewed-certificates: which certificates its upgrade renewed, by serial;
# node1's upgrade-plan.txt: what `upgrade plan` printed) and node1's certificates, keys and
# kubeconfig files (DIR/pki/, for lib/compare.py: each certificate's profile), and DIR/timings (each
# upgrade command's seconds and the longest gap of the API through the load balancer), so that one
# run's can be compared with another's (test.sh compares upstream's with ours).
# TB_UPGRADE_SKIP_ROLLBACK=1 ends the scenario before the rollback, which takes over 5 minutes with
# upstream (see below), e.g. for a run whose point is the dump.
# TB_UPGRADE_ROLLBACK_TIMEOUT=DURATION (e.g. 60s) runs the failing apply with
# KUBEADM_UPGRADE_MANIFESTS_TIMEOUT=DURATION, our kubeadm's wait for each component before it rolls
# back; upstream v1.25 has no such setting and ignores the variable.
#
# What upstream v1.25.16 does that the checks follow (cmd/kubeadm/app/cmd/upgrade, phases/upgrade):
# - `upgrade apply` (and plan) rewrites imageRepository k8s.gcr.io to registry.k8s.io and uploads
#   kubeadm-config at once; `upgrade diff` and `upgrade node` rewrite it only in memory.
# - `upgrade apply` removes the legacy master taint from every node labelled control-plane and adds
#   nothing. kubeadm v1.24's init and control-plane joins set both taints, so every control plane
#   ends with the control-plane one only.
# - A component whose new manifest does not come up is rolled back only after UpgradeManifestTimeout,
#   5 minutes that no flag shortens: the mirror pod's hash never changes since the API server it would
#   be posted to is the one that does not start.
# - The cluster health check CreateJob runs a Job whose pod is the pause image with the argument -v
#   and waits up to 15 s for it to complete. Upstream's pause prints its version and exits on -v; the
#   testbed's (images/pause.c) ignores its arguments, so the Job never completes and every apply waits
#   those 15 s. The check passes nevertheless: createJob's deferred deletion of the Job assigns its
#   own result (nil) to the named error it returns, so v1.25.16 never reports a Job that did not
#   complete. No preflight error needs ignoring on apply.

upstream=$TB_UPSTREAM/kubeadm
from_kubeadm=$(readlink -f "${TB_UPGRADE_FROM_KUBEADM:-$TB_UPSTREAM/v1.24.17/kubeadm}")
[ -x "$from_kubeadm" ] || tb_die "kubeadm v1.24.17 not executable: $from_kubeadm (testbed/upstream/build.sh v1.24.17/kubeadm)"
upgrade_kubeadm=${TB_UPGRADE_KUBEADM:-$kubeadm}
# /usr/bin/kubeadm: the package scenario.sh --deb installed on the nodes, here seen from the host.
[ "$upgrade_kubeadm" != /usr/bin/kubeadm ] || upgrade_kubeadm=${TB_DEB_ROOT:?/usr/bin/kubeadm without --deb}/usr/bin/kubeadm
upgrade_kubeadm=$(readlink -f "$upgrade_kubeadm")
[ -x "$upgrade_kubeadm" ] || tb_die "TB_UPGRADE_KUBEADM not executable: $upgrade_kubeadm"
old=v1.24.17
new=v1.25.16
old_kubelet=$TB_UPSTREAM/v1.24.17/kubelet
new_kubelet=$TB_UPSTREAM/kubelet
ncp=${TB_UPGRADE_CONTROL_PLANES:-2}
case "$ncp" in 2 | 3) ;; *) tb_die "TB_UPGRADE_CONTROL_PLANES must be 2 or 3, not $ncp" ;; esac
cps=$(seq -s " " 1 "$ncp")
worker=$((ncp + 1))
nodes="$cps $worker"
lb=$TB_LB_IP
cfg=/etc/testbed/kubeadm-init.yaml
# A fixed token, so that lib/api_objects.py can tell it from the random one of --upload-certs.
token=abcdef.0123456789abcdef
master_taint=node-role.kubernetes.io/master:NoSchedule
cp_taint=node-role.kubernetes.io/control-plane:NoSchedule

# Preflight errors ignored, and why:
# - HTTPProxyCIDR on init and the control-plane joins (which run init's node checks): the upstream
#   binaries here (v1.24.17 too) are built with Go 1.26, whose net/url rejects the URL this check
#   builds for an IPv4 CIDR (see init-join-reset.sh and the README).
# None on the upgrade commands (see CreateJob above).
init_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
join_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
# The four static pods of a control plane.
components="kube-apiserver kube-controller-manager kube-scheduler etcd"

# kubectl on node1 through its admin.conf, whose server is the load balancer; each call bounded.
kubectl1() { tb_kubectl 1 --request-timeout=10s "$@"; }
poller_pid=""
fail() {
  local n
  tb_log "FAIL: $*"
  # The poller ends with the run (it also stops once the run directory is gone).
  [ -z "$poller_pid" ] || touch "$TB_RUN/poller/stop"
  kubectl1 get nodes,pods -A -o wide >&2 || true
  for n in $cps; do
    echo "----- etcd members as node$n sees them" >&2
    tb_etcd_members "$n" >&2 || true
  done
  # shellcheck disable=SC2086
  tb_fail_logs $nodes
  tb_lb_fail_logs
  exit 1
}
is_upstream() { [ "$upgrade_kubeadm" = "$(readlink -f "$upstream")" ]; }

pod_running() { [ "$(kubectl1 -n kube-system get pod "$1" -o 'jsonpath={.status.phase}')" = Running ]; }
ds_running_on() {
  kubectl1 -n kube-system get pods -l "k8s-app=$1" --field-selector "spec.nodeName=$2,status.phase=Running" \
    -o name | grep -q .
}
# CoreDNS: its two replicas available, of the Deployment's current template, with image $1.
coredns_available() {
  local gen observed updated available image
  read -r gen observed updated available image < <(kubectl1 -n kube-system get deployment coredns -o \
    'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.updatedReplicas} {.status.availableReplicas} {.spec.template.spec.containers[0].image}{"\n"}')
  [ -n "$gen" ] && [ "$gen" = "$observed" ] && [ "$updated" = 2 ] && [ "$available" = 2 ] && [ "$image" = "$1" ]
}
api_serves() { [ "$(kubectl1 get --raw /readyz)" = ok ]; }
api_version_is() {
  kubectl1 get --raw /version | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["gitVersion"] != sys.argv[1])' "$1"
}
# The ClusterConfiguration document of kubeadm-config, and the data of the whole ConfigMap.
cluster_configuration() { kubectl1 -n kube-system get configmap kubeadm-config -o 'jsonpath={.data.ClusterConfiguration}'; }
kubeadm_config_data() { kubectl1 -n kube-system get configmap kubeadm-config -o 'jsonpath={.data}'; }
# Node $1's taints, one "key:Effect" a line, sorted.
taints() {
  kubectl1 get node "$1" -o json |
    python3 -c 'import json,sys; [print("%s:%s" % (t["key"], t["effect"])) for t in sorted(json.load(sys.stdin)["spec"].get("taints") or [], key=lambda t: t["key"])]'
}
kubelet_version_is() { [ "$(kubectl1 get node "$1" -o 'jsonpath={.status.nodeInfo.kubeletVersion}')" = "$2" ]; }
# Node N's certificates, one "<file> <serial>" a line: each certificate of /etc/kubernetes/pki and the
# client certificate a kubeconfig of /etc/kubernetes embeds.
cert_serials() {
  tb_node_exec "$1" sh -c 'cd /etc/kubernetes && for f in pki/*.crt pki/etcd/*.crt; do
      echo "$f $(openssl x509 -noout -serial -in "$f")"; done
    for f in *.conf; do d=$(sed -n "s/^ *client-certificate-data: //p" "$f")
      [ -z "$d" ] || echo "$f $(echo "$d" | base64 -d | openssl x509 -noout -serial)"; done' | sort
}
# Checksums of what the dry runs must leave alone on node1.
node1_files_sum() {
  tb_node_exec 1 sh -c 'cat /etc/kubernetes/manifests/*.yaml /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env | sha256sum'
}
# The image of a static pod's manifest on node N (1 by default), and of its mirror pod.
manifest_image() {
  tb_node_exec "${2:-1}" sed -n 's/^ *image: *//p' "/etc/kubernetes/manifests/$1.yaml"
}
mirror_image_is() {
  local pod=$1-node${3:-1}
  [ "$(kubectl1 -n kube-system get pod "$pod" -o 'jsonpath={.spec.containers[0].image}')" = "$2" ] && pod_running "$pod"
}
# The image component $1 runs at version $2 (v1.24.17: in k8s.gcr.io, as kubeadm-config says then).
component_image() {
  case "$1:$2" in
    etcd:"$old") echo k8s.gcr.io/etcd:3.5.6-0 ;;
    etcd:*) echo registry.k8s.io/etcd:3.5.9-0 ;;
    *:"$old") echo "k8s.gcr.io/$1:$2" ;;
    *) echo "registry.k8s.io/$1:$2" ;;
  esac
}
# kube-proxy rolled out: every scheduled pod is of the current template, and available.
kube_proxy_rolled_out() {
  local gen observed desired updated available n
  n=$(echo $nodes | wc -w)
  read -r gen observed desired updated available < <(kubectl1 -n kube-system get daemonset kube-proxy -o \
    'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberAvailable}{"\n"}')
  [ -n "$gen" ] && [ "$gen" = "$observed" ] && [ "$desired" = "$n" ] && [ "$updated" = "$n" ] && [ "$available" = "$n" ]
}
# kube-proxy Running on node $1 with image $2.
kube_proxy_image_on() {
  [ "$(kubectl1 -n kube-system get pods -l k8s-app=kube-proxy --field-selector "spec.nodeName=$1,status.phase=Running" \
    -o 'jsonpath={.items[*].spec.containers[0].image}')" = "$2" ]
}
# What the controllers add on their own, there before a dump (as in api-objects.sh): node1 Ready
# without the not-ready taint, its TTL annotation, the Deployment's revision, cluster-info's JWS.
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
# Every image of node N also under k8s.gcr.io, the repository the v1.24 cluster is made with (its
# kubeadm-config says so; a v1.25 kubeadm that kept it would ask for those names too); CoreDNS also
# under the path kubeadm gives it in a repository other than registry.k8s.io (k8s.gcr.io/coredns:TAG).
legacy_tags() {
  local n=$1 ref
  for ref in $(tb_node_exec "$n" ctr -n k8s.io images ls -q | grep '^registry\.k8s\.io/'); do
    tb_node_exec "$n" ctr -n k8s.io images tag --force "$ref" "k8s.gcr.io/${ref#registry.k8s.io/}" >/dev/null ||
      fail "node$n: tagging $ref as k8s.gcr.io"
    case "$ref" in
      registry.k8s.io/coredns/coredns:*)
        tb_node_exec "$n" ctr -n k8s.io images tag --force "$ref" "k8s.gcr.io/coredns:${ref##*:}" >/dev/null ||
          fail "node$n: tagging $ref as k8s.gcr.io/coredns" ;;
    esac
  done
}
# The kubelet of node N renewed its Lease after the time $2 (seconds since the epoch): it runs, with
# whatever configuration it was restarted on (Ready alone would still be the old kubelet's report).
lease_renewed_after() {
  kubectl1 -n kube-node-lease get lease "node$1" -o 'jsonpath={.spec.renewTime}' |
    python3 -c 'import datetime,sys; sys.exit(datetime.datetime.fromisoformat(sys.stdin.read().strip().replace("Z", "+00:00")).timestamp() <= float(sys.argv[1]))' "$2"
}
# new_kubelet N: what the upgrade guide does on a node after `kubeadm upgrade`: the kubelet package
# upgraded (the v1.25.16 binary swapped in) and the kubelet restarted; it must renew its Lease, report
# v1.25.16, and the node stay Ready. The v1.25 kubelet restarts the static pods the v1.24 one
# started (its container hashes differ), etcd's member among them, and a two-member etcd has no
# quorum while either member restarts: on a control plane, the next step waits until etcd's members
# are all started again, the node's four mirror pods run the new images and the API serves.
new_kubelet() {
  local n=$1 since
  since=$(date +%s)
  tb_node_kubelet "$n" "$new_kubelet"
  tb_node_exec "$n" systemctl restart kubelet || fail "node$n: kubelet restart"
  tb_poll 180 "node$n: the restarted kubelet renews its Lease" lease_renewed_after "$n" "$since" ||
    fail "node$n: the kubelet did not come back after its restart"
  tb_poll 60 "node$n: kubelet $new" kubelet_version_is "node$n" "$new" || fail "node$n: the kubelet is not $new"
  tb_poll 60 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n not Ready after its kubelet restarted"
  [ "$n" != "$worker" ] || return 0
  tb_poll 300 "node$n's control plane settled (20 s in a row)" settled_for 20 cp_settled "$n" ||
    fail "node$n's control plane did not settle after its kubelet restart: $TB_WHY"
}
# cp_settled N: etcd's members all started voters (asked on node1), node N's four mirror pods of the
# new images Running and ready, the API serving.
cp_settled() {
  local n=$1 c
  TB_WHY="etcd's members are not the control planes, all started"
  # shellcheck disable=SC2086
  tb_etcd_members_are 1 $cps || return 1
  for c in $components; do
    TB_WHY="mirror pod $c-node$n not Running and ready with $(component_image "$c" "$new")"
    mirror_image_is "$c" "$(component_image "$c" "$new")" "$n" || return 1
    [ "$(kubectl1 -n kube-system get pod "$c-node$n" -o 'jsonpath={.status.containerStatuses[0].ready}')" = true ] || return 1
  done
  TB_WHY="the API does not serve"
  api_serves
}
# settled_for SECONDS CMD...: CMD succeeds, and again every 5 s for SECONDS (the static pods the new
# kubelet restarts go down a few seconds after it starts, while the old ones still answer).
settled_for() {
  local secs=$1 end_at
  shift
  end_at=$(($(date +%s) + secs))
  while [ "$(date +%s)" -lt "$end_at" ]; do
    "$@" || return 1
    sleep 5
  done
  "$@"
}
# run_logged N NAME CMD...: CMD on node N, output in $TB_RUN/nodeN/NAME.log, and each line with the
# time it came in NAME.times.log (to see where an upgrade spends its time, and compare two runs');
# returns CMD's status.
run_logged() {
  local n=$1 name=$2 status
  shift 2
  tb_node_exec "$n" timeout 900 "$@" 2>&1 | python3 -u -c '
import datetime, sys
out, times = open(sys.argv[1], "w"), open(sys.argv[2], "w")
for line in sys.stdin:
    out.write(line)
    out.flush()
    times.write(datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3] + " " + line)
    times.flush()' "$TB_RUN/node$n/$name.log" "$TB_RUN/node$n/$name.times.log"
  status=("${PIPESTATUS[@]}")
  [ "${status[1]}" = 0 ] || return 1
  return "${status[0]}"
}
timings=""
timed() { timings="$timings$1 $2"$'\n'; }

# The poller: a client of the load balancer on the lan (its own network namespace's view), with
# node1's admin credentials, reading the ConfigMap written below every half second, each read
# bounded to 2 s; one line per read: the time (ms since the epoch) and ok or fail. It does not hold
# the runner's lock (fd 9), and it stops by itself when the run directory goes.
poller_start() {
  local d=$TB_RUN/poller
  mkdir -p "$d"
  tb_node_exec 1 cat /etc/kubernetes/pki/ca.crt >"$d/ca.crt"
  tb_node_exec 1 sed -n 's/^ *client-certificate-data: //p' /etc/kubernetes/admin.conf | base64 -d >"$d/client.crt"
  tb_node_exec 1 sed -n 's/^ *client-key-data: //p' /etc/kubernetes/admin.conf | base64 -d >"$d/client.key"
  chmod 600 "$d/client.key"
  # shellcheck disable=SC2016
  nsenter --net="$TB_RUN/ns/lan.net" bash -c '
    d=$1 url=$2
    while [ -d "$d" ] && [ ! -e "$d/stop" ]; do
      if curl -sS --fail --max-time 2 --cacert "$d/ca.crt" --cert "$d/client.crt" --key "$d/client.key" \
        "$url" >/dev/null 2>>"$d/errors.log"; then r=ok; else r=fail; fi
      echo "$(date +%s%3N) $r" >>"$d/reads.log"
      sleep 0.5
    done' _ "$d" "https://$lb:6443/api/v1/namespaces/default/configmaps/written-before-upgrade" 9>&- &
  poller_pid=$!
}
# poller_stop: "GAP READS FAILED": the longest time between two successful reads, in seconds (about
# 0.5 plus a read's time when none failed), how many reads, how many failed.
poller_stop() {
  touch "$TB_RUN/poller/stop"
  wait "$poller_pid" 2>/dev/null || true
  python3 - "$TB_RUN/poller/reads.log" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ok = [int(t) for t, r in rows if r == "ok"]
gap = max((b - a for a, b in zip(ok, ok[1:])), default=0)
print("%.1f %d %d" % (gap / 1000.0, len(rows), len(rows) - len(ok)))
PY
}

t0=$(date +%s)
tb_log "init and joins: $from_kubeadm ($old); upgrades: $upgrade_kubeadm; control planes: $cps; worker: node$worker"
tb_lb_start 6443 $cps
# Every node starts on kubelet v1.24.17 with the v1.24.17 images besides the default (v1.25.16) ones,
# all also under k8s.gcr.io.
create() {
  tb_node_kubelet "$1" "$old_kubelet"
  TB_NODE_IMAGE_SETS="v1.24.17 tools" tb_node_create "$1"
  legacy_tags "$1"
}
create 1
{ tb_control_plane_config | sed -e "s/^kubernetesVersion: $new\$/kubernetesVersion: $old\nimageRepository: k8s.gcr.io/" \
    -e "s/^kind: InitConfiguration\$/&\nbootstrapTokens:\n- token: $token/" \
    -e "s/^kind: ClusterConfiguration\$/&\ncontrolPlaneEndpoint: $lb:6443/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"
tb_node_exec 1 grep -qx "kubernetesVersion: $old" "$cfg" || fail "the init config does not ask for $old"

# init on node1 while node2 is created (mostly importing images).
tb_log "kubeadm $old init on node1"
tb_node_exec 1 timeout 600 "$from_kubeadm" init --config="$cfg" --upload-certs $init_ignore >"$TB_RUN/node1/init.log" 2>&1 &
init_pid=$!
create 2
wait "$init_pid" || { cat "$TB_RUN/node1/init.log" >&2; fail "kubeadm $old init failed"; }
tb_log "kubeadm init done $(($(date +%s) - t0))s after the start"
cp_join=$(tb_join_command "$TB_RUN/node1/init.log" control-plane)
case "$cp_join" in
  "kubeadm join $lb:6443 "*--discovery-token-ca-cert-hash*--control-plane*--certificate-key*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no control-plane join command in init's output: '$cp_join'" ;;
esac
worker_join=$(tb_join_command "$TB_RUN/node1/init.log" worker)
case "$worker_join" in
  "kubeadm join $lb:6443 "*--discovery-token-ca-cert-hash*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no worker join command in init's output: '$worker_join'" ;;
esac
for n in $cps; do
  [ "$n" != 1 ] || continue
  [ "$n" = 2 ] || create "$n"
  tb_log "kubeadm $old join --control-plane on node$n"
  # shellcheck disable=SC2086
  tb_node_exec "$n" timeout 600 "$from_kubeadm" ${cp_join#kubeadm } $join_ignore >"$TB_RUN/node$n/join.log" 2>&1 ||
    { cat "$TB_RUN/node$n/join.log" >&2; fail "kubeadm $old join --control-plane on node$n failed"; }
done
create "$worker"
tb_log "kubeadm $old join on node$worker"
# shellcheck disable=SC2086
tb_node_exec "$worker" timeout 600 "$from_kubeadm" ${worker_join#kubeadm } >"$TB_RUN/node$worker/join.log" 2>&1 ||
  { cat "$TB_RUN/node$worker/join.log" >&2; fail "kubeadm $old join on node$worker failed"; }

for n in $nodes; do
  tb_poll 180 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n did not become Ready"
  tb_poll 120 "kube-proxy Running on node$n" ds_running_on kube-proxy "node$n" || fail "kube-proxy not Running on node$n"
  kubelet_version_is "node$n" "$old" || fail "node$n's kubelet is not $old"
done
for n in $cps; do
  for p in $components; do
    tb_poll 120 "static pod $p-node$n Running" pod_running "$p-node$n" || fail "$p-node$n is not Running"
  done
done
# shellcheck disable=SC2086
tb_poll 60 "etcd: the control planes are its started voting members" tb_etcd_members_are 1 $cps ||
  fail "etcd's members are not the control planes"
tb_poll 180 "CoreDNS Available (2 replicas, v1.8.6)" coredns_available k8s.gcr.io/coredns:v1.8.6 ||
  fail "CoreDNS did not become Available"
api_version_is "$old" || fail "the API server is not $old: $(kubectl1 get --raw /version)"
for c in $components; do
  want=$(component_image "$c" "$old")
  [ "$(manifest_image "$c")" = "$want" ] || fail "node1: $c.yaml runs $(manifest_image "$c"), not $want"
done
kube_proxy_image_on "node$worker" "k8s.gcr.io/kube-proxy:$old" || fail "kube-proxy on node$worker is not $old"
cluster_configuration | grep -qx 'imageRepository: k8s.gcr.io' || fail "kubeadm-config does not say k8s.gcr.io"
# What kubeadm v1.24's init and control-plane joins leave: both taints on every control plane.
for n in $cps; do
  [ "$(taints "node$n")" = "$cp_taint"$'\n'"$master_taint" ] ||
    fail "node$n's taints are not $cp_taint and $master_taint: $(taints "node$n")"
done
kubectl1 -n default create configmap written-before-upgrade --from-literal=written-at="$(date -u +%FT%TZ)" >&2 ||
  fail "writing a ConfigMap before the upgrade"
written=$(kubectl1 -n default get configmap written-before-upgrade -o 'jsonpath={.data.written-at}')
tb_dns_from_pod 1 "$worker" dns-before-upgrade || fail "$TB_WHY"
tb_log "cluster at $old up $(($(date +%s) - t0))s after the start: kubeadm-config says k8s.gcr.io, both taints on the control planes"
poller_start

# upgrade plan offers $new (kubeadm's own version: the internet, where plan looks first, is not
# reachable here); what it printed is kept for the comparison with upstream's.
tb_log "kubeadm upgrade plan on node1 ($upgrade_kubeadm)"
tb_node_exec 1 timeout 300 "$upgrade_kubeadm" upgrade plan >"$TB_RUN/node1/upgrade-plan.log" 2>"$TB_RUN/node1/upgrade-plan.err" ||
  { cat "$TB_RUN/node1/upgrade-plan.log" "$TB_RUN/node1/upgrade-plan.err" >&2; fail "kubeadm upgrade plan failed"; }
cat "$TB_RUN/node1/upgrade-plan.log" >&2
grep -q "kubeadm upgrade apply $new\$" "$TB_RUN/node1/upgrade-plan.log" || fail "upgrade plan does not offer $new"
# Like apply, plan stores kubeadm-config with registry.k8s.io at once (upstream's loadConfig:
# MutateImageRepository uploads it); diff and node keep that change in memory only.
cluster_configuration | grep -qx 'imageRepository: registry.k8s.io' ||
  fail "upgrade plan did not store kubeadm-config with registry.k8s.io"

# The dry runs leave everything as it is. upgrade diff prints the manifests' differences with $new.
data_before=$(kubeadm_config_data) || fail "reading kubeadm-config"
files_before=$(node1_files_sum) || fail "reading node1's files"
tb_log "kubeadm upgrade diff $new on node1 ($upgrade_kubeadm)"
run_logged 1 upgrade-diff "$upgrade_kubeadm" upgrade diff "$new" ||
  { cat "$TB_RUN/node1/upgrade-diff.log" >&2; fail "kubeadm upgrade diff failed"; }
grep -qx "+    image: registry.k8s.io/kube-apiserver:$new" "$TB_RUN/node1/upgrade-diff.log" ||
  { cat "$TB_RUN/node1/upgrade-diff.log" >&2; fail "upgrade diff does not show the kube-apiserver image $new"; }
tb_log "kubeadm upgrade node --dry-run on node1 ($upgrade_kubeadm)"
if ! run_logged 1 upgrade-node-dry-run "$upgrade_kubeadm" upgrade node --dry-run; then
  cat "$TB_RUN/node1/upgrade-node-dry-run.log" >&2
  fail "kubeadm upgrade node --dry-run failed on node1"
fi
[ "$(kubeadm_config_data)" = "$data_before" ] || fail "the dry runs changed kubeadm-config"
[ "$(node1_files_sum)" = "$files_before" ] || fail "the dry runs changed node1's manifests or kubelet files"
tb_log "ok: upgrade diff and upgrade node --dry-run changed neither kubeadm-config nor node1's files"

# The upgrade of the first control plane.
declare -A serials_before
for n in $cps; do serials_before[$n]=$(cert_serials "$n") || fail "reading node$n's certificates"; done
tb_log "kubeadm upgrade apply $new -y on node1 ($upgrade_kubeadm)"
t=$(date +%s)
run_logged 1 upgrade-apply "$upgrade_kubeadm" upgrade apply "$new" -y ||
  { cat "$TB_RUN/node1/upgrade-apply.log" >&2; fail "kubeadm upgrade apply $new failed"; }
cat "$TB_RUN/node1/upgrade-apply.log" >&2
timed "upgrade-apply-node1" "$(($(date +%s) - t))"
tb_log "kubeadm upgrade apply done in $(($(date +%s) - t))s"
grep -q "^\[upgrade/successful\] SUCCESS! Your cluster was upgraded to \"$new\". Enjoy!" "$TB_RUN/node1/upgrade-apply.log" ||
  fail "upgrade apply did not report success"

for c in $components; do
  want=$(component_image "$c" "$new")
  [ "$(manifest_image "$c")" = "$want" ] || fail "node1: $c.yaml runs $(manifest_image "$c"), not $want"
  tb_poll 120 "mirror pod $c-node1 Running $want" mirror_image_is "$c" "$want" ||
    fail "mirror pod $c-node1: $(kubectl1 -n kube-system get pod "$c-node1" -o 'jsonpath={.spec.containers[0].image} {.status.phase}')"
done
tb_poll 60 "the API server says $new" api_version_is "$new" || fail "the API server is not $new"
[ "$(kubectl1 -n kube-system get daemonset kube-proxy -o 'jsonpath={.spec.template.spec.containers[0].image}')" = \
  "registry.k8s.io/kube-proxy:$new" ] || fail "the kube-proxy DaemonSet does not ask for registry.k8s.io/kube-proxy:$new"
tb_poll 180 "kube-proxy rolled out" kube_proxy_rolled_out || fail "kube-proxy did not roll out"
for n in $nodes; do
  tb_poll 60 "kube-proxy $new Running on node$n" kube_proxy_image_on "node$n" "registry.k8s.io/kube-proxy:$new" ||
    fail "kube-proxy $new not Running on node$n"
done
tb_poll 180 "CoreDNS v1.9.3 rolled out (2 replicas available)" coredns_available registry.k8s.io/coredns/coredns:v1.9.3 ||
  fail "CoreDNS v1.9.3 did not roll out"
cc=$(cluster_configuration) || fail "reading kubeadm-config"
printf '%s\n' "$cc" | grep -qx 'imageRepository: registry.k8s.io' ||
  fail "kubeadm-config's imageRepository is not registry.k8s.io: $cc"
printf '%s\n' "$cc" | grep -qx "kubernetesVersion: $new" || fail "kubeadm-config's kubernetesVersion is not $new: $cc"
# Upstream removes the master taint from every control plane and adds nothing (see the top).
for n in $cps; do
  [ "$(taints "node$n")" = "$cp_taint" ] || fail "node$n's taints after apply: $(taints "node$n") (want only $cp_taint)"
done
[ -z "$(taints "node$worker")" ] || fail "node$worker has taints: $(taints "node$worker")"
tb_poll 60 "API serves" api_serves || fail "no API after the upgrade"
backup=$(tb_node_exec 1 sh -c 'ls -d /etc/kubernetes/tmp/kubeadm-backup-manifests-*') ||
  fail "node1: no /etc/kubernetes/tmp/kubeadm-backup-manifests-*"
tb_node_exec 1 grep -q "image: k8s.gcr.io/kube-apiserver:$old" "$backup/kube-apiserver.yaml" ||
  fail "node1: $backup/kube-apiserver.yaml is not the $old manifest"
tb_log "ok: control plane at $new on node1, old manifests in $backup"
new_kubelet 1

# The other control planes, then the worker: upgrade node, then the kubelet swapped. A control
# plane's static pods go to $new (etcd to 3.5.9-0); every node's config.yaml is rewritten from the
# kubelet-config ConfigMap apply wrote.
declare -A renewed
for n in $cps $worker; do
  [ "$n" != 1 ] || continue
  if [ "$n" != "$worker" ]; then
    for c in $components; do
      want=$(component_image "$c" "$old")
      [ "$(manifest_image "$c" "$n")" = "$want" ] || fail "node$n: $c.yaml runs $(manifest_image "$c" "$n") before its upgrade, not $want"
    done
  fi
  tb_log "kubeadm upgrade node on node$n ($upgrade_kubeadm)"
  t=$(date +%s)
  run_logged "$n" upgrade-node "$upgrade_kubeadm" upgrade node ||
    { cat "$TB_RUN/node$n/upgrade-node.log" >&2; fail "kubeadm upgrade node on node$n failed"; }
  cat "$TB_RUN/node$n/upgrade-node.log" >&2
  timed "upgrade-node-node$n" "$(($(date +%s) - t))"
  tb_log "kubeadm upgrade node on node$n done in $(($(date +%s) - t))s"
  grep -q "^\[upgrade\] The configuration for this node was successfully updated!" "$TB_RUN/node$n/upgrade-node.log" ||
    fail "kubeadm upgrade node did not say it updated node$n"
  if [ "$n" != "$worker" ]; then
    for c in $components; do
      want=$(component_image "$c" "$new")
      [ "$(manifest_image "$c" "$n")" = "$want" ] || fail "node$n: $c.yaml runs $(manifest_image "$c" "$n"), not $want"
      tb_poll 120 "mirror pod $c-node$n Running $want" mirror_image_is "$c" "$want" "$n" ||
        fail "mirror pod $c-node$n: $(kubectl1 -n kube-system get pod "$c-node$n" -o 'jsonpath={.spec.containers[0].image} {.status.phase}')"
    done
  fi
  new_kubelet "$n"
done

# The whole cluster at $new.
for n in $nodes; do
  tb_poll 60 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n not Ready at the end"
  kubelet_version_is "node$n" "$new" || fail "node$n's kubelet is not $new"
done
# shellcheck disable=SC2086
tb_poll 120 "etcd: the control planes are its started voting members" tb_etcd_members_are 1 $cps ||
  fail "etcd's members after the upgrade are not the control planes"
[ "$(kubectl1 -n default get configmap written-before-upgrade -o 'jsonpath={.data.written-at}')" = "$written" ] ||
  fail "the ConfigMap written before the upgrade does not read back"
tb_poll 120 "CoreDNS v1.9.3 Available (2 replicas)" coredns_available registry.k8s.io/coredns/coredns:v1.9.3 ||
  fail "CoreDNS not Available at the end"
tb_dns_from_pod 1 "$worker" dns-after-upgrade || fail "$TB_WHY"
# Certificate renewal is on by default (--certificate-renewal=true) in apply and node: every control
# plane's component certificates are renewed, their CAs are not. Which ones is compared with
# upstream's run (files/nodeN/renewed-certificates), node1's profiles too (pki/, lib/compare.py).
for n in $cps; do
  renewed[$n]=$(comm -13 <(printf '%s\n' "${serials_before[$n]}") <(cert_serials "$n") | cut -d' ' -f1) ||
    fail "reading node$n's certificates after the upgrade"
  tb_log "node$n: certificates renewed by the upgrade: $(echo ${renewed[$n]})"
  printf '%s\n' "${renewed[$n]}" | grep -qx pki/apiserver.crt || fail "node$n: pki/apiserver.crt was not renewed"
  ! printf '%s\n' "${renewed[$n]}" | grep -q 'ca\.crt$' || fail "node$n: a CA was renewed: $(echo ${renewed[$n]})"
done
read -r gap reads failed_reads < <(poller_stop)
timed api-longest-gap-seconds "$gap"
tb_log "the API through the load balancer during the upgrade: $reads reads, $failed_reads failed, longest time between two good reads ${gap}s"
tb_log "timings of this run:"$'\n'"$timings"

if [ -n "${TB_UPGRADE_DUMP:-}" ]; then
  tb_poll 120 "node1 settled for the dump" settled || fail "not settled: $TB_WHY"
  rm -rf "$TB_UPGRADE_DUMP/api" "$TB_UPGRADE_DUMP/files" "$TB_UPGRADE_DUMP/pki"
  tb_dump_api_objects 1 "$TB_UPGRADE_DUMP/api" || fail "dumping the API objects"
  for n in $nodes; do
    files="/var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env"
    [ "$n" = "$worker" ] || files="$files $(for c in $components; do printf ' /etc/kubernetes/manifests/%s.yaml' "$c"; done)"
    # shellcheck disable=SC2086
    tb_dump_node_files "$n" "$TB_UPGRADE_DUMP/files/node$n" $files || fail "dumping node$n's files"
    [ "$n" = "$worker" ] || printf '%s\n' "${renewed[$n]}" >"$TB_UPGRADE_DUMP/files/node$n/renewed-certificates"
  done
  cp "$TB_RUN/node1/upgrade-plan.log" "$TB_UPGRADE_DUMP/files/node1/upgrade-plan.txt"
  mkdir -p "$TB_UPGRADE_DUMP/pki"
  tb_node_exec 1 tar -C /etc/kubernetes -cf - pki admin.conf controller-manager.conf scheduler.conf kubelet.conf |
    tar -C "$TB_UPGRADE_DUMP/pki" -xf - || fail "dumping node1's certificates"
  printf '%s' "$timings" >"$TB_UPGRADE_DUMP/timings"
  tb_log "API objects and files dumped into $TB_UPGRADE_DUMP"
fi
tb_log "upgrade done $(($(date +%s) - t0))s after the start"
if [ "${TB_UPGRADE_SKIP_ROLLBACK:-}" = 1 ]; then
  tb_log "TB_UPGRADE_SKIP_ROLLBACK: no rollback"
  tb_log "scenario upgrade done $(($(date +%s) - t0))s after the start"
  return 0
fi

# Rollback: a patch makes the new kube-apiserver fail (an unknown flag), so its manifest differs from
# the running one and the upgrade is attempted; it must fail and put the old manifest back.
# Through node1's own API server (admin.conf with node1's address, which its certificate names):
# through the load balancer, the other control plane's API server would take the kubelet's new
# mirror pod, its hash would change and the pod be Running (crash-looping), and upstream's apply, as
# ours, would call that component upgraded. Asking the API server being upgraded is what makes a
# kube-apiserver that does not come up visible to the upgrade, as on a single control plane.
tb_node_exec 1 sh -ec 'mkdir -p /etc/testbed/patches
  cat > /etc/testbed/patches/kube-apiserver+json.json
  cp -p /etc/kubernetes/manifests/kube-apiserver.yaml /etc/testbed/kube-apiserver.yaml.before
  sed "s#^\( *server: \)https://.*#\1https://$1:6443#" /etc/kubernetes/admin.conf >/etc/testbed/admin-node1.conf
  chmod 600 /etc/testbed/admin-node1.conf
  grep -q "server: https://$1:6443\$" /etc/testbed/admin-node1.conf' _ "$(tb_node_ip 1)" <<'JSON' ||
[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--this-flag-does-not-exist=1"}]
JSON
  fail "node1: preparing the rollback's patch and kubeconfig"
rollback_env=()
[ -z "${TB_UPGRADE_ROLLBACK_TIMEOUT:-}" ] ||
  rollback_env=(env "KUBEADM_UPGRADE_MANIFESTS_TIMEOUT=$TB_UPGRADE_ROLLBACK_TIMEOUT")
tb_log "${TB_UPGRADE_ROLLBACK_TIMEOUT:+KUBEADM_UPGRADE_MANIFESTS_TIMEOUT=$TB_UPGRADE_ROLLBACK_TIMEOUT }kubeadm upgrade apply $new -y --patches /etc/testbed/patches --kubeconfig /etc/testbed/admin-node1.conf on node1 ($upgrade_kubeadm): must fail"
t=$(date +%s)
if run_logged 1 upgrade-apply-rollback "${rollback_env[@]}" "$upgrade_kubeadm" upgrade apply "$new" -y --patches /etc/testbed/patches \
  --kubeconfig /etc/testbed/admin-node1.conf; then
  cat "$TB_RUN/node1/upgrade-apply-rollback.log" >&2
  fail "upgrade apply with a kube-apiserver that cannot start succeeded"
fi
cat "$TB_RUN/node1/upgrade-apply-rollback.log" >&2
tb_log "the failing upgrade apply exited after $(($(date +%s) - t))s"
# It failed where it should, in the control-plane upgrade, and rolled back (not, say, in preflight).
grep -q "couldn't upgrade control plane. kubeadm has tried to recover everything into the earlier state" \
  "$TB_RUN/node1/upgrade-apply-rollback.log" || fail "upgrade apply failed without rolling the control plane back"
tb_node_exec 1 cmp /etc/testbed/kube-apiserver.yaml.before /etc/kubernetes/manifests/kube-apiserver.yaml ||
  fail "node1: kube-apiserver.yaml is not the one before the failed upgrade"
tb_poll 180 "API serves again after the rollback" api_serves || fail "no API after the rollback"
tb_poll 180 "node1's own API server serves again" eval \
  'tb_node_exec 1 curl -sk --max-time 5 "https://$(tb_node_ip 1):6443/readyz" | grep -qx ok' ||
  fail "node1's own API server does not serve after the rollback"
tb_poll 120 "mirror pod kube-apiserver-node1 Running registry.k8s.io/kube-apiserver:$new" \
  mirror_image_is kube-apiserver "registry.k8s.io/kube-apiserver:$new" || fail "kube-apiserver-node1 not back"
tb_log "rollback: the API serves again $(($(date +%s) - t))s after the failing apply started"
tb_poll 60 "node1 Ready" tb_node_ready 1 node1 || fail "node1 not Ready after the rollback"
tb_log "scenario upgrade done $(($(date +%s) - t0))s after the start"
