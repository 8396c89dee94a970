#!/usr/bin/env bash
# A peer's test suite (issue 24, item 4): terraform-provider-openstack's OWN acceptance tests (the version of
# lab/engine/openstack/go.mod, v3.4.0) for load balancers, DNS, floating IPs and security groups, run against a local
# cloud twice: on the pristine module ("unpatched") and with lab/engine/openstack/patches/*.patch applied ("patched", as
# lab/engine/openstack/build.sh applies them). Prints one table: test, result per build, seconds, why it did not pass;
# then the totals and every test the patches turned from passing to not passing. Not part of `make test` (slow).
#
#   HA_ENDPOINT_STATE=<state dir of a running local cloud> lab/engine/peer/run.sh
#     PEER_TESTS=<regex>              go test -run (default: PEER_DEFAULT_TESTS below)
#     PEER_BUILDS="unpatched patched" the builds to run, in this order
#     PEER_RESULTS=<dir>              where the results go (default: $PEER/results)
#     ENGINE_GO_P=2                   go build -p
#
# Into ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/peer/:
#   terraform-1.9.8/terraform  Terraform CLI built once from the Go module hashicorp/terraform@v1.9.8. The module zip
#       lacks the nested modules of eight remote-state backends (internal/backend/remote-state/{azure,consul,cos,gcs,
#       kubernetes,oss,pg,s3} and internal/legacy have their own go.mod, so the zip leaves them out, and the proxy
#       serves no version of them): they are dropped from internal/backend/init/init.go and go.mod. The tests use
#       local state only. BUILD_INFO beside it: build seconds.
#   openstack-<build>-<key>/   the provider module copy (src/) and its compiled test package (openstack.test, with
#       COMPILE_SECONDS), key = sha256 of the patches applied + Go version: reused until a patch changes.
#   results/<build>.json       test2json of the run; results/<build>.txt its verbose output; results/table.md.
# The tests run as user `demo` (cloud_env.py: precheck testAccPreCheckNonAdminOnly wants OS_USERNAME=demo) with
# TF_ACC=1 and TF_ACC_TERRAFORM_PATH; the provider runs in the test process (ProviderFactories: the framework gives
# terraform TF_REATTACH_PROVIDERS), so `terraform init` installs nothing and no registry is asked.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ENGINE=$(cd "$HERE/.." && pwd)
STATE=${HA_ENDPOINT_STATE:-${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/localcloud}
PEER=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/peer
RESULTS=${PEER_RESULTS:-$PEER/results}
P=${ENGINE_GO_P:-2}
TF_VERSION=1.9.8
TPO=github.com/terraform-provider-openstack/terraform-provider-openstack/v3
# lb v2 (load balancer, listener, pool, member, members; no monitor test exists in v3.4.0, monitors are exercised by
# Member_monitor), DNS (zone, recordset), floating IPs, security groups (+ rules), and the data sources of each.
PEER_DEFAULT_TESTS='^(TestAccLBV2(LoadBalancer|Listener|ListenerConfig|Pool|Member|Members|Monitor)_|TestAccDataSourceLBV2(LoadBalancer|Listener|Pool)_|TestAccDNSV2(Zone|RecordSet)_|TestAccOpenStackDNSZoneV2DataSource_|TestAccNetworkingV2FloatingIP(Associate)?_|TestAccOpenStackNetworkingFloatingIPV2DataSource_|TestAccNetworkingV2SecGroup(Rule)?_|TestAccOpenStackNetworkingSecGroupV2DataSource_)'
TESTS=${PEER_TESTS:-$PEER_DEFAULT_TESTS}
BUILDS=${PEER_BUILDS:-unpatched patched}
GOFLAGS_PEER="-mod=mod -trimpath -buildvcs=false"
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN{printf "%.1f", e-s}'; }
mkdir -p "$RESULTS"

# 1. Terraform CLI from its Go module.
TF="$PEER/terraform-$TF_VERSION/terraform"
if [ ! -x "$TF" ]; then
    t=$(now)
    work=$(mktemp -d "$PEER/.terraform.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    dir=$(cd "$work" && go mod download -json "github.com/hashicorp/terraform@v$TF_VERSION" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    cp -R "$dir" "$work/src" && chmod -R u+w "$work/src"
    gone='azure|consul|cos|gcs|kubernetes|oss|pg|s3'
    sed -i -E "/remote-state\/($gone)\"$/d; /backend(Azure|Consul|Cos|GCS|Kubernetes|OSS|Pg|S3)\.New\(\)/d" \
        "$work/src/internal/backend/init/init.go"
    for m in ${gone//|/ }; do
        (cd "$work/src" && go mod edit -droprequire "github.com/hashicorp/terraform/internal/backend/remote-state/$m" \
            -dropreplace "github.com/hashicorp/terraform/internal/backend/remote-state/$m")
    done
    (cd "$work/src" && go mod edit -droprequire github.com/hashicorp/terraform/internal/legacy \
        -dropreplace github.com/hashicorp/terraform/internal/legacy)
    echo "peer: building terraform v$TF_VERSION from its Go module (go build -p $P; minutes when cold)"
    (cd "$work/src" && GOFLAGS="$GOFLAGS_PEER" go build -p "$P" \
        -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" -o "$work/terraform" .)
    mkdir -p "$(dirname "$TF")"
    echo "terraform v$TF_VERSION from github.com/hashicorp/terraform@v$TF_VERSION ($(go version | cut -d' ' -f3))," \
        "without 8 remote-state backends; build $(since "$t") s" >"$(dirname "$TF")/BUILD_INFO"
    mv "$work/terraform" "$TF"
    rm -rf "$work"; trap - EXIT
fi
echo "peer: $(TF_CLI_CONFIG_FILE=/dev/null "$TF" version | head -1) ($(cat "$(dirname "$TF")/BUILD_INFO"))"

# 2. The provider module, unpatched and patched, and its compiled test package.
TPO_VERSION=$(cd "$ENGINE/openstack" && go list -m -f '{{.Version}}' "$TPO")
TPO_DIR=$(cd "$ENGINE/openstack" && go mod download -json "$TPO@$TPO_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
prepare() {  # <build> -> prints the build's dir (src/ + openstack.test)
    local build=$1 patches=() key dir t
    [ "$build" = patched ] && patches=("$ENGINE"/openstack/patches/*.patch)
    key=$({ go version; echo "$TPO@$TPO_VERSION"; cat "${patches[@]}" /dev/null; } | sha256sum | cut -c1-12)
    dir="$PEER/openstack-$build-$key"
    if [ ! -x "$dir/openstack.test" ]; then
        rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
        cp -R "$TPO_DIR" "$dir.tmp/src" && chmod -R u+w "$dir.tmp/src"
        for patch in "${patches[@]}"; do
            patch --quiet --forward -p1 -d "$dir.tmp/src" <"$patch" >&2 ||
                { echo "peer: $patch does not apply to $TPO $TPO_VERSION" >&2; exit 1; }
        done
        echo "peer: compiling $TPO $TPO_VERSION ./openstack tests, $build (${#patches[@]} patches)" >&2
        t=$(now)
        (cd "$dir.tmp/src" && GOFLAGS="$GOFLAGS_PEER" go test -p "$P" -c -o "$dir.tmp/openstack.test" ./openstack) >&2
        since "$t" >"$dir.tmp/COMPILE_SECONDS"
        rm -rf "$dir" && mv "$dir.tmp" "$dir"
    fi
    echo "$dir"
}
declare -A DIRS
for build in $BUILDS; do
    DIRS[$build]=$(prepare "$build")
    echo "peer: $build: test package compiled in $(cat "${DIRS[$build]}/COMPILE_SECONDS") s (${DIRS[$build]})"
done

# 3. The cloud: user demo and the prechecks' variables.
[ -f "$STATE/clouds.yaml" ] || { echo "peer: no $STATE/clouds.yaml: start the local cloud (lab/localcloud/up)" >&2; exit 1; }
unset OS_CLOUD OS_CLIENT_CONFIG_FILE
eval "$(/usr/bin/python3 "$HERE/cloud_env.py" "$STATE")"
export TF_ACC=1 TF_ACC_TERRAFORM_PATH="$TF" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
# Our own CLI configuration: providers install only from an empty directory, so a test that asked for any provider
# other than the in-process one would fail at once instead of reaching for registry.terraform.io.
mkdir -p "$PEER/no-providers"
printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$PEER/no-providers" >"$PEER/terraformrc"
export TF_CLI_CONFIG_FILE="$PEER/terraformrc"
echo "peer: cloud $OS_AUTH_URL as $OS_USERNAME/$OS_PROJECT_NAME; project demo holds" \
    "$(/usr/bin/python3 "$HERE/cloud_env.py" "$STATE" --count)"

# 4. The runs, one build after the other (the provider's tests are sequential: resource.Test, no t.Parallel).
args=()
for build in $BUILDS; do
    dir=${DIRS[$build]}
    echo "peer: $build: running $TESTS"
    export TF_ACC_TEMP_DIR="$PEER/tmp-$build"
    rm -rf "$TF_ACC_TEMP_DIR" && mkdir -p "$TF_ACC_TEMP_DIR"
    t=$(now)
    (cd "$dir/src/openstack" && go tool test2json -t -p openstack "$dir/openstack.test" -test.v=test2json \
        -test.run "$TESTS" -test.timeout 120m) >"$RESULTS/$build.json" || true
    wall=$(since "$t")
    /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        ev = json.loads(line)
        if ev["Action"] == "output": sys.stdout.write(ev["Output"])' "$RESULTS/$build.json" >"$RESULTS/$build.txt"
    echo "peer: $build: run $wall s ($RESULTS/$build.json, .txt); project demo holds" \
        "$(/usr/bin/python3 "$HERE/cloud_env.py" "$STATE" --count)"
    echo "$build compile $(cat "$dir/COMPILE_SECONDS") s, run $wall s" >"$RESULTS/$build.time"
    args+=("$build=$RESULTS/$build.json")
done

# 5. The table.
/usr/bin/python3 "$HERE/table.py" "${args[@]}" | tee "$RESULTS/table.md"
