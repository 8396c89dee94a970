// Command pulumi-resource-kubernetes: the pulumi-kubernetes provider plugin v4.25.0, built from its Go module.
//
// Upstream's cmd/pulumi-resource-kubernetes embeds schema-embed.json and terraform-mapping-embed.json, which its
// `go generate` writes and the module zip does not hold. This main embeds the zip's own schema.json (with the
// plugin's version added, as upstream's generator does) and terraform-mapping.json, which engine/kubernetes/build.sh
// copies next to it from GOMODCACHE at build time (they are never committed), and calls the provider's Serve as
// upstream's main does.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema.json
var pulumiSchema []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
