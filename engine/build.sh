#!/usr/bin/env bash
# Build (or reuse) the Pulumi engine for ha-endpoint from Go modules: see engine/README.md.
#
#   engine/build.sh            build into the cache unless an identical build is there; print timings and sizes
#   engine/build.sh --bin-dir  print the bin dir of the build matching this checkout (exit 1 if not built yet)
#   engine/build.sh --force    rebuild even if the cache has it
#
# Cache: ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/engine/<key>/bin, <key> = hash of engine/ + Go version.
# Needs only Go and the Go module proxy. Builds use -p ${ENGINE_GO_P:-2} (2-core machines).
set -euo pipefail

ENGINE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=engine/key.sh
. "$ENGINE_DIR/key.sh"
# shellcheck source=engine/versions.env
. "$ENGINE_DIR/versions.env"

CACHE_ROOT=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
KEY=$(engine_key "$ENGINE_DIR")
OUT="$CACHE_ROOT/engine/$KEY"
GO_P=${ENGINE_GO_P:-2}
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

mode=build
case "${1:-}" in
    --bin-dir) mode=bindir ;;
    --force) mode=force ;;
    "") ;;
    *) echo "usage: $0 [--bin-dir|--force]" >&2; exit 2 ;;
esac

report() {
    # Sizes of what is in the cache; with --info also the timings recorded when it was built.
    echo "engine: bin dir $OUT/bin"
    (cd "$OUT/bin" && for f in *; do
        printf '  %-32s %s\n' "$f" "$(awk -v b="$(stat -c %s "$f")" \
            'BEGIN{ if (b >= 1048576) printf "%.1f MiB", b/1048576; else printf "%.1f KiB", b/1024 }')"
    done)
    if [ "${1:-}" = --info ] && [ -f "$OUT/BUILD_INFO" ]; then
        echo "engine: recorded at build time:"
        sed 's/^/  /' "$OUT/BUILD_INFO"
    fi
}

if [ "$mode" = bindir ]; then
    if [ -f "$OUT/.complete" ]; then echo "$OUT/bin"; exit 0; fi
    echo "engine: no build for key $KEY under $CACHE_ROOT/engine: run engine/build.sh (make engine)" >&2
    exit 1
fi

t_start=$(date +%s.%N)
if [ "$mode" != force ] && [ -f "$OUT/.complete" ]; then
    echo "engine: reusing cached build $KEY (nothing to do; $(awk -v s="$t_start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e-s}') s)"
    report --info
    exit 0
fi

mkdir -p "$CACHE_ROOT/engine"
exec 9>"$CACHE_ROOT/engine/.lock"
flock 9   # one build at a time per cache (CI jobs, make targets running in parallel)
if [ "$mode" != force ] && [ -f "$OUT/.complete" ]; then
    echo "engine: reusing cached build $KEY (built by a concurrent run)"
    report --info
    exit 0
fi

TMP="$CACHE_ROOT/engine/.tmp-$KEY-$$"
rm -rf "$TMP"
mkdir -p "$TMP/bin"
trap 'rm -rf "$TMP"' EXIT

info() { echo "$*" | tee -a "$TMP/BUILD_INFO"; }
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}'; }

echo "engine: building key $KEY into $OUT ($(go version | cut -d' ' -f3), -p $GO_P)"
info "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(nproc) cores, $(go version | cut -d' ' -f3)," \
    "GOMODCACHE $(du -sh "$(go env GOMODCACHE)" 2>/dev/null | cut -f1 || echo 0) / GOCACHE $(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1 || echo 0) before"

