# shellcheck shell=bash
# Scenario kubelet-check: the classic failed `kubeadm init`, a KubeletConfiguration asking for the
# systemd cgroup driver on a node whose container runtime and init system use cgroupfs, so the
# kubelet exits at start, over and over. Upstream kubeadm v1.25.16 on node1 and the kubeadm under
# test on node2, at once, with the same config apart from node name and address. Both must fail in
# wait-control-plane as upstream does: `[kubelet-check] Initial timeout of 40s passed.`, five failed
# probes of the kubelet's healthz endpoint, upstream's troubleshooting text, giving up about 117 s
# after the start. Standard output must be upstream's line for line (node name and address aside) up
# to the end of upstream's text; what the kubeadm under test adds after it (our diagnosis) must name
# the cause: the cgroup driver mismatch. The exit times must be within 10 s of each other. With the
# upstream binary under test both sides are upstream. Meanwhile, with our kubeadm under test, node3
# stages a second cause alone: a kube-apiserver flag that does not exist, so its container exits at
# every start (the kubelet is fine); init must fail when `timeoutForControlPlane` (1m30s here) runs
# out, and the diagnosis must show the kube-apiserver container's exit and the log line that says
# why; and node4 a third: the kube-apiserver image missing from the runtime with no registry to pull
# it from (preflight skipped), which the diagnosis must name; and node5 a fourth: the kubelet's
# port 10250 held by another process (preflight's Port-10250 error ignored), so the kubelet exits
# at every start, which the diagnosis must name; and node6 a fifth: etcd that cannot elect a leader
# (its --initial-cluster names a second member that never comes: 127.0.0.1:2399 on the node, where
# nothing listens), so kube-apiserver gives up on etcd at its start and exits, which the diagnosis
# must name, first, from etcd's own /health. (An API server that answers with its /readyz checks
# failing is shown on a real kube-apiserver whose etcd is killed: crates/host/tests/cluster_apiserver.rs.) Sourced by scenario.sh with
# lib/node.sh loaded and $kubeadm set.

upstream=$TB_UPSTREAM/kubeadm
cfg=/etc/testbed/kubeadm-init.yaml

for n in 1 2; do
  tb_node_create "$n"
  { tb_control_plane_config "$n" | sed -e 's/^cgroupDriver: cgroupfs$/cgroupDriver: systemd/'
    tb_kube_proxy_config
  } | tb_node_exec "$n" sh -c "mkdir -p /etc/testbed && cat > $cfg"
done
tb_node_exec 2 grep -q '^cgroupDriver: systemd$' "$cfg" || tb_die "the config does not ask for the systemd driver"
bad_flag=
if [ "$kubeadm" != "$upstream" ]; then
  bad_flag=1
  tb_node_create 3
  { tb_control_plane_config 3 | sed -e 's/^kind: ClusterConfiguration$/&\napiServer:\n  timeoutForControlPlane: 1m30s\n  extraArgs:\n    no-such-flag: "true"/'
    tb_kube_proxy_config
  } | tb_node_exec 3 sh -c "mkdir -p /etc/testbed && cat > $cfg"
  # node4: the kube-apiserver image is not in the runtime and cannot be pulled (no registry: the
  # testbed has no way out), preflight skipped (its image pull would fail first, as kind skips it).
  tb_node_create 4
  { tb_control_plane_config 4 | sed -e 's/^kind: ClusterConfiguration$/&\napiServer:\n  timeoutForControlPlane: 1m30s/'
    tb_kube_proxy_config
  } | tb_node_exec 4 sh -c "mkdir -p /etc/testbed && cat > $cfg"
  tb_node_exec 4 ctr -n k8s.io images rm registry.k8s.io/kube-apiserver:v1.25.16 >/dev/null ||
    tb_die "node4: could not remove the kube-apiserver image"
  # node5: another process listens on the kubelet's port 10250 (a listener that never answers).
  tb_node_create 5
  { tb_control_plane_config 5; tb_kube_proxy_config; } | tb_node_exec 5 sh -c "mkdir -p /etc/testbed && cat > $cfg"
  tb_node_exec 5 setsid python3 -c 'import socket, time
