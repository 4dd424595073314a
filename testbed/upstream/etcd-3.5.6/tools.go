//go:build tools

// Package etcd pins the etcd server that kubeadm v1.24.17 deploys by default (DefaultEtcdVersion 3.5.6-0): the
// etcd of the cluster the `upgrade` scenario takes over.
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
