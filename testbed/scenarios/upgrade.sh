# shellcheck shell=bash
# Scenario upgrade: a v1.25.15 cluster of two control planes made to look as if kubeadm 1.24 had
# made it, upgraded to v1.25.16 with `kubeadm upgrade apply` on the first and `kubeadm upgrade node`
# on the second, then an upgrade that fails and is rolled back.
#   kubeadm init (kubernetesVersion v1.25.15, controlPlaneEndpoint node1's address, --upload-certs, a
#   fixed token) on node1 → the printed control-plane join on node2 → both Ready, the API server says
#   v1.25.15 → 1.24's leftovers:
#   kubeadm-config's imageRepository set to k8s.gcr.io, node1 with the legacy
#   node-role.kubernetes.io/master:NoSchedule taint beside the control-plane one →
#   `upgrade diff v1.25.16` and `upgrade node --dry-run` on node1 change nothing (kubeadm-config,
#   manifests, kubelet files) → `upgrade apply v1.25.16 -y` on node1: the four manifests and mirror
#   pods run the v1.25.16 images of registry.k8s.io (etcd 3.5.9-0), kube-proxy rolls out v1.25.16,
#   kubeadm-config says registry.k8s.io and v1.25.16, node1 has the control-plane taint and not the
#   master one, the API, CoreDNS and
#   both nodes are fine, the old manifests are kept in /etc/kubernetes/tmp/kubeadm-backup-manifests-*
#   → `upgrade node` on node2 (the second control plane, across the version change): its three
#   control-plane manifests and mirror pods run v1.25.16, etcd's image unchanged (its manifest is
#   rewritten: upgrade drops the other member from --initial-cluster, as upstream's does), both nodes
#   Ready after its kubelet restarts →
#   rollback: `upgrade apply v1.25.16 -y --patches DIR` with a kube-apiserver patch adding an unknown
#   flag fails, kube-apiserver.yaml is back byte for byte, the API serves again.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set; every check is polled with a
# deadline (no fixed sleeps).
#
# Binaries: the scenario's --kubeadm runs init and join; TB_UPGRADE_KUBEADM (default: the same) runs
# every upgrade command (diff, node --dry-run, apply, node on node2, the failing apply).
# TB_UPGRADE_DUMP=DIR keeps, right after node2's `upgrade node`, the API objects (DIR/api/, the
# dumps lib/api_objects.py reads), the files the upgrade wrote (DIR/files/nodeN/: the manifests,
# config.yaml, kubeadm-flags.env, each with its mode on its first line; and node1's
# renewed-certificates: which certificates `upgrade apply` renewed, by serial) and node1's
# certificates, keys and kubeconfig files (DIR/pki/, for lib/compare.py: each certificate's
# profile), so that one run's can be compared with another's (see the README for the command).
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
#   nothing: adding the control-plane taint next to the master one was v1.24's upgrade. node1 has both,
#   as 1.24's init left them, and ends with the control-plane one only. (A node with only the master
#   taint would end with none.)
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
upgrade_kubeadm=${TB_UPGRADE_KUBEADM:-$kubeadm}
# /usr/bin/kubeadm: the package scenario.sh --deb installed on the nodes, here seen from the host.
[ "$upgrade_kubeadm" != /usr/bin/kubeadm ] || upgrade_kubeadm=${TB_DEB_ROOT:?/usr/bin/kubeadm without --deb}/usr/bin/kubeadm
upgrade_kubeadm=$(readlink -f "$upgrade_kubeadm")
[ -x "$upgrade_kubeadm" ] || tb_die "TB_UPGRADE_KUBEADM not executable: $upgrade_kubeadm"
old=v1.25.15
new=v1.25.16
cfg=/etc/testbed/kubeadm-init.yaml
# A fixed token, so that lib/api_objects.py can tell it from the random one of --upload-certs.
token=abcdef.0123456789abcdef
master_taint=node-role.kubernetes.io/master:NoSchedule
cp_taint=node-role.kubernetes.io/control-plane:NoSchedule

# Preflight errors ignored, and why:
# - HTTPProxyCIDR on init and the control-plane join (which runs init's node checks): the upstream
#   binary here is built with Go 1.26, whose net/url rejects the URL this check builds for an IPv4
#   CIDR (see init-join-reset.sh and the README).
# None on the upgrade commands (see CreateJob above).
init_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
join_ignore="--ignore-preflight-errors=HTTPProxyCIDR"
# The four static pods of a control plane; etcd keeps its image (3.5.9-0 for both versions).
components="kube-apiserver kube-controller-manager kube-scheduler etcd"

