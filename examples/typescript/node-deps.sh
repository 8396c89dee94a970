#!/usr/bin/env bash
# Install (or reuse) the npm packages the TypeScript example is type-checked with (package-lock.json: @pulumi/pulumi,
# typescript, @types/node) into the cache, and print that node_modules directory.
#
#   examples/typescript/node-deps.sh      -> ${HA_ENDPOINT_CACHE:-~/.cache/ha-endpoint}/node/<key>/node_modules
#
# <key> = hash of package.json, package-lock.json and the Node.js version: a changed lock installs anew (`npm ci`,
# about 40 s), an unchanged one is reused at once. Builds go to a temporary directory renamed when complete, under
# flock, so parallel runs install once. Needs node and npm (Debian: apt-get install nodejs npm) and the npm registry.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "node-deps: $tool not found: install Node.js 18+ and npm" >&2; exit 1; }
done
KEY=$( (node --version; cat "$HERE/package.json" "$HERE/package-lock.json") | sha256sum | cut -c1-16)
OUT="$CACHE_ROOT/node/$KEY"
if [ ! -f "$OUT/.complete" ]; then
    mkdir -p "$CACHE_ROOT/node"
    exec 9>"$CACHE_ROOT/node/.lock"
    flock 9
    if [ ! -f "$OUT/.complete" ]; then
        TMP="$CACHE_ROOT/node/.tmp-$KEY-$$"
        rm -rf "$TMP" && mkdir -p "$TMP"
        trap 'rm -rf "$TMP"' EXIT
        cp "$HERE/package.json" "$HERE/package-lock.json" "$TMP/"
        (cd "$TMP" && npm ci --no-audit --no-fund --loglevel=error >&2)
        touch "$TMP/.complete"
        rm -rf "$OUT" && mv "$TMP" "$OUT"
        trap - EXIT
    fi
fi
echo "$OUT/node_modules"
