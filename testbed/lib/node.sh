# shellcheck shell=bash
# "A node in a box": the functions the scenarios use to create Kubernetes nodes on one machine.
#
# Source this file, then: tb_setup; tb_node_create 1; tb_node_exec 1 kubeadm ...; tb_teardown.
#
# A node N is a set of namespaces pinned by bind mounts under $TB_RUN/ns (never /run/netns):
# - net:   its own address 198.51.100.(10+N)/24 on veth eth0, bridged in a "lan" netns (198.51.100.1,
#          no uplink, so nothing can leave); pods get 203.0.113.(64*(N-1))/26 from a bridge CNI;
# - mount: /etc, /var, /opt and /usr are overlays whose upper layers live in $TB_RUN/nodeN (with the
#          package layer of tb_setup under them when there is one), /run is a tmpfs,
#          and /etc/kubernetes, /var/lib/kubelet, /var/lib/etcd, /etc/cni/net.d, /var/lib/cni,
#          /var/log/pods and /var/log/containers are fresh tmpfs mounts; containerd's root is a
#          directory of $TB_RUN/nodeN on disk (overlayfs snapshots cannot sit on an overlay);
# - uts:   hostname nodeN.
# containerd runs inside it with its default paths; the kubelet runs under kubelet-service.sh, which
# plays systemd for it, and the fake `systemctl` (first on the node's PATH) drives that service.
# The kubelet's cgroups live under /kt-nodeN (--cgroup-root), so that two kubelets never garbage
# collect each other's pod cgroups.
# Nothing here touches the host's /etc/kubernetes, network or containerd. The kubelet does write a
# few global sysctls (vm.overcommit_memory, kernel.panic, ...): tb_setup saves them and tb_teardown
# puts them back.

TB_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_CACHE=${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}
TB_RUN=${KUBEADM_RS_TESTBED_RUN:-/tmp/kubeadm-rs-testbed}
TB_UPSTREAM=$TB_CACHE/upstream
TB_LAN_IP=198.51.100.1
TB_POD_SUBNET=203.0.113.0/24
TB_SERVICE_SUBNET=198.18.0.0/16
# Global sysctls the kubelet (setupKernelTunables) and kube-proxy may write.
TB_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
            kernel/keys/root_maxkeys kernel/keys/root_maxbytes net/netfilter/nf_conntrack_max
            net/nf_conntrack_max)

