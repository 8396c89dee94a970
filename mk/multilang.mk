# The component for other languages (issue 12): its package (components/PulumiPlugin.yaml), the schema Pulumi infers
# from its typed arguments (components/schema.json, checked in), the TypeScript SDK generated from that schema, and
# the examples under examples/ that tests run or type-check. Included by the root Makefile.
#
#   make schema                regenerate components/schema.json with the real CLI (`pulumi package get-schema`);
#                              tests/unit/test_packaging.py fails until the checked-in file matches the typed args;
#                              then `make readme`
#   make readme                write README.md's configuration table from components/schema.json
#                              (scripts/config_table.py); tests/unit/test_readme_table.py fails when they differ
#   make sdk-typescript        generate the TypeScript SDK from components/schema.json into
#                              examples/typescript/sdks/haendpoint (engine/codegen: ha-gen-sdk-nodejs)
#   make node-deps             install (or reuse) the pinned npm packages of examples/typescript into the cache
#   make typecheck-typescript  the two above, then `tsc` on examples/typescript/index.ts
#   make component-venv        the package's virtualenv (.venv-component, components/requirements.txt) as the CLI
#                              creates it on `pulumi install` in a program that names the package; the CLI refuses
#                              to create it through a symlink, which is how tests/e2e/test_yaml_consumer.py uses it
#
# `make test` runs all of it through pytest: tests/unit/test_packaging.py (schema, scratch consumer),
# tests/e2e/test_typescript_consumer.py (SDK + tsc), tests/e2e/test_yaml_consumer.py (YAML program on the local
# cloud), tests/e2e/test_stack_reference.py; those install what they need (engine/build.sh, node-deps.sh) themselves.

TS_EXAMPLE := examples/typescript

.PHONY: schema sdk-typescript node-deps typecheck-typescript component-venv readme

COMPONENT_VENV := .venv-component
COMPONENT_STAMP := $(COMPONENT_VENV)/.installed-$(shell cat components/requirements.txt requirements.txt pyproject.toml | sha1sum | cut -c1-12)

component-venv: $(COMPONENT_STAMP)

$(COMPONENT_STAMP): components/requirements.txt requirements.txt pyproject.toml | $(UV)
	test -x $(COMPONENT_VENV)/bin/python || $(UV) venv --quiet --seed --python python3 --python-preference only-system $(COMPONENT_VENV)
	cd components && VIRTUAL_ENV=../$(COMPONENT_VENV) $(UV) pip install --quiet --compile-bytecode -r requirements.txt
	rm -f $(COMPONENT_VENV)/.installed-* && touch $@

schema: venv engine
	. engine/env.sh && pulumi package get-schema ./components >components/schema.json.new
	mv components/schema.json.new components/schema.json
	$(PY) -m pytest -q -p no:cacheprovider tests/unit/test_packaging.py -k schema
	$(MAKE) readme

readme: venv
	$(PY) scripts/config_table.py --write   # README.md's configuration table, from components/schema.json

sdk-typescript: engine
	. engine/env.sh && ha-gen-sdk-nodejs -schema components/schema.json -out $(TS_EXAMPLE)/sdks/haendpoint

node-deps:
	@$(TS_EXAMPLE)/node-deps.sh

typecheck-typescript: sdk-typescript
	ln -sfn "$$($(TS_EXAMPLE)/node-deps.sh)" $(TS_EXAMPLE)/node_modules
	cd $(TS_EXAMPLE) && node_modules/.bin/tsc -p . && echo "$(TS_EXAMPLE): type-checks against the generated SDK"
