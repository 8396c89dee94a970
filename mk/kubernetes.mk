# The Kubernetes side (issue 13): the Cluster API CRDs its tests validate generated objects against, fetched from the
# Go module of the pinned Cluster API release (tests/unit/kubernetes/capi/versions.env) into
# $(HA_ENDPOINT_CACHE)/capi/<version> once. `make test` and `make test-unit` depend on it; the tests also fetch it
# themselves when run alone. Only KUBERNETES_-prefixed variables are defined here.
.PHONY: capi-crds

KUBERNETES_CAPI_FETCH := tests/unit/kubernetes/capi/fetch.sh

capi-crds:                 ## fetch (or reuse) the Cluster API CRDs the Kubernetes tests validate against
	@$(KUBERNETES_CAPI_FETCH) >/dev/null
