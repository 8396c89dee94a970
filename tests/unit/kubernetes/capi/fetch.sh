#!/usr/bin/env bash
# Fetch (or reuse) the Cluster API CRDs the Kubernetes tests validate against, from the Go modules of the pinned
# releases (versions.env: Cluster API and CAPO), the way lab/engine/build.sh fetches module zips: `go mod download -json
# <module>@<version>` gives the module's Dir and Sum; the Sum must equal the pinned hash. The CRD files land side by
# side under their own names, with SOURCE naming each module, version and hash.
#
#   tests/unit/kubernetes/capi/fetch.sh          fetch into the cache unless there; print the directory
# Cache: ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/capi/<capi version>+capo-<capo version>/ (outside the clone,
# kept across runs).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/unit/kubernetes/capi/versions.env
. "$HERE/versions.env"
OUT="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/capi/$CAPI_VERSION+capo-$CAPO_VERSION"

if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || { echo "capi: the go command is needed to fetch $MODULES from the Go module proxy" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$OUT.tmp.$$"' EXIT
mkdir -p "$OUT.tmp.$$"
for name in $MODULES; do
    eval "module=\$${name}_MODULE version=\$${name}_VERSION pinned=\$${name}_ZIP_SUM crds=\$${name}_CRDS"
    JSON=$(cd "$TMP" && GOFLAGS= GOTOOLCHAIN=${GOTOOLCHAIN:-local} go mod download -json "$module@$version") || true
    DIR=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    SUM=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
    ERR=$(printf '%s' "$JSON" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p')
    if [ -n "$ERR" ] || [ -z "$DIR" ]; then
        echo "capi: go mod download $module@$version failed: ${ERR:-no Dir in $JSON}" >&2; exit 1
    fi
    if [ "$SUM" != "$pinned" ]; then
        echo "capi: $module@$version has hash $SUM, versions.env pins $pinned" >&2; exit 1
    fi
    for crd in $crds; do
        [ -f "$DIR/$crd" ] || { echo "capi: $module@$version has no $crd; fix ${name}_CRDS in versions.env" >&2; exit 1; }
        install -m 0644 "$DIR/$crd" "$OUT.tmp.$$/$(basename "$crd")"
    done
    printf '%s@%s %s\n' "$module" "$version" "$SUM" >>"$OUT.tmp.$$/SOURCE"
done
touch "$OUT.tmp.$$/.complete"
rm -rf "$OUT"
mv "$OUT.tmp.$$" "$OUT"
echo "$OUT"
