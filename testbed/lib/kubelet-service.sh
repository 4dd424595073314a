#!/usr/bin/env bash
# Plays systemd's kubelet.service on a testbed node (run inside the node's namespaces):
#   kubelet.service + 10-kubeadm.conf: ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS
#   $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS, Restart=always.
# While $DIR/kubelet.state says "active" the kubelet runs, and is started again whenever it exits (it
# exits at once until kubeadm has written its config, as on a real host). The fake systemctl
# changes the state and kills the kubelet; this loop ends when $DIR/kubelet.shutdown appears.
set -u
dir=$1
while [ ! -e "$dir/kubelet.shutdown" ]; do
  if [ "$(cat "$dir/kubelet.state" 2>/dev/null)" != active ]; then
    sleep 0.2
    continue
  fi
  KUBELET_KUBEADM_ARGS="" KUBELET_EXTRA_ARGS=""
  # shellcheck disable=SC1091
  [ ! -f /var/lib/kubelet/kubeadm-flags.env ] || . /var/lib/kubelet/kubeadm-flags.env
  # shellcheck disable=SC1091
  [ ! -f /etc/default/kubelet ] || . /etc/default/kubelet
  echo "=== $(date -u +%H:%M:%S) starting kubelet" >>"$dir/kubelet.log"
  # shellcheck disable=SC2086
  kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
    --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml \
    $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS >>"$dir/kubelet.log" 2>&1 &
  echo $! >"$dir/kubelet.pid"
  wait $!
  rc=$?
  echo "=== $(date -u +%H:%M:%S) kubelet exited ($rc)" >>"$dir/kubelet.log"
  rm -f "$dir/kubelet.pid"
  # systemd's RestartSec for the kubelet unit is 10s; 1s keeps scenarios short.
  sleep 1
done
