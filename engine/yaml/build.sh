#!/usr/bin/env bash
# Build the Pulumi YAML language host (pulumi-language-yaml) into a bin dir: called by engine/build.sh (step 5) with
# the temporary bin dir of the build, so it is cached under the same key (engine/key.sh hashes this directory).
#
#   engine/yaml/build.sh <bin dir>
#
# Module: github.com/pulumi/pulumi-yaml v1.19.1 (served by the module proxy), on the pkg/v3 and sdk/v3 v3.170.0 it
# requires itself (its go.mod has no replace directives, so this wrapper needs none). The version is set with
# -ldflags -X .../pkg/version.Version, read from go.mod (never faked). The CLI (v3.259.0) finds the host on PATH next
# to `pulumi` as it finds pulumi-language-python.
set -euo pipefail

YAML_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: engine/yaml/build.sh <bin dir>}
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

YAML_VERSION=$(cd "$YAML_DIR" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi-yaml)
(cd "$YAML_DIR" && go build -p "${ENGINE_GO_P:-2}" -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$YAML_VERSION" \
    -o "$BIN/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml)
echo "$YAML_VERSION"