s = socket.socket()
s.bind(("0.0.0.0", 10250))
s.listen()
time.sleep(3600)' </dev/null >"$TB_RUN/node5/port-holder.log" 2>&1 &
  tb_poll 10 "node5: port 10250 held" tb_node_exec 5 sh -c 'ss -ltn | grep -q ":10250 "' ||
    tb_die "node5: could not hold port 10250"
  # node6: etcd with a quorum of two, one of them a member that never comes.
  tb_node_create 6
  { tb_control_plane_config 6 | sed -e "s|^kind: ClusterConfiguration\$|&\napiServer:\n  timeoutForControlPlane: 1m30s\netcd:\n  local:\n    extraArgs:\n      initial-cluster: node6=https://$(tb_node_ip 6):2380,ghost=https://127.0.0.1:2399|"
    tb_kube_proxy_config
  } | tb_node_exec 6 sh -c "mkdir -p /etc/testbed && cat > $cfg"
fi

# Both inits at once; HTTPProxyCIDR: see init-join-reset.sh (a Go 1.26 build artefact of upstream).
t0=$(date +%s)
tb_log "kubeadm init with cgroupDriver: systemd: upstream on node1, $kubeadm on node2"
run_init() {
  local n=$1 bin=$2 start rc=0
  shift 2
  start=$(date +%s)
  tb_node_exec "$n" timeout 600 "$bin" init --config="$cfg" --ignore-preflight-errors=HTTPProxyCIDR "$@" \
    >"$TB_RUN/node$n/init.out" 2>"$TB_RUN/node$n/init.err" || rc=$?
  echo "$rc $(($(date +%s) - start))" >"$TB_RUN/node$n/init.rc"
}
run_init 1 "$upstream" &
pid1=$!
run_init 2 kubeadm &
pid2=$!
pid3=
pid4=
pid5=
pid6=
if [ -n "$bad_flag" ]; then
  run_init 3 kubeadm &
  pid3=$!
  run_init 4 kubeadm --skip-phases=preflight &
  pid4=$!
  run_init 5 kubeadm --ignore-preflight-errors=Port-10250 &
  pid5=$!
  run_init 6 kubeadm &
  pid6=$!
fi
wait "$pid1" "$pid2" $pid3 $pid4 $pid5 $pid6
read -r rc1 took1 <"$TB_RUN/node1/init.rc"
read -r rc2 took2 <"$TB_RUN/node2/init.rc"
tb_log "kubeadm init exited: upstream $rc1 after ${took1}s, under test $rc2 after ${took2}s"
for n in 1 2; do
  echo "----- node$n: init's standard output" >&2
  cat "$TB_RUN/node$n/init.out" >&2
  echo "----- node$n: init's standard error" >&2
  cat "$TB_RUN/node$n/init.err" >&2
done
echo "----- node2: kubelet.log (last 15 lines)" >&2
tail -n 15 "$TB_RUN/node2/kubelet.log" >&2

[ "$rc1" = 1 ] || tb_die "upstream's init exited $rc1, not 1: the failure was not staged"
[ "$rc2" = 1 ] || tb_die "the init under test exited $rc2, not upstream's 1"
grep -q '^\[kubelet-check\] Initial timeout of 40s passed\.$' "$TB_RUN/node1/init.out" ||
  tb_die "upstream did not fail in its kubelet check: the failure was not staged"
diff=$((took2 - took1))
[ "${diff#-}" -le 10 ] || tb_die "exit times differ by ${diff}s (upstream ${took1}s, under test ${took2}s)"

# Upstream's standard output, line for line, then only ours.
norm() { sed -e "s/$(tb_node_ip "$1")/<node-ip>/g" -e "s/node$1/<node-name>/g" "$TB_RUN/node$1/init.out"; }
lines=$(norm 1 | wc -l)
if ! diff <(norm 1) <(norm 2 | head -n "$lines") >&2; then
  tb_die "standard output differs from upstream's (above: < upstream, > under test)"
fi
extra=$(norm 2 | tail -n +"$((lines + 1))")
if [ "$kubeadm" != "$upstream" ]; then
  [ -n "$extra" ] || tb_die "no diagnosis after upstream's text"
  grep -qi 'cgroup driver' <<<"$extra" || tb_die "the diagnosis does not name the cgroup driver mismatch"