# 1. Pulumi CLI, version from engine/cli/go.mod.
CLI_VERSION=$(cd "$ENGINE_DIR/cli" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)
t=$(date +%s.%N)
(cd "$ENGINE_DIR/cli" && go build -p "$GO_P" -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$CLI_VERSION" \
    -o "$TMP/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
info "pulumi $CLI_VERSION (pkg/v3): $(elapsed "$t") s"

# 2. Python language host (engine/langhost, our own; see its main.go), reporting the Python SDK version.
t=$(date +%s.%N)
(cd "$ENGINE_DIR/langhost" && go build -p "$GO_P" -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$ENGINE_PYSDK_VERSION" \
    -o "$TMP/bin/pulumi-language-python" .)
info "pulumi-language-python (engine/langhost, sdk/v3 $(cd "$ENGINE_DIR/langhost" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/sdk/v3)): $(elapsed "$t") s"

# 3. Scripts from the sdk/v3 module zip of the pinned Python SDK version (hash pinned in versions.env; the go
#    command also checks it against the checksum database).
t=$(date +%s.%N)
SDK_JSON=$(cd "$TMP" && GOFLAGS= go mod download -json "github.com/pulumi/pulumi/sdk/v3@v$ENGINE_PYSDK_VERSION")
SDK_DIR=$(printf '%s' "$SDK_JSON" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
SDK_SUM=$(printf '%s' "$SDK_JSON" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
if [ "$SDK_SUM" != "$ENGINE_PYSDK_ZIP_SUM" ]; then
    echo "engine: sdk/v3@v$ENGINE_PYSDK_VERSION has hash $SDK_SUM, versions.env pins $ENGINE_PYSDK_ZIP_SUM" >&2
    exit 1
fi
install -m 0755 "$SDK_DIR/python/cmd/pulumi-language-python-exec" "$TMP/bin/pulumi-language-python-exec"
install -m 0755 "$SDK_DIR/python/dist/pulumi-resource-pulumi-python" "$TMP/bin/pulumi-resource-pulumi-python"
# The sdk zip no longer ships pulumi-analyzer-policy-python: ours (engine/scripts) runs `python3 -u -m pulumi.policy`.
install -m 0755 "$ENGINE_DIR/scripts/pulumi-analyzer-policy-python" "$TMP/bin/pulumi-analyzer-policy-python"
info "scripts (sdk/v3 v$ENGINE_PYSDK_VERSION zip + engine/scripts): $(elapsed "$t") s"

# 4. OpenStack provider plugin. Pulumi's own (module github.com/pulumi/pulumi-openstack/provider/v5 at the
#    v$ENGINE_OPENSTACK_VERSION release commit) is not served by the module proxy (README.md, "What could not be
#    built"). Built instead: engine/openstack, our bridge build of terraform-provider-openstack v1.54.1 with the
#    tokens and names of pulumi-openstack $ENGINE_OPENSTACK_BRIDGE_VERSION. In a temp copy of the module: build its
#    tfgen, generate the schema, embed it in the provider main, build the provider reporting that version.
t=$(date +%s.%N)
OS_SRC="$TMP/src/openstack"
mkdir -p "$TMP/src" "$TMP/gen" "$TMP/plugins"
cp -R "$ENGINE_DIR/openstack" "$OS_SRC"
# The terraform provider, patched (engine/openstack/patches/*.patch, each says what and why): a copy of the module
# from GOMODCACHE, the patches applied, and a `replace` in the temporary copy of our bridge module pointing at it.
TPO=github.com/terraform-provider-openstack/terraform-provider-openstack
TPO_VERSION=$(cd "$ENGINE_DIR/openstack" && go list -m -f '{{.Version}}' "$TPO")
TPO_DIR=$(cd "$ENGINE_DIR/openstack" && go mod download -json "$TPO@$TPO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -R "$TPO_DIR" "$TMP/src/tpo"
chmod -R u+w "$TMP/src/tpo"
for patch in "$ENGINE_DIR"/openstack/patches/*.patch; do
    [ -e "$patch" ] || continue
    patch --quiet --forward -p1 -d "$TMP/src/tpo" <"$patch" ||
        { echo "engine: $patch does not apply to $TPO $TPO_VERSION" >&2; exit 1; }
    info "patched $TPO $TPO_VERSION with $(basename "$patch")"
done
(cd "$OS_SRC" && go mod edit -replace "$TPO=../tpo")
(cd "$OS_SRC" && go build -p "$GO_P" -trimpath -buildvcs=false -ldflags "-s -w" \
    -o "$TMP/gen/pulumi-tfgen-openstack" ./cmd/pulumi-tfgen-openstack)
t_tfgen=$(elapsed "$t")
"$TMP/gen/pulumi-tfgen-openstack" schema --skip-docs --skip-examples --out "$TMP/gen/schema" >"$TMP/gen/tfgen.log" 2>&1 ||
    { cat "$TMP/gen/tfgen.log" >&2; echo "engine: tfgen schema for engine/openstack failed" >&2; exit 1; }
cp "$TMP/gen/schema/schema.json" "$OS_SRC/cmd/pulumi-resource-openstack/schema.json"
cp "$TMP/gen/schema/schema.json" "$TMP/openstack-schema.json"   # kept beside bin/ for reference and check_sdk.py
t2=$(date +%s.%N)
(cd "$OS_SRC" && go build -p "$GO_P" -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/ha-endpoint/engine/openstack.Version=$ENGINE_OPENSTACK_BRIDGE_VERSION" \
    -o "$TMP/plugins/pulumi-resource-openstack" ./cmd/pulumi-resource-openstack)
# Not in bin/: a pulumi-resource-* on PATH is used by the CLI for ANY requested version of the plugin (with only a
# warning), so a program on another pulumi-openstack SDK would silently get this schema. env.sh installs it into
# PULUMI_HOME under its own version instead.
printf '%s\n' "$ENGINE_OPENSTACK_BRIDGE_VERSION" >"$TMP/openstack-plugin-version"   # read by env.sh
rm -rf "$TMP/src" "$TMP/gen"
info "pulumi-resource-openstack $ENGINE_OPENSTACK_BRIDGE_VERSION (engine/openstack: bridge $(cd "$ENGINE_DIR/openstack" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi-terraform-bridge/v3) + terraform-provider-openstack $(cd "$ENGINE_DIR/openstack" && go list -m -f '{{.Version}}' github.com/terraform-provider-openstack/terraform-provider-openstack); our bridge build, not Pulumi's release) -> plugins/, $(du -m "$TMP/plugins/pulumi-resource-openstack" | cut -f1) MiB: $(elapsed "$t") s (tfgen build $t_tfgen s, provider build $(elapsed "$t2") s)"

# 5. YAML language host (engine/yaml: github.com/pulumi/pulumi-yaml on the pkg/v3 it requires), next to `pulumi`.
t=$(date +%s.%N)
YAML_VERSION=$("$ENGINE_DIR/yaml/build.sh" "$TMP/bin")
info "pulumi-language-yaml $YAML_VERSION (engine/yaml, pkg/v3 $(cd "$ENGINE_DIR/yaml" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)): $(elapsed "$t") s"

# 6. TypeScript SDK generator (engine/codegen: pkg/v3 codegen/nodejs on a schema file; pulumi-language-nodejs, which
#    `pulumi package gen-sdk --language nodejs` needs, is not served by the module proxy: README.md).
t=$(date +%s.%N)
CODEGEN_PKG_VERSION=$("$ENGINE_DIR/codegen/build.sh" "$TMP/bin")
info "ha-gen-sdk-nodejs (engine/codegen, pkg/v3 $CODEGEN_PKG_VERSION codegen/nodejs): $(elapsed "$t") s"

info "total build (cold only if the Go caches were empty): $(elapsed "$t_start") s"
touch "$TMP/.complete"
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
ln -sfn "$KEY" "$CACHE_ROOT/engine/current"
report
