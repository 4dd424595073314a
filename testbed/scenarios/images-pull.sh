# shellcheck shell=bash
# Scenario images-pull: `kubeadm config images pull` really pulls, without the internet. On node1 a
# read-only registry (testbed/registry/serve.py, serving the testbed's own image archives) listens on
# the node's loopback, and containerd's hosts.toml for registry.k8s.io points there (nothing else is
# ever asked). Every image is removed from containerd first; then the kubeadm under test pulls with
# --config: exit 0, stdout exactly upstream's lines (`[config/images] Pulled IMAGE` for each image of
# upstream's `config images list` for that config), every image back in containerd with the very
# manifest digest of its archive, and each fetched from the registry. With a kubeadm other than
# upstream's, upstream's pull runs after it and must print the same. Last, a pull from a repository
# the registry does not serve (no --config, no --cri-socket: the socket is detected) must fail like
# upstream's: exit 1, nothing on stdout, `failed to pull image "IMAGE": ...` with containerd's
# NotFound. Ours also pulls on a terminal (script(1)): each pull shows while it runs, the lines stay.
# Sourced by scenario.sh with lib/node.sh loaded and $kubeadm set.

fail() {
  tb_log "FAIL: $*"
  tb_fail_logs 1
  [ ! -e "$dir/registry.log" ] || { echo "----- registry requests (last 20)" >&2; tail -n 20 "$dir/registry.log" >&2; }
  exit 1
}
crictl1() { tb_node_exec 1 crictl -r unix:///var/run/containerd/containerd.sock "$@"; }
# The image references containerd holds in the CRI's namespace, one per line.
image_refs() { tb_node_exec 1 ctr -n k8s.io images ls -q; }

upstream=$TB_UPSTREAM/kubeadm
cfg=/etc/testbed/kubeadm-init.yaml
dir=$TB_RUN/node1

tb_node_create 1
tb_control_plane_config | tb_node_exec 1 sh -c "mkdir -p /etc/testbed && cat > $cfg"

# The registry, inside node1's network namespace (its loopback is the node's own).
mapfile -t archives < <("$TB_LIB/../images/build.sh" --list | cut -d' ' -f1)
tb_node_exec 1 setsid python3 "$TB_LIB/../registry/serve.py" --listen 127.0.0.1:0 \
  --port-file "$dir/registry.port" --log "$dir/registry.log" "${archives[@]}" \
  </dev/null >"$dir/registry-serve.log" 2>&1 &
tb_poll 30 "registry listens on node1's loopback" test -s "$dir/registry.port" ||
  { cat "$dir/registry-serve.log" >&2; fail "the registry did not start"; }
port=$(cat "$dir/registry.port")
# `server` too is the local registry: should the mirror fail, containerd falls back to it, never to
# the real host.
tb_node_exec 1 sh -ec "mkdir -p /etc/containerd/certs.d/registry.k8s.io
  cat > /etc/containerd/certs.d/registry.k8s.io/hosts.toml" <<TOML
server = "http://127.0.0.1:$port"

[host."http://127.0.0.1:$port"]
  capabilities = ["pull", "resolve"]
TOML

# Forget every image (the testbed imported them all) and collect their content, so that what is
# there afterwards can only have come from the registry.
mapfile -t refs < <(image_refs)
[ "${#refs[@]}" -ge 7 ] || fail "expected the 7 imported images, containerd has: ${refs[*]}"
tb_node_exec 1 ctr -n k8s.io images rm --sync "${refs[@]}" >/dev/null || fail "could not remove the images"
[ -z "$(image_refs)" ] || fail "images left after removal: $(image_refs | tr '\n' ' ')"
[ -z "$(crictl1 images -q)" ] || fail "the CRI still lists images: $(crictl1 images -q | tr '\n' ' ')"
[ -z "$(tb_node_exec 1 ctr -n k8s.io content ls -q)" ] || fail "content left after removing every image"
tb_log "ok: node1 has no images and no content"

# Upstream prints one line per image of `config images list`, in that order.
expected=$(tb_node_exec 1 "$upstream" config images list --config "$cfg" | sed 's#^#[config/images] Pulled #') ||
  fail "upstream config images list failed"
[ "$(printf '%s\n' "$expected" | wc -l)" = 7 ] || fail "upstream lists other than 7 images: $expected"

t0=$(date +%s)
rc=0
tb_node_exec 1 timeout 300 kubeadm config images pull --config "$cfg" >"$dir/pull.out" 2>"$dir/pull.err" || rc=$?
tb_log "kubeadm config images pull took $(($(date +%s) - t0))s"
[ "$rc" = 0 ] || { cat "$dir/pull.out" "$dir/pull.err" >&2; fail "kubeadm config images pull exited $rc"; }
[ ! -s "$dir/pull.err" ] || { cat "$dir/pull.err" >&2; fail "kubeadm config images pull wrote to stderr"; }
if [ "$(cat "$dir/pull.out")" != "$expected" ]; then
  diff <(printf '%s\n' "$expected") "$dir/pull.out" >&2 || true
  fail "kubeadm config images pull printed other lines than upstream's"
fi
tb_log "ok: exit 0 and upstream's $(wc -l <"$dir/pull.out") lines"

# Every image is back, with the manifest digest of its archive, and was fetched from the registry.
while read -r archive image; do
  want=$(tar -xOf "$archive" index.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["manifests"][0]["digest"])')
  got=$(tb_node_exec 1 ctr -n k8s.io images ls | awk -v i="$image" '$1 == i {print $3}')
  [ "$got" = "$want" ] || fail "$image: containerd has digest '${got}', the archive $want"
  crictl1 inspecti "$image" >/dev/null || fail "$image: the CRI does not know it"
  repo=${image#registry.k8s.io/}
  repo=${repo%:*}
  grep -q "^GET /v2/$repo/manifests/.* 200$" "$dir/registry.log" || fail "$image: its manifest never came from the registry"
  grep -q "^GET /v2/$repo/blobs/.* 200$" "$dir/registry.log" || fail "$image: no blob of it came from the registry"
done < <("$TB_LIB/../images/build.sh" --list)
tb_log "ok: all 7 images present with their archives' digests, pulled from the registry"

# Upstream, on the same node, prints the same (the images are there now: upstream pulls anyway).
if [ "$(readlink -f "$kubeadm")" != "$(readlink -f "$upstream")" ]; then
  tb_node_exec 1 timeout 300 "$upstream" config images pull --config "$cfg" >"$dir/pull-upstream.out" 2>&1 ||
    { cat "$dir/pull-upstream.out" >&2; fail "upstream kubeadm config images pull failed"; }
  diff "$dir/pull-upstream.out" "$dir/pull.out" >&2 || fail "upstream's pull printed something else"
  tb_log "ok: upstream's pull printed the same"
  # On a terminal (script(1)'s pseudo-terminal) ours shows each pull on a line it rewrites in place
  # and then clears; without those redraws the output is the same lines.
  tb_node_exec 1 timeout 300 script -qfec "kubeadm config images pull --config $cfg" /dev/null >"$dir/pull.tty" ||
    fail "kubeadm config images pull on a terminal failed"
  grep -qF "$(printf '\r\033[2K[config/images] Pulling registry.k8s.io/kube-apiserver:v1.25.16 (0s)')" "$dir/pull.tty" ||
    { od -c "$dir/pull.tty" | head -20 >&2; fail "no progress line for the kube-apiserver pull on the terminal"; }
  python3 -c '
import re, sys
text = open(sys.argv[1], encoding="utf-8", newline="").read()
text = re.sub(r"\r\x1b\[2K\[config/images\] Pulling [^\r\n]* \(\d+s\)", "", text)
sys.stdout.write(text.replace("\r\x1b[2K", "").replace("\r\n", "\n"))' "$dir/pull.tty" >"$dir/pull.tty.lines"
  diff "$dir/pull.out" "$dir/pull.tty.lines" >&2 || fail "on a terminal, other lines than through a pipe"
  tb_log "ok: on a terminal each pull showed while it ran, and the lines are the same"
fi

# A repository the registry does not serve: upstream's exit code and message shape, nothing printed.
bad=registry.k8s.io/testbed-absent
rc=0
tb_node_exec 1 timeout 300 kubeadm config images pull --kubernetes-version v1.25.16 --image-repository "$bad" \
  >"$dir/pull-bad.out" 2>"$dir/pull-bad.err" || rc=$?
cat "$dir/pull-bad.err" >&2
[ "$rc" = 1 ] || fail "pulling from $bad exited $rc, upstream exits 1"
[ ! -s "$dir/pull-bad.out" ] || fail "pulling from $bad printed: $(cat "$dir/pull-bad.out")"
first=$(head -n 1 "$dir/pull-bad.err")
case "$first" in
  "failed to pull image \"$bad/kube-apiserver:v1.25.16\": "*"code = NotFound"*) ;;
  *) fail "pulling from $bad: not upstream's message shape: $first" ;;
esac
[ "$(tail -n 1 "$dir/pull-bad.err")" = "To see the stack trace of this error execute with --v=5 or higher" ] ||
  fail "pulling from $bad: no stack-trace hint last"
tb_log "ok: a pull from $bad fails with exit 1 and upstream's message shape"
