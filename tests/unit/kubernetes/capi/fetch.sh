#!/usr/bin/env bash
# Fetch (or reuse) the Cluster API CRDs the Kubernetes tests validate against, from the Go module of the pinned
# release (versions.env), the way engine/build.sh fetches module zips: `go mod download -json <module>@<version>`
# gives the module's Dir and Sum; the Sum must equal the pinned hash.
#
#   tests/unit/kubernetes/capi/fetch.sh          fetch into the cache unless there; print the directory
# Cache: ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/capi/<version>/ (outside the clone, kept across runs).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/unit/kubernetes/capi/versions.env
. "$HERE/versions.env"
OUT="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/capi/$CAPI_VERSION"

if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || { echo "capi: the go command is needed to fetch $CAPI_MODULE@$CAPI_VERSION" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
JSON=$(cd "$TMP" && GOFLAGS= GOTOOLCHAIN=${GOTOOLCHAIN:-local} go mod download -json "$CAPI_MODULE@$CAPI_VERSION") || true
DIR=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
SUM=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
ERR=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p')
if [ -n "$ERR" ] || [ -z "$DIR" ]; then
    echo "capi: go mod download $CAPI_MODULE@$CAPI_VERSION failed: ${ERR:-no Dir in $JSON}" >&2; exit 1
fi
if [ "$SUM" != "$CAPI_ZIP_SUM" ]; then
    echo "capi: $CAPI_MODULE@$CAPI_VERSION has hash $SUM, versions.env pins $CAPI_ZIP_SUM" >&2; exit 1
fi
mkdir -p "$OUT.tmp.$$"
for crd in $CAPI_CRDS; do
    install -m 0644 "$DIR/config/crd/bases/$crd" "$OUT.tmp.$$/$crd"
done
printf '%s@%s %s\n' "$CAPI_MODULE" "$CAPI_VERSION" "$SUM" >"$OUT.tmp.$$/SOURCE"
touch "$OUT.tmp.$$/.complete"
rm -rf "$OUT"
mv "$OUT.tmp.$$" "$OUT"
echo "$OUT"
