#!/usr/bin/env bash
# Part "langhost" of the engine (lab/engine/build.sh): our Python language host (lab/engine/langhost/main.go, on sdk/v3 of
# go.mod), reporting the Python SDK version pinned in versions.env (ENGINE_PYSDK_VERSION).
#
#   lab/engine/langhost/build.sh <bin dir>
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/langhost/build.sh <bin dir>}
# shellcheck source=lab/engine/versions.env
. "$DIR/../versions.env"
cd "$DIR"
go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w -X main.version=$ENGINE_PYSDK_VERSION" \
    -o "$BIN/pulumi-language-python" .
echo "pulumi-language-python $ENGINE_PYSDK_VERSION (lab/engine/langhost, sdk/v3 $(go list -m -f '{{.Version}}' github.com/pulumi/pulumi/sdk/v3))"
