#!/usr/bin/env bash
# Part "openstack" of the engine (lab/engine/build.sh): pulumi-resource-openstack, our bridge build (README.md) of
# terraform-provider-openstack (version of go.mod), unpatched as users run it, into $ENGINE_PART_OUT/plugins/
# (deliberately not bin/: a pulumi-resource-* on PATH is used by the CLI for ANY requested version of the plugin,
# with only a warning, so a program on another pulumi-openstack SDK would silently get this schema; env.sh installs
# it into PULUMI_HOME under its own version instead), with the schema and the version beside it.
#
#   ENGINE_PART_OUT=<dir> lab/engine/openstack/build.sh <bin dir>
#   ENGINE_OPENSTACK_PATCHES=<dir> ...  the same build with <dir>/*.patch applied to the Terraform provider (variant
#                                       "openstack-patched": lab/engine/openstack/patches, opt-in; lab/bench/engine_figures.py
#                                       compares it with the unpatched plugin in one run)
#
# Steps, in a temp copy of this module: copy the terraform provider out of GOMODCACHE and apply the patches, point a
# `replace` at the copy, build our tfgen, generate the schema (no docs, no examples), embed it in the provider main,
# build the provider reporting the pulumi-openstack version of versions.env (ENGINE_OPENSTACK_BRIDGE_VERSION).
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${ENGINE_PART_OUT:?lab/engine/openstack/build.sh: set ENGINE_PART_OUT (lab/engine/build.sh does)}
# shellcheck source=lab/engine/versions.env
. "$DIR/../versions.env"
PATCHES=${ENGINE_OPENSTACK_PATCHES:-none}
P=${ENGINE_GO_P:-2}
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}'; }

WORK=$(mktemp -d "$OUT/.src.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SRC="$WORK/openstack"
cp -R "$DIR" "$SRC"
TPO=github.com/terraform-provider-openstack/terraform-provider-openstack/v3
TPO_VERSION=$(cd "$DIR" && go list -m -f '{{.Version}}' "$TPO")
TPO_DIR=$(cd "$DIR" && go mod download -json "$TPO@$TPO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -R "$TPO_DIR" "$WORK/tpo"
chmod -R u+w "$WORK/tpo"
if [ "$PATCHES" != none ]; then
    for patch in "$PATCHES"/*.patch; do
        [ -e "$patch" ] || continue
        patch --quiet --forward -p1 -d "$WORK/tpo" <"$patch" ||
            { echo "engine: $patch does not apply to $TPO $TPO_VERSION" >&2; exit 1; }
        echo "patched $TPO $TPO_VERSION with $(basename "$patch")"
    done
else
    echo "unpatched $TPO $TPO_VERSION (as users run it; the variant openstack-patched applies patches/)"
fi
(cd "$SRC" && go mod edit -replace "$TPO=../tpo")

t=$(date +%s.%N)
(cd "$SRC" && go build -p "$P" -ldflags "-s -w" -o "$WORK/pulumi-tfgen-openstack" ./cmd/pulumi-tfgen-openstack)
t_tfgen=$(elapsed "$t")
"$WORK/pulumi-tfgen-openstack" schema --skip-docs --skip-examples --out "$WORK/schema" >"$WORK/tfgen.log" 2>&1 ||
    { cat "$WORK/tfgen.log" >&2; echo "engine: tfgen schema for lab/engine/openstack failed" >&2; exit 1; }
cp "$WORK/schema/schema.json" "$SRC/cmd/pulumi-resource-openstack/schema.json"
cp "$WORK/schema/schema.json" "$OUT/openstack-schema.json"   # kept for reference and check_sdk.py
mkdir -p "$OUT/plugins"
t=$(date +%s.%N)
(cd "$SRC" && go build -p "$P" \
    -ldflags "-s -w -X github.com/ha-endpoint/engine/openstack.Version=$ENGINE_OPENSTACK_BRIDGE_VERSION" \
    -o "$OUT/plugins/pulumi-resource-openstack" ./cmd/pulumi-resource-openstack)
printf '%s\n' "$ENGINE_OPENSTACK_BRIDGE_VERSION" >"$OUT/openstack-plugin-version"   # read by env.sh
echo "pulumi-resource-openstack $ENGINE_OPENSTACK_BRIDGE_VERSION (lab/engine/openstack: bridge" \
    "$(cd "$DIR" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi-terraform-bridge/v3) + $TPO_VERSION;" \
    "our bridge build, not Pulumi's release) -> plugins/, $(du -m "$OUT/plugins/pulumi-resource-openstack" | cut -f1) MiB" \
    "(tfgen build $t_tfgen s, provider build $(elapsed "$t") s)"
