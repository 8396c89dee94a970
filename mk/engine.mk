# Engine build (issue 5): the Pulumi CLI, the Python language host and scripts, built from Go modules into
# ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/engine/<key>. See engine/README.md.
# Included by the root Makefile. Only ENGINE_-prefixed variables are defined here.
#
#   make engine         build or reuse the cached engine (seconds when cached)
#   make engine-smoke   end-to-end check: preview + policy pack under the real CLI (needs ENGINE_SMOKE_PY)
#   make engine-bindir  print the bin dir of the cached build
#   make peer-suite     terraform-provider-openstack's own acceptance tests, unpatched vs patched (not in `make test`)
# Recipes that need the CLI:  . engine/env.sh && pulumi ...   (one shell line; PATH/PULUMI_HOME set there)

ENGINE_BUILD := engine/build.sh
ENGINE_SMOKE := engine/smoke.sh
# Python for the smoke project's virtualenv (must have requirements.txt installed); the lead's $(PY) if defined.
ENGINE_SMOKE_PY ?= $(if $(PY),$(PY),python3)

.PHONY: engine engine-smoke engine-bindir peer-suite

engine:
	@$(ENGINE_BUILD)

engine-bindir:
	@$(ENGINE_BUILD) --bin-dir

engine-smoke: engine
	@ENGINE_SMOKE_PY="$(ENGINE_SMOKE_PY)" $(ENGINE_SMOKE)

peer-suite:                # on the local cloud of HA_ENDPOINT_STATE; engine/peer/run.sh, engine/README.md
	@engine/peer/run.sh

# The engine's Go build (CPU-bound) and the local cloud's first install (apt: network and disk) at once, so that on a
# fresh machine neither waits for the other; each prints as it goes (lines may interleave). Used by `make up`,
# `preview` and `bench` (`make test` does the same in scripts/test.sh).
.PHONY: engine-and-localcloud
engine-and-localcloud:
	@$(MAKE) --no-print-directory -j2 engine localcloud
