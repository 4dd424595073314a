#!/usr/bin/env bash
# Runs a named testbed scenario against real Kubernetes components on this machine (as root).
#
#   testbed/scenario.sh NAME [--kubeadm PATH] [--deb FILE] [--keep-logs DIR]
#   testbed/scenario.sh --list
#
# NAME is a file testbed/scenarios/NAME.sh. --kubeadm picks the kubeadm binary under test (default:
# the upstream v1.25.16 build in the cache). --deb installs a kubeadm package (scripts/package.sh)
# with dpkg on every node; without --kubeadm, its /usr/bin/kubeadm is then the kubeadm under test,
# and with it, that binary is there as /usr/bin/kubeadm for the scenarios' TB_*_KUBEADM variables.
# Missing upstream binaries and images are built first.
# The nodes, mounts and processes are always torn down at the end, pass or fail; with --keep-logs
# the node logs are copied to DIR first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = --list ]; then
  for f in "$here"/scenarios/*.sh; do basename "$f" .sh; done
  exit 0
fi
name=$1
shift
kubeadm=""
deb=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kubeadm) kubeadm=$(readlink -f "$2"); shift 2 ;;
    --deb) deb=$(readlink -f "$2"); [ -f "$deb" ] || { echo "no such package: $2" >&2; exit 2; }; shift 2 ;;
    --keep-logs) keep=$(readlink -f "$2"); shift 2 ;;
    *) usage ;;
  esac
done
script=$here/scenarios/$name.sh
[ -f "$script" ] || { echo "no such scenario: $name (see --list)" >&2; exit 2; }

# shellcheck source=lib/node.sh
. "$here/lib/node.sh"
# One scenario at a time on this machine: a second run waits here rather than tearing down the first.
# The lock file says which runner holds it. Every process a runner starts inherits the descriptor, so
# when a runner is killed (SIGKILL: no teardown) its nodes and load balancer keep the lock: if the
# runner named in the file is gone, those leftovers are torn down here, which frees the lock.
exec 9<>"$TB_RUN.lock"
if ! flock -n 9; then
  holder=$(cat "$TB_RUN.lock" 2>/dev/null || true)
  if [ -n "$holder" ] && ! grep -qs scenario.sh "/proc/$holder/cmdline"; then
    tb_log "the runner that took $TB_RUN.lock (pid $holder) is gone, its processes still hold it: tearing them down"
    tb_teardown
  fi
  flock -w 3600 9 || tb_die "another testbed scenario still holds $TB_RUN.lock after an hour"
fi
echo $$ >"$TB_RUN.lock"
"$here/upstream/build.sh" all
"$here/images/build.sh"
if [ -z "$kubeadm" ] && [ -z "$deb" ]; then kubeadm=$TB_UPSTREAM/kubeadm; fi
[ -z "$kubeadm" ] || [ -x "$kubeadm" ] || tb_die "kubeadm binary not executable: $kubeadm"

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$keep" ] && [ -d "$TB_RUN" ]; then
    mkdir -p "$keep"
    (cd "$TB_RUN" && find . -maxdepth 2 -name '*.log' -exec cp --parents {} "$keep/" \;) || true
    for ns in "$TB_RUN"/ns/node*.mnt; do
      [ -e "$ns" ] || continue
      n=$(basename "$ns" .mnt)
      mkdir -p "$keep/$n"
      tb_node_exec "${n#node}" tar -C /var/log -cf - pods 2>/dev/null | tar -C "$keep/$n" -xf - 2>/dev/null || true
    done
  fi
  # TB_AUDIT_DIR=DIR: what kubeadm printed (the run's *.log files), for test.sh's secrets audit.
  if [ -n "${TB_AUDIT_DIR:-}" ] && [ -d "$TB_RUN" ]; then
    mkdir -p "$TB_AUDIT_DIR/$name.$$"
    (cd "$TB_RUN" && find . -maxdepth 2 -name '*.log' -exec cp --parents {} "$TB_AUDIT_DIR/$name.$$/" \;) || true
  fi
  tb_log "tearing down"
  tb_teardown
  tb_assert_clean || rc=1
  if [ "$rc" = 0 ]; then
    tb_log "scenario $name PASSED in $(($(date +%s) - start))s"
  else
    tb_log "scenario $name FAILED (rc=$rc) after $(($(date +%s) - start))s"
  fi
  exit "$rc"
}

# After teardown nothing of the testbed may remain on the machine.
tb_assert_clean() {
  local bad=0
  [ ! -e "$TB_RUN" ] || { tb_log "leftover: $TB_RUN"; bad=1; }
  if ls -d /sys/fs/cgroup/*/kt-node* >/dev/null 2>&1; then tb_log "leftover cgroups"; bad=1; fi
  if grep -q "kt-node\|$TB_RUN" /proc/self/mountinfo; then tb_log "leftover mounts"; bad=1; fi
  # Processes started with a path of the run directory (kubelet-service.sh, haproxy); the pattern comes
  # from a file so that grep does not find it in its own command line.
  if grep -lsF -f <(echo "$TB_RUN/") /proc/[0-9]*/cmdline >&2; then tb_log "leftover processes"; bad=1; fi
  return "$bad"
}

start=$(date +%s)
trap finish EXIT
trap 'exit 130' INT TERM
tb_setup "$kubeadm" "$deb"
# The kubeadm under test, as the host sees it (the scenarios' own checks run it there and compare it
# with upstream's path): the installed package's when --deb came without --kubeadm.
[ -n "$kubeadm" ] || kubeadm=$TB_DEB_ROOT/usr/bin/kubeadm
tb_log "scenario $name with kubeadm $kubeadm ($("$kubeadm" version -o short 2>/dev/null || echo '?'))${deb:+, package $(basename "$deb") installed on every node}"
# shellcheck source=scenarios/init-join-reset.sh
. "$script"
