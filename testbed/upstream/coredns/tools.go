//go:build tools

// Package coredns pins CoreDNS v1.9.3, the version kubeadm v1.25.16 deploys (constants.CoreDNSVersion).
package coredns

import (
	_ "github.com/coredns/coredns"
)
