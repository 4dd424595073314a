# shellcheck shell=bash
# Scenario bench: the timings of scripts/bench.sh's testbed items, for the one kubeadm under test
# (--kubeadm), as JSON lines appended to $TB_BENCH_OUT. scripts/bench.sh runs it for upstream's and
# ours in turn and compares them pair by pair; on its own it is a smoke run of the same steps.
#   all nodes created first (untimed) → kubeadm init on node1 (kubernetesVersion v1.25.15, so that
#   the cluster can be upgraded at the end): to its exit, to node1 Ready, to CoreDNS available → one
#   worker join (node2): to its exit, to Ready → TB_BENCH_JOINS workers (default 8: node3 …) joining
#   at the same moment: until the last exits, until all are Ready → `kubeadm upgrade apply v1.25.16
#   -y` on node1: to its exit.
# Each kubeadm runs under lib/timed_run.py, for its own peak RSS and a timeline of its output. Times come from `date +%s.%N` around the
# command; the Ready and Available times from polling every 0.2 s (a kubectl call takes about as
# long), the same for both binaries.
#
# TB_BENCH_OUT: the file the lines go to (required); TB_BENCH_SIDE: the name the lines carry
# (default: "ours" unless --kubeadm is the upstream build); TB_BENCH_RUN: the run number they carry
# (default 1); TB_BENCH_UPGRADE=0 skips the upgrade (the cluster is then v1.25.16 from the start).

out=${TB_BENCH_OUT:?TB_BENCH_OUT: the file the timings go to}
run=${TB_BENCH_RUN:-1}
joins=${TB_BENCH_JOINS:-8}
if [ -n "${TB_BENCH_SIDE:-}" ]; then
  side=$TB_BENCH_SIDE
elif [ "$(readlink -f "$kubeadm")" = "$(readlink -f "$TB_UPSTREAM/kubeadm")" ]; then
  side=upstream
else
  side=ours
fi
upgrade=${TB_BENCH_UPGRADE:-1}
old=v1.25.15
new=v1.25.16
version=$new
[ "$upgrade" = 0 ] || version=$old
# The v1.25.15 control plane and its images are built only for this (CI's `build.sh all` leaves them).
if [ "$upgrade" != 0 ]; then
  "$TB_LIB/../upstream/build.sh" v1.25.15/kube-apiserver v1.25.15/kube-controller-manager \
    v1.25.15/kube-scheduler v1.25.15/kube-proxy && "$TB_LIB/../images/build.sh" v1.25.15 ||
    tb_die "building the v1.25.15 programs and images"
fi
last=$((2 + joins))
[ "$last" -le 200 ] || tb_die "TB_BENCH_JOINS too large"
# Preflight errors ignored: HTTPProxyCIDR on init, as in init-join-reset.sh (Go 1.26's net/url).
init_ignore="--ignore-preflight-errors=HTTPProxyCIDR"

