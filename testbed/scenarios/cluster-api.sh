# shellcheck shell=bash
# Scenario cluster-api: a cluster made the way Cluster API's kubeadm bootstrap provider (CABPK) and
# its control-plane provider make one: what their cloud-init user data does on each machine, driven
# from here, with configs in the shape CABPK renders from a KubeadmConfig (v1beta3, its empty
# structs and `taints: null`, kubeletExtraArgs, patches in a directory of written files, discovery by
# bootstrap token with CA pins).
#   - The cluster's CAs (cluster, etcd, front proxy) and the service-account key pair are made outside
#     kubeadm (Cluster API keeps them in Secrets) and written as files before kubeadm runs, on the
#     first control plane and on the joining one.
#   - node1: `kubeadm init --config /run/kubeadm/kubeadm.yaml && echo success >
#     /run/cluster-api/bootstrap-success.complete`. Cluster API then creates the join token itself, as
#     a bootstrap-token Secret through the API (not `kubeadm token create`).
#   - node2, a second control plane, runs CABPK's "retry join" script (useExperimentalRetryJoin): the
#     join phase by phase (preflight, control-plane-prepare download-certs/certs/kubeconfig/
#     control-plane, kubelet-start, control-plane-join etcd/update-status/mark-control-plane), each
#     with `--config=/run/kubeadm/kubeadm-join-config.yaml`, retried up to 5 times 15 s apart, no
#     retry after exit code 2 (preflight) and 3 (validation), a reset when it gives up, as the script does.
#   - node3, a worker: `kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml && echo success > …`.
# Adapted to the testbed only where it must: addresses and pod/service ranges, node-cidr-mask-size,
# the kubelet's cgroup driver (cgroupfs, by kubeletExtraArgs as CAPD passes it), and, with the
# upstream binary (built with Go 1.26, see init-join-reset.sh), ignorePreflightErrors HTTPProxyCIDR.
# Checks: the success files, every node Ready, node2 a control plane with its taint and etcd of two
# started voting members, the patches applied (kube-apiserver manifest; kubelet config on each node),
# the CAs kubeadm used are Cluster API's, CoreDNS available.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set.

upstream=$TB_UPSTREAM/kubeadm
# shellcheck disable=SC2154 # set by scenario.sh
kubeadm_under_test=$kubeadm
endpoint=$(tb_node_ip 1):6443
kubectl1() { tb_kubectl 1 "$@"; }
fail() {
  tb_log "FAIL: $*"
  kubectl1 get nodes,pods -A -o wide >&2 || true
  tb_fail_logs 1 2 3
  exit 1
}

# The cluster's CAs and service-account keys, made outside kubeadm (PKCS#1 RSA keys, as Cluster API
# writes them).
ca_dir=$TB_RUN/capi-certs
mkdir -p "$ca_dir/etcd"
make_ca() {
  local name=$1 cn=$2
  openssl genrsa -traditional -out "$ca_dir/$name.key" 2048 2>/dev/null &&
    openssl req -x509 -new -key "$ca_dir/$name.key" -out "$ca_dir/$name.crt" -days 3650 -subj "/CN=$cn" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" 2>/dev/null
}
if ! { make_ca ca kubernetes && make_ca etcd/ca etcd-ca && make_ca front-proxy-ca front-proxy-ca; }; then
  tb_die "making the cluster's CAs"
fi
if ! { openssl genrsa -traditional -out "$ca_dir/sa.key" 2048 2>/dev/null &&
  openssl rsa -in "$ca_dir/sa.key" -pubout -out "$ca_dir/sa.pub" 2>/dev/null; }; then
  tb_die "making the service-account keys"
fi
ca_hash=sha256:$(openssl x509 -pubkey -noout -in "$ca_dir/ca.crt" | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)
# The join token Cluster API makes: [a-z0-9]{6}.[a-z0-9]{16} (hexadecimal digits here). Quoted
# wherever it goes into YAML: an ID like 123456 or 12e345 would otherwise be read as a number (one CI
# run in about twenty failed on that: "cannot unmarshal number into ... Secret.stringData").
token_id=${TB_CAPI_TOKEN_ID:-$(openssl rand -hex 3)}
token_secret=$(openssl rand -hex 8)

