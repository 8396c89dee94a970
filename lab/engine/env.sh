# Source me from the repository root:   . lab/engine/env.sh      (sh, dash, bash, zsh)
# Puts the cached engine build (lab/engine/build.sh) first on PATH and keeps the Pulumi CLI off the
# network: no update check, no plugin download, PULUMI_HOME under the cache. Returns 1 (PATH untouched) if the
# engine for this checkout has not been built yet.
#
# Finds the repository from $HA_ENDPOINT_ROOT, else from the sourcing shell (bash/zsh), else from $PWD.

_ha_engine_dir=""
if [ -n "${HA_ENDPOINT_ROOT:-}" ]; then
    _ha_engine_dir="$HA_ENDPOINT_ROOT/lab/engine"
elif [ -n "${BASH_SOURCE:-}" ]; then
    # shellcheck disable=SC3028,SC3054
    _ha_engine_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
elif [ -n "${ZSH_VERSION:-}" ]; then
    # shellcheck disable=SC2296
    _ha_engine_dir=$(cd "$(dirname "${(%):-%x}")" && pwd)
else
    _ha_engine_dir="$PWD/lab/engine"
fi

if [ ! -f "$_ha_engine_dir/key.sh" ]; then
    echo "lab/engine/env.sh: cannot find the engine dir (tried $_ha_engine_dir); set HA_ENDPOINT_ROOT" >&2
    unset _ha_engine_dir
    return 1 2>/dev/null || exit 1
fi

. "$_ha_engine_dir/key.sh"
HA_ENGINE_CACHE="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}"
HA_ENGINE_BIN="$HA_ENGINE_CACHE/engine/$(engine_key "$_ha_engine_dir")/bin"
# The pulumi-kubernetes plugin: the part `lab/engine/build.sh --k8s` builds (not assembled into the engine), if built.
_ha_k8s_part="$HA_ENGINE_CACHE/engine/parts/kubernetes-$(engine_part_key "$_ha_engine_dir" kubernetes)"
# kubectl (and kube-apiserver) v1.34.4 likewise: on PATH once built (the k8s stack's kubectl line uses it).
_ha_kube_bin="$HA_ENGINE_CACHE/engine/parts/kube-$(engine_part_key "$_ha_engine_dir" kube)/bin"
# The other languages' tools (pulumi-language-yaml, ha-gen-sdk-nodejs): each built one's bin/ (`lab/engine/build.sh
# --tools`; not assembled into the engine).
for _ha_part in $ENGINE_TOOL_PARTS; do
    _ha_dir="$HA_ENGINE_CACHE/engine/parts/$_ha_part-$(engine_part_key "$_ha_engine_dir" "$_ha_part")"
    if [ -f "$_ha_dir/.complete" ]; then
        case ":$PATH:" in *":$_ha_dir/bin:"*) ;; *) PATH="$_ha_dir/bin:$PATH" ;; esac
    fi
done
unset _ha_engine_dir _ha_part _ha_dir

if [ ! -x "$HA_ENGINE_BIN/pulumi" ] || [ ! -f "$HA_ENGINE_BIN/../.complete" ]; then
    echo "lab/engine/env.sh: no engine build at $HA_ENGINE_BIN: run lab/engine/build.sh first" >&2
    unset HA_ENGINE_BIN
    return 1 2>/dev/null || exit 1
fi

case ":$PATH:" in
    *":$HA_ENGINE_BIN:"*) ;;
    *) PATH="$HA_ENGINE_BIN:$PATH" ;;
esac
export PATH HA_ENGINE_BIN HA_ENGINE_CACHE

# Stable, reproducible CLI home (credentials.json = current `pulumi login`, plugins/, workspaces/) instead of ~/.pulumi.
PULUMI_HOME="${HA_ENGINE_PULUMI_HOME:-$HA_ENGINE_CACHE/pulumi-home}"
mkdir -p "$PULUMI_HOME"
export PULUMI_HOME
# No network from the CLI: no version check, never download a plugin (a missing plugin is an immediate error).
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true

# Plugins: the language host (pulumi-language-python + -exec), pulumi-analyzer-policy-python and
# pulumi-resource-pulumi-python (dynamic providers) are found next to `pulumi` / on PATH.
# The OpenStack provider plugin is installed into PULUMI_HOME from a local file when one is available
# (HA_ENGINE_OPENSTACK_BIN, else plugins/pulumi-resource-openstack of the build; deliberately not on PATH, where the
# CLI would use it for any requested version): see lab/engine/README.md.
# Version: HA_ENGINE_OPENSTACK_VERSION, else the one build.sh recorded for its build (openstack-plugin-version).
# (Re)installed whenever the installed file differs from the binary (a rebuild under the same version).
_ha_os_bin="${HA_ENGINE_OPENSTACK_BIN:-$HA_ENGINE_BIN/../plugins/pulumi-resource-openstack}"
_ha_os_ver="${HA_ENGINE_OPENSTACK_VERSION:-$(cat "$HA_ENGINE_BIN/../openstack-plugin-version" 2>/dev/null || true)}"
if [ -x "$_ha_os_bin" ] && [ -n "$_ha_os_ver" ] &&
    ! cmp -s "$_ha_os_bin" "$PULUMI_HOME/plugins/resource-openstack-v$_ha_os_ver/pulumi-resource-openstack"; then
    "$HA_ENGINE_BIN/pulumi" plugin install resource openstack "$_ha_os_ver" --file "$_ha_os_bin" --reinstall \
        >/dev/null 2>&1 ||
        echo "lab/engine/env.sh: could not install $_ha_os_bin as plugin resource openstack $_ha_os_ver" >&2
fi
unset _ha_os_bin _ha_os_ver
# The Kubernetes provider plugin likewise, as `resource kubernetes <version>` (4.25.0, the pulumi-kubernetes pin of
# requirements.txt), when `lab/engine/build.sh --k8s` has built it for this checkout; else a program that
# registers a Kubernetes resource stops at preview naming the missing plugin.
if [ -f "$_ha_k8s_part/.complete" ]; then
    _ha_k8s_ver=$(cat "$_ha_k8s_part/kubernetes-plugin-version")
    if ! cmp -s "$_ha_k8s_part/plugins/pulumi-resource-kubernetes" \
        "$PULUMI_HOME/plugins/resource-kubernetes-v$_ha_k8s_ver/pulumi-resource-kubernetes"; then
        "$HA_ENGINE_BIN/pulumi" plugin install resource kubernetes "$_ha_k8s_ver" \
            --file "$_ha_k8s_part/plugins/pulumi-resource-kubernetes" --reinstall >/dev/null 2>&1 ||
            echo "lab/engine/env.sh: could not install $_ha_k8s_part/plugins/pulumi-resource-kubernetes" >&2
    fi
    unset _ha_k8s_ver
fi
unset _ha_k8s_part
if [ -x "$_ha_kube_bin/kubectl" ]; then
    case ":$PATH:" in *":$_ha_kube_bin:"*) ;; *) export PATH="$_ha_kube_bin:$PATH" ;; esac
fi
unset _ha_kube_bin
