#!/usr/bin/env bash
# Part "kubernetes" of the engine (lab/engine/build.sh): the pulumi-kubernetes provider plugin, into
# $ENGINE_PART_OUT/plugins/pulumi-resource-kubernetes (not on PATH: env.sh installs it into PULUMI_HOME as
# `resource kubernetes <version>`, the version written to kubernetes-plugin-version beside it).
#
#   lab/engine/kubernetes/build.sh <bin dir>
#
# Module: github.com/pulumi/pulumi-kubernetes/provider/v4 at the commit of tag v4.25.0 (go.mod here). Upstream's
# cmd/pulumi-resource-kubernetes embeds files its `go generate` writes, missing from the module zip; our main.go embeds
# the zip's schema.json and terraform-mapping.json instead, copied here from GOMODCACHE into a temp copy of this
# wrapper (never committed), the schema with its "version" set as upstream's generate.go sets it. The plugin's version
# (-X .../pkg/version.Version) is the tag's, from this script, and must equal the pulumi-kubernetes pin of
# requirements.txt (the SDK and the plugin speak one schema): checked here.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/kubernetes/build.sh <bin dir>}
OUT=${ENGINE_PART_OUT:-$(dirname "$BIN")}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
PROVIDER=github.com/pulumi/pulumi-kubernetes/provider/v4
VERSION=4.25.0   # the tag of the commit go.mod requires

pinned=$(sed -n 's/^pulumi-kubernetes==\([^ ]*\).*/\1/p' "$DIR/../../../requirements.txt")
if [ "$pinned" != "$VERSION" ]; then
    echo "lab/engine/kubernetes: requirements.txt pins pulumi-kubernetes ${pinned:-(nothing)}, this plugin is $VERSION" >&2
    exit 1
fi
WORK=$(mktemp -d "${OUT}/.src.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$DIR/go.mod" "$DIR/go.sum" "$DIR/main.go" "$WORK/"
module_dir=$(cd "$DIR" && go mod download -json "$PROVIDER" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cmd_dir=$module_dir/cmd/pulumi-resource-kubernetes
sed "1s/^{\$/{\"version\": \"$VERSION\",/" "$cmd_dir/schema.json" >"$WORK/schema.json"
if ! grep -q "^{\"version\": \"$VERSION\",\$" "$WORK/schema.json"; then
    echo "lab/engine/kubernetes: $cmd_dir/schema.json does not start with a line '{': cannot set its version" >&2
    exit 1
fi
cp "$cmd_dir/terraform-mapping.json" "$WORK/"
mkdir -p "$OUT/plugins"
(cd "$WORK" && go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w -X $PROVIDER/pkg/version.Version=$VERSION" \
    -o "$OUT/plugins/pulumi-resource-kubernetes" .)
echo "$VERSION" >"$OUT/kubernetes-plugin-version"
echo "pulumi-resource-kubernetes $VERSION ($PROVIDER $(cd "$DIR" && go list -m -f '{{.Version}}' "$PROVIDER"))"
