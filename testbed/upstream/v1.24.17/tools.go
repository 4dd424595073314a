//go:build tools

// Package upstream pins the upstream Kubernetes v1.24.17 commands the testbed builds for the
// `upgrade` scenario: kubeadm, the kubelet, the control plane and kube-proxy of a cluster that
// kubeadm v1.24.17 made, which our kubeadm then upgrades to v1.25.16.
package upstream

import (
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
