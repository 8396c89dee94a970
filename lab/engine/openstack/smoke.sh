#!/usr/bin/env bash
# Smoke test of the OpenStack provider plugin (lab/engine/openstack, our bridge build) against the local cloud
# (lab/localcloud/, a real Keystone/Neutron/Octavia/Designate on 127.0.0.1), under the real CLI + our language host:
#   1. a tiny Python Pulumi program: invoke networking.getSubnet("cp-az1"), an Octavia load balancer on it (az1,
#      tagged) and an HTTP listener;
#   2. `pulumi up`; openstacksdk then reads both back: ACTIVE, right subnet, AZ, tags, port;
#   3. `pulumi preview --expect-no-changes` (the provider's Read/Diff agree with what it created);
#   4. `pulumi destroy`; openstacksdk checks the load balancer is gone.
# File backend in a temp dir, passphrase secrets, nothing downloaded (plugin download disabled by lab/engine/env.sh).
#
# Python: OS_SMOKE_PY, a virtualenv python with pulumi, openstacksdk and pulumi-openstack==<plugin version>
# (lab/engine/build.sh writes the plugin version next to bin/). Default: .venv/bin/python if its pulumi-openstack is that
# version, else a virtualenv made (once) under the cache: <cache>/engine-venvs/pulumi-openstack-<version>, with
# requirements.txt's pulumi and openstacksdk pins and pulumi-openstack==<version> (pip, from PyPI).
# Cloud: OS_CLIENT_CONFIG_FILE / OS_CLOUD (default: the local cloud's clouds.yaml, cloud "localcloud").
# Exit: 0 all passed, 1 a check failed, 2 no usable Python, 3 the cloud does not answer (SKIP).
set -euo pipefail

OS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ENGINE_DIR=$(cd "$OS_DIR/.." && pwd)
REPO=$(cd "$ENGINE_DIR/.." && pwd)
CACHE=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN{printf "%.1f", e-s}'; }
fail() { echo "openstack smoke: FAIL: $*" >&2; exit 1; }
pass() { echo "openstack smoke: ok   $*"; }
t_all=$(now)

build_out=$("$ENGINE_DIR/build.sh") || { echo "$build_out"; exit 1; }
echo "$build_out" | sed -n 1p
# shellcheck source=lab/engine/env.sh
. "$ENGINE_DIR/env.sh"
[ -x "$HA_ENGINE_BIN/../plugins/pulumi-resource-openstack" ] || fail "no plugins/pulumi-resource-openstack beside $HA_ENGINE_BIN"
VERSION=$(cat "$HA_ENGINE_BIN/../openstack-plugin-version")
plugins=$(pulumi plugin ls 2>/dev/null || true)
printf '%s\n' "$plugins" | grep -qE "^openstack +resource +$VERSION " ||
    fail "plugin resource openstack $VERSION is not installed in $PULUMI_HOME (lab/engine/env.sh installs it)"

# Python with the SDK matching the plugin.
sdk_version() { "$1" -c 'import importlib.metadata as m; print(m.version("pulumi-openstack"))' 2>/dev/null || true; }
PY=${OS_SMOKE_PY:-}
if [ -z "$PY" ] && [ -x "$REPO/.venv/bin/python" ] && [ "$(sdk_version "$REPO/.venv/bin/python")" = "$VERSION" ]; then
    PY="$REPO/.venv/bin/python"
fi
if [ -z "$PY" ]; then
    VENV_DIR="$CACHE/engine-venvs/pulumi-openstack-$VERSION"
    if [ "$(sdk_version "$VENV_DIR/bin/python")" != "$VERSION" ]; then
        echo "openstack smoke: making $VENV_DIR (pulumi-openstack==$VERSION)"
        rm -rf "$VENV_DIR"
        python3 -m venv "$VENV_DIR"
        pins=$(grep -E '^(pulumi|openstacksdk)==' "$REPO/requirements.txt" | tr '\n' ' ')
        # shellcheck disable=SC2086
        "$VENV_DIR/bin/pip" install -q $pins "pulumi-openstack==$VERSION" >"$VENV_DIR.log" 2>&1 ||
            { cat "$VENV_DIR.log" >&2; rm -rf "$VENV_DIR"; echo "openstack smoke: pip install failed" >&2; exit 2; }
    fi
    PY="$VENV_DIR/bin/python"
