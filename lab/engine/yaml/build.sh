#!/usr/bin/env bash
# Part "yaml" of the engine (lab/engine/build.sh): the Pulumi YAML language host, pulumi-language-yaml, into <bin dir>.
#
#   lab/engine/yaml/build.sh <bin dir>
#
# Module: github.com/pulumi/pulumi-yaml v1.25.0 (served by the module proxy), on the pkg/v3 and sdk/v3 v3.206.0 it
# requires itself (its go.mod has no replace directives). In a temp copy of this wrapper module: the pulumi-yaml
# module copied out of GOMODCACHE with patches/*.patch applied if there are any (each says what and why; none since
# v1.25.0, which reads the plain config the CLI sends), a `replace` pointing at it, then `go build`, the version set
# with -ldflags -X .../pkg/version.Version from go.mod (never faked). The CLI (v3.274.1) finds the host on PATH next
# to `pulumi`, as it finds pulumi-language-python.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/yaml/build.sh <bin dir>}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
YAML=github.com/pulumi/pulumi-yaml

WORK=$(mktemp -d "${ENGINE_PART_OUT:-${TMPDIR:-/tmp}}/.src.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
YAML_VERSION=$(cd "$DIR" && go list -m -f '{{.Version}}' "$YAML")
YAML_DIR=$(cd "$DIR" && go mod download -json "$YAML@$YAML_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -R "$YAML_DIR" "$WORK/pulumi-yaml"
chmod -R u+w "$WORK/pulumi-yaml"
patched=""
for patch in "$DIR"/patches/*.patch; do
    [ -e "$patch" ] || continue
    patch --quiet --forward -p1 -d "$WORK/pulumi-yaml" <"$patch" ||
        { echo "engine: $patch does not apply to $YAML $YAML_VERSION" >&2; exit 1; }
    echo "patched $YAML $YAML_VERSION with $(basename "$patch")"
    patched=", patched"
done
mkdir "$WORK/wrapper"
cp "$DIR/go.mod" "$DIR/go.sum" "$DIR/tools.go" "$WORK/wrapper/"
(cd "$WORK/wrapper" && go mod edit -replace "$YAML=../pulumi-yaml" &&
    go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w -X $YAML/pkg/version.Version=$YAML_VERSION" \
        -o "$BIN/pulumi-language-yaml" "$YAML/cmd/pulumi-language-yaml")
echo "pulumi-language-yaml $YAML_VERSION (pkg/v3 $(cd "$DIR" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)$patched)"
