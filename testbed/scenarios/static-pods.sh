# shellcheck shell=bash
# Scenario static-pods: the kubeadm under test writes a control plane's files on node1 phase by phase
# (certs, kubeconfigs, kubelet-start, control-plane and etcd manifests), and the real kubelet and
# containerd must run them: the API server answers /readyz, the four mirror pods are Running, the API
# server serves the apiserver.crt that kubeadm wrote, and the files that ran (the four manifests,
# the kubelet's config.yaml and kubeadm-flags.env) are byte for byte (and mode for mode) what upstream
# kubeadm v1.25.16 writes for the same config on the same node. With the upstream binary under test,
# that comparison is upstream against itself: the run then checks the scenario, not our kubeadm.
# Then upstream `kubeadm reset -f` cleans the node (our reset runs in other scenarios), and the
# runner tears everything down. Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set;
# every wait is polled with a deadline through kubectl on node1.

kubectl1() { tb_node_exec 1 kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"; }
readyz_ok() { [ "$(kubectl1 get --raw /readyz)" = ok ]; }
pod_running() { [ "$(kubectl1 -n kube-system get pod "$1" -o 'jsonpath={.status.phase}')" = Running ]; }
node_listed() { kubectl1 get nodes -o name | grep -qx "node/$1"; }
no_sandboxes() { [ -z "$(tb_node_exec "$1" crictl -r unix:///var/run/containerd/containerd.sock pods -q)" ]; }
api_down() { ! nsenter --net="$TB_RUN/ns/node1.net" -- bash -c "echo > /dev/tcp/$(tb_node_ip 1)/6443"; }
fail() { tb_log "FAIL: $*"; tb_fail_logs 1; exit 1; }
# The files kubeadm wrote that the kubelet runs: the static pod manifests and the kubelet-start files.
ran_files=(/etc/kubernetes/manifests/etcd.yaml /etc/kubernetes/manifests/kube-apiserver.yaml
           /etc/kubernetes/manifests/kube-controller-manager.yaml /etc/kubernetes/manifests/kube-scheduler.yaml
           /var/lib/kubelet/config.yaml /var/lib/kubelet/kubeadm-flags.env)
# Mode, size and sha256 of each of those files on node 1, one per line.
ran_sums() { tb_node_exec 1 sh -c 'for f; do echo "$(stat -c "%a %s" "$f") $(sha256sum "$f")"; done' _ "${ran_files[@]}"; }
# tar of those files (relative paths), from node 1's mount namespace or from a child of it (COMMAND...).
ran_tar() { "$@" tar -C / -cf - "${ran_files[@]#/}"; }

upstream=$TB_UPSTREAM/kubeadm
cfg=/etc/testbed/kubeadm-init.yaml

tb_node_create 1

tb_control_plane_config | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"

# The phases `kubeadm init` would run to get a control plane going, in an order that starts the
# kubelet before the manifests appear (as init does). Each must succeed on its own.
for phase in "certs all" "kubeconfig all" "kubelet-start" "control-plane all" "etcd local"; do
  log=$TB_RUN/node1/phase-${phase// /-}.log
  tb_log "kubeadm init phase $phase on node1"
  # shellcheck disable=SC2086
  if ! tb_node_exec 1 timeout 300 kubeadm init phase $phase --config=$cfg >"$log" 2>&1; then
    cat "$log" >&2
    fail "kubeadm init phase $phase failed"
  fi
done
# What ran must be what the kubeadm under test wrote: fingerprint the files now, check them at the end.
written=$(ran_sums) || fail "kubeadm did not write all of: ${ran_files[*]}"
[ -z "$(tb_node_exec 1 find /etc/kubernetes/manifests -type f -not -name '*.yaml')" ] || fail "unexpected manifest files"
[ "$(tb_node_exec 1 ls /etc/kubernetes/manifests | wc -l)" = 4 ] || fail "expected exactly 4 manifests"

tb_poll 180 "API server /readyz answers ok" readyz_ok || fail "/readyz never answered ok"
for p in etcd kube-apiserver kube-controller-manager kube-scheduler; do
  tb_poll 180 "mirror pod $p-node1 Running" pod_running "$p-node1" || fail "$p-node1 is not Running"
done
# The kubelet registered with the kubelet.conf that kubeadm wrote (it created the mirror pods with it too).
tb_poll 60 "node1 registered" node_listed node1 || fail "node1 not listed by kubectl get nodes"
kubectl1 -n kube-system get pods -o wide >&2

# The API server serves the certificate kubeadm wrote (not some other one).
served=$(nsenter --net="$TB_RUN/ns/node1.net" -- openssl s_client -connect "$(tb_node_ip 1):6443" </dev/null 2>/dev/null |
  openssl x509 -noout -fingerprint -sha256) || fail "no certificate served on $(tb_node_ip 1):6443"
on_disk=$(tb_node_exec 1 openssl x509 -in /etc/kubernetes/pki/apiserver.crt -noout -fingerprint -sha256)
[ "$served" = "$on_disk" ] || fail "API server serves $served, /etc/kubernetes/pki/apiserver.crt is $on_disk"
tb_log "ok: API server serves /etc/kubernetes/pki/apiserver.crt ($on_disk)"

# The files that ran are still the ones written above, and equal to upstream's for the same config on
# the same node. Upstream runs in a child mount namespace of node1 with private tmpfs mounts over
# /etc/kubernetes, /var/lib/kubelet and /var/lib/etcd, so it sees exactly the host node1 sees (the CA
# directories it mounts into the pods depend on which exist) while the running control plane is
# untouched; a stub systemctl there keeps kubelet-start from stopping or restarting node1's kubelet.
[ "$(ran_sums)" = "$written" ] || fail "the files changed while running: $written"
ref=$TB_RUN/node1/upstream-files ours=$TB_RUN/node1/files stub=$TB_RUN/node1/systemctl-stub
mkdir -p "$ref" "$ours"
cat >"$stub" <<'STUB'
#!/bin/sh
# systemctl for upstream's reference run: no unit is active (as for node1's fake), the kubelet unit
# exists, and stop, restart and daemon-reload do nothing.
case "$1" in
  is-active) echo inactive; exit 3 ;;
  status) [ "$2" = kubelet ] && echo "     Loaded: loaded (/lib/systemd/system/kubelet.service; enabled)" ;;
