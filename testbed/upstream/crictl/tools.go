//go:build tools

// Package crictl pins crictl from cri-tools v1.34.0, the oldest release the module proxy serves (v1.25.x is
// not served under either module path); it speaks CRI v1, which containerd 1.6 serves
// (kubeadm v1.25 talks to the container runtime by running crictl).
package crictl

import (
	_ "sigs.k8s.io/cri-tools/cmd/crictl"
)
