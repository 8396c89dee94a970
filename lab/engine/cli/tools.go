//go:build tools

// Package tools pins the Pulumi CLI main package so that `go build` of it uses this module's go.mod/go.sum.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
