# Source me (bash): the environment every Pulumi command of this project runs in on this machine.
#   the engine built by lab/engine/build.sh (PATH, PULUMI_HOME: no download ever),
#   the state backend (STATE=file: a folder under the cache; STATE=swift: the shared bucket), the passphrase
#   secrets provider,
#   the local cloud's clouds.yaml (`make localcloud`) unless OS_CLIENT_CONFIG_FILE / OS_CLOUD point elsewhere.
_ha_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export HA_ENDPOINT_CACHE=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
. "$_ha_root/lab/engine/env.sh"
export PULUMI_SKIP_UPDATE_CHECK=true
# State: STATE=file (the default) keeps it in a folder of this machine; STATE=swift in a bucket of object storage
# behind an S3 API that every member and CI runner of a team shares (docs/team-state.md): its endpoint, bucket and
# region from HA_ENDPOINT_S3_ENDPOINT / _BUCKET / _REGION and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (an EC2
# credential of the cloud's Keystone), else from the local cloud's state-backend.env (its Swift, written by
# lab/localcloud/up). Pulumi's self-managed backend locks every stack update in either (a lock object per run).
case "${STATE:-file}" in
  file)
    export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$HA_ENDPOINT_CACHE/pulumi-state}
    case "$PULUMI_BACKEND_URL" in file://*) mkdir -p "${PULUMI_BACKEND_URL#file://}" ;; esac
    ;;
  swift)
    if [ -z "${HA_ENDPOINT_S3_ENDPOINT:-}" ]; then
      _ha_s3=${HA_ENDPOINT_STATE:-$HA_ENDPOINT_CACHE/localcloud}/state-backend.env
      if [ ! -f "$_ha_s3" ]; then
        echo "scripts/env.sh: STATE=swift needs HA_ENDPOINT_S3_ENDPOINT (and _BUCKET, _REGION, AWS_ACCESS_KEY_ID," \
          "AWS_SECRET_ACCESS_KEY), or the local cloud's $_ha_s3: run \`make localcloud\` (docs/team-state.md)" >&2
        unset _ha_s3 _ha_root
        return 2 2>/dev/null || exit 2
      fi
      . "$_ha_s3"
      unset _ha_s3
    fi
    export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-}"
    # path style (the bucket in the path: Swift's s3api serves no bucket host names here); checksums only where S3
    # requires them (Swift 2.30 sends none: the SDK warned "Response has no supported checksum" on every read)
    export PULUMI_BACKEND_URL="s3://${HA_ENDPOINT_S3_BUCKET:-pulumi-state}?endpoint=${HA_ENDPOINT_S3_ENDPOINT:-}&region=${HA_ENDPOINT_S3_REGION:-RegionOne}&use_path_style=true&response_checksum_validation=when_required"
    ;;
  *) echo "scripts/env.sh: STATE=${STATE} is not a state backend: use STATE=file (a folder here) or STATE=swift" \
       "(the shared bucket, docs/team-state.md)" >&2
     unset _ha_root
     return 2 2>/dev/null || exit 2 ;;
esac
# Secrets: no passphrase is set here. scripts/stack.sh gives the dev stack (a local cloud, nothing secret) its
# well-known one; any other stack needs PULUMI_CONFIG_PASSPHRASE(_FILE) or a secrets provider of its own.
export OS_CLIENT_CONFIG_FILE=${OS_CLIENT_CONFIG_FILE:-${HA_ENDPOINT_STATE:-$HA_ENDPOINT_CACHE/localcloud}/clouds.yaml}
export OS_CLOUD=${OS_CLOUD:-localcloud}
unset _ha_root
