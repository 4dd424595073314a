//go:build tools

// Package coredns pins CoreDNS v1.8.6, the version kubeadm v1.24.17 deploys (constants.CoreDNSVersion): the
// DNS of the cluster the `upgrade` scenario takes over.
package coredns

import (
	_ "github.com/coredns/coredns"
)
