#!/usr/bin/env bash
# Build (or reuse) the Pulumi engine for ha-endpoint from Go modules: see lab/engine/README.md.
#
#   lab/engine/build.sh                 build what is missing, assemble, print sizes (and timings when something was built)
#   lab/engine/build.sh --bin-dir       print the bin dir of the build matching this checkout (exit 1 if not built yet)
#   lab/engine/build.sh --force         rebuild every part, even those the cache has
#   lab/engine/build.sh --part <part>   build (or reuse) one part and print its cache dir; <part> is one of ENGINE_PARTS
#                                   (key.sh) or a variant: openstack-patched (the plugin with openstack/patches/,
#                                   opt-in: the engine's own plugin is unpatched, as users run it)
#   lab/engine/build.sh --tools         build (or reuse) the engine and the other languages' tools (ENGINE_TOOL_PARTS:
#                                   pulumi-language-yaml, ha-gen-sdk-nodejs), and print the tools' part dirs, one per
#                                   line (env.sh puts their bin/ on PATH)
#   lab/engine/build.sh --k8s           build (or reuse) the Kubernetes parts (ENGINE_K8S_PARTS: etcd, kube-apiserver +
#                                   kubectl, the pulumi-kubernetes plugin) and print their cache dirs, one per line;
#                                   --part takes them one by one. Their own lock: they build beside the engine.
#
# The engine is built in parts (ENGINE_PARTS in key.sh: cli langhost scripts openstack), each by its own
# lab/engine/<part>/build.sh and cached under a key of its own:
#   ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/engine/parts/<part>-<part key>/   (bin/, and e.g. plugins/)
# then assembled (hard links) into the cache's engine/<key>/bin, <key> = the part keys + this script + key.sh. A change to one
# part rebuilds that part only. On a cold cache the module downloads of all missing parts start at once, in the
# background, while the first part compiles. Needs only Go and the Go module proxy; -p ${ENGINE_GO_P:-2}.
set -euo pipefail

ENGINE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lab/engine/key.sh
. "$ENGINE_DIR/key.sh"
# shellcheck source=lab/engine/build-flags.env
. "$ENGINE_DIR/build-flags.env"

CACHE_ROOT=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# The compiler's garbage collector runs a quarter as often (GOGC 400 for every go process of the build): 12% less CPU
# for a part compiled from an empty build cache, its peak memory 465 -> 687 MiB (lab/bench/engine_gogc_figures.py, part
# yaml, 2026-12-03: 110.7 -> 97.8 CPU-s). Not in the parts' keys: the binaries are the same.
export GOGC=${GOGC:-400}
ENGINE_GO_VERSION=$(go version)
export ENGINE_GO_VERSION ENGINE_GO_P=${ENGINE_GO_P:-2}
KEY=$(engine_key "$ENGINE_DIR")
OUT="$CACHE_ROOT/engine/$KEY"
PARTS="$CACHE_ROOT/engine/parts"

mode=build
part_arg=""
case "${1:-}" in
    --bin-dir) mode=bindir ;;
    --force) mode=force ;;
    --part) mode=part; part_arg=${2:?usage: $0 --part <part>} ;;
    --k8s) mode=k8s ;;
    --tools) mode=tools ;;
    "") ;;
    *) echo "usage: $0 [--bin-dir|--force|--part <part>|--tools|--k8s]" >&2; exit 2 ;;
esac

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}'; }

report() {
    # Sizes of what is in the cache; with --info also what was recorded when it was built.
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

# part_name <part> [<variant>] -> the cache dir name of a part: <part>[-<variant>]-<part key>
part_dir() {
    local name=$1${2:+-$2}
    echo "$PARTS/$name-$(engine_part_key "$ENGINE_DIR" "$1" "${2:-}")"
}

# cold_estimate <part>: about how long a part takes with empty Go caches on 2 cores (measured 2026-12-02 on a fresh
# machine, the local cloud installing beside it: cli 761 s wall, openstack 145 s, langhost 58 s, yaml 35 s)
cold_estimate() {
    case $1 in
        cli) echo "about 10-13 min when the Go caches are empty; the other parts build beside it" ;;
        openstack) echo "about 2-3 min cold" ;;
        langhost | yaml) echo "about 1 min cold" ;;
        etcd | kube | kubernetes | capi-conversion) echo "a few minutes cold (the Kubernetes parts)" ;;
        *) echo "seconds" ;;
    esac
}

