# shellcheck shell=bash
# A TCP load balancer in front of the testbed's control planes: Debian's haproxy (mode tcp), in a
# network namespace of its own ("lb", pinned at $TB_RUN/ns/lb.net) plugged into the lan bridge with
# address $TB_LB_IP, which no node uses (node N is 198.51.100.(10+N), N >= 1; the lan is .1).
# Sourced by node.sh, whose tb_teardown calls tb_lb_teardown, so that a run killed with its load
# balancer up is cleaned at the next start (or by hand: source lib/node.sh; tb_teardown).
#
#   tb_lb_start PORT NODE...   haproxy on $TB_LB_IP:PORT, one backend server per node, at the node's :PORT
#   tb_lb_server_state NODE    UP, DOWN, MAINT... as haproxy's health checks see that node
#   tb_lb_fail_logs            the tail of haproxy's log, for a failure report
#   tb_lb_teardown             kills haproxy and removes its namespace (nothing to do if none)
#
# Health checks: as kubeadm's HA guide configures them for the API server, an HTTPS GET (certificate
# not verified) answered 200, here of /readyz (which anonymous clients may read) rather than /healthz:
# a server that is up but not ready (starting, shutting down, its etcd without quorum) takes no
# clients. Every second; a server is taken out after 2 failures and back after 1 success, so a dead
# node (connection refused, or no answer to the connect within 1 s) is dropped within about 2 s.
# haproxy only relays TCP (mode tcp): TLS is always between the client and one API server.
# The configuration, haproxy's log (its stderr and a line per connection) and its admin socket live
# in $TB_RUN/lb/.

TB_LB_IP=198.51.100.10

tb_lb_dir() { echo "$TB_RUN/lb"; }

tb_lb_start() {
  local port=$1 dir n
  shift
  dir=$(tb_lb_dir)
  command -v haproxy >/dev/null || tb_die "haproxy is not installed (Debian package haproxy)"
  mkdir -p "$dir"
  {
    cat <<CFG
global
  log stdout format raw local0 info
  maxconn 4096
  stats socket $dir/admin.sock mode 600 level admin
defaults
  mode tcp
  log global
  option tcplog
  option dontlognull
  timeout connect 2s
  # A health check connects within min(connect, inter) = 1 s, then may wait 3 s for the answer: an API
  # server busy starting up on 2 cores can take over a second to answer /readyz.
  timeout check 3s
  # A connection to a server that has just died (not yet marked down) is retried on another one.
  retries 2
  option redispatch
  # kubectl and the kubelets keep watches open for minutes.
  timeout client 1h
  timeout server 1h
frontend apiserver
  bind $TB_LB_IP:$port
  default_backend control-planes
backend control-planes
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server check check-ssl verify none inter 1s fall 2 rise 1
CFG
    for n in "$@"; do
      echo "  server $(tb_node_name "$n") $(tb_node_ip "$n"):$port"
    done
  } >"$dir/haproxy.cfg"
  haproxy -c -q -f "$dir/haproxy.cfg" >"$dir/haproxy-check.log" 2>&1 ||
    tb_die "haproxy rejects $dir/haproxy.cfg: $(cat "$dir/haproxy-check.log")"

  touch "$TB_RUN/ns/lb.net"
  unshare --net="$TB_RUN/ns/lb.net" true
  nsenter --net="$TB_RUN/ns/lb.net" ip link add eth0 type veth peer name veth-lb netns "$TB_RUN/ns/lan.net"
  nsenter --net="$TB_RUN/ns/lan.net" ip link set veth-lb master br0 up
  nsenter --net="$TB_RUN/ns/lb.net" sh -ec "
    ip link set lo up
    ip addr add $TB_LB_IP/24 dev eth0
    ip link set eth0 up"
  tb_log "load balancer: haproxy on $TB_LB_IP:$port in front of $(for n in "$@"; do printf '%s ' "$(tb_node_ip "$n")"; done)"
  # -db: stays in the foreground, a single process whose pid is the one recorded here.
  nsenter --net="$TB_RUN/ns/lb.net" setsid haproxy -db -f "$dir/haproxy.cfg" </dev/null >>"$dir/haproxy.log" 2>&1 &
  echo $! >"$dir/haproxy.pid"
  tb_poll 10 "load balancer listens on $TB_LB_IP:$port" \
    nsenter --net="$TB_RUN/ns/lan.net" bash -c "echo > /dev/tcp/$TB_LB_IP/$port" ||
    tb_die "haproxy did not start: $(tail -5 "$dir/haproxy.log")"
}

tb_lb_server_state() {
  local dir
  dir=$(tb_lb_dir)
  # "show stat" is CSV: pxname, svname, ... status is the 18th field.
  echo "show stat" | socat - "UNIX-CONNECT:$dir/admin.sock" 2>/dev/null |
    awk -F, -v s="$1" '$1 == "control-planes" && $2 == s { print $18 }'
}

tb_lb_fail_logs() {
  local f
  f=$(tb_lb_dir)/haproxy.log
  [ -e "$f" ] || return 0
  echo "----- $f (last 40 lines)" >&2
  tail -n 40 "$f" >&2
}

tb_lb_teardown() {
  local dir pids _
  dir=$(tb_lb_dir)
  [ ! -s "$dir/haproxy.pid" ] || kill "$(cat "$dir/haproxy.pid")" 2>/dev/null || true
  [ -e "$TB_RUN/ns/lb.net" ] || return 0
  # Anything else left in the namespace (tb_node_pids finds processes by namespace).
  for _ in $(seq 1 40); do
    pids=$(tb_node_pids lb)
    [ -n "$pids" ] || break
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    sleep 0.25
  done
  [ -z "$pids" ] || tb_log "warning: load balancer: processes still alive: $pids"
  ! mountpoint -q "$TB_RUN/ns/lb.net" 2>/dev/null || umount "$TB_RUN/ns/lb.net" || true
}
