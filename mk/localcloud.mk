# The local OpenStack control plane (Keystone, Neutron, Octavia, Designate on 127.0.0.1): localcloud/README.md.
# State lives in $(LOCALCLOUD_STATE); consumers use OS_CLIENT_CONFIG_FILE=$(LOCALCLOUD_CLOUDS_YAML) OS_CLOUD=localcloud.
.PHONY: localcloud localcloud-down localcloud-status localcloud-reset localcloud-test localcloud-figures \
	localcloud-dataplane-test dataplane-figures

LOCALCLOUD_DIR := localcloud
LOCALCLOUD_STATE ?= $(or $(HA_ENDPOINT_STATE),$(HA_ENDPOINT_CACHE)/localcloud)
LOCALCLOUD_CLOUDS_YAML := $(LOCALCLOUD_STATE)/clouds.yaml
LOCALCLOUD_ENV := HA_ENDPOINT_STATE=$(LOCALCLOUD_STATE)
LOCALCLOUD_PYTEST_ARGS ?= -q -p no:warnings

localcloud:                ## install (apt, first time), start and seed the local cloud; idempotent
	$(LOCALCLOUD_ENV) $(LOCALCLOUD_DIR)/up

localcloud-down:           ## stop every process localcloud started (by PID file); state kept
	$(LOCALCLOUD_ENV) $(LOCALCLOUD_DIR)/down

localcloud-status:         ## service, PID, port, memory
	$(LOCALCLOUD_ENV) $(LOCALCLOUD_DIR)/status

localcloud-reset:          ## down + wipe the state directory
	$(LOCALCLOUD_ENV) $(LOCALCLOUD_DIR)/reset

localcloud-test: venv localcloud   ## the local cloud's own integration tests (smoke + faults)
	$(LOCALCLOUD_ENV) $(PY) -m pytest $(LOCALCLOUD_PYTEST_ARGS) $(wildcard tests/integration/test_localcloud_*.py)

localcloud-figures: venv   ## install/start times, memory, smoke-flow timings (restarts the cloud)
	$(LOCALCLOUD_ENV) $(PY) bench/localcloud_figures.py

# The data plane (OVN, a chassis per AZ, serving members): part of the local cloud unless LOCALCLOUD_DATAPLANE=none.
localcloud-dataplane-test: venv localcloud   ## real packets: OVN data plane, OVN provider LBs, members that serve (~3-4 min)
	$(LOCALCLOUD_ENV) $(PY) -m pytest $(LOCALCLOUD_PYTEST_ARGS) -s tests/integration/test_dataplane_ovn.py

dataplane-figures: venv    ## start time and PSS without / with the data plane (two throw-away instances)
	$(PY) bench/dataplane_figures.py