tb_log() { printf '[testbed %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
tb_die() { tb_log "FAIL: $*"; exit 1; }

tb_node_ip() { echo "198.51.100.$((10 + $1))"; }
# Nodes 1-4 share 203.0.113.0/24 and are routed to each other; a node beyond them (the benchmark's
# joins, a scenario's extra failing node) gets a range of its own, not routed between nodes.
tb_node_pod_cidr() {
  if [ "$1" -le 4 ]; then echo "203.0.113.$((64 * ($1 - 1)))/26"; else echo "100.64.$1.0/24"; fi
}
tb_node_name() { echo "node$1"; }

# tb_poll DEADLINE_SECONDS DESCRIPTION COMMAND...: runs COMMAND until it succeeds or the deadline passes.
tb_poll() {
  local limit=$1 what=$2 end
  shift 2
  end=$(($(date +%s) + limit))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$end" ]; then
      tb_log "timed out after ${limit}s waiting for: $what"
      return 1
    fi
    sleep 0.5
  done
  tb_log "ok: $what"
}

tb_nsargs() {
  echo "--net=$TB_RUN/ns/node$1.net --mount=$TB_RUN/ns/node$1.mnt --uts=$TB_RUN/ns/node$1.uts"
}

# tb_node_exec N COMMAND...: runs COMMAND inside node N with the testbed's tools first on PATH (the
# node's own, $TB_RUN/nodeN/bin, if any, before the shared ones: see tb_node_kubelet).
tb_node_exec() {
  local n=$1 a audit=
  shift
  # With TB_AUDIT_DIR (testbed/test.sh's secrets audit), what a kubeadm run inside a node prints, on
  # either stream, is also kept there, whatever the scenario does with it: the audit reads what
  # kubeadm printed by where it comes from, not by the names of the files scenarios keep.
  if [ -n "${TB_AUDIT_DIR:-}" ]; then
    for a in "$@"; do
      if [ "${a##*/}" = kubeadm ]; then
        audit="$TB_AUDIT_DIR/exec.$$/node$n.$(date +%s%N).$BASHPID"
        mkdir -p "$TB_AUDIT_DIR/exec.$$"
        break
      fi
    done
  fi
  if [ -z "$audit" ]; then
    # shellcheck disable=SC2046
    nsenter $(tb_nsargs "$n") --wd=/ -- env PATH="$TB_RUN/node$n/bin:$TB_RUN/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      KUBECONFIG=/etc/kubernetes/admin.conf "$@"
    return
  fi
  printf '%s\n' "$*" >"$audit.command"
  # One pipeline, so that both copies are whole when this returns; its status is the command's (tee
  # does not fail here).
  (
    set -o pipefail
    {
      # shellcheck disable=SC2046
      nsenter $(tb_nsargs "$n") --wd=/ -- env PATH="$TB_RUN/node$n/bin:$TB_RUN/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        KUBECONFIG=/etc/kubernetes/admin.conf "$@" 2>&1 1>&3 3>&- | tee "$audit.stderr.log" >&2
    } 3>&1 | tee "$audit.stdout.log"
  )
}

# tb_setup KUBEADM [DEB]: fresh run directory, the lan, the tool directory; cleans a previous run first.
# With DEB (a kubeadm .deb), the package is installed once with dpkg, as on a host, into a layer
# ($TB_RUN/deb/{usr,var,etc}/upper: what the installation added or changed) that every node then has
# under its /usr, /var and /etc: /usr/bin/kubeadm, the kubelet's drop-in (which kubelet-service.sh
# follows), the completions, the man pages, and the package in the node's dpkg database.
# KUBEADM "packaged" (or empty) then means the installed /usr/bin/kubeadm; the tool directory links
# kubeadm to it, and $TB_DEB_ROOT/usr/bin/kubeadm is the same file seen from the host.
tb_setup() {
  local kubeadm=$1 deb=${2:-} s d
  [ "$(id -u)" = 0 ] || tb_die "the testbed needs root"
  if [ -e "$TB_RUN" ]; then
    tb_log "leftovers of an earlier run in $TB_RUN: tearing them down first"
    tb_teardown
  fi
  mkdir -p "$TB_RUN/ns" "$TB_RUN/bin"
  # Namespace files must sit on a private mount, or pinning a mount namespace would recurse.
  mount --bind "$TB_RUN/ns" "$TB_RUN/ns"
  mount --make-private "$TB_RUN/ns"
  : >"$TB_RUN/sysctls"
  for s in "${TB_SYSCTLS[@]}"; do
    [ ! -r "/proc/sys/$s" ] || echo "$s $(cat "/proc/sys/$s")" >>"$TB_RUN/sysctls"
  done
  touch "$TB_RUN/ns/lan.net"
  unshare --net="$TB_RUN/ns/lan.net" true
  nsenter --net="$TB_RUN/ns/lan.net" sh -ec "
    ip link set lo up
    ip link add br0 type bridge
    ip addr add $TB_LAN_IP/24 dev br0
    ip link set br0 up"
  cp "$TB_LIB/systemctl" "$TB_RUN/bin/systemctl"
  if [ -n "$deb" ]; then
    mkdir -p "$TB_RUN"/deb/{usr,var,etc}/{upper,work}
    tb_log "installing $(basename "$deb") with dpkg into the nodes' package layer"
    # shellcheck disable=SC2016
    unshare --mount --propagation private bash -ec '
      for d in usr var etc; do
        mount -t overlay kt-deb -o "lowerdir=/$d,upperdir=$1/$d/upper,workdir=$1/$d/work" "/$d"
      done
      dpkg -i "$2" >"$1/dpkg.log" 2>&1 || { cat "$1/dpkg.log" >&2; exit 1; }
      dpkg -s kubeadm | grep -qx "Status: install ok installed"' _ "$TB_RUN/deb" "$(readlink -f "$deb")" ||
      tb_die "dpkg -i $deb failed"
    for d in usr var etc; do rm -rf "$TB_RUN/deb/$d/work"; done
    TB_DEB_ROOT=$TB_RUN/deb/root
    # The host's view of the installed files, for the scenarios' own checks.
    mkdir -p "$TB_DEB_ROOT"
    ln -s ../usr/upper "$TB_DEB_ROOT/usr"
  fi
  if [ -z "$kubeadm" ] || [ "$kubeadm" = packaged ]; then
    [ -n "$deb" ] || tb_die "no kubeadm: neither a binary nor a package"
    ln -s /usr/bin/kubeadm "$TB_RUN/bin/kubeadm"
  else
    ln -s "$(readlink -f "$kubeadm")" "$TB_RUN/bin/kubeadm"
  fi
  for b in kubelet kubectl crictl; do ln -s "$TB_UPSTREAM/$b" "$TB_RUN/bin/$b"; done
}

# tb_node_create N: namespaces, network, mounts, cgroups, containerd with all images (a copy of
# tb_containerd_template's root), kubelet service.
# TB_NODE_IMAGE_SETS (e.g. "v1.25.15") names image sets imported besides the default one.
tb_node_create() {
  local n=$1 name ip dir c cg
  name=$(tb_node_name "$n")
  ip=$(tb_node_ip "$n")
  dir=$TB_RUN/$name
  mkdir -p "$dir"/{etc,var,opt,usr}/{upper,work} "$dir/containerd"
  touch "$TB_RUN/ns/$name".{net,mnt,uts}
  tb_log "creating $name ($ip)"
  unshare --net="$TB_RUN/ns/$name.net" --mount="$TB_RUN/ns/$name.mnt" --uts="$TB_RUN/ns/$name.uts" \
    --propagation private bash -ec '
      name=$1 dir=$2 deb=$3
      hostname "$name"
      for d in etc var opt usr; do
        lower=/$d
        # The package layer of tb_setup, when there is one, above the files of the host.
        [ ! -d "$deb/$d/upper" ] || lower=$deb/$d/upper:/$d
        mount -t overlay "kt-$name-$d" -o "lowerdir=$lower,upperdir=$dir/$d/upper,workdir=$dir/$d/work" "/$d"
      done
      mount -t tmpfs -o mode=0755 "kt-$name-run" /run
      for d in /etc/kubernetes /var/lib/kubelet /var/lib/etcd /etc/cni/net.d /var/lib/cni \
               /var/log/pods /var/log/containers; do
        mkdir -p "$d"
        mount -t tmpfs -o mode=0755 "kt-$name" "$d"
      done
      chmod 0700 /var/lib/etcd
      mkdir -p /var/lib/containerd
      mount --bind "$dir/containerd" /var/lib/containerd
    ' _ "$name" "$dir" "$TB_RUN/deb"

  # Network: eth0 in the node, its peer on the lan bridge; routes to the other nodes' pod ranges.
  nsenter --net="$TB_RUN/ns/$name.net" ip link add eth0 type veth peer name "veth$n" netns "$TB_RUN/ns/lan.net"
  nsenter --net="$TB_RUN/ns/lan.net" ip link set "veth$n" master br0 up
  nsenter --net="$TB_RUN/ns/$name.net" sh -ec "
    ip link set lo up
    ip addr add $ip/24 dev eth0
    ip link set eth0 up
    ip route add default via $TB_LAN_IP
    echo 1 > /proc/sys/net/ipv4/ip_forward
    echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
    echo 1 > /proc/sys/net/bridge/bridge-nf-call-ip6tables"
  for c in 1 2 3 4; do
    [ "$c" = "$n" ] || nsenter --net="$TB_RUN/ns/$name.net" ip route add "$(tb_node_pod_cidr "$c")" via "$(tb_node_ip "$c")"
  done

  # cgroups: what a systemd slice would give the kubelet; cpuset needs its cpus/mems filled in.
  for cg in /sys/fs/cgroup/*/; do
    case "$cg" in */unified/) continue ;; esac
    mkdir -p "$cg/kt-$name"
    if [ -e "$cg/cpuset.cpus" ]; then
      cat "$cg/cpuset.cpus" >"$cg/kt-$name/cpuset.cpus"
      cat "$cg/cpuset.mems" >"$cg/kt-$name/cpuset.mems"
    fi
  done

  # Files a provisioned host would have.
  tb_node_exec "$n" sh -ec "
    printf '127.0.0.1 localhost\n$ip $name\n' > /etc/hosts
    echo 'nameserver $TB_LAN_IP' > /etc/resolv.conf
    printf '%032x\n' $n > /etc/machine-id
    echo 'runtime-endpoint: unix:///var/run/containerd/containerd.sock' > /etc/crictl.yaml
    mkdir -p /etc/containerd /etc/default
    echo 'KUBELET_EXTRA_ARGS=\"--cgroup-root=/kt-$name --node-ip=$ip\"' > /etc/default/kubelet
    echo active > $dir/kubelet.state"
  tb_node_exec "$n" sh -c 'cat > /etc/containerd/config.toml' <"$TB_LIB/containerd.toml"
  sed "s#@POD_CIDR@#$(tb_node_pod_cidr "$n")#" "$TB_LIB/10-bridge.conflist" |
    tb_node_exec "$n" sh -c 'cat > /etc/cni/net.d/10-bridge.conflist'

  # The images kubeadm v1.25.16 asks for, and the sets a scenario opted into (TB_NODE_IMAGE_SETS):
  # a copy of a containerd root that holds them (tb_containerd_template), before containerd starts.
  local t0 template
  t0=$(date +%s)
  template=$(tb_containerd_template default ${TB_NODE_IMAGE_SETS:-}) || tb_die "$name: no containerd root with the images"
  cp -a "$template/." "$dir/containerd/"
  tb_node_exec "$n" setsid containerd --config /etc/containerd/config.toml >"$dir/containerd.log" 2>&1 </dev/null &
  echo $! >"$dir/containerd.pid"
  tb_poll 60 "$name: containerd answers" tb_node_exec "$n" ctr version ||
    { tb_fail_logs "$n"; tb_die "$name: containerd did not start"; }
  tb_log "$name: images in place in $(($(date +%s) - t0))s"

  tb_node_exec "$n" setsid bash "$TB_LIB/kubelet-service.sh" "$dir" </dev/null >>"$dir/kubelet-service.log" 2>&1 &
  echo $! >"$dir/kubelet-service.pid"
}

