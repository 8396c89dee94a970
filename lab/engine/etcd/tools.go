//go:build tools

// Package tools pins etcd's main package (the root of go.etcd.io/etcd/server/v3 v3.7.3) so that `go build` of it uses
// this module's go.mod/go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
