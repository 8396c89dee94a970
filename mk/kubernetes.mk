# The Kubernetes side (issue 13): the Cluster API CRDs its tests validate generated objects against, fetched from the
# Go modules of the pinned Cluster API and CAPO releases (tests/unit/kubernetes/capi/versions.env) into
# $(HA_ENDPOINT_CACHE)/capi/<capi version>+capo-<capo version> once. `make test` and `make test-unit` depend on it;
# the tests also fetch it themselves when run alone. Only KUBERNETES_-prefixed variables are defined here.
#
# The local Kubernetes control plane (issue 28, lab/localcloud/k8s): its Go builds (etcd, kube-apiserver + kubectl, the
# pulumi-kubernetes plugin, Cluster API's conversion webhook: lab/engine/build.sh --k8s, cached like the engine's parts;
# `make test` builds them in its set-up) and one cluster of three etcd members and three API servers on 127.0.0.1,
# state in $(HA_ENDPOINT_CACHE)/k8s/local: `.venv/bin/python -m localcloud.k8s up` (options: e.g. --san
# api.example.test), `... down` (lab/localcloud/k8s/README.md).
.PHONY: _capi-crds _k8s

KUBERNETES_CAPI_FETCH := tests/unit/kubernetes/capi/fetch.sh

_capi-crds:                # fetch (or reuse) the Cluster API CRDs the Kubernetes tests validate against
	@$(KUBERNETES_CAPI_FETCH) >/dev/null

_k8s:                      # build (or reuse) the Kubernetes parts; prints their cache dirs
	@lab/engine/build.sh --k8s

