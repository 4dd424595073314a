#!/usr/bin/env bash
# Plays systemd's kubelet.service on a testbed node (run inside the node's namespaces):
#   kubelet.service + 10-kubeadm.conf: ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS
#   $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS, Restart=always;
#   the drop-in installed on the node is followed when there is one.
# While $DIR/kubelet.state says "active" the kubelet runs, and is started again whenever it exits (it
# exits at once until kubeadm has written its config, as on a real host). The fake systemctl
# changes the state and kills the kubelet; this loop ends when $DIR/kubelet.shutdown appears.
set -u
dir=$1
# The drop-in a kubeadm package installs (scenario.sh --deb); without it, its content as below.
dropin=/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf
while [ ! -e "$dir/kubelet.shutdown" ]; do
  if [ "$(cat "$dir/kubelet.state" 2>/dev/null)" != active ]; then
    sleep 0.2
    continue
  fi
  if [ -f "$dropin" ]; then
    # The installed package's drop-in, as systemd reads it: Environment= assignments,
    # EnvironmentFile= files ("-": optional), the last ExecStart= with its $VARIABLES split into
    # words. The kubelet binary is the testbed's (first on PATH), not /usr/bin/kubelet.
    # shellcheck disable=SC2016 # expanded by the inner bash
    mapfile -t args < <(env -i PATH="$PATH" bash -c '
      set -f
      while IFS= read -r line; do
        case "$line" in
          Environment=*) v=${line#Environment=}; v=${v#\"}; v=${v%\"}; export "${v%%=*}=${v#*=}" ;;
          EnvironmentFile=*) f=${line#EnvironmentFile=}; f=${f#-}; [ ! -f "$f" ] || . "$f" ;;
          ExecStart=?*) exec_start=${line#ExecStart=} ;;
        esac
      done <"$1"
      out=()
      for w in $exec_start; do
        case "$w" in
          \$*) name=${w#\$}; out+=(${!name}) ;;
          *) out+=("$w") ;;
        esac
      done
      printf "%s\n" "${out[@]:1}"' _ "$dropin")
  else
    KUBELET_KUBEADM_ARGS="" KUBELET_EXTRA_ARGS=""
    # shellcheck disable=SC1091
    [ ! -f /var/lib/kubelet/kubeadm-flags.env ] || . /var/lib/kubelet/kubeadm-flags.env
    # shellcheck disable=SC1091
    [ ! -f /etc/default/kubelet ] || . /etc/default/kubelet
    # shellcheck disable=SC2206
    args=(--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf
      --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml
      $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS)
  fi
  # The kubelet found on PATH now, not the one bash remembered: tb_node_kubelet may have swapped it.
  hash -r
  echo "=== $(date -u +%H:%M:%S) starting kubelet ($(readlink -f "$(command -v kubelet)")) ${args[*]}" >>"$dir/kubelet.log"
  kubelet "${args[@]}" >>"$dir/kubelet.log" 2>&1 &
  echo $! >"$dir/kubelet.pid"
  wait $!
  rc=$?
  echo "=== $(date -u +%H:%M:%S) kubelet exited ($rc)" >>"$dir/kubelet.log"
  rm -f "$dir/kubelet.pid"
  # systemd's RestartSec for the kubelet unit is 10s; 1s keeps scenarios short.
  sleep 1
done