# write_files N: what CABPK's write_files puts on node N before kubeadm: the CAs (certificates 0640,
# keys 0600), the patches directory, the placeholder of /run/cluster-api.
write_files() {
  local n=$1 f
  for f in ca.crt ca.key etcd/ca.crt etcd/ca.key front-proxy-ca.crt front-proxy-ca.key sa.pub sa.key; do
    tb_node_exec "$n" sh -c "mkdir -p /etc/kubernetes/pki/etcd && cat > /etc/kubernetes/pki/$f && chmod $([ "${f##*.}" = key ] && echo 0600 || echo 0640) /etc/kubernetes/pki/$f" <"$ca_dir/$f"
  done
  tb_node_exec "$n" sh -ec '
    mkdir -p /etc/kubernetes/patches /run/kubeadm /run/cluster-api
    cat > /etc/kubernetes/patches/kube-apiserver0+strategic.yaml <<EOF
metadata:
  annotations:
    testbed.kubeadm-rs/patched-by: cluster-api
EOF
    cat > /etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml <<EOF
imageGCHighThresholdPercent: 100
EOF
    chmod 0640 /etc/kubernetes/patches/*
    echo "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)" > /run/cluster-api/placeholder'
}

# node_registration [EXTRA]: CABPK's nodeRegistration (kubeletExtraArgs as CAPD's templates pass them,
# with the testbed's cgroup driver); EXTRA: more of its fields.
node_registration() {
  cat <<CFG
nodeRegistration:
  criSocket: unix:///var/run/containerd/containerd.sock
${1:-}  kubeletExtraArgs:
    cgroup-driver: cgroupfs
    eviction-hard: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
    fail-swap-on: "false"
  taints: null
CFG
}
ignore=""
[ "$(readlink -f "$kubeadm_under_test")" != "$(readlink -f "$upstream")" ] || ignore="  ignorePreflightErrors:
  - HTTPProxyCIDR
"

init_config() {
  cat <<CFG
---
apiServer:
  certSANs:
  - localhost
  - 127.0.0.1
  - 0.0.0.0
apiVersion: kubeadm.k8s.io/v1beta3
clusterName: capi-quickstart
controlPlaneEndpoint: $endpoint
controllerManager:
  extraArgs:
    enable-hostpath-provisioner: "true"
    node-cidr-mask-size: "26"
dns: {}
etcd:
  local: {}
imageRepository: registry.k8s.io
kind: ClusterConfiguration
kubernetesVersion: v1.25.16
networking:
  dnsDomain: cluster.local
  podSubnet: $TB_POD_SUBNET
  serviceSubnet: $TB_SERVICE_SUBNET
scheduler: {}

---
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint: {}
$(node_registration "$ignore")
patches:
  directory: /etc/kubernetes/patches
CFG
}

# join_config control-plane|worker
join_config() {
  cat <<CFG
---
apiVersion: kubeadm.k8s.io/v1beta3
$([ "$1" != control-plane ] || printf 'controlPlane:\n  localAPIEndpoint: {}\n')
discovery:
  bootstrapToken:
    apiServerEndpoint: $endpoint
    caCertHashes:
    - $ca_hash
    token: "$token_id.$token_secret"
kind: JoinConfiguration
$(node_registration "$ignore")
patches:
  directory: /etc/kubernetes/patches
CFG
}

# The retry-join script of CABPK (its behaviour, for a control plane), run on node N.
retry_join_script() {
  cat <<'SCRIPT'
#!/bin/bash
log() { echo "+++ [$(date --iso-8601=seconds)] $*"; }
error_exit() {
  log "!!! $1"
  kubeadm reset -f update-cluster-status || true
  kubeadm reset -f remove-etcd-member || true
  kubeadm reset -f || true
  exit "$2"
}
check() {
  case $2 in
    0) log "kubeadm reported successful execution for $1" ;;
    1) log "!!! kubeadm reported failed action(s) for $1" ;;
    2) log "!!! kubeadm reported preflight check error during $1" ;;
    3) error_exit "kubeadm reported validation error for $1" "$2" ;;
    *) log "!!! kubeadm reported unknown error $2 for $1" ;;
  esac
}
retry() {
  local n=0 rc
  until [ $n -ge 5 ]; do
    log "running '$*'"
    "$@" --config=/run/kubeadm/kubeadm-join-config.yaml
    rc=$?
    check "'$*'" "$rc"
    [ "$rc" != 0 ] || break
    # no retry after preflight errors
    [ "$rc" != 2 ] || break
    n=$((n + 1))
    sleep 15
  done
  [ "$rc" = 0 ] || error_exit "too many errors, exiting" "$rc"
}
try_or_die() {
  local rc
  log "running '$*'"
  "$@" --config=/run/kubeadm/kubeadm-join-config.yaml
  rc=$?
  check "'$*'" "$rc"
  [ "$rc" = 0 ] || error_exit "fatal error, exiting" "$rc"
}
retry kubeadm join phase preflight --ignore-preflight-errors=DirAvailable--etc-kubernetes-manifests
retry kubeadm join phase control-plane-prepare download-certs
retry kubeadm join phase control-plane-prepare certs
retry kubeadm join phase control-plane-prepare kubeconfig
retry kubeadm join phase control-plane-prepare control-plane
retry kubeadm join phase kubelet-start
try_or_die kubeadm join phase control-plane-join etcd
retry kubeadm join phase control-plane-join update-status
retry kubeadm join phase control-plane-join mark-control-plane
log "cluster.x-k8s.io kubeadm bootstrap script $0 finished"
SCRIPT
}

for n in 1 2 3; do
  tb_node_create "$n"
  [ "$n" = 3 ] || write_files "$n"
done
tb_node_exec 3 mkdir -p /etc/kubernetes/patches /run/kubeadm /run/cluster-api
# The worker gets the kubelet patch only (the files of its KubeadmConfig).
tb_node_exec 1 cat /etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml |
  tb_node_exec 3 sh -c 'cat > /etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml'
init_config | tb_node_exec 1 sh -c 'umask 027; cat > /run/kubeadm/kubeadm.yaml'

tb_log "node1: kubeadm init --config /run/kubeadm/kubeadm.yaml && echo success > /run/cluster-api/bootstrap-success.complete"
if ! tb_node_exec 1 timeout 600 sh -c 'kubeadm init --config /run/kubeadm/kubeadm.yaml && echo success > /run/cluster-api/bootstrap-success.complete' \
  >"$TB_RUN/node1/init.log" 2>&1; then
  cat "$TB_RUN/node1/init.log" >&2
  fail "kubeadm init failed"
fi
tb_log "kubeadm init done"
grep -q '^\[certs\] Using existing ca certificate authority$' "$TB_RUN/node1/init.log" ||
  fail "init did not use the CA written before it"
tb_node_exec 1 cmp -s /etc/kubernetes/pki/ca.crt - <"$ca_dir/ca.crt" || fail "init replaced the cluster CA"
tb_node_exec 1 cmp -s /etc/kubernetes/pki/sa.key - <"$ca_dir/sa.key" || fail "init replaced the service-account key"

# Cluster API's join token, a Secret it creates through the API.
cat <<SECRET | tb_node_exec 1 kubectl --kubeconfig=/etc/kubernetes/admin.conf apply -f - >&2 || fail "the join token Secret"
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$token_id
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  auth-extra-groups: system:bootstrappers:kubeadm:default-node-token
  description: token generated by cluster-api
  expiration: $(date -u -d '+15 min' +%Y-%m-%dT%H:%M:%SZ)
  token-id: "$token_id"
  token-secret: "$token_secret"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
SECRET

join_config control-plane | tb_node_exec 2 sh -c 'umask 027; cat > /run/kubeadm/kubeadm-join-config.yaml'
join_config worker | tb_node_exec 3 sh -c 'umask 027; cat > /run/kubeadm/kubeadm-join-config.yaml'
retry_join_script | tb_node_exec 2 sh -c 'cat > /usr/local/bin/kubeadm-bootstrap-script && chmod 0755 /usr/local/bin/kubeadm-bootstrap-script'

tb_log "node2 (control plane): the retry-join script, phase by phase; node3 (worker): kubeadm join --config"
tb_node_exec 2 timeout 900 sh -c '/usr/local/bin/kubeadm-bootstrap-script && echo success > /run/cluster-api/bootstrap-success.complete' \
  >"$TB_RUN/node2/join.log" 2>&1 &
join2=$!
tb_node_exec 3 timeout 600 sh -c 'kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml && echo success > /run/cluster-api/bootstrap-success.complete' \
  >"$TB_RUN/node3/join.log" 2>&1 &
join3=$!
rc=0
wait "$join2" || { rc=1; cat "$TB_RUN/node2/join.log" >&2; }
wait "$join3" || { rc=1; cat "$TB_RUN/node3/join.log" >&2; }
[ "$rc" = 0 ] || fail "a join failed"
# Every phase of the script succeeded at its first try.
[ "$(grep -c "kubeadm reported successful execution for" "$TB_RUN/node2/join.log")" = 9 ] ||
  { cat "$TB_RUN/node2/join.log" >&2; fail "not every phase of the retry-join script succeeded at once"; }
for n in 1 2 3; do
  [ "$(tb_node_exec "$n" cat /run/cluster-api/bootstrap-success.complete)" = success ] ||
    fail "node$n: no bootstrap-success.complete"
done

coredns_available() {
  [ "$(kubectl1 -n kube-system get deployment coredns -o 'jsonpath={.status.availableReplicas}')" = 2 ]
}
for n in 1 2 3; do
  tb_poll 180 "node$n Ready" tb_node_ready 1 "node$n" || fail "node$n did not become Ready"
  # The kubelet configuration patch of the files, on every node.
  tb_node_exec "$n" grep -q '^imageGCHighThresholdPercent: 100$' /var/lib/kubelet/config.yaml ||
    fail "node$n: the kubeletconfiguration patch is not in config.yaml"
done
# kubeadm's taints: all but the node controller's not-ready one (it goes some seconds after Ready).
only_taint() {
  local keys
  keys=$(kubectl1 get node "$1" -o 'jsonpath={.spec.taints[*].key}')
  echo "$(date +%T) $1: $keys" >>"$TB_RUN/taints.log"
  [ "$(printf '%s' "$keys" | tr ' ' '\n' | grep -vx node.kubernetes.io/not-ready | tr '\n' ' ')" = "${2:+$2 }" ]
}
for n in 1 2; do
  tb_poll 60 "node$n: the control-plane taint alone (taints: null means the default)" \
    only_taint "node$n" node-role.kubernetes.io/control-plane || fail "node$n: not the control-plane taint alone"
  tb_node_exec "$n" grep -q 'testbed.kubeadm-rs/patched-by: cluster-api' /etc/kubernetes/manifests/kube-apiserver.yaml ||
    fail "node$n: the kube-apiserver patch is not in its manifest"
  tb_node_exec "$n" cmp -s /etc/kubernetes/pki/etcd/ca.crt - <"$ca_dir/etcd/ca.crt" || fail "node$n: not Cluster API's etcd CA"
done
tb_poll 60 "node3: no taint" only_taint node3 "" || fail "node3: a worker with taints"
tb_poll 60 "etcd (asked on node1): node1, node2 started voting members" tb_etcd_members_are 1 1 2 ||
  fail "etcd members"
tb_poll 180 "CoreDNS Available (2 replicas)" coredns_available || fail "CoreDNS did not become Available"
kubectl1 get nodes -o wide >&2
tb_log "Cluster API's cluster is up: two control planes, a worker"
# TB_CAPI_OUTPUT=DIR: what kubeadm printed on each node (init; the script's phases; the worker's
# join), for testbed/test.sh to compare upstream's run with ours.
if [ -n "${TB_CAPI_OUTPUT:-}" ]; then
  mkdir -p "$TB_CAPI_OUTPUT"
  cp "$TB_RUN/node1/init.log" "$TB_CAPI_OUTPUT/node1-init.log"
  cp "$TB_RUN/node2/join.log" "$TB_CAPI_OUTPUT/node2-join.log"
  cp "$TB_RUN/node3/join.log" "$TB_CAPI_OUTPUT/node3-join.log"
fi
