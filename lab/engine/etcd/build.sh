#!/usr/bin/env bash
# Part "etcd" of the engine (lab/engine/build.sh): etcd, into <bin dir>.
#
#   lab/engine/etcd/build.sh <bin dir>
#
# Module: go.etcd.io/etcd/server/v3 v3.7.3, whose root package is etcd's main (go.mod here requires its sibling
# modules at the same tag: upstream replaces them with local paths). The local Kubernetes cluster's store
# (lab/localcloud/k8s); not needed by the Pulumi engine.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/etcd/build.sh <bin dir>}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

VERSION=$(cd "$DIR" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
(cd "$DIR" && go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3)
echo "etcd $VERSION (go.etcd.io/etcd/server/v3)"
