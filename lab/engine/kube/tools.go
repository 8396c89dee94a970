//go:build tools

// Package tools pins the two Kubernetes main packages this part builds (kube-apiserver and kubectl of
// k8s.io/kubernetes v1.34.4) so that `go build` of them uses this module's go.mod/go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
