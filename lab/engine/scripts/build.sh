#!/usr/bin/env bash
# Part "scripts" of the engine (lab/engine/build.sh): pulumi-language-python-exec and pulumi-resource-pulumi-python (dynamic
# providers) out of the sdk/v3 module zip of the pinned Python SDK version (versions.env: version and go.sum-style
# hash; the go command also checks the zip against the checksum database), and our pulumi-analyzer-policy-python
# (the zip no longer ships one: it runs `python3 -u -m pulumi.policy`).
#
#   lab/engine/scripts/build.sh <bin dir>
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/scripts/build.sh <bin dir>}
# shellcheck source=lab/engine/versions.env
. "$DIR/../versions.env"
SDK_JSON=$(cd "$BIN" && GOFLAGS= go mod download -json "github.com/pulumi/pulumi/sdk/v3@v$ENGINE_PYSDK_VERSION")
SDK_DIR=$(printf '%s' "$SDK_JSON" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
SDK_SUM=$(printf '%s' "$SDK_JSON" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
if [ "$SDK_SUM" != "$ENGINE_PYSDK_ZIP_SUM" ]; then
    echo "engine: sdk/v3@v$ENGINE_PYSDK_VERSION has hash $SDK_SUM, versions.env pins $ENGINE_PYSDK_ZIP_SUM" >&2
    exit 1
fi
install -m 0755 "$SDK_DIR/python/cmd/pulumi-language-python-exec" "$BIN/pulumi-language-python-exec"
install -m 0755 "$SDK_DIR/python/dist/pulumi-resource-pulumi-python" "$BIN/pulumi-resource-pulumi-python"
install -m 0755 "$DIR/pulumi-analyzer-policy-python" "$BIN/pulumi-analyzer-policy-python"
echo "scripts (sdk/v3 v$ENGINE_PYSDK_VERSION zip + lab/engine/scripts)"
