#!/usr/bin/env bash
# Run a Pulumi command on one stack of this project (default: dev) with the policy pack, on this machine's engine
# and, unless OS_CLOUD says otherwise, the local cloud.
#   scripts/stack.sh up        pulumi up --yes, then print the endpoint's outputs
#   scripts/stack.sh preview   pulumi preview --diff
#   scripts/stack.sh down      pulumi destroy --yes
#   scripts/stack.sh outputs   the outputs as JSON
#   scripts/stack.sh recover   after an update was killed mid-way: drop a dead lock, adopt what it created
# STACK=name selects another stack (its Pulumi.<name>.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: scripts/stack.sh up|preview|down|outputs|recover}
stack=${STACK:-dev}
. scripts/env.sh
pulumi stack select "$stack" --create --non-interactive >/dev/null
case "$action" in
  up)
    pulumi up --yes --non-interactive --skip-preview --policy-pack policies --stack "$stack"
    pulumi stack output --json --stack "$stack"
    ;;
  preview) pulumi preview --diff --non-interactive --policy-pack policies --stack "$stack" ;;
  down) pulumi destroy --yes --non-interactive --skip-preview --stack "$stack" ;;
  outputs) pulumi stack output --json --stack "$stack" ;;
  recover) .venv/bin/python scripts/recover.py --stack "$stack" ;;
  *) echo "unknown action '$action': use up, preview, down, outputs or recover" >&2; exit 2 ;;
esac
