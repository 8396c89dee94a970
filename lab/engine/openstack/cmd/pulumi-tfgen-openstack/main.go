package main

import (
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfgen"

	openstack "github.com/ha-endpoint/engine/openstack"
)

func main() { tfgen.Main("openstack", openstack.Version, openstack.Provider()) }
