#!/usr/bin/env bash
# Part "capi-conversion" of the engine (lab/engine/build.sh --k8s): Cluster API's conversion webhook for Cluster
# (v1beta1 <-> v1beta2), into <bin dir>/capi-conversion. main.go serves Cluster API's own converter
# (sigs.k8s.io/cluster-api/core/webhooks/conversion, v1.14.2 as go.mod requires) through controller-runtime's
# conversion handler, as Cluster API's controller manager does, without the rest of the manager. The local
# Kubernetes cluster's API server calls it to convert Clusters between the versions (tests/e2e/test_k8s_cluster.py);
# not needed by the Pulumi engine.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/capi-conversion/build.sh <bin dir>}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

VERSION=$(cd "$DIR" && go list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
(cd "$DIR" && go build -p "${ENGINE_GO_P:-2}" -ldflags "-s -w" -o "$BIN/capi-conversion" .)
echo "capi-conversion $VERSION (sigs.k8s.io/cluster-api/core/webhooks/conversion)"
