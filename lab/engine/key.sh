# Sourced by lab/engine/build.sh and lab/engine/env.sh (POSIX sh). The engine is built in parts, each cached under a key of
# its own, so that a change to one part (a patch of the OpenStack plugin, a new binary) rebuilds that part only, never
# the CLI. See lab/engine/README.md, "Parts and cache keys".
#
#   ENGINE_PARTS                         the parts, in build order: each is a directory lab/engine/<part>/ with a build.sh
#   ENGINE_TOOL_PARTS, ENGINE_K8S_PARTS  parts built on request, not assembled (below)
#   engine_part_key <engine dir> <part> [<variant>]
#                                        16 hex: the Go version, build-flags.env and the part's inputs (below)
#   engine_key <engine dir>              16 hex: the assembled engine (bin/ on PATH): every part's key, plus
#                                        build.sh/key.sh (assembly only) and the Python SDK pins of requirements.txt
#
# A part's inputs: every file of lab/engine/<part>/ except docs (*.md), editor backups and, for openstack, what only
# tests or documents the build (smoke.sh, check_sdk.py, .gitignore) and its patches (read by the opt-in variant
# openstack-patched only); plus versions.env and the SDK pins of requirements.txt for the parts that read them
# (langhost, scripts, openstack; the pulumi-kubernetes pin for kubernetes). A new part: add its directory with a
# build.sh (README.md says what it gets and prints) and its name to ENGINE_PARTS; nothing else.
ENGINE_PARTS="cli langhost scripts openstack"
# The other languages' tools (issue 12): the YAML language host and the TypeScript SDK generator. Keyed like the parts
# above but not assembled into the engine: `make up` of the Python dev stack never needs them (issue 53: build nothing
# the run does not need; 71 CPU-s and 162 s of a fresh machine's `make up`, 2026-12-05). `lab/engine/build.sh --tools`
# builds them (`make test` does at set-up); env.sh puts each built one's bin/ on PATH.
ENGINE_TOOL_PARTS="yaml codegen"
# The Kubernetes parts (issue 28): the local cluster's etcd, kube-apiserver and kubectl, the pulumi-kubernetes
# provider plugin and (issue 48) Cluster API's conversion webhook for Cluster. Cached and keyed like the parts above
# but not assembled into the engine (`make up` never waits for them): `lab/engine/build.sh --k8s` builds them, under a
# lock of their own so that they build beside the engine.
ENGINE_K8S_PARTS="etcd kube kubernetes capi-conversion"

engine_part_inputs() {
    case "$1" in
        openstack) find openstack -type f \( -name '*.go' -o -name go.mod -o -name go.sum -o -name build.sh \)
            [ "${2:-}" != patched ] || find openstack/patches -type f -name '*.patch' ;;
        *) find "$1" -type f ! -name '*~' ! -name '*.md' ;;
    esac
    case "$1" in
        langhost | scripts | openstack) echo versions.env ;;
    esac
}

engine_part_key() {
    (
        cd "$1" || exit 1
        echo "${ENGINE_GO_VERSION:-$(go version)}"
        [ -z "${3:-}" ] || echo "variant $3"
        case "$2" in
            langhost | scripts | openstack)
                grep -E '^(pulumi|pulumi-openstack)==' ../../requirements.txt 2>/dev/null || true ;;
            kubernetes) grep -E '^pulumi-kubernetes==' ../../requirements.txt 2>/dev/null || true ;;
        esac
        { engine_part_inputs "$2" "${3:-}"; echo build-flags.env; } 2>/dev/null | LC_ALL=C sort | xargs sha256sum
    ) | sha256sum | cut -c1-16
}

engine_key() {
    (
        cd "$1" || exit 1
        dir=$(pwd)
        ENGINE_GO_VERSION=$(go version)
        export ENGINE_GO_VERSION
        for part in $ENGINE_PARTS; do
            echo "$part $(engine_part_key "$dir" "$part")"
        done
        grep -E '^(pulumi|pulumi-openstack|pulumi-policy)==' ../../requirements.txt 2>/dev/null || true
        sha256sum build.sh key.sh
    ) | sha256sum | cut -c1-16
}