# tb_node_kubelet N BINARY: node N's kubelet is BINARY from the kubelet service's next start on (a
# link in the node's own tool directory, ahead of the shared one on its PATH), e.g. an older kubelet
# for a cluster an older kubeadm makes, then the new one swapped in after the node's upgrade, as a
# package upgrade does. kubeadm's preflight runs the same `kubelet --version`.
tb_node_kubelet() {
  local dir=$TB_RUN/$(tb_node_name "$1")/bin
  mkdir -p "$dir"
  ln -sfn "$(readlink -f "$2")" "$dir/kubelet"
}

# tb_containerd_template SET...: prints the path of a containerd root (content store, overlayfs
# snapshots and metadata, all relative to the root) holding the image archives of the SETs, unpacked,
# in namespace k8s.io. Built once per set list and archive state (names, sizes, times; the containerd
# version) by a throwaway containerd that is stopped before the root is used, and kept under
# $TB_CACHE/containerd-roots/. Copying it (about 3 s) replaces importing the archives into every
# node's containerd (about 10 s each).
tb_containerd_template() {
  local key root tmp sets=("$@") set img image pid
  key=$({ printf '%s\n' "${sets[@]}" "${TB_ALLOW_MISSING_IMAGES:-}"; containerd --version
    for set in "${sets[@]}"; do
      "$TB_LIB/../images/build.sh" --list "$set" | while read -r img image; do
        echo "$image $(stat -c '%s %Y' "$img" 2>/dev/null || echo missing)"
      done
    done; } | sha256sum | cut -c1-16)
  root=$TB_CACHE/containerd-roots/$key
  mkdir -p "$TB_CACHE"
  # One builder at a time (nodes may be created in the background, several at once).
  ( flock 9
  if [ ! -d "$root" ]; then
    tmp=$(mktemp -d "$TB_CACHE/containerd-roots.XXXXXX") || return 1
    mkdir -p "$tmp/root" "$tmp/state"
    printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n' \
      "$tmp/root" "$tmp/state" "$tmp/state/containerd.sock" >"$tmp/config.toml"
    containerd --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 </dev/null &
    pid=$!
    tb_poll 60 "template containerd answers" ctr -a "$tmp/state/containerd.sock" version >/dev/null || {
      kill "$pid"; cat "$tmp/containerd.log" >&2; rm -rf "$tmp"; return 1; }
    for set in "${sets[@]}"; do
      while read -r img image; do
        if [ ! -e "$img" ] && [ -n "${TB_ALLOW_MISSING_IMAGES:-}" ]; then continue; fi
        ctr -a "$tmp/state/containerd.sock" -n k8s.io images import "$img" >>"$tmp/import.log" 2>&1 || {
          kill "$pid"; tail -3 "$tmp/import.log" >&2; rm -rf "$tmp"; return 1; }
      done < <("$TB_LIB/../images/build.sh" --list "$set")
    done
    # Stopped cleanly before the root is copied: its metadata database is closed and consistent.
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    mkdir -p "$TB_CACHE/containerd-roots"
    # Roots of set lists or archives not used for two days go (each is hundreds of MB).
    find "$TB_CACHE/containerd-roots" -mindepth 1 -maxdepth 1 -mtime +2 -exec rm -rf {} +
    mv "$tmp/root" "$root.tmp" && mv "$root.tmp" "$root"
    rm -rf "$tmp"
    tb_log "containerd root with image sets ${sets[*]} built in $root" >&2
  fi
  ) 9>"$TB_CACHE/containerd-roots.lock" || return 1
  touch "$root"
  echo "$root"
}

