#!/usr/bin/env bash
# The testbed's test suite (root only): builds what is missing, proves the differential runner, runs
# the scenarios with the upstream kubeadm (or --kubeadm PATH), and, without --kubeadm, with our binary
# too, alone and mixed with upstream's. Ends with "testbed: N passed, N failed".
#
# TB_LONG=1 (`scripts/test.sh --long`) runs everything. Without it (CI) the runs that only prove the
# testbed itself (a scenario with upstream alone whose result no later check compares with ours) and
# both mixed directions of init-join-reset and of ha are left out: each capability still runs with
# ours, our joins' files are compared with upstream's joins', and the suite stays within CI's time.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=("$@")
passed=0 failed=0 failures="" durations=""
check() {
  local name=$1
  shift
  echo "=== testbed: $name" >&2
  # What the check printed on standard error is kept too, so that the summary at the end (the part
  # of a long log one reads first, or the only one kept) names the reason of each failure, not only
  # the check: its first FAIL line and the six lines before it.
  local err start
  err=$(mktemp)
  start=$(date +%s)
  if { "$@" 2>&1 1>&3 3>&- | tee "$err" >&2; } 3>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    local why
    why=$(grep -a -m 1 -B 6 '^\[testbed [0-9:]*\] FAIL: ' "$err" | cut -c 1-300 | sed 's/^/    /')
    failures="$failures
  FAILED: $name${why:+
$why}"
    echo "=== testbed: $name FAILED" >&2
  fi
  durations="$durations
  $(printf '%6ds' $(($(date +%s) - start)))  $name"
  rm -f "$err"
}
# files_same A B: the files under A and B are the same, but for the order of the members in etcd's
# --initial-cluster: kubeadm writes them in the order etcd lists them, which is by member ID, random
# in every cluster (upstream's joins and ours alike), so two runs are compared as sets there.
files_same() {
  python3 - "$1" "$2" <<'PY'
import difflib, os, re, sys
a, b = sys.argv[1], sys.argv[2]
def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
def norm(text):
    return re.sub(r"(--initial-cluster=)(\S+)", lambda m: m.group(1) + ",".join(sorted(m.group(2).split(","))), text)
fa, fb = files(a), files(b)
ok = fa == fb
if not ok:
    print("the file lists differ:", sorted(set(fa) ^ set(fb)))
for rel in sorted(set(fa) & set(fb)):
    ta, tb = (norm(open(os.path.join(r, rel)).read()) for r in (a, b))
    if ta != tb:
        ok = False
        sys.stdout.writelines(difflib.unified_diff(ta.splitlines(True), tb.splitlines(True), "a/" + rel, "b/" + rel))
sys.exit(0 if ok else 1)
PY
}

