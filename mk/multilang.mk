# The component for other languages (issue 12): its package (components/PulumiPlugin.yaml), the schema Pulumi infers
# from its typed arguments (components/schema.json, checked in), the TypeScript SDK generated from that schema, and
# the examples under examples/ that tests run or type-check. Included by the root Makefile.
#
#   make schema                regenerate components/schema.json with the real CLI (`pulumi package get-schema`),
#                              then docs/configuration.md's tables from it (scripts/config_table.py --write: alone,
#                              `.venv/bin/python scripts/config_table.py --write` rewrites the page from the
#                              checked-in schema); tests/unit/test_packaging.py fails until the checked-in schema
#                              matches the typed args, tests/unit/test_configuration_page.py until the page matches it
#   examples/typescript/typecheck.sh
#                              the TypeScript SDK generated from components/schema.json into
#                              examples/typescript/sdks/haendpoint (lab/engine/codegen: ha-gen-sdk-nodejs), the pinned
#                              npm packages (examples/typescript/node-deps.sh), then `tsc` on index.ts
#   make _component-venv       the package's virtualenv (.venv-component, components/requirements.txt) as the CLI
#                              creates it on `pulumi install` in a program that names the package; the CLI refuses
#                              to create it through a symlink, which is how tests/e2e/test_yaml_consumer.py uses it
#
# `make test` runs all of it through pytest: tests/unit/test_packaging.py (schema, scratch consumer),
# tests/e2e/test_typescript_consumer.py (SDK + tsc), tests/e2e/test_yaml_consumer.py (YAML program on the local
# cloud), tests/e2e/test_stack_reference.py; those install what they need (lab/engine/build.sh, node-deps.sh) themselves.

.PHONY: schema _component-venv

COMPONENT_VENV := .venv-component
COMPONENT_STAMP := $(COMPONENT_VENV)/.installed-$(shell cat components/requirements.txt requirements.txt pyproject.toml | sha1sum | cut -c1-12)

_component-venv: $(COMPONENT_STAMP)

$(COMPONENT_STAMP): components/requirements.txt requirements.txt pyproject.toml | $(UV)
	test -x $(COMPONENT_VENV)/bin/python || $(UV) venv --quiet --seed --python python3 --python-preference only-system $(COMPONENT_VENV)
	cd components && VIRTUAL_ENV=../$(COMPONENT_VENV) $(UV) pip install --quiet --compile-bytecode -r requirements.txt
	rm -f $(COMPONENT_VENV)/.installed-* && touch $@

schema: _venv _engine      ## regenerate components/schema.json (real CLI) and docs/configuration.md's tables from it
	. lab/engine/env.sh && pulumi package get-schema ./components >components/schema.json.new
	mv components/schema.json.new components/schema.json
	$(PY) -m pytest -q -p no:cacheprovider tests/unit/test_packaging.py -k schema
	$(PY) scripts/config_table.py --write   # docs/configuration.md's tables, from components/schema.json
