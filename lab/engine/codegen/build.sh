#!/usr/bin/env bash
# Part "codegen" of the engine (lab/engine/build.sh): ha-gen-sdk-nodejs (lab/engine/codegen/main.go: Pulumi's TypeScript SDK
# generator, pkg/v3 codegen/nodejs, run on a schema file) into <bin dir>.
#
#   lab/engine/codegen/build.sh <bin dir>
#
# Uses the pkg/v3 of the CLI (lab/engine/cli: v3.274.1, same replace), so it adds no modules to the engine's set.
set -euo pipefail

CODEGEN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/codegen/build.sh <bin dir>}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

(cd "$CODEGEN_DIR" && go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w" \
    -o "$BIN/ha-gen-sdk-nodejs" .)
echo "ha-gen-sdk-nodejs (pkg/v3 $(cd "$CODEGEN_DIR" && go list -m -f "{{.Version}}" github.com/pulumi/pulumi/pkg/v3) codegen/nodejs)"
