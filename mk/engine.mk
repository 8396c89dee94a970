# Engine build (issue 5): the Pulumi CLI, the Python language host and scripts, built from Go modules into
# ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/engine/<key>. See lab/engine/README.md.
# Included by the root Makefile. Only ENGINE_-prefixed variables are defined here.
#
# The engine's own commands are its scripts (lab/engine/README.md):
#   lab/engine/build.sh              build or reuse the cached engine (seconds when cached); --bin-dir prints its bin dir
#   ENGINE_SMOKE_PY=.venv/bin/python lab/engine/smoke.sh
#                                end-to-end check: preview + policy pack under the real CLI
#   lab/engine/peer/run.sh           terraform-provider-openstack's own acceptance tests, unpatched vs patched (not in
#                                `make test`; on the local cloud of HA_ENDPOINT_STATE)
# Recipes that need the CLI:  . lab/engine/env.sh && pulumi ...   (one shell line; PATH/PULUMI_HOME set there)

.PHONY: _engine _engine-and-localcloud

_engine:
	@lab/engine/build.sh

# The engine's Go build (CPU-bound) and the local cloud's first install (apt: network and disk) at once, so that on a
# fresh machine neither waits for the other; each prints as it goes (lines may interleave). Used by `make up`,
# `preview` and `bench` (`make test` does the same in scripts/test.sh).
_engine-and-localcloud:
	@$(MAKE) --no-print-directory -j2 _engine localcloud
