#!/usr/bin/env bash
# Type-check index.ts against the SDK generated from components/schema.json, as tests/e2e/test_typescript_consumer.py
# does: the SDK from Pulumi's own TypeScript generator (lab/engine/codegen: ha-gen-sdk-nodejs, built by lab/engine/build.sh --tools)
# into sdks/haendpoint, the pinned npm packages (node-deps.sh, cached), then `tsc`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
lab/engine/build.sh --tools >/dev/null
. lab/engine/env.sh
ha-gen-sdk-nodejs -schema components/schema.json -out "$here/sdks/haendpoint"
ln -sfn "$("$here/node-deps.sh")" "$here/node_modules"
cd "$here" && node_modules/.bin/tsc -p . && echo "examples/typescript: type-checks against the generated SDK"