# tb_node_import_images N SET [IMAGE...]: imports into node N's containerd (namespace k8s.io, the
# CRI's) the image archives of SET, as `images/build.sh --list SET` names them: default (what kubeadm
# v1.25.16 asks for; every node gets those), v1.25.15 (the control plane and kube-proxy the `upgrade`
# scenario starts from) or all; with IMAGEs, only the archives of those image names. Archives are
# imported one by one, output in nodeN/import.log.
tb_node_import_images() {
  local n=$1 set=$2 name dir img image
  shift 2
  name=$(tb_node_name "$n")
  dir=$TB_RUN/$name
  while read -r img image; do
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$image"; then continue; fi
    if [ ! -e "$img" ] && [ -n "${TB_ALLOW_MISSING_IMAGES:-}" ]; then continue; fi
    tb_node_exec "$n" ctr -n k8s.io images import "$img" >>"$dir/import.log" 2>&1 ||
      tb_die "$name: importing $img failed: $(tail -3 "$dir/import.log")"
  done < <("$TB_LIB/../images/build.sh" --list "$set")
}

# tb_fail_logs N...: prints the tail of the logs that explain a failure on those nodes.
tb_fail_logs() {
  local n dir f
  for n in "$@"; do
    dir=$TB_RUN/$(tb_node_name "$n")
    for f in "$dir/containerd.log" "$dir/kubelet.log" "$dir/systemctl.log"; do
      [ -e "$f" ] || continue
      echo "----- $f (last 40 lines)" >&2
      tail -n 40 "$f" >&2
    done
    [ -e "$TB_RUN/ns/node$n.mnt" ] || continue
    for f in $(tb_node_exec "$n" sh -c 'ls /var/log/pods/*/*/*.log 2>/dev/null'); do
      echo "----- node$n:$f (last 20 lines)" >&2
      tb_node_exec "$n" tail -n 20 "$f" >&2
    done
  done
}

