// Prints test vectors for kubeadm-core's unified_diff module, computed by go-difflib v1.0.0 (the
// diff `kubeadm upgrade diff` prints): hand-picked cases, seeded random line sequences with
// mutations (small alphabets, so many repeated lines), and long inputs whose popular lines trigger
// the autojunk heuristic. Each vector is both texts, the context count and WriteUnifiedDiff's
// output for SplitLines of both, as upgrade diff calls it. The output is deterministic;
// tests/unified_diff_vectors.rs reads it.
//
// Regenerate (from the repository root; builds against the testbed's Go module):
//
//	d=$(mktemp -d); cp testbed/upstream/go.mod testbed/upstream/go.sum crates/core/tests/gen/unified_diff/main.go "$d"
//	(cd "$d" && sed -i 's#^module .*#module vectors#' go.mod &&
//	   GOSUMDB=off GOFLAGS=-mod=mod go run . > unified_diff.json)
//	cp "$d/unified_diff.json" crates/core/tests/gen/unified_diff.json
package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

type vector struct {
	Name    string `json:"name"`
	A       string `json:"a"`
	B       string `json:"b"`
	Context int    `json:"context"`
	Out     string `json:"out"`
}

func diff(name, a, b string, n int) vector {
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: "/etc/kubernetes/manifests/x.yaml", ToFile: "new manifest", Context: n,
	})
	if err != nil {
		panic(err)
	}
	return vector{name, a, b, n, out}
}

// mutate deletes, inserts and replaces a few lines of a.
func mutate(r *rand.Rand, a []string, alphabet []string) []string {
	b := append([]string(nil), a...)
	for e := r.Intn(6); e >= 0; e-- {
		pos := 0
		if len(b) > 0 {
			pos = r.Intn(len(b) + 1)
		}
		switch op := r.Intn(3); {
		case op == 0 && pos < len(b):
			b = append(b[:pos], b[pos+1:]...)
		case op == 1 && pos < len(b):
			b[pos] = alphabet[r.Intn(len(alphabet))]
		default:
			ins := []string{}
			for k := r.Intn(4); k >= 0; k-- {
				ins = append(ins, alphabet[r.Intn(len(alphabet))])
			}
			b = append(b[:pos], append(ins, b[pos:]...)...)
		}
	}
	return b
}

func text(lines []string, trailingNewline bool) string {
	s := strings.Join(lines, "\n")
	if trailingNewline && len(lines) > 0 {
		s += "\n"
	}
	return s
}

func main() {
	var vs []vector
	hand := [][2]string{
		{"", ""}, {"", "a\n"}, {"a\n", ""}, {"a\n", "a\n"}, {"a", "a\n"}, {"a\nb\n", "a\nb"},
		{"a\nb\n", "a\nc\nb\n"}, {"a\nb\n", "a\nc\na\nb\n"}, {"x\ny\nz\n", "p\nq\nr\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\nX\n8\n9\n10\n11\n12\n13\n"},
		{"a\na\na\nb\na\na\n", "a\nb\na\na\na\n"},
	}
	for i, h := range hand {
		// 1<<62 and up: Go's n+n wraps negative, which changes the grouping (upgrade diff -c).
		for _, n := range []int{-1, 0, 1, 3, 1 << 62, 1<<62 + 12345} {
			vs = append(vs, diff(fmt.Sprintf("hand-%d-n%d", i, n), h[0], h[1], n))
		}
	}
	r := rand.New(rand.NewSource(1925))
	for i := 0; i < 200; i++ {
		size := 2 + r.Intn(8)
		alphabet := make([]string, size)
		for k := range alphabet {
			alphabet[k] = fmt.Sprintf("- %c", 'a'+k)
		}
		a := []string{}
		for k := r.Intn(60); k > 0; k-- {
			a = append(a, alphabet[r.Intn(size)])
		}
		b := mutate(r, a, alphabet)
		ns := []int{-1, 0, 1, 2, 3, 5, 10, 1 << 62}
		vs = append(vs, diff(fmt.Sprintf("random-%d", i), text(a, r.Intn(4) > 0), text(b, r.Intn(4) > 0), ns[r.Intn(len(ns))]))
	}
	for i := 0; i < 10; i++ {
		// Long texts: mostly distinct lines, with a few lines repeated often enough in b to be
		// "popular" (more than len(b)/100+1 times) once b has 200 lines or more.
		a := []string{}
		for k := 190 + r.Intn(80); k > 0; k-- {
			switch r.Intn(7) {
			case 0:
				a = append(a, "  - name: k8s-certs")
			case 1:
				a = append(a, "")
			default:
				a = append(a, fmt.Sprintf("line %d", r.Intn(400)))
			}
		}
		alphabet := []string{"  - name: k8s-certs", "", "inserted", "line 7"}
		b := mutate(r, a, alphabet)
		b = mutate(r, b, alphabet)
		vs = append(vs, diff(fmt.Sprintf("long-%d", i), text(a, true), text(b, true), []int{0, 3, 10}[i%3]))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(vs); err != nil {
		panic(err)
	}
}