esac
exit 0
STUB
chmod 0755 "$stub"
# shellcheck disable=SC2016
ran_tar tb_node_exec 1 unshare --mount --propagation private sh -ec '
  kubeadm=$1 cfg=$2 stub=$3
  shift 3
  mount --bind "$stub" "$(command -v systemctl)"
  for d in /etc/kubernetes /var/lib/kubelet /var/lib/etcd; do mount -t tmpfs -o mode=0755 kt-ref "$d"; done
  chmod 0700 /var/lib/etcd
  for phase in "kubelet-start" "control-plane all" "etcd local"; do
    "$kubeadm" init phase $phase --config="$cfg" >&2
  done
  exec "$@"' _ "$upstream" "$cfg" "$stub" 2>"$TB_RUN/node1/upstream-files.log" | tar -C "$ref" -xpf - ||
  { cat "$TB_RUN/node1/upstream-files.log" >&2; fail "upstream's reference files"; }
ran_tar tb_node_exec 1 | tar -C "$ours" -xpf - || fail "copying node1's files"
for d in "$ref" "$ours"; do
  [ "$(find "$d" -type f | wc -l)" = "${#ran_files[@]}" ] || fail "$d: not all of ${ran_files[*]}"
done
diff -r "$ref" "$ours" >&2 || fail "node1's files differ from upstream's (< upstream, > ours)"
modes() { (cd "$1" && find . -type f -printf '%m %p\n' | sort); }
[ "$(modes "$ref")" = "$(modes "$ours")" ] ||
  fail "file modes differ: upstream $(modes "$ref" | tr '\n' ' '), ours $(modes "$ours" | tr '\n' ' ')"
tb_log "ok: the files that ran are byte for byte upstream's: ${ran_files[*]}"

# Clean up with upstream reset: it must cope with a node whose files came from the kubeadm under test.
tb_log "upstream kubeadm reset -f on node1"
if ! tb_node_exec 1 timeout 300 "$upstream" reset -f >"$TB_RUN/node1/reset.log" 2>&1; then
  cat "$TB_RUN/node1/reset.log" >&2
  fail "kubeadm reset on node1 failed"
fi
[ "$(tb_node_exec 1 systemctl is-active kubelet)" = inactive ] || fail "node1: kubelet still active after reset"
tb_poll 60 "node1: no pod sandboxes left" no_sandboxes 1 || fail "node1: pods left after reset"
[ -z "$(tb_node_exec 1 ls -A /etc/kubernetes/manifests 2>/dev/null)" ] || fail "node1: manifests left after reset"
tb_poll 30 "API server on node1 gone" api_down || fail "API server still answers after reset"
