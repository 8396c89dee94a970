#!/usr/bin/env bash
# End-to-end smoke check of the engine build (no cloud needed): in a temp dir, a tiny Python Pulumi project on a
# local file backend, run under the real CLI + our Python language host:
#   1. `pulumi preview` plans stack + component + a dynamic-provider resource (pulumi-resource-pulumi-python);
#   2. `pulumi preview --policy-pack` with a minimal Python pack (pulumi_policy): passes, and a violation fails it;
#   3. `pulumi up`, a second preview with --expect-no-changes, `pulumi destroy` (the pickled dynamic provider runs
#      in its own process);
#   4. no plugin is ever downloaded (PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION, checked in the verbose log);
#   5. the OpenStack provider plugin: previews one openstack resource if the plugin is installed, else SKIP.
#
# Python: ENGINE_SMOKE_PY (a virtualenv's python with requirements.txt installed; default .venv/bin/python, then
# /tmp/engine-venv/bin/python). Exit code 0 = all checks passed (a SKIP is printed, not failed).
set -euo pipefail

ENGINE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$ENGINE_DIR/../.." && pwd)

PY=${ENGINE_SMOKE_PY:-}
if [ -z "$PY" ]; then
    for c in "$REPO/.venv/bin/python" /tmp/engine-venv/bin/python; do
        if [ -x "$c" ]; then PY=$c; break; fi
    done
