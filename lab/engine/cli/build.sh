#!/usr/bin/env bash
# Part "cli" of the engine (lab/engine/build.sh): the Pulumi CLI from github.com/pulumi/pulumi/pkg/v3/cmd/pulumi at the
# version required in lab/engine/cli/go.mod (the version string is set from go.mod, never faked).
#
#   lab/engine/cli/build.sh <bin dir>     (run by lab/engine/build.sh with GOFLAGS from build-flags.env; prints what it built)
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/cli/build.sh <bin dir>}
cd "$DIR"
VERSION=$(go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)
go build -p "${ENGINE_GO_P:-2}" \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$VERSION" \
    -o "$BIN/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
echo "pulumi $VERSION (pkg/v3)"