# build_part <part> [<variant>]: build one part into its cache dir unless it is there (or mode=force).
build_part() {
    local part=$1 variant=${2:-} dir tmp timing status
    dir=$(part_dir "$part" "$variant")
    if [ "$mode" != force ] && [ -f "$dir/.complete" ]; then return 0; fi
    tmp="$PARTS/.tmp-$(basename "$dir")-$$"
    rm -rf "$tmp"
    mkdir -p "$tmp/bin"
    echo "engine: building part ${part}${variant:+ ($variant)} -> $(basename "$dir") ($(cold_estimate "$part"))"
    local -a env=(ENGINE_PART_OUT="$tmp" GOFLAGS="$ENGINE_GOFLAGS")
    [ "$variant" != patched ] || env+=(ENGINE_OPENSTACK_PATCHES="$ENGINE_DIR/openstack/patches")
    status=0
    # bash's `time` (wall, user and system CPU of the part's build and its children) goes to $tmp/.time; the part's
    # own stderr still reaches ours through fd 3; its stdout (what it built) goes to its BUILD_INFO.
    { TIMEFORMAT='%R %U %S'; time env "${env[@]}" "$ENGINE_DIR/$part/build.sh" "$tmp/bin" >"$tmp/.stdout" 2>&3; } \
        3>&2 2>"$tmp/.time" || status=$?
    if [ "$status" != 0 ]; then
        cat "$tmp/.stdout" >&2
        rm -rf "$tmp"
        echo "engine: part $part failed (exit $status)" >&2
        exit 1
    fi
    read -r wall user sys <"$tmp/.time"
    timing=$(awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN{printf "%.1f s (CPU %.1f s)", w, u+s}')
    # BUILD_INFO: the part's last line (what it built) with the timing first, then its other lines.
    { echo "${part}${variant:+-$variant}: $(tail -n 1 "$tmp/.stdout"): $timing"; sed '$d' "$tmp/.stdout"; } >"$tmp/BUILD_INFO"
    sed 's/^/  /' "$tmp/BUILD_INFO"
    rm -f "$tmp/.stdout" "$tmp/.time"
    rmdir "$tmp/bin" 2>/dev/null || true   # a part with nothing for PATH (openstack)
    touch "$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir"
}

# build_beside "<chain>" <part>...: build the parts, those of <chain> (the largest first, then the parts that compile
# the same module versions) one after another in the background and the others one after another beside them, so
# that both cores work on a cold cache (issue 53: the CLI's compile and link ran mostly on one core, 586 s wall for
# 607 CPU-s on 2 cores, 2026-12-01; kube-apiserver's likewise). A part of the chain starts once the one before it is
# built, so it finds their shared packages compiled in GOCACHE: the Python language host, on the CLI's sdk/v3,
# took 139 CPU-s built beside the CLI on a fresh machine (2026-12-05) and 23 after it (2026-11-25). Their lines may
# interleave; each part's own lines name it. A part that fails stops the chain in the background too.
build_beside() {
    local chain=" $1 " pid="" part
    shift
    local -a background=() rest=()
    for part in "$@"; do
        case "$chain" in *" $part "*) background+=("$part") ;; *) rest+=("$part") ;; esac
    done
    if [ "${#rest[@]}" -eq 0 ]; then rest=("${background[@]}"); background=(); fi   # nothing to build beside
    if [ "${#background[@]}" -gt 0 ]; then
        (for part in "${background[@]}"; do build_part "$part"; done) &
        pid=$!
        trap "kill $pid 2>/dev/null || true" EXIT
    fi
    for part in "${rest[@]}"; do build_part "$part"; done
    if [ -n "$pid" ] && ! wait "$pid"; then
        trap - EXIT; echo "engine: part ${background[*]} failed (see above)" >&2; exit 1
    fi
    trap - EXIT
}

# prefetch <part>...: download the Go modules of these parts in the background (network-bound; the go command's
# module cache is safe for concurrent use), so that later parts' downloads overlap earlier parts' compiles.
prefetch_pids=()
prefetch() {
    local part
    for part in "$@"; do
        [ -f "$ENGINE_DIR/$part/go.mod" ] || continue
        (cd "$ENGINE_DIR/$part" && GOFLAGS=-mod=mod go mod download >/dev/null 2>&1 || true) &
        prefetch_pids+=($!)
    done
}

if [ "$mode" = bindir ]; then
    if [ -f "$OUT/.complete" ]; then echo "$OUT/bin"; exit 0; fi
    echo "engine: no build for key $KEY under $CACHE_ROOT/engine: run lab/engine/build.sh" >&2
    exit 1
fi

# The tools after the engine (under its lock, released when that build ends): codegen compiles the CLI's pkg/v3.
if [ "$mode" = tools ]; then "$ENGINE_DIR/build.sh" >&2; fi

t_start=$(date +%s.%N)
if [ "$mode" = build ] && [ -f "$OUT/.complete" ]; then
    echo "engine: reusing cached build $KEY (nothing to do; $(elapsed "$t_start") s)"
    report --info
    exit 0
fi

