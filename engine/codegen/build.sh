#!/usr/bin/env bash
# Build ha-gen-sdk-nodejs (engine/codegen/main.go: Pulumi's TypeScript SDK generator, pkg/v3 codegen/nodejs, run on a
# schema file) into a bin dir: called by engine/build.sh (step 6) with the temporary bin dir of the build, so it is
# cached under the same key (engine/key.sh hashes this directory).
#
#   engine/codegen/build.sh <bin dir>
#
# Uses the pkg/v3 of the CLI (engine/cli: v3.259.0, same replace), so it adds no modules to the engine's set.
set -euo pipefail

CODEGEN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: engine/codegen/build.sh <bin dir>}
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

(cd "$CODEGEN_DIR" && go build -p "${ENGINE_GO_P:-2}" -trimpath -buildvcs=false -ldflags "-s -w" \
    -o "$BIN/ha-gen-sdk-nodejs" .)
cd "$CODEGEN_DIR" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3
