# Source me (bash): the environment every Pulumi command of this project runs in on this machine.
#   the engine built by engine/build.sh (PATH, PULUMI_HOME: no download ever),
#   a local file state backend under the cache, the passphrase secrets provider,
#   the local cloud's clouds.yaml (`make localcloud`) unless OS_CLIENT_CONFIG_FILE / OS_CLOUD point elsewhere.
_ha_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export HA_ENDPOINT_CACHE=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
. "$_ha_root/engine/env.sh"
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$HA_ENDPOINT_CACHE/pulumi-state}
case "$PULUMI_BACKEND_URL" in file://*) mkdir -p "${PULUMI_BACKEND_URL#file://}" ;; esac
# Secrets: no passphrase is set here. scripts/stack.sh gives the dev stack (a local cloud, nothing secret) its
# well-known one; any other stack needs PULUMI_CONFIG_PASSPHRASE(_FILE) or a secrets provider of its own.
export OS_CLIENT_CONFIG_FILE=${OS_CLIENT_CONFIG_FILE:-${HA_ENDPOINT_STATE:-$HA_ENDPOINT_CACHE/localcloud}/clouds.yaml}
export OS_CLOUD=${OS_CLOUD:-localcloud}
unset _ha_root