kubectl1() { tb_kubectl 1 --request-timeout=10s "$@"; }
fail() { tb_log "FAIL: $*"; tb_fail_logs 1 2; exit 1; }
coredns_available() {
  [ "$(kubectl1 -n kube-system get deployment coredns -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
# The nodes among $@ (numbers) that kubectl shows Ready, counted.
ready_count() {
  local want=" ${*/#/node} "
  kubectl1 get nodes -o 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    awk -v want="$want" 'index(want, " " $1 " ") && $2 == "True"' | wc -l
}
all_ready() { [ "$(ready_count "$@")" = "$#" ]; }
now() { date +%s.%N; }
# record ITEM START [END] [RSS_FILE]: one line of timings.
record() {
  local item=$1 start=$2 end=${3:-$(now)} rss=${4:-} kib=null
  [ -z "$rss" ] || kib=$(tail -n 1 "$rss")
  python3 -c 'import json,sys; print(json.dumps({"kubeadm": sys.argv[1], "run": int(sys.argv[2]), "item": sys.argv[3], "s": round(float(sys.argv[5]) - float(sys.argv[4]), 3), "rss_kib": None if sys.argv[6] == "null" else int(sys.argv[6])}))' \
    "$side" "$run" "$item" "$start" "$end" "$kib" >>"$out"
  tb_log "bench: $item: $(python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))' "$start" "$end")s"
}
# poll_until DEADLINE WHAT COMMAND...: as tb_poll, every 0.2 s; prints nothing, fails at the deadline.
poll_until() {
  local end=$(($(date +%s) + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { tb_log "timed out waiting for: $what"; return 1; }
    sleep 0.2
  done
}
# kubeadm_timed N NAME ARGS...: `kubeadm ARGS` on node N under lib/timed_run.py (the peak RSS of the
# kubeadm process in KiB to $TB_RUN/nodeN/NAME.rss), output in $TB_RUN/nodeN/NAME.log; each output
# line with its time also goes to $TB_BENCH_OUT's folder as SIDE-RUN-nodeN-NAME.timeline.
kubeadm_timed() {
  local n=$1 name=$2
  shift 2
  tb_node_exec "$n" timeout 900 python3 "$TB_LIB/timed_run.py" "$TB_RUN/node$n/$name.rss" \
    "$(dirname "$out")/$side-$run-node$n-$name.timeline" "$@" >"$TB_RUN/node$n/$name.log" 2>&1
}

# The nodes beyond the first four get pod ranges of their own (tb_node_pod_cidr), not routed between
# nodes: what is timed needs each Node Ready (the CNI config present), not pod traffic, and CoreDNS
# runs on node1 (it is Available before any worker joins).

tb_log "bench run $run ($side): init ($version), 1 join, $joins joins at once, upgrade apply: $([ "$upgrade" = 0 ] && echo no || echo "to $new")"
for n in $(seq 1 "$last"); do
  if [ "$upgrade" = 0 ]; then tb_node_create "$n"; else TB_NODE_IMAGE_SETS=$old tb_node_create "$n"; fi
  # The kubelet service stopped until kubeadm (re)starts it: the testbed restarts an unconfigured
  # kubelet every second (systemd every 10 s), and ten nodes doing so would take a good share of the
  # two cores from whatever is timed. kubeadm's preflight only asks whether the service is enabled.
  echo inactive >"$TB_RUN/node$n/kubelet.state"
done
{ tb_control_plane_config | sed -e "s/^kubernetesVersion: $new\$/kubernetesVersion: $version/"
  tb_kube_proxy_config; } | tb_node_exec 1 sh -c 'mkdir -p /etc/testbed && cat > /etc/testbed/kubeadm-init.yaml'

tb_log "kubeadm init on node1"
t0=$(now)
kubeadm_timed 1 init kubeadm init --config=/etc/testbed/kubeadm-init.yaml $init_ignore ||
  { cat "$TB_RUN/node1/init.log" >&2; fail "kubeadm init failed"; }
record "init: to exit" "$t0" "$(now)" "$TB_RUN/node1/init.rss"
poll_until 300 "node1 Ready" all_ready 1 || fail "node1 did not become Ready"
record "init: to node Ready" "$t0"
poll_until 300 "CoreDNS available" coredns_available || fail "CoreDNS did not become available"
record "init: to CoreDNS available" "$t0"

join=$(tb_join_command "$TB_RUN/node1/init.log" worker)
case "$join" in
  "kubeadm join "*--discovery-token-ca-cert-hash*) ;;
  *) cat "$TB_RUN/node1/init.log" >&2; fail "no worker join command in init's output: '$join'" ;;
esac
tb_log "kubeadm join on node2"
t0=$(now)
# shellcheck disable=SC2086
kubeadm_timed 2 join $join || { cat "$TB_RUN/node2/join.log" >&2; fail "kubeadm join on node2 failed"; }
record "join: to exit" "$t0" "$(now)" "$TB_RUN/node2/join.rss"
poll_until 300 "node2 Ready" all_ready 2 || fail "node2 did not become Ready"
record "join: to node Ready" "$t0"

if [ "$joins" -gt 0 ]; then
  tb_log "kubeadm join on node3 … node$last at the same moment"
  pids=()
  t0=$(now)
  for n in $(seq 3 "$last"); do
    # shellcheck disable=SC2086
    kubeadm_timed "$n" join $join &
    pids+=("$!")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$TB_RUN/node$((i + 3))/join.log" >&2; fail "kubeadm join on node$((i + 3)) failed"; }
  done
  record "$joins joins: to last exit" "$t0"
  # shellcheck disable=SC2046
  poll_until 600 "node3 … node$last Ready" all_ready $(seq 3 "$last") || fail "not all of node3 … node$last became Ready"
  record "$joins joins: to all Ready" "$t0"
fi

if [ "$upgrade" != 0 ]; then
  tb_log "kubeadm upgrade apply $new -y on node1"
  t0=$(now)
  kubeadm_timed 1 upgrade-apply kubeadm upgrade apply "$new" -y ||
    { cat "$TB_RUN/node1/upgrade-apply.log" >&2; fail "kubeadm upgrade apply failed"; }
  record "upgrade apply: to exit" "$t0" "$(now)" "$TB_RUN/node1/upgrade-apply.rss"
  grep -q "SUCCESS! Your cluster was upgraded to \"$new\"" "$TB_RUN/node1/upgrade-apply.log" ||
    fail "upgrade apply did not report success"
fi
tb_log "bench run $run ($side) done"