fi
case "$PY" in /*) ;; "") ;; *) PY="$REPO/$PY" ;; esac
if [ -z "$PY" ] || ! "$PY" -c 'import pulumi, pulumi_policy' 2>/dev/null; then
    echo "smoke: need ENGINE_SMOKE_PY = a virtualenv python with requirements.txt installed (got '${PY:-none}')" >&2
    exit 2
fi
VENV=$("$PY" -c 'import sys; print(sys.prefix)')
PYSDK=$("$PY" -c 'import importlib.metadata as m; print(m.version("pulumi"))')

build_out=$("$ENGINE_DIR/build.sh") || { echo "$build_out"; exit 1; }
echo "$build_out" | sed -n 1p
# shellcheck source=lab/engine/env.sh
. "$ENGINE_DIR/env.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ha-engine-smoke.XXXXXX")
cleanup() {
    # The temp dir, and the per-project workspace files the CLI wrote into PULUMI_HOME for it.
    for d in proj os; do
        rm -f "$PULUMI_HOME/workspaces/"*"-$(printf '%s' "$WORK/$d/Pulumi.yaml" | sha1sum | cut -c1-40)-workspace.json"
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/proj" "$WORK/policy" "$WORK/state"
# A file backend via PULUMI_BACKEND_URL: does not touch the login stored in PULUMI_HOME.
export PULUMI_BACKEND_URL="file://$WORK/state"
export PULUMI_CONFIG_PASSPHRASE=smoke
export PULUMI_PYTHON_CMD="$VENV/bin/python"

fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
pass() { echo "smoke: ok   $*"; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN{printf "%.1f", e-s}'; }

cat > "$WORK/proj/Pulumi.yaml" <<EOF
name: engine-smoke
runtime:
  name: python
  options:
    virtualenv: $VENV
EOF
cat > "$WORK/proj/__main__.py" <<'EOF'
import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class EchoProvider(ResourceProvider):
    def create(self, props):
        return CreateResult(id_="echo-1", outs=dict(props))


class Echo(Resource):
    def __init__(self, name, value, opts=None):
        super().__init__(EchoProvider(), name, {"value": value}, opts)


class Smoke(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("smoke:index:Smoke", name, {}, opts)
        self.echo = Echo(f"{name}-echo", pulumi.Config().get("value") or "hello",
                         pulumi.ResourceOptions(parent=self))
        self.register_outputs({"value": self.echo.value})


s = Smoke("s")
pulumi.export("value", s.echo.value)
EOF
cat > "$WORK/policy/PulumiPolicy.yaml" <<EOF
description: engine smoke policy pack
runtime:
  name: python
  options:
    virtualenv: $VENV
EOF
cat > "$WORK/policy/__main__.py" <<'EOF'
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def no_forbidden_value(args, report_violation):
    if args.resource_type == "pulumi-python:dynamic:Resource" and args.props.get("value") == "forbidden":
        report_violation("smoke policy: value must not be 'forbidden'")


PolicyPack(
    name="engine-smoke",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[ResourceValidationPolicy(name="no-forbidden-value", description="smoke check",
                                       validate=no_forbidden_value)],
)
EOF

cd "$WORK/proj"
echo "smoke: $(pulumi version) ($(command -v pulumi)), Python SDK $PYSDK, venv $VENV"
pulumi stack init dev --non-interactive >/dev/null 2>&1

t=$(now)
pulumi preview --non-interactive --logtostderr -v=7 >"$WORK/preview.out" 2>"$WORK/preview.log" ||
    { cat "$WORK/preview.out"; fail "pulumi preview"; }
grep -q "3 to create" "$WORK/preview.out" || { cat "$WORK/preview.out"; fail "preview did not plan 3 resources"; }
pass "pulumi preview: stack + component + dynamic resource planned ($(since "$t") s wall)"
if grep -iE "downloading plugin|plugin download|Downloading provider" "$WORK/preview.log"; then
    fail "the CLI tried to download a plugin"
fi
pass "no plugin download attempted"

t=$(now)
pulumi preview --non-interactive --policy-pack "$WORK/policy" >"$WORK/policy.out" 2>&1 ||
    { cat "$WORK/policy.out"; fail "preview with the policy pack"; }
grep -q "engine-smoke@v0.0.1" "$WORK/policy.out" || { cat "$WORK/policy.out"; fail "policy pack not reported"; }
pass "pulumi preview --policy-pack: analyzer loaded, no violation ($(since "$t") s wall)"

pulumi config set value forbidden >/dev/null
if pulumi preview --non-interactive --policy-pack "$WORK/policy" >"$WORK/violation.out" 2>&1; then
    cat "$WORK/violation.out"; fail "a mandatory violation did not fail the preview"
fi
grep -q "value must not be 'forbidden'" "$WORK/violation.out" || { cat "$WORK/violation.out"; fail "violation text missing"; }
pass "policy violation fails the preview with its message"
pulumi config rm value >/dev/null

t=$(now)
pulumi up --yes --non-interactive >"$WORK/up.out" 2>&1 || { cat "$WORK/up.out"; fail "pulumi up"; }
[ "$(pulumi stack output value)" = hello ] || fail "stack output value != hello"
pulumi preview --non-interactive --expect-no-changes >"$WORK/noop.out" 2>&1 || { cat "$WORK/noop.out"; fail "second preview shows changes"; }
pulumi destroy --yes --non-interactive >"$WORK/destroy.out" 2>&1 || { cat "$WORK/destroy.out"; fail "pulumi destroy"; }
pass "pulumi up / no-change preview / destroy with a dynamic provider ($(since "$t") s wall)"

# OpenStack provider plugin: found in PULUMI_HOME (installed by env.sh from a local file) or on PATH.
if pulumi plugin ls 2>/dev/null | grep -qE '^openstack +resource +5\.5\.3' || command -v pulumi-resource-openstack >/dev/null; then
    mkdir -p "$WORK/os"
    cat > "$WORK/os/Pulumi.yaml" <<EOF
name: engine-smoke-openstack
runtime:
  name: python
  options:
    virtualenv: $VENV
EOF
    cat > "$WORK/os/__main__.py" <<'EOF'
import pulumi
import pulumi_openstack as openstack

provider = openstack.Provider("p", auth_url="http://127.0.0.1:9/v3", user_name="smoke", password="smoke",
                              tenant_name="smoke", region="RegionOne")
openstack.networking.SecGroup("sg", description="engine smoke", opts=pulumi.ResourceOptions(provider=provider))
EOF
    cd "$WORK/os"
    pulumi stack init dev --non-interactive >/dev/null 2>&1
    pulumi preview --non-interactive >"$WORK/os.out" 2>&1 || { cat "$WORK/os.out"; fail "openstack preview"; }
    pass "openstack provider plugin: preview of one SecGroup"
else
    echo "smoke: SKIP openstack provider plugin 5.5.3: not installed (not buildable from this module proxy, see lab/engine/README.md)"
fi
echo "smoke: all checks passed"
