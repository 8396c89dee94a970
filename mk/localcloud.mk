# The local OpenStack control plane (Keystone, Neutron, Octavia, Designate on 127.0.0.1): lab/localcloud/README.md.
# State lives in $(LOCALCLOUD_STATE); consumers use OS_CLIENT_CONFIG_FILE=$(LOCALCLOUD_CLOUDS_YAML) OS_CLOUD=localcloud.
# Its other commands are its scripts (lab/localcloud/down, status, reset, fault, ...; lab/localcloud/README.md); its tests and
# figures are pytest and lab/bench/ runs (lab/localcloud/README.md lists them).
.PHONY: localcloud

LOCALCLOUD_DIR := lab/localcloud
LOCALCLOUD_STATE ?= $(or $(HA_ENDPOINT_STATE),$(HA_ENDPOINT_CACHE)/localcloud)
LOCALCLOUD_CLOUDS_YAML := $(LOCALCLOUD_STATE)/clouds.yaml
LOCALCLOUD_ENV := HA_ENDPOINT_STATE=$(LOCALCLOUD_STATE)

localcloud:                ## install (apt, first time), start and seed the local cloud; idempotent (lab/localcloud/README.md)
	$(LOCALCLOUD_ENV) $(LOCALCLOUD_DIR)/up
