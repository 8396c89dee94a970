package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"

	openstack "github.com/ha-endpoint/engine/openstack"
)

//go:embed schema.json
var schema []byte

func main() { tfbridge.Main("openstack", openstack.Version, openstack.Provider(), schema) }
