//go:build tools

// Package tools pins the Pulumi YAML language host's main package so that `go build` of it uses this module's
// go.mod/go.sum (pulumi-yaml v1.19.1 on pkg/v3 v3.170.0, its own requirement).
package tools

import _ "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"
