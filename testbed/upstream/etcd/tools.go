//go:build tools

// Package etcd pins the etcd server that kubeadm v1.25.16 deploys by default (DefaultEtcdVersion 3.5.9-0).
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