fi
case "$PY" in /*) ;; *) PY="$REPO/$PY" ;; esac
[ "$(sdk_version "$PY")" = "$VERSION" ] ||
    { echo "openstack smoke: $PY has pulumi-openstack '$(sdk_version "$PY")', the plugin is $VERSION" >&2; exit 2; }
"$PY" -c 'import pulumi, openstack' 2>/dev/null ||
    { echo "openstack smoke: $PY lacks pulumi or openstacksdk" >&2; exit 2; }
echo "openstack smoke: python $PY (pulumi $("$PY" -c 'import importlib.metadata as m; print(m.version("pulumi"))'), pulumi-openstack $VERSION), plugin resource openstack $VERSION (PULUMI_HOME)"

export OS_CLIENT_CONFIG_FILE=${OS_CLIENT_CONFIG_FILE:-$CACHE/localcloud/clouds.yaml}
export OS_CLOUD=${OS_CLOUD:-localcloud}
if ! "$PY" -c 'import openstack; openstack.connect().load_balancer.get("/")' >/dev/null 2>&1; then
    echo "openstack smoke: SKIP: cloud '$OS_CLOUD' ($OS_CLIENT_CONFIG_FILE) does not answer (lab/localcloud/up?)"
    exit 3
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ha-os-smoke.XXXXXX")
mkdir -p "$WORK/proj" "$WORK/state"
export PULUMI_BACKEND_URL="file://$WORK/state" PULUMI_CONFIG_PASSPHRASE=smoke PULUMI_PYTHON_CMD="$PY"
STACK="s$$"
NAME="ha-os-smoke-$$"
created=0
cleanup() {
    rc=$?
    if [ "$created" = 1 ]; then
        echo "openstack smoke: cleaning up: pulumi destroy" >&2
        (cd "$WORK/proj" && pulumi destroy --yes --skip-preview --non-interactive >"$WORK/cleanup.out" 2>&1) ||
            { cat "$WORK/cleanup.out" >&2; echo "openstack smoke: cleanup failed: look for $NAME" >&2; }
    fi
    rm -f "$PULUMI_HOME/workspaces/"*"-$(printf '%s' "$WORK/proj/Pulumi.yaml" | sha1sum | cut -c1-40)-workspace.json"
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

cat >"$WORK/proj/Pulumi.yaml" <<EOF
name: ha-os-smoke
runtime:
  name: python
EOF
cat >"$WORK/proj/__main__.py" <<EOF
import pulumi
import pulumi_openstack as openstack

subnet = openstack.networking.get_subnet(name="cp-az1")
lb = openstack.loadbalancer.LoadBalancer(
    "lb", name="$NAME", vip_subnet_id=subnet.id, availability_zone="az1", tags=["ha-os-smoke"],
    description="lab/engine/openstack smoke")
listener = openstack.loadbalancer.Listener(
    "listener", name="$NAME", loadbalancer_id=lb.id, protocol="HTTP", protocol_port=8080, tags=["ha-os-smoke"])
pulumi.export("subnet_id", subnet.id)
pulumi.export("lb_id", lb.id)
pulumi.export("vip_address", lb.vip_address)
pulumi.export("listener_id", listener.id)
EOF
cd "$WORK/proj"
pulumi stack init "$STACK" --non-interactive >/dev/null 2>&1

t=$(now)
pulumi preview --non-interactive >"$WORK/preview.out" 2>&1 || { cat "$WORK/preview.out"; fail "preview"; }
grep -qE '\+ +3 to create' "$WORK/preview.out" || { cat "$WORK/preview.out"; fail "preview: expected 3 to create"; }
pass "preview: getSubnet invoke + load balancer + listener planned ($(since "$t") s)"

t=$(now)
created=1
pulumi up --yes --skip-preview --non-interactive >"$WORK/up.out" 2>&1 || { cat "$WORK/up.out"; fail "up"; }
pass "up ($(since "$t") s)"

pulumi stack output --json >"$WORK/outputs.json"
"$PY" - "$WORK/outputs.json" "$NAME" <<'EOF' || fail "the cloud does not have what pulumi up reported"
import json, sys
import openstack
out = json.load(open(sys.argv[1]))
name = sys.argv[2]
conn = openstack.connect()
subnet = conn.network.find_subnet("cp-az1")
assert out["subnet_id"] == subnet.id, (out["subnet_id"], subnet.id)
lb = conn.load_balancer.get_load_balancer(out["lb_id"])
assert (lb.name, lb.provisioning_status, lb.vip_subnet_id, lb.availability_zone, lb.vip_address) == \
    (name, "ACTIVE", subnet.id, "az1", out["vip_address"]), lb
assert lb.tags == ["ha-os-smoke"], lb.tags
listener = conn.load_balancer.get_listener(out["listener_id"])
assert (listener.provisioning_status, listener.protocol, listener.protocol_port) == ("ACTIVE", "HTTP", 8080), listener
assert [l["id"] for l in lb.listeners] == [listener.id], lb.listeners
print(f"openstack smoke: ok   openstacksdk: load balancer {lb.id} ACTIVE/{lb.operating_status} vip {lb.vip_address}"
      f" on cp-az1 in az1, listener HTTP:8080 ACTIVE")
EOF

t=$(now)
pulumi preview --expect-no-changes --non-interactive >"$WORK/noop.out" 2>&1 ||
    { cat "$WORK/noop.out"; fail "preview --expect-no-changes after up"; }
pass "preview --expect-no-changes ($(since "$t") s)"

t=$(now)
lb_id=$(pulumi stack output lb_id)
pulumi destroy --yes --skip-preview --non-interactive >"$WORK/destroy.out" 2>&1 || { cat "$WORK/destroy.out"; fail "destroy"; }
created=0
"$PY" - "$lb_id" <<'EOF' || fail "load balancer still there after destroy"
import sys
import openstack
lb = openstack.connect().load_balancer.find_load_balancer(sys.argv[1], ignore_missing=True)
assert lb is None or lb.provisioning_status == "DELETED", lb
EOF
pass "destroy: load balancer and listener gone ($(since "$t") s)"
if grep -qi 'downloading plugin' "$WORK"/*.out; then fail "a plugin download was attempted"; fi
echo "openstack smoke: all checks passed ($(since "$t_all") s)"
