//go:build tools

// Package upstream pins the upstream Kubernetes commands the testbed builds.
package upstream

import (
	_ "k8s.io/kubernetes/cmd/kubeadm"
)
