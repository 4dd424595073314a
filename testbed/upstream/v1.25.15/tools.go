//go:build tools

// Package upstream pins the upstream Kubernetes v1.25.15 commands the testbed builds for the
// `upgrade` scenario: the control plane and kube-proxy a cluster is upgraded from.
package upstream

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
