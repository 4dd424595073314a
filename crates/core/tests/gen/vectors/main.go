// Prints test vectors for kubeadm-core's cluster objects, computed by upstream's own Go code:
// detached JWS signatures (k8s.io/cluster-bootstrap/token/jws), AES-GCM sealing as kubeadm's
// util/crypto does it (nonce prepended), checked by upstream's DecryptBytes, and the Node patches
// the mark-control-plane and patchnode phases send, captured from a fake clientset. The output is
// deterministic; tests/cluster_vectors.rs reads it.
//
// Regenerate (from the repository root; builds against the testbed's Go module):
//
//	d=$(mktemp -d); cp testbed/upstream/go.mod testbed/upstream/go.sum crates/core/tests/gen/vectors/main.go "$d"
//	(cd "$d" && sed -i 's#^module .*#module vectors#' go.mod &&
//	   GOSUMDB=off GOFLAGS=-mod=mod go run . > vectors.json)
//	cp "$d/vectors.json" crates/core/tests/gen/vectors.json
package main

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	jws "k8s.io/cluster-bootstrap/token/jws"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/markcontrolplane"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/patchnode"
	cryptoutil "k8s.io/kubernetes/cmd/kubeadm/app/util/crypto"
)

type jwsVector struct {
	Content   string `json:"content"`
	TokenID   string `json:"token_id"`
	Secret    string `json:"token_secret"`
	Signature string `json:"signature"`
}

type gcmVector struct {
	KeyHex    string `json:"key_hex"`
	NonceHex  string `json:"nonce_hex"`
	PlainHex  string `json:"plain_hex"`
	SealedHex string `json:"sealed_hex"`
}

type nodeVector struct {
	// Node is the node before the change, as the API server returns it.
	Node json.RawMessage `json:"node"`
	// Taints are passed to MarkControlPlane when CRISocket is empty.
	Taints []v1.Taint `json:"taints"`
	// CRISocket, when set, is passed to AnnotateCRISocket instead.
	CRISocket string `json:"cri_socket,omitempty"`
	// Patch is the strategic merge patch upstream sent.
	Patch string `json:"patch"`
}

type vectors struct {
	JWS   []jwsVector  `json:"jws"`
	GCM   []gcmVector  `json:"gcm"`
	Nodes []nodeVector `json:"nodes"`
}

// nodePatch runs upstream's phase code against a fake clientset holding node and returns the patch.
func nodePatch(node *v1.Node, taints []v1.Taint, criSocket string) nodeVector {
	raw, err := json.Marshal(node)
	if err != nil {
		panic(err)
	}
	client := fake.NewSimpleClientset(node.DeepCopy())
	// The phases print progress lines; keep stdout for the JSON.
	stdout := os.Stdout
	os.Stdout, _ = os.Open(os.DevNull)
	defer func() { os.Stdout = stdout }()
	if criSocket != "" {
		err = patchnode.AnnotateCRISocket(client, node.Name, criSocket)
	} else {
		err = markcontrolplane.MarkControlPlane(client, node.Name, taints)
	}
	if err != nil {
		panic(err)
	}
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			return nodeVector{Node: raw, Taints: taints, CRISocket: criSocket, Patch: string(p.GetPatch())}
		}
	}
	panic("no patch sent")
}

func nodeVectors() []nodeVector {
	cp := v1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule}
	mk := func(labels, annotations map[string]string, taints []v1.Taint) *v1.Node {
		n := &v1.Node{}
		n.Name = "n1"
		n.Labels = map[string]string{"kubernetes.io/hostname": "n1"}
		for k, v := range labels {
			n.Labels[k] = v
		}
		n.Annotations = annotations
		n.Spec.Taints = taints
		return n
	}
	added := metav1Time()
	return []nodeVector{
		nodePatch(mk(nil, nil, nil), []v1.Taint{cp}, ""),
		nodePatch(mk(nil, nil, nil), nil, ""),
		nodePatch(mk(map[string]string{"node-role.kubernetes.io/control-plane": "x", "other": "y"}, nil,
			[]v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoExecute, TimeAdded: added}, cp}),
			[]v1.Taint{cp}, ""),
		nodePatch(mk(nil, nil, []v1.Taint{{Key: "a", Effect: v1.TaintEffectPreferNoSchedule}}), nil, ""),
		nodePatch(mk(map[string]string{"node-role.kubernetes.io/control-plane": "", "node.kubernetes.io/exclude-from-external-load-balancers": ""}, nil, []v1.Taint{cp}), []v1.Taint{cp}, ""),
		nodePatch(mk(nil, nil, []v1.Taint{cp}), []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoExecute}}, ""),
		nodePatch(mk(nil, map[string]string{"a": "b"}, nil), nil, "unix:///run/containerd/containerd.sock"),
		nodePatch(mk(nil, map[string]string{"kubeadm.alpha.kubernetes.io/cri-socket": "/var/run/crio/crio.sock"}, nil), nil, "unix:///var/run/crio/crio.sock"),
	}
}

func main() {
	kubeconfig := "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n    server: https://10.0.0.1:6443\n  name: \"\"\ncontexts: null\ncurrent-context: \"\"\nkind: Config\npreferences: {}\nusers: null\n"
	inputs := [][3]string{
		{kubeconfig, "abcdef", "0123456789abcdef"},
		{kubeconfig, "123456", "aaaaaaaaaaaaaaaa"},
		{"", "abcdef", "0123456789abcdef"},
		{"héllo wörld ✓\n", "zzzzzz", "9999999999999999"},
		{"a", "000000", "0000000000000000"},
	}
	var out vectors
	for _, in := range inputs {
		sig, err := jws.ComputeDetachedSignature(in[0], in[1], in[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out.JWS = append(out.JWS, jwsVector{in[0], in[1], in[2], sig})
	}
	gcmInputs := [][3]string{
		{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "0c0d0e0f1011121314151617", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
		{"ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100", "000000000000000000000000", ""},
		{"6d2a1c9f0e4b7a3855d6c1e2f3a4b5c6d7e8f90112233445566778899aabbcc0", "a1b2c3d4e5f60718293a4b5c", "x"},
	}
	for _, in := range gcmInputs {
		key, _ := hex.DecodeString(in[0])
		nonce, _ := hex.DecodeString(in[1])
		block, err := aes.NewCipher(key)
		if err != nil {
			panic(err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			panic(err)
		}
		sealed := gcm.Seal(append([]byte{}, nonce...), nonce, []byte(in[2]), nil)
		plain, err := cryptoutil.DecryptBytes(sealed, key)
		if err != nil || string(plain) != in[2] {
			panic("upstream DecryptBytes does not open the vector")
		}
		out.GCM = append(out.GCM, gcmVector{in[0], in[1], hex.EncodeToString([]byte(in[2])), hex.EncodeToString(sealed)})
	}
	out.Nodes = nodeVectors()
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

func metav1Time() *metav1.Time {
	t := metav1.Unix(1700000000, 0)
	return &t
}
