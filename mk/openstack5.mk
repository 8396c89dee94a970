# The SDK users have (issue 12): the unit and policy suites, under mocks, against the newest pulumi-openstack 5.x SDK
# in a second virtualenv, so that a 5.x-only break shows before a user finds it. The engine's provider plugin is
# 3.15.1 (engine/README.md), so the main .venv pins pulumi-openstack 3.15.1; 5.x runs here under mocks only.
# Included by the root Makefile; `make test` runs test-openstack5 after the main suite.
#
#   make venv-openstack5   create/update .venv-openstack5: requirements.txt with the pin of
#                          requirements-openstack5.txt instead of its pulumi-openstack pin, this project editable
#   make test-openstack5   tests/unit and tests/policies (not integration, not e2e) in that virtualenv

OS5_PIN := $(shell grep '^pulumi-openstack==' requirements-openstack5.txt)
OS5_VENV := .venv-openstack5
OS5_PY := $(OS5_VENV)/bin/python
OS5_STAMP := $(OS5_VENV)/.installed-$(shell (grep -v '^pulumi-openstack==' requirements.txt; echo '$(OS5_PIN)'; cat pyproject.toml) | sha1sum | cut -c1-12)

.PHONY: venv-openstack5 test-openstack5

venv-openstack5: $(OS5_STAMP)

$(OS5_STAMP): requirements.txt requirements-openstack5.txt pyproject.toml mk/openstack5.mk
	test -x $(OS5_PY) || python3 -m venv $(OS5_VENV)
	{ grep -v '^pulumi-openstack==' requirements.txt; echo '$(OS5_PIN)'; } >$(OS5_VENV)/requirements.txt
	$(OS5_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(OS5_VENV)/requirements.txt
	$(OS5_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	$(OS5_PY) -c 'import importlib.metadata as m; v = m.version("pulumi-openstack"); assert v == "$(OS5_PIN)".split("==")[1], v; print("$(OS5_VENV): pulumi-openstack", v)'
	rm -f $(OS5_VENV)/.installed-* && touch $@

# The scratch consumer (tests/unit/test_packaging.py) installs the package with this pin in a virtualenv of its own:
# run once, by the main suite.
OS5_DESELECT := tests/unit/test_packaging.py::test_a_scratch_consumer_with_its_own_components_package_installs_this_one_and_builds_an_endpoint

test-openstack5: venv-openstack5
	$(OS5_PY) -m pytest -m "not integration and not e2e" -q -p no:cacheprovider \
	    -W "ignore:openstack.index/:DeprecationWarning" --deselect $(OS5_DESELECT) tests/unit tests/policies
