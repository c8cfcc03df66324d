//go:build tools

// Package tools pins the control-plane binaries Capstan's tests run against.
// They are built from the Go module proxy by `make tools`; nothing here is
// imported by Capstan itself.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