"$here/upstream/build.sh" all && "$here/images/build.sh" || { echo "testbed: 0 passed, 1 failed"; exit 1; }
check "diff selftest" "$here/diff/selftest.sh"
check "secrets audit selftest" python3 "$here/lib/secrets_audit.py" --selftest
# What the joins of `ha` wrote and what `upgrade` left, by run, to compare upstream's with ours.
ha_files=$(mktemp -d)
upgrade_dumps=$(mktemp -d)
rootless_files=$(mktemp -d)
capi_output=$(mktemp -d)
# What kubeadm printed in every scenario below (scenario.sh keeps each run's *.log files there), for
# the secrets audit at the end.
TB_AUDIT_DIR=$(mktemp -d)
export TB_AUDIT_DIR
trap 'rm -rf "$ha_files" "$upgrade_dumps" "$rootless_files" "$capi_output" "$TB_AUDIT_DIR"' EXIT
long=${TB_LONG:-}
# The `upgrade` scenario's cluster: two control planes and a worker in CI, three and a worker with
# --long (upstream's reference and ours always of the same shape: the same value for both runs).
if [ -n "$long" ]; then TB_UPGRADE_CONTROL_PLANES=${TB_UPGRADE_CONTROL_PLANES:-3}; fi
export TB_UPGRADE_CONTROL_PLANES=${TB_UPGRADE_CONTROL_PLANES:-2}
# Upstream's runs: every scenario with --kubeadm or TB_LONG, else only the references ours is compared
# with (ha's and rootless's files, upgrade's objects and files). The reference run of `upgrade` skips its rollback:
# upstream waits 5 minutes before it rolls back, and ours is shown rolling back below.
#
# Those two references are upstream's behaviour on this testbed, nothing of ours: the same scenario,
# runner and libraries, the same upstream binaries and images, the same containerd, runc and kernel
# give the same reference. A machine keeps the last ones that passed under $cache/references/ (by a
# hash of all of that, per scenario) and reuses them instead of running upstream again (about 8
# minutes of a warm CI run); a new machine, or any change to those inputs, runs them.
# TB_LONG or TB_FRESH_REFERENCES=1 always runs them; TB_REFERENCES_ONLY=1 makes them (or keeps
# them) and stops there.
cache=${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}
reference_key() {
  {
    (cd "$here" && find scenario.sh lib images upstream registry "scenarios/$1.sh" -type f \
      ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum)
    find "$cache/upstream" "$cache/images" -type f -printf '%p %s %T@\n' 2>/dev/null | sort
    containerd --version; runc --version; uname -r
    echo "control planes of upgrade: $TB_UPGRADE_CONTROL_PLANES"
  } | sha256sum | cut -c1-16
}
keep_references=""
[ -n "$long" ] || [ ${#args[@]} != 0 ] || [ -n "${TB_FRESH_REFERENCES:-}" ] || keep_references=1
kept_keys=""
for s in $("$here/scenario.sh" --list); do
  case "$s" in
    ha | upgrade | rootless) ;;
    # The benchmark's timings, run by scripts/bench.sh for both binaries; not a check.
    bench) continue ;;
    *) [ -n "$long" ] || [ ${#args[@]} != 0 ] || continue ;;
  esac
  case "$s" in
    ha) out=$ha_files/upstream ;;
    upgrade) out=$upgrade_dumps/upstream ;;
    rootless) out=$rootless_files/upstream ;;
    *) out="" ;;
  esac
  kept=""
  if [ -n "$keep_references" ] && [ -n "$out" ]; then
    kept=$cache/references/$s-$(reference_key "$s")
    kept_keys="$kept_keys $kept"
  fi
  if [ -n "$kept" ] && [ -f "$kept/passed" ]; then
    cp -a "$kept/out" "$out"
    echo "=== testbed: scenario $s: upstream's reference kept from $(cat "$kept/passed") (same testbed, binaries, images, runtime and kernel)" >&2
    durations="$durations
  $(printf '%6ds' 0)  scenario $s (upstream's reference, kept)"
    continue
  fi
  before=$failed
  check "scenario $s" env TB_HA_FILES="$ha_files/upstream" TB_UPGRADE_DUMP="$upgrade_dumps/upstream" \
    TB_UPGRADE_SKIP_ROLLBACK=1 TB_CAPI_OUTPUT="$capi_output/upstream" \
    TB_ROOTLESS_FILES="$rootless_files/upstream" "$here/scenario.sh" "$s" "${args[@]}"
  if [ -n "$kept" ] && [ "$failed" = "$before" ] && [ -d "$out" ]; then
    rm -rf "$kept" && mkdir -p "$kept" && cp -a "$out" "$kept/out" && date -u +%FT%TZ >"$kept/passed" ||
      echo "testbed: could not keep upstream's reference of $s in $kept" >&2
  fi
done
# References of earlier inputs are dropped: only the current ones are kept.
if [ -n "$kept_keys" ] && [ -d "$cache/references" ]; then
  for d in "$cache"/references/*; do
    case " $kept_keys " in *" $d "*) ;; *) rm -rf "$d" ;; esac
  done
fi
# TB_REFERENCES_ONLY=1: only this, e.g. to have a machine's references ready before a timed run.
if [ -n "${TB_REFERENCES_ONLY:-}" ]; then
  echo "testbed: upstream's references: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
fi
# Scenarios whose point is our kubeadm's files on real nodes also run with ours when no --kubeadm was
# given. Ours is installed on the nodes from its Debian package (scripts/package.sh, from the debug
# binaries cargo builds, a no-op after the test command's builds): the static x86_64 executable users
# install (scripts/static-build.sh), `--deb "$deb"`, and inside the nodes our kubeadm is
# /usr/bin/kubeadm, for the TB_*_KUBEADM variables; "$ours" names no binary of the host.
ours_scenarios="static-pods api-objects images-pull kubelet-check kind cluster-api crash-restart"
if [ ${#args[@]} = 0 ]; then
  if ! deb=$(cd "$here/.." && cargo build -q -p kubeadm >&2 &&
    scripts/static-build.sh --profile dev x86_64-unknown-linux-musl >/dev/null &&
    scripts/package.sh --profile dev --target x86_64-unknown-linux-musl --no-build | tail -n 1) ||
    [ ! -f "$deb" ]; then
    failed=$((failed + 1))
    failures="$failures
  FAILED: cargo build -p kubeadm and its package"
    echo "=== testbed: cargo build -p kubeadm and its package FAILED" >&2
  else
    ours=/usr/bin/kubeadm
    for s in $ours_scenarios; do
      check "scenario $s (our kubeadm)" env TB_CAPI_OUTPUT="$capi_output/ours" "$here/scenario.sh" "$s" --deb "$deb"
    done
    # With --long, upstream's cluster-api ran too: what each node printed must be the same.
    [ -z "$long" ] || check "cluster-api: our kubeadm printed upstream's lines" \
      python3 "$here/lib/compare_output.py" "$capi_output/upstream" "$capi_output/ours"
    # api-objects again with flags alone (init, a worker's join, token create), as most people run it;
    # with --long only, for CI's time (53 s): in CI, crates/cli/tests/init_cluster.rs compares our
    # `init --dry-run` from flags alone with upstream's, every object, on 29 sets of flags.
    [ -z "$long" ] || check "scenario api-objects by flags alone (our kubeadm)" \
      env TB_API_OBJECTS_FLAGS=1 "$here/scenario.sh" api-objects --deb "$deb"
    # Each side of a join with the other's: our init, then upstream's join (with the command ours
    # printed); upstream's init, then our join (with the command upstream printed). Our reset after both.
    upstream="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/upstream/kubeadm"
    [ -z "$long" ] || check "scenario init-join-reset (our init, upstream join, our upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$upstream" TB_UPGRADE_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --deb "$deb"
    # (With --long only, as `ha (upstream init, our joins and resets)` below: our worker join of
    # upstream's init is compared with upstream's in the cargo tests, crates/cli/tests/join.rs.)
    [ -z "$long" ] || check "scenario init-join-reset (upstream init, our join, upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --kubeadm "$upstream" --deb "$deb"
    # And ours alone, from init to reset.
    check "scenario init-join-reset (our init, join, upgrade node and reset)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" \
      "$here/scenario.sh" init-join-reset --deb "$deb"
    # ha (three control planes behind the load balancer, a worker): ours alone, upstream's init with our
    # joins, our init with upstream's joins; our resets in all three. With --long, also our `upgrade
    # node` on node2 and node3 (about 100 s): in CI our `upgrade node` on a control plane runs in
    # `rootless` (etcd's manifest rewritten, two members) and `upgrade` (a real v1.24 → v1.25 one).
    check "scenario ha (our init, joins${long:+, upgrade node on control planes} and resets)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" TB_HA_FILES="$ha_files/ours" TB_HA_UPGRADE="${long:+$ours}" \
      "$here/scenario.sh" ha --deb "$deb"
    # Byte for byte and mode: the manifests (etcd's with its --initial-cluster, as a set) and the
    # kubelet's files our control-plane and worker joins wrote, against upstream's on the same nodes.
    check "ha: our joins wrote upstream's manifests and kubelet files" files_same "$ha_files/upstream" "$ha_files/ours"
    # The CIS benchmark's file checks on what the joins left (modes and owners under /etc/kubernetes,
    # etcd's data folder, the kubelet's files): ours fail only what upstream's fail by design.
    check "ha: the joins' files pass the CIS file checks upstream's pass" \
      python3 "$here/lib/cis_modes.py" "$ha_files/upstream" "$ha_files/ours"
    # upgrade: upstream's init and join, then every upgrade command ours (diff, node --dry-run,
    # apply, node on the worker, and the failing apply rolled back, with a 60 s wait per component
    # instead of upstream's 5 minutes); the API objects and files it leaves must be the reference
    # run's.
    check "scenario upgrade (upstream init and join, our upgrade commands and rollback)" \
      env TB_UPGRADE_KUBEADM="$ours" TB_UPGRADE_DUMP="$upgrade_dumps/ours" TB_UPGRADE_ROLLBACK_TIMEOUT=60s \
      "$here/scenario.sh" upgrade --kubeadm "$upstream" --deb "$deb"
    check "upgrade: our upgrade left upstream's API objects and files" \
      python3 "$here/lib/api_objects.py" --a "$upgrade_dumps/upstream/api" --a-node node1 --a-ip 198.51.100.11 \
      --b "$upgrade_dumps/ours/api" --b-node node1 --b-ip 198.51.100.11 --token abcdef.0123456789abcdef
    # (And what `upgrade plan` printed, and which certificates each control plane's upgrade renewed.)
    check "upgrade: our upgrade wrote upstream's manifests and kubelet files" \
      files_same "$upgrade_dumps/upstream/files" "$upgrade_dumps/ours/files"
    # The certificates upgrade apply renewed (which ones: files/node1/renewed-certificates above),
    # with their CAs, keys and kubeconfigs: subject, issuer, SANs, usages, key, chain, validity length.
    check "upgrade: our upgrade's certificates have upstream's profiles" \
      python3 "$here/lib/compare.py" "$upgrade_dumps/upstream/pki" "$upgrade_dumps/ours/pki"
    # RootlessControlPlane: our init, control-plane join, upgrade node and resets; the processes run
    # as the gate's users, reset removes them; the manifests, the kubelet's files, every owner and
    # mode under /etc/kubernetes and etcd's data, and the users and groups, against upstream's run.
    check "scenario rootless (our init, control-plane join, upgrade node and resets)" \
      env TB_ROOTLESS_FILES="$rootless_files/ours" "$here/scenario.sh" rootless --deb "$deb"
    check "rootless: our kubeadm wrote upstream's manifests, owners, modes, users and groups" \
      files_same "$rootless_files/upstream" "$rootless_files/ours"
    # How long each upgrade command took, and the longest gap of the API through the load balancer,
    # upstream's run beside ours (information, not a check: the machines are shared and noisy).
    if [ -f "$upgrade_dumps/upstream/timings" ] && [ -f "$upgrade_dumps/ours/timings" ]; then
      echo "testbed: upgrade timings (seconds; upstream, ours):"
      join -a 1 -a 2 -e - -o 0,1.2,2.2 <(sort "$upgrade_dumps/upstream/timings") <(sort "$upgrade_dumps/ours/timings") |
        sed 's/^/  /'
    fi
    # (With --long only, for CI's time: upstream's init joined by our joins. Our joins of our own init
    # ran above and wrote upstream's files (compared with upstream's joins of upstream's init); our
    # commands reading what upstream's init and join made run in `upgrade` just above.)
    [ -z "$long" ] || check "scenario ha (upstream init, our joins and resets)" \
      env TB_JOIN_KUBEADM="$ours" TB_RESET_KUBEADM="$ours" "$here/scenario.sh" ha --kubeadm "$upstream" --deb "$deb"
    # (With --long only, for CI's time: our init joined by upstream's joins; upstream's joins of
    # upstream's own init are the reference run above, and ours join upstream's init just before.)
    [ -z "$long" ] || check "scenario ha (our init, upstream joins, our resets)" \
      env TB_JOIN_KUBEADM="$upstream" TB_RESET_KUBEADM="$ours" "$here/scenario.sh" ha --deb "$deb"
  fi
fi
# No private key, certificate key or bootstrap token in anything kubeadm printed in the scenarios
# but where kubeadm prints one on purpose (join commands, token and upload-certs output).
check "secrets audit over what kubeadm printed in the scenarios" python3 "$here/lib/secrets_audit.py" "$TB_AUDIT_DIR"
# The failures again at the very end, where a truncated log still shows them.
echo "testbed: check durations:$durations"
[ -z "$failures" ] || echo "testbed: failures:$failures"
echo "testbed: $passed passed, $failed failed"
[ "$failed" = 0 ]
