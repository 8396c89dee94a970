# Sourced by engine/build.sh and engine/env.sh (POSIX sh). Defines engine_key <engine dir>: a short hash of
# everything that determines the engine build: wrapper modules, scripts, pinned versions, build script, Go version.
# For engine/openstack only its Go sources, go.mod/go.sum and patches count (not smoke.sh, check_sdk.py, docs).
engine_key() {
    (
        cd "$1" || exit 1
        go version
        grep -E '^(pulumi|pulumi-openstack|pulumi-policy)==' ../requirements.txt 2>/dev/null || true
        { find cli codegen langhost scripts yaml build.sh key.sh versions.env -type f ! -name '*~'
          find openstack -type f \( -name '*.go' -o -name go.mod -o -name go.sum -o -name '*.patch' \); } 2>/dev/null \
            | LC_ALL=C sort | xargs sha256sum
    ) | sha256sum | cut -c1-16
}