kubectl1() { tb_kubectl 1 --request-timeout=10s "$@"; }
fail() {
  tb_log "FAIL: $*"
  kubectl1 get nodes,pods -A -o wide >&2 || true
  tb_fail_logs 1 2
  exit 1
}
is_upstream() { [ "$upgrade_kubeadm" = "$(readlink -f "$upstream")" ]; }

pod_running() { [ "$(kubectl1 -n kube-system get pod "$1" -o 'jsonpath={.status.phase}')" = Running ]; }
ds_running_on() {
  kubectl1 -n kube-system get pods -l "k8s-app=$1" --field-selector "spec.nodeName=$2,status.phase=Running" \
    -o name | grep -q .
}
coredns_available() {
  [ "$(kubectl1 -n kube-system get deployment coredns -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
api_serves() { [ "$(kubectl1 get --raw /readyz)" = ok ]; }
api_version_is() {
  kubectl1 get --raw /version | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["gitVersion"] != sys.argv[1])' "$1"
}
# The ClusterConfiguration document of kubeadm-config, and the data of the whole ConfigMap.
cluster_configuration() { kubectl1 -n kube-system get configmap kubeadm-config -o 'jsonpath={.data.ClusterConfiguration}'; }
kubeadm_config_data() { kubectl1 -n kube-system get configmap kubeadm-config -o 'jsonpath={.data}'; }
# node1's taints, one "key:Effect" a line, sorted.
taints1() {
  kubectl1 get node node1 -o json |
    python3 -c 'import json,sys; [print("%s:%s" % (t["key"], t["effect"])) for t in sorted(json.load(sys.stdin)["spec"].get("taints") or [], key=lambda t: t["key"])]'
}
# node1's certificates, one "<file> <serial>" a line: each certificate of /etc/kubernetes/pki and the
# client certificate a kubeconfig of /etc/kubernetes embeds.
cert_serials() {
  tb_node_exec 1 sh -c 'cd /etc/kubernetes && for f in pki/*.crt pki/etcd/*.crt; do
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
# The image component $1 runs at version $2.
component_image() {
  if [ "$1" = etcd ]; then echo registry.k8s.io/etcd:3.5.9-0; else echo "registry.k8s.io/$1:$2"; fi
}
# kube-proxy rolled out: every scheduled pod is of the current template, and available.
kube_proxy_rolled_out() {
  local gen observed desired updated available
  read -r gen observed desired updated available < <(kubectl1 -n kube-system get daemonset kube-proxy -o \
    'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberAvailable}{"\n"}')
  [ -n "$gen" ] && [ "$gen" = "$observed" ] && [ "$desired" = 2 ] && [ "$updated" = 2 ] && [ "$available" = 2 ]
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
# Every image of node N also under k8s.gcr.io, the repository of a cluster made by kubeadm 1.24 (a
# binary that did not rewrite imageRepository would ask for those names); CoreDNS also under the
# path kubeadm gives it in a repository other than registry.k8s.io.
legacy_tags() {
  local n=$1 ref
  for ref in $(tb_node_exec "$n" ctr -n k8s.io images ls -q | grep '^registry\.k8s\.io/'); do
    tb_node_exec "$n" ctr -n k8s.io images tag --force "$ref" "k8s.gcr.io/${ref#registry.k8s.io/}" >/dev/null ||
      fail "node$n: tagging $ref as k8s.gcr.io"
  done
  tb_node_exec "$n" ctr -n k8s.io images tag --force registry.k8s.io/coredns/coredns:v1.9.3 \
    k8s.gcr.io/coredns:v1.9.3 >/dev/null || fail "node$n: tagging coredns as k8s.gcr.io/coredns"
}
# The kubelet of node N renewed its Lease after the time $2 (seconds since the epoch): it runs, with
# whatever configuration it was restarted on (Ready alone would still be the old kubelet's report).
lease_renewed_after() {
  kubectl1 -n kube-node-lease get lease "node$1" -o 'jsonpath={.spec.renewTime}' |
    python3 -c 'import datetime,sys; sys.exit(datetime.datetime.fromisoformat(sys.stdin.read().strip().replace("Z", "+00:00")).timestamp() <= float(sys.argv[1]))' "$2"
}
# restart_kubelet N: what comes after an upgrade on a node (a new kubelet package, its configuration
# rewritten): the kubelet restarted; it must renew its Lease and the node stay Ready.
restart_kubelet() {
  local n=$1 since
  since=$(date +%s)
  tb_node_exec "$n" systemctl restart kubelet || fail "node$n: kubelet restart"
  tb_poll 60 "node$n: the restarted kubelet renews its Lease" lease_renewed_after "$n" "$since" ||
    fail "node$n: the kubelet did not come back after its restart"
  tb_poll 60 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n not Ready after its kubelet restarted"
}
# run_logged N NAME CMD...: CMD on node N, output in $TB_RUN/nodeN/NAME.log; returns CMD's status.
run_logged() {
  local n=$1 name=$2
  shift 2
  tb_node_exec "$n" timeout 900 "$@" >"$TB_RUN/node$n/$name.log" 2>&1
}

t0=$(date +%s)
tb_log "init and join: $kubeadm; upgrades: $upgrade_kubeadm"
# Both control planes carry the v1.25.15 images besides the default (v1.25.16) ones: the control
# plane and kube-proxy start at v1.25.15. A second control plane needs a controlPlaneEndpoint: node1's
# address (no load balancer: the point here is the upgrade of each control plane, not availability).
TB_NODE_IMAGE_SETS=v1.25.15 tb_node_create 1
legacy_tags 1
{ tb_control_plane_config | sed -e "s/^kubernetesVersion: $new\$/kubernetesVersion: $old/" \
    -e "s/^kind: InitConfiguration\$/&\nbootstrapTokens:\n- token: $token/" \
    -e "s/^kind: ClusterConfiguration\$/&\ncontrolPlaneEndpoint: $(tb_node_ip 1):6443/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"
tb_node_exec 1 grep -qx "kubernetesVersion: $old" "$cfg" || fail "the init config does not ask for $old"

# init on node1 while node2 is created (mostly importing images).
tb_log "kubeadm init on node1 (kubernetesVersion $old)"
tb_node_exec 1 timeout 600 kubeadm init --config="$cfg" --upload-certs $init_ignore >"$TB_RUN/node1/init.log" 2>&1 &
init_pid=$!
TB_NODE_IMAGE_SETS=v1.25.15 tb_node_create 2
legacy_tags 2
wait "$init_pid" || { cat "$TB_RUN/node1/init.log" >&2; fail "kubeadm init failed"; }
tb_log "kubeadm init done $(($(date +%s) - t0))s after the start"
join=$(tb_join_command "$TB_RUN/node1/init.log" control-plane)
case "$join" in
  "kubeadm join $(tb_node_ip 1):6443 "*--discovery-token-ca-cert-hash*--control-plane*--certificate-key*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no control-plane join command in init's output: '$join'" ;;
esac
tb_log "kubeadm join on node2: $join"
# shellcheck disable=SC2086
tb_node_exec 2 timeout 600 $join $join_ignore >"$TB_RUN/node2/join.log" 2>&1 ||
  { cat "$TB_RUN/node2/join.log" >&2; fail "kubeadm join --control-plane failed"; }

for n in 1 2; do
  tb_poll 180 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n did not become Ready"
  tb_poll 120 "kube-proxy Running on node$n" ds_running_on kube-proxy "node$n" || fail "kube-proxy not Running on node$n"
done
for n in 1 2; do
  for p in $components; do
    tb_poll 120 "static pod $p-node$n Running" pod_running "$p-node$n" || fail "$p-node$n is not Running"
  done
done
tb_poll 180 "CoreDNS Available (2 replicas)" coredns_available || fail "CoreDNS did not become Available"
api_version_is "$old" || fail "the API server is not $old: $(kubectl1 get --raw /version)"
kube_proxy_image_on node2 "registry.k8s.io/kube-proxy:$old" || fail "kube-proxy on node2 is not $old"
tb_log "cluster at $old up $(($(date +%s) - t0))s after the start"

# What kubeadm 1.24 would have left: imageRepository k8s.gcr.io in kubeadm-config, and the legacy
# master taint on the control plane beside the control-plane one (1.24's init set both).
kubectl1 -n kube-system get configmap kubeadm-config -o json | python3 -c '
import json, sys
cm = json.load(sys.stdin)
cc = cm["data"]["ClusterConfiguration"]
if cc.count("\nimageRepository: registry.k8s.io\n") != 1:
    sys.exit("no imageRepository: registry.k8s.io line in ClusterConfiguration:\n" + cc)
cm["data"]["ClusterConfiguration"] = cc.replace("\nimageRepository: registry.k8s.io\n", "\nimageRepository: k8s.gcr.io\n")
json.dump(cm, sys.stdout)' >"$TB_RUN/kubeadm-config.json" || fail "could not edit kubeadm-config"
tb_node_exec 1 kubectl --kubeconfig=/etc/kubernetes/admin.conf replace -f - <"$TB_RUN/kubeadm-config.json" >&2 ||
  fail "kubectl replace of kubeadm-config"
cluster_configuration | grep -qx 'imageRepository: k8s.gcr.io' || fail "kubeadm-config does not say k8s.gcr.io"
kubectl1 taint nodes node1 "$master_taint" >&2 || fail "could not add $master_taint"
[ "$(taints1)" = "$cp_taint"$'\n'"$master_taint" ] || fail "node1's taints are not $cp_taint and $master_taint: $(taints1)"
tb_log "ok: kubeadm-config says k8s.gcr.io, node1 has $cp_taint and $master_taint"

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

# The upgrade.
serials_before=$(cert_serials) || fail "reading node1's certificates"
tb_log "kubeadm upgrade apply $new -y on node1 ($upgrade_kubeadm)"
t=$(date +%s)
run_logged 1 upgrade-apply "$upgrade_kubeadm" upgrade apply "$new" -y ||
  { cat "$TB_RUN/node1/upgrade-apply.log" >&2; fail "kubeadm upgrade apply $new failed"; }
cat "$TB_RUN/node1/upgrade-apply.log" >&2
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
for n in node1 node2; do
  tb_poll 60 "kube-proxy $new Running on $n" kube_proxy_image_on "$n" "registry.k8s.io/kube-proxy:$new" ||
    fail "kube-proxy $new not Running on $n"
done
cc=$(cluster_configuration) || fail "reading kubeadm-config"
printf '%s\n' "$cc" | grep -qx 'imageRepository: registry.k8s.io' ||
  fail "kubeadm-config's imageRepository is not registry.k8s.io: $cc"
printf '%s\n' "$cc" | grep -qx "kubernetesVersion: $new" || fail "kubeadm-config's kubernetesVersion is not $new: $cc"
# Upstream removes the master taint and adds nothing (see the top of this file): the control-plane
# one stays, alone.
[ "$(taints1)" = "$cp_taint" ] || fail "node1's taints after apply: $(taints1) (want only $cp_taint: master removed, nothing added)"
tb_poll 60 "API serves" api_serves || fail "no API after the upgrade"
tb_poll 120 "CoreDNS Available (2 replicas)" coredns_available || fail "CoreDNS not Available after the upgrade"
for n in 1 2; do tb_poll 60 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n not Ready after the upgrade"; done
backup=$(tb_node_exec 1 sh -c 'ls -d /etc/kubernetes/tmp/kubeadm-backup-manifests-*') ||
  fail "node1: no /etc/kubernetes/tmp/kubeadm-backup-manifests-*"
tb_node_exec 1 grep -q "image: registry.k8s.io/kube-apiserver:$old" "$backup/kube-apiserver.yaml" ||
  fail "node1: $backup/kube-apiserver.yaml is not the $old manifest"
tb_log "ok: cluster at $new, old manifests in $backup"
# Certificate renewal is on by default (--certificate-renewal=true): the components' certificates
# are renewed, their CAs are not. Which ones is compared with upstream's run (files/node1/
# renewed-certificates), their profiles too (pki/, lib/compare.py).
renewed=$(comm -13 <(printf '%s\n' "$serials_before") <(cert_serials) | cut -d' ' -f1) ||
  fail "reading node1's certificates after the upgrade"
tb_log "certificates renewed by upgrade apply: $(echo $renewed)"
printf '%s\n' "$renewed" | grep -qx pki/apiserver.crt || fail "upgrade apply did not renew pki/apiserver.crt"
! printf '%s\n' "$renewed" | grep -q 'ca\.crt$' || fail "upgrade apply renewed a CA: $(echo $renewed)"
# apply rewrote node1's config.yaml; the kubelet runs on it once restarted (the upgrade guide's last step).
restart_kubelet 1

# The second control plane, still at v1.25.15: upgrade node upgrades its static pods to the cluster's
# new version (etcd's too: same image, another --initial-cluster) and rewrites its kubelet configuration from
# kubelet-config, which apply rewrote with the same bytes (nothing in it depends on the patch
# version): the file join wrote. The kubelet restarts on it, as after a package upgrade.
for c in $components; do
  want=$(component_image "$c" "$old")
  [ "$(manifest_image "$c" 2)" = "$want" ] || fail "node2: $c.yaml runs $(manifest_image "$c" 2) before its upgrade, not $want"
done
before=$(tb_node_exec 2 cat /var/lib/kubelet/config.yaml) || fail "node2: no kubelet config.yaml"
tb_log "kubeadm upgrade node on node2 ($upgrade_kubeadm)"
run_logged 2 upgrade-node "$upgrade_kubeadm" upgrade node ||
  { cat "$TB_RUN/node2/upgrade-node.log" >&2; fail "kubeadm upgrade node on node2 failed"; }
cat "$TB_RUN/node2/upgrade-node.log" >&2
grep -q "^\[upgrade\] The configuration for this node was successfully updated!" "$TB_RUN/node2/upgrade-node.log" ||
  fail "kubeadm upgrade node did not say it updated node2"
[ "$(tb_node_exec 2 cat /var/lib/kubelet/config.yaml)" = "$before" ] ||
  fail "node2: config.yaml after upgrade node differs from the one join wrote"
for c in $components; do
  want=$(component_image "$c" "$new")
  [ "$(manifest_image "$c" 2)" = "$want" ] || fail "node2: $c.yaml runs $(manifest_image "$c" 2), not $want"
  tb_poll 120 "mirror pod $c-node2 Running $want" mirror_image_is "$c" "$want" 2 ||
    fail "mirror pod $c-node2: $(kubectl1 -n kube-system get pod "$c-node2" -o 'jsonpath={.spec.containers[0].image} {.status.phase}')"
done
restart_kubelet 2
tb_poll 60 "node1 Ready" tb_node_ready 1 node1 || fail "node1 not Ready after node2's upgrade"

if [ -n "${TB_UPGRADE_DUMP:-}" ]; then
  tb_poll 120 "node1 settled for the dump" settled || fail "not settled: $TB_WHY"
  rm -rf "$TB_UPGRADE_DUMP/api" "$TB_UPGRADE_DUMP/files"
  tb_dump_api_objects 1 "$TB_UPGRADE_DUMP/api" || fail "dumping the API objects"
  tb_dump_node_files 1 "$TB_UPGRADE_DUMP/files/node1" /etc/kubernetes/manifests/etcd.yaml \
    /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests/kube-controller-manager.yaml \
    /etc/kubernetes/manifests/kube-scheduler.yaml /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env ||
    fail "dumping node1's files"
  tb_dump_node_files 2 "$TB_UPGRADE_DUMP/files/node2" /etc/kubernetes/manifests/etcd.yaml \
    /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests/kube-controller-manager.yaml \
    /etc/kubernetes/manifests/kube-scheduler.yaml /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env ||
    fail "dumping node2's files"
  printf '%s\n' "$renewed" >"$TB_UPGRADE_DUMP/files/node1/renewed-certificates"
  rm -rf "$TB_UPGRADE_DUMP/pki"
  mkdir -p "$TB_UPGRADE_DUMP/pki"
  tb_node_exec 1 tar -C /etc/kubernetes -cf - pki admin.conf controller-manager.conf scheduler.conf kubelet.conf |
    tar -C "$TB_UPGRADE_DUMP/pki" -xf - || fail "dumping node1's certificates"
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
tb_node_exec 1 sh -ec 'mkdir -p /etc/testbed/patches
  cat > /etc/testbed/patches/kube-apiserver+json.json
  cp -p /etc/kubernetes/manifests/kube-apiserver.yaml /etc/testbed/kube-apiserver.yaml.before' <<'JSON'
[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--this-flag-does-not-exist=1"}]
JSON
rollback_env=()
[ -z "${TB_UPGRADE_ROLLBACK_TIMEOUT:-}" ] ||
  rollback_env=(env "KUBEADM_UPGRADE_MANIFESTS_TIMEOUT=$TB_UPGRADE_ROLLBACK_TIMEOUT")
tb_log "${TB_UPGRADE_ROLLBACK_TIMEOUT:+KUBEADM_UPGRADE_MANIFESTS_TIMEOUT=$TB_UPGRADE_ROLLBACK_TIMEOUT }kubeadm upgrade apply $new -y --patches /etc/testbed/patches on node1 ($upgrade_kubeadm): must fail"
t=$(date +%s)
if run_logged 1 upgrade-apply-rollback "${rollback_env[@]}" "$upgrade_kubeadm" upgrade apply "$new" -y --patches /etc/testbed/patches; then
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
tb_poll 120 "mirror pod kube-apiserver-node1 Running registry.k8s.io/kube-apiserver:$new" \
  mirror_image_is kube-apiserver "registry.k8s.io/kube-apiserver:$new" || fail "kube-apiserver-node1 not back"
tb_log "rollback: the API serves again $(($(date +%s) - t))s after the failing apply started"
tb_poll 60 "node1 Ready" tb_node_ready 1 node1 || fail "node1 not Ready after the rollback"
tb_log "scenario upgrade done $(($(date +%s) - t0))s after the start"