# Pids of every process of a node: in its mount or net namespace, or in its cgroups. Builtins only
# (test -ef compares the namespaces' device and inode), as this runs over every process of the machine.
tb_node_pids() {
  local name=$1 mnt=$TB_RUN/ns/$1.mnt net=$TB_RUN/ns/$1.net p line lines
  [ -e "$mnt" ] || mnt=""
  [ -e "$net" ] || net=""
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
    if { [ -n "$mnt" ] && [ "/proc/$p/ns/mnt" -ef "$mnt" ]; } ||
       { [ -n "$net" ] && [ "/proc/$p/ns/net" -ef "$net" ]; }; then
      echo "$p"
      continue
    fi
    mapfile -t lines 2>/dev/null <"/proc/$p/cgroup" || continue
    for line in "${lines[@]}"; do
      case "$line" in *":/kt-$name" | *":/kt-$name/"*) echo "$p"; break ;; esac
    done
  done
}

# tb_rss NAME: resident memory of every process of node NAME (or of "lb"), in MiB.
tb_rss() {
  local p key val kb=0
  for p in $(tb_node_pids "$1"); do
    while read -r key val _; do
      [ "$key" != VmRSS: ] || { kb=$((kb + val)); break; }
    done 2>/dev/null <"/proc/$p/status"
  done
  echo $((kb / 1024))
}

