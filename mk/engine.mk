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

.PHONY: _engine _venv-engine-cloud

_engine:
	@lab/engine/build.sh

# The virtualenv (downloads, then byte-compiling), the engine's Go build (CPU-bound) and the local cloud's first
# install (apt: network and disk) at once, so that on a fresh machine none waits for another: the engine's critical
# path (the CLI) starts at once instead of after the virtualenv's 30 s (the cloud runs on Debian's python3, the
# engine on Go alone). Each prints as it goes (lines may interleave). Used by `make up`, `preview` and `bench`
# (`make test` does the same in scripts/test.sh).
_venv-engine-cloud:
	@$(MAKE) --no-print-directory -j3 _venv _engine localcloud
