#!/usr/bin/env bash
# Run a Pulumi command on one stack of this project (default: dev) with the policy pack, on this machine's engine
# and, unless OS_CLOUD says otherwise, the local cloud.
#   scripts/stack.sh up        pulumi preview with the policy pack first (stops on a mandatory violation, before
#                              anything changes), then pulumi up --yes, then print the endpoint's outputs and how to
#                              reach it (scripts/reach_endpoint.py: its name, the DNS server, a curl line)
#   scripts/stack.sh preview   pulumi preview --diff
#   scripts/stack.sh down      pulumi destroy --yes
# STACK=keepalived: `up` makes the second node of each zone, starts keepalived on the nodes while `up` runs
# (lab/localcloud/dataplane/keepalived_nodes.py follow) and checks them against the outputs after; `down` stops them.
#   scripts/stack.sh outputs   the outputs as JSON
#   scripts/stack.sh recover   after an update was killed mid-way: drop a dead lock, delete what it created but never
#                              recorded (only objects provably this stack's and not recorded in its state), then
#                              clear the pending creates; `up` creates them again
#   scripts/stack.sh watch     keep the endpoint's A record following its zones' health until Ctrl-C
#                              (ha_endpoint.watch; WATCH_ARGS adds options, e.g. "--dry-run")
# STACK=name selects another stack (its Pulumi.<name>.yaml). STACK=k8s is the endpoint in front of the local cloud's
# Kubernetes cluster: its stack file and credentials are made by `python -m localcloud.k8s.stack` (never committed),
# and `up` ends with a kubectl line that reaches the cluster through the endpoint's name.
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: scripts/stack.sh up|preview|down|outputs|recover|watch}
stack=${STACK:-dev}
. scripts/env.sh
# The Kubernetes provider (pulumi-kubernetes 4.x, its Configure) writes every kubeconfig it is given (a stack's cluster
# credentials, e.g. the k8s stack's client key) to a new $TMPDIR/kubeconfig<random> file at each run and never deletes
# it: this run's temporary files go into a directory of its own, removed when it ends (docs/security.md).
TMPDIR=$(mktemp -d) && export TMPDIR
cleanup() { rm -rf "$TMPDIR"; }
trap cleanup EXIT
# Secrets: the dev stack targets the local cloud and holds nothing secret, so it has a well-known passphrase. Every
# other stack brings its own (PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE) or a secrets provider
# (`secretsprovider:` in Pulumi.<stack>.yaml): never the dev one by accident.
if [ "$stack" = dev ]; then
  export PULUMI_CONFIG_PASSPHRASE=${PULUMI_CONFIG_PASSPHRASE-dev-only-passphrase}
elif [ -z "${PULUMI_CONFIG_PASSPHRASE+set}" ] && [ -z "${PULUMI_CONFIG_PASSPHRASE_FILE:-}" ] &&
     ! grep -qs '^secretsprovider:' "Pulumi.$stack.yaml"; then
  echo "stack.sh: stack '$stack' has no secrets provider: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)" >&2
  echo "  to its passphrase, or give it a secrets provider (pulumi stack change-secrets-provider); the dev stack's" >&2
  echo "  passphrase is for the local cloud only and is not used for other stacks" >&2
  exit 2
fi
pulumi stack select "$stack" --create --non-interactive >/dev/null
case "$action" in
  up)
    # The k8s stack: the cluster on the local cloud's nodes first, the stack's file and credentials (lab/localcloud/k8s/stack.py)
    [ "$stack" != k8s ] || .venv/bin/python -m localcloud.k8s.stack prepare --stack "$stack"
    # The keepalived stack: the second node of each zone on the local cloud's data plane (docs/keepalived.md)
    [ "$stack" != keepalived ] || .venv/bin/python -m localcloud.dataplane.keepalived_nodes peers >/dev/null
    # The pack's verdict comes before anything changes: a mandatory violation stops here, with nothing created.
    pulumi preview --non-interactive --policy-pack policies --stack "$stack"
    # The keepalived stack: the nodes start keepalived as soon as each zone's VIP port has its address, while `up`
    # waits for a member to hold the VIP (as cloud-init does on a real node), and are checked against the outputs after
    if [ "$stack" = keepalived ]; then
      .venv/bin/python -m localcloud.dataplane.keepalived_nodes follow "Pulumi.$stack.yaml" &
      follower=$!
      trap 'kill "$follower" 2>/dev/null || true; cleanup' EXIT
    fi
    pulumi up --yes --non-interactive --skip-preview --policy-pack policies --stack "$stack"
    outputs=$(pulumi stack output --json --stack "$stack")
    echo "$outputs"
    if [ "$stack" = keepalived ]; then
      kill "$follower" 2>/dev/null || true
      wait "$follower" 2>/dev/null || true
      .venv/bin/python -m localcloud.dataplane.keepalived_nodes start <<<"$outputs"
    fi
    .venv/bin/python scripts/reach_endpoint.py <<<"$outputs"
    [ "$stack" != k8s ] || .venv/bin/python -m localcloud.k8s.stack after-up --stack "$stack"
    ;;
  preview)
    [ "$stack" != k8s ] || .venv/bin/python -m localcloud.k8s.stack prepare --stack "$stack"
    pulumi preview --diff --non-interactive --policy-pack policies --stack "$stack" ;;
  down)
    pulumi destroy --yes --non-interactive --skip-preview --stack "$stack"
    # The keepalived stack: the nodes' keepalived stopped (its VIPs are gone)
    [ "$stack" != keepalived ] || .venv/bin/python -m localcloud.dataplane.keepalived_nodes stop
    ;;
  outputs) pulumi stack output --json --stack "$stack" ;;
  recover) .venv/bin/python scripts/recover.py --stack "$stack" ;;
  watch)
    # DNS that follows health until Ctrl-C: ha_endpoint.watch on this stack's outputs, only its own record
    project=$(sed -n 's/^name: *//p' Pulumi.yaml)
    pulumi stack output --json --stack "$stack" | .venv/bin/python -m ha_endpoint.watch --outputs - \
      --stack "$project/$stack" ${WATCH_ARGS:-}
    ;;
  *) echo "unknown action '$action': use up, preview, down, outputs, recover or watch" >&2; exit 2 ;;
esac