# tb_teardown: stops everything the testbed started and leaves the machine as it was.
tb_teardown() {
  local dir name pids i s v cg f
  [ -d "$TB_RUN" ] || return 0
  tb_lb_teardown
  for dir in "$TB_RUN"/node*/; do
    [ -d "$dir" ] || continue
    name=$(basename "$dir")
    touch "$dir/kubelet.shutdown"
    for f in kubelet-service kubelet containerd; do
      [ ! -s "$dir/$f.pid" ] || kill "$(cat "$dir/$f.pid")" 2>/dev/null || true
    done
    for i in $(seq 1 40); do
      pids=$(tb_node_pids "$name")
      [ -n "$pids" ] || break
      # shellcheck disable=SC2086
      kill -9 $pids 2>/dev/null || true
      sleep 0.25
    done
    [ -z "$pids" ] || tb_log "warning: $name: processes still alive: $pids"
    for f in net mnt uts; do
      ! mountpoint -q "$TB_RUN/ns/$name.$f" 2>/dev/null || umount "$TB_RUN/ns/$name.$f" || true
    done
    for cg in /sys/fs/cgroup/*/kt-"$name"; do
      [ -d "$cg" ] || continue
      # Removing a cgroup can race with its last task exiting: retry briefly.
      for i in $(seq 1 20); do
        find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [ -d "$cg" ] || break
        sleep 0.25
      done
      [ ! -d "$cg" ] || tb_log "warning: could not remove cgroup $cg"
    done
  done
  ! mountpoint -q "$TB_RUN/ns/lan.net" 2>/dev/null || umount "$TB_RUN/ns/lan.net" || true
  ! mountpoint -q "$TB_RUN/ns" 2>/dev/null || umount "$TB_RUN/ns" || true
  if [ -s "$TB_RUN/sysctls" ]; then
    while read -r s v; do
      [ "$(cat "/proc/sys/$s")" = "$v" ] || echo "$v" >"/proc/sys/$s" || tb_log "warning: could not restore $s"
    done <"$TB_RUN/sysctls"
  fi
  rm -rf "$TB_RUN"
}

# tb_control_plane_config [N]: the kubeadm config the scenarios use for a control plane on node N
# (default 1; its name and address)
# (InitConfiguration, ClusterConfiguration, KubeletConfiguration), on stdout.
tb_control_plane_config() {
  local n=${1:-1}
  cat <<CFG
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: $(tb_node_ip "$n")
  bindPort: 6443
nodeRegistration:
  name: $(tb_node_name "$n")
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
# Explicit, so that kubeadm never asks the internet for "stable-1".
kubernetesVersion: v1.25.16
networking:
  podSubnet: $TB_POD_SUBNET
  serviceSubnet: $TB_SERVICE_SUBNET
controllerManager:
  extraArgs:
    # One /26 per node, matching the bridge CNI ranges the testbed gives each node.
    node-cidr-mask-size: "26"
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# No systemd here: the cgroupfs driver, as in containerd's config.
cgroupDriver: cgroupfs
# The node shares the machine's disk: with the kubelet's default eviction and image GC thresholds
# (imagefs.available<15%, image GC above 85% used) a busy machine makes the kubelet delete imported
# images that nothing can pull again. Only a nearly full disk counts as pressure here.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
CFG
}

# The load balancer of multi-control-plane scenarios (tb_teardown stops it), and the cluster-level
# helpers of the scenarios.
# shellcheck source=lib/lb.sh
. "$TB_LIB/lb.sh"
# shellcheck source=lib/cluster.sh
. "$TB_LIB/cluster.sh"
