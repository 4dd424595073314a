#!/usr/bin/env bash
# scripts/offline.sh COMMAND...: runs COMMAND in a network of its own that reaches nothing outside
# this machine, so that no test sends anything out: upstream kubeadm asks the internet for a
# version label when a config names no kubernetesVersion ("stable-1"), and both kubeadms look node
# names up in DNS in preflight.
#
# As root: a new network namespace with its loopback up and an interface eth0 (one end of a veth pair
# whose other end is nic0: kernels without the dummy module have veth) holding
# 192.0.2.2/24 with a default route through 192.0.2.1 (documentation addresses), so that choosing
# the host's address (the default route's interface) works as on a host. Everything sent through eth0
# is rejected at once (iptables and ip6tables REJECT in OUTPUT): DNS queries and connections fail
# with "connection refused" instead of leaving, or of waiting for a timeout. The addresses of the
# name servers in /etc/resolv.conf are the namespace's own (on nic0, where no route leads and no
# choice of the host's address looks; not on lo, which a loopback advertise address is resolved
# through), where
# scripts/nxdomain.py answers every query with NXDOMAIN: a name that /etc/hosts does not have is
# "no such host", as on a host whose resolver does not know it, for both kubeadms. Only the network is
# separate: files, mounts and processes are the machine's.
#
# As another user (no namespaces), COMMAND runs as it is, with a note on standard error.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then
  echo "offline.sh: not root, so $1 runs on the machine's own network" >&2
  exec "$@"
fi
# shellcheck disable=SC2016 # expanded in the new namespace
exec unshare --net bash -ec '
  ip link set lo up
  ip link add eth0 type veth peer name nic0
  ip link set nic0 up
  servers=$(awk "\$1 == \"nameserver\" { print \$2 }" /etc/resolv.conf)
  for a in $servers; do
    case "$a" in
      127.* | ::1) ;;
      *:*) ip -6 addr add "$a/128" dev nic0 nodad ;;
      *) ip addr add "$a/32" dev nic0 ;;
    esac
  done
  ip addr add 192.0.2.2/24 dev eth0
  ip link set eth0 up
  ip route add default via 192.0.2.1
  iptables -w -A OUTPUT -o eth0 -j REJECT
  ip6tables -w -A OUTPUT -o eth0 -j REJECT
  if [ -n "$servers" ]; then
    # shellcheck disable=SC2086 # one argument per address
    exec 3< <(python3 "$0" $servers)
    dns=$!
    trap "kill $dns 2>/dev/null" EXIT
    read -r _ <&3 # "serving": its sockets are bound
  fi
  "$@"' "$(dirname "$0")/nxdomain.py" "$@"