mkdir -p "$PARTS"
# One build at a time per cache (CI jobs, make targets running in parallel); the Kubernetes parts under a lock of
# their own, so that `make test` builds them beside the engine (they share no part).
is_k8s_part() { case " $ENGINE_K8S_PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
if [ "$mode" = k8s ] || { [ "$mode" = part ] && is_k8s_part "$part_arg"; }; then
    exec 9>"$CACHE_ROOT/engine/.lock-k8s"
else
    exec 9>"$CACHE_ROOT/engine/.lock"
fi
flock 9

if [ "$mode" = part ]; then
    case "$part_arg" in
        openstack-patched) build_part openstack patched; part_dir openstack patched ;;
        *) case " $ENGINE_PARTS $ENGINE_TOOL_PARTS $ENGINE_K8S_PARTS " in *" $part_arg "*) ;; *)
               echo "engine: no part '$part_arg' (parts: $ENGINE_PARTS, openstack-patched, $ENGINE_TOOL_PARTS," \
                    "$ENGINE_K8S_PARTS)" >&2
               exit 2 ;; esac
           build_part "$part_arg"; part_dir "$part_arg" ;;
    esac
    exit 0
fi

if [ "$mode" = k8s ]; then
    missing=()
    for part in $ENGINE_K8S_PARTS; do [ -f "$(part_dir "$part")/.complete" ] || missing+=("$part"); done
    echo "engine: Kubernetes parts to build: ${missing[*]:-none}" >&2
    if [ "${#missing[@]}" -gt 1 ]; then prefetch "${missing[@]:1}"; fi
    build_beside kube "${missing[@]}" >&2
    for pid in "${prefetch_pids[@]}"; do wait "$pid" || true; done
    for part in $ENGINE_K8S_PARTS; do part_dir "$part"; done
    echo "engine: Kubernetes parts ready: $(elapsed "$t_start") s" >&2
    exit 0
fi

if [ "$mode" = tools ]; then
    for part in $ENGINE_TOOL_PARTS; do [ -f "$(part_dir "$part")/.complete" ] || build_part "$part" >&2; done
    for part in $ENGINE_TOOL_PARTS; do part_dir "$part"; done
    exit 0
fi

if [ "$mode" = build ] && [ -f "$OUT/.complete" ]; then
    echo "engine: reusing cached build $KEY (built by a concurrent run)"
    report --info
    exit 0
fi

missing=()
for part in $ENGINE_PARTS; do
    if [ "$mode" = force ] || [ ! -f "$(part_dir "$part")/.complete" ]; then missing+=("$part"); fi
done
echo "engine: key $KEY ($(echo "$ENGINE_GO_VERSION" | cut -d' ' -f3), -p $ENGINE_GO_P); parts to build: ${missing[*]:-none}"
header="built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(nproc) cores, $(echo "$ENGINE_GO_VERSION" | cut -d' ' -f3),"
header+=" GOMODCACHE $(du -sh "$(go env GOMODCACHE)" 2>/dev/null | cut -f1 || echo 0) /"
header+=" GOCACHE $(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1 || echo 0) before; parts built: ${missing[*]:-none}"
if [ "${#missing[@]}" -gt 1 ]; then prefetch "${missing[@]:1}"; fi
build_beside "cli langhost" "${missing[@]}"   # the language host: on the CLI's sdk/v3
for pid in "${prefetch_pids[@]}"; do wait "$pid" || true; done

# Assemble: every part's bin/ into one bin/ (on PATH), its other files beside it; hard links, copies if need be.
TMP="$CACHE_ROOT/engine/.tmp-$KEY-$$"
rm -rf "$TMP"
mkdir -p "$TMP/bin"
trap 'rm -rf "$TMP"' EXIT
echo "$header" >"$TMP/BUILD_INFO"
for part in $ENGINE_PARTS; do
    dir=$(part_dir "$part")
    for entry in "$dir"/* "$dir"/bin/*; do
        case "$entry" in "$dir/bin" | "$dir/BUILD_INFO" | "$dir/bin/*") continue ;; esac
        target="$TMP/${entry#"$dir"/}"
        if [ -e "$target" ]; then echo "engine: $part and another part both produce ${entry#"$dir"/}" >&2; exit 1; fi
        cp -al "$entry" "$target" 2>/dev/null || cp -a "$entry" "$target"
    done
    { sed -n "1s/\$/ [$(basename "$dir")]/p" "$dir/BUILD_INFO"; sed '1d; s/^/    /' "$dir/BUILD_INFO"; } \
        >>"$TMP/BUILD_INFO"
done
echo "total: $(elapsed "$t_start") s (cold only if the Go caches were empty)" >>"$TMP/BUILD_INFO"
touch "$TMP/.complete"
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
ln -sfn "$KEY" "$CACHE_ROOT/engine/current"
echo "engine: assembled $KEY: $(elapsed "$t_start") s"
report
