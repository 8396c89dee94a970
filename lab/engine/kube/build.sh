#!/usr/bin/env bash
# Part "kube" of the engine (lab/engine/build.sh): kube-apiserver and kubectl of k8s.io/kubernetes, into <bin dir>.
#
#   lab/engine/kube/build.sh <bin dir>
#
# Module: k8s.io/kubernetes v1.34.4 (go.mod here), with each of its 31 staging modules pinned by `replace` to its
# published copy v0.34.4 (upstream replaces them with local paths). Both commands in one `go build` (they share most
# packages). The version, which `kubectl version` prints and the API server reports at /version, is set as upstream's
# hack/lib/version.sh sets it (-X on component-base's and client-go's version packages), from go.mod: never faked.
# What the tests and lab/bench/k8s_figures.py run as the local cluster (lab/localcloud/k8s); not needed by the Pulumi engine.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: lab/engine/kube/build.sh <bin dir>}
export GOFLAGS=${GOFLAGS:--mod=mod -trimpath -buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

VERSION=$(cd "$DIR" && go list -m -f '{{.Version}}' k8s.io/kubernetes)   # v1.34.4
MINOR=${VERSION#v1.}
MINOR=${MINOR%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    # gitTreeState "archive": built from a release's source archive, as version.sh says of a tarball build.
    ldflags+=" -X $pkg.gitVersion=$VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$MINOR -X $pkg.gitTreeState=archive"
done
(cd "$DIR" && go build -p "${ENGINE_GO_P:-2}" -ldflags "$ldflags" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)
echo "kube-apiserver, kubectl $VERSION (k8s.io/kubernetes, staging modules v0.$MINOR.${VERSION##*.})"