fi
# The last line of standard error: the phase's error.
[ "$(tail -n 2 "$TB_RUN/node1/init.err")" = "$(tail -n 2 "$TB_RUN/node2/init.err")" ] ||
  tb_die "the error at the end of standard error differs"
tb_log "both failed alike after $(($(date +%s) - t0))s"

if [ -n "$bad_flag" ]; then
  read -r rc3 took3 <"$TB_RUN/node3/init.rc"
  tb_log "node3 (a kube-apiserver flag that does not exist): init exited $rc3 after ${took3}s"
  echo "----- node3: init's standard output (from the failure on)" >&2
  sed -n '/^Unfortunately/,$p' "$TB_RUN/node3/init.out" >&2
  [ "$rc3" = 1 ] || tb_die "node3: init exited $rc3, not 1"
  grep -q '^\[kubelet-check\] It seems like' "$TB_RUN/node3/init.out" &&
    tb_die "node3: the kubelet check failed, but the kubelet was fine"
  grep -q '^	- the newest kube-apiserver container .* exited with code 1' "$TB_RUN/node3/init.out" ||
    tb_die "node3: the diagnosis does not show kube-apiserver's exit"
  grep -q '^	    .*unknown flag: --no-such-flag' "$TB_RUN/node3/init.out" ||
    tb_die "node3: the diagnosis does not quote kube-apiserver's log line about the flag"
fi

if [ -n "$bad_flag" ]; then
  read -r rc4 took4 <"$TB_RUN/node4/init.rc"
  tb_log "node4 (the kube-apiserver image missing): init exited $rc4 after ${took4}s"
  echo "----- node4: init's standard output (from the failure on)" >&2
  sed -n '/^Unfortunately/,$p' "$TB_RUN/node4/init.out" >&2
  [ "$rc4" = 1 ] || tb_die "node4: init exited $rc4, not 1"
  grep -q "kube-apiserver's image \"registry.k8s.io/kube-apiserver:v1.25.16\" is not in the container runtime" "$TB_RUN/node4/init.out" ||
    tb_die "node4: the diagnosis does not name the missing kube-apiserver image"
fi

if [ -n "$bad_flag" ]; then
  read -r rc5 took5 <"$TB_RUN/node5/init.rc"
  tb_log "node5 (the kubelet's port 10250 held by another process): init exited $rc5 after ${took5}s"
  echo "----- node5: init's standard output (from the failure on)" >&2
  sed -n '/^Unfortunately/,$p' "$TB_RUN/node5/init.out" >&2
  [ "$rc5" = 1 ] || tb_die "node5: init exited $rc5, not 1"
  grep -q "^\[kubelet-check\] It seems like the kubelet isn't running or healthy\.$" "$TB_RUN/node5/init.out" ||
    tb_die "node5: the kubelet check did not fail: the failure was not staged"
  grep -q "port 10250 (the kubelet's) is in use although the kubelet does not answer" "$TB_RUN/node5/init.out" ||
    tb_die "node5: the diagnosis does not name the kubelet's port held by another process"
fi

if [ -n "$bad_flag" ]; then
  read -r rc6 took6 <"$TB_RUN/node6/init.rc"
  tb_log "node6 (etcd without a leader): init exited $rc6 after ${took6}s"
  echo "----- node6: init's standard output (from the failure on)" >&2
  sed -n '/^Unfortunately/,$p' "$TB_RUN/node6/init.out" >&2
  [ "$rc6" = 1 ] || tb_die "node6: init exited $rc6, not 1"
  # kube-apiserver gives up on etcd at its start ("context deadline exceeded") and exits: the
  # diagnosis must put etcd's missing leader first, as the cause.
  grep -q "^	- the API server does not answer: " "$TB_RUN/node6/init.out" ||
    tb_die "node6: the diagnosis does not say that the API server does not answer"
  [ "$(grep -m1 '^	- CAUSE: ' "$TB_RUN/node6/init.out")" = \
    "	- CAUSE: etcd is not healthy: http://127.0.0.1:2381/health?serializable=false answers HTTP 503, RAFT NO LEADER: its members cannot elect a leader (a quorum of the members in --initial-cluster must run and reach each other on their peer URLs)" ] ||
    tb_die "node6: the diagnosis does not name etcd's missing leader as the first cause"
fi
