# ha-endpoint: the two commands a newcomer needs are `make up` (the dev stack on the local cloud) and `make test`.
# Each area adds its targets through a fragment in mk/ (engine, localcloud, ...).
#
# Public targets are the ones `make help` lists: a target line with a `## ` comment is one (at most 15;
# tests/unit/test_make_targets.py counts them). Every other target is a step of those, named with a leading `_`.

SHELL := /bin/bash
PY := .venv/bin/python
# The stamp stands for what the install below makes: the pinned packages, the ha_endpoint package and the lab's .pth
# (so a .venv made before the .pth existed is made again once).
VENV_STAMP := .venv/.installed-$(shell (cat requirements.txt pyproject.toml; echo lab.pth) | sha1sum | cut -c1-12)
export HA_ENDPOINT_CACHE ?= $(HOME)/.cache/ha-endpoint

.PHONY: help _venv test test-unit bench docs
.DEFAULT_GOAL := help

help:                      ## this list
	@awk -F ':[^#]*## ' '/^[a-zA-Z0-9][a-zA-Z0-9_-]*:[^=].*## / { printf "make %-13s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "More: docs/ (make docs builds the site into site/), README.md"

# The main job: the dev stack on the local cloud, with everything it needs installed or reused first. STACK=name
# selects another stack (scripts/stack.sh).
.PHONY: up down preview recover watch

# When make started and how busy the cores had been: `up`'s cold-run summary (scripts/cold_summary.py) counts from them
MAKE_STARTED := $(shell date +%s.%N) $(shell awk '/^cpu /{print $$2 + $$3 + $$4 + $$7 + $$8 + $$9; exit}' /proc/stat)

up: _venv _engine-and-localcloud   ## pulumi up of the dev stack on the local cloud (installs, builds and starts what is missing)
	@t=$$(date +%s.%N) && scripts/stack.sh up && $(PY) scripts/cold_summary.py $(MAKE_STARTED) $$t

# `down` too asks the local cloud to be up and answering first (idempotent: a few seconds on a running cloud): a CI
# run's `make down` right after `make test` met Designate answering 503 for Keystone (2026-12-02) and left the dev
# stack in the cloud.
down: _venv _engine-and-localcloud   ## pulumi destroy of the dev stack
	scripts/stack.sh down

preview: _venv _engine-and-localcloud   ## pulumi preview of the dev stack with the policy pack
	scripts/stack.sh preview

recover: _venv _engine     ## after a killed update: a dead lock removed, what it created but never recorded deleted, refresh
	scripts/stack.sh recover

watch: _venv _engine       ## keep the dev stack's A record following its zones' health (Ctrl-C stops it; WATCH_ARGS=--dry-run)
	scripts/stack.sh watch

# The virtualenvs are installed by uv (from PyPI, kept in $(HA_ENDPOINT_CACHE)/tools; its version is requirements.txt's
# pin, which also puts it in .venv): the same pinned packages as pip installs, in a few seconds instead of a minute and
# a half (its cache holds them unpacked). The packaging test's scratch consumer installs with .venv's uv too (39-60 s
# with pip, which downloads every wheel again on this machine; 7-11 s with uv). --seed puts pip in each virtualenv
# too: the Pulumi CLI installs with it, as users do. --compile-bytecode writes each package's .pyc at install: every
# Python process of a `pulumi` command (the program, the dynamic providers, the policy pack) then loads compiled
# modules, also where PYTHONDONTWRITEBYTECODE is set (it stops the writing, not the reading): measured 1.4 s -> 0.66 s
# per process to import what the program imports (lab/bench/bytecode_figures.py).
UV_VERSION := $(shell sed -n 's/^uv==//p' requirements.txt)
UV_DIR := $(HA_ENDPOINT_CACHE)/tools/uv-$(UV_VERSION)
UV := $(UV_DIR)/bin/uv

$(UV):
	rm -rf $(UV_DIR) && python3 -m venv $(UV_DIR)
	$(UV_DIR)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

_venv: $(VENV_STAMP)

$(VENV_STAMP): requirements.txt pyproject.toml | $(UV)
	test -x .venv/bin/python || $(UV) venv --quiet --seed --python python3 --python-preference only-system .venv
	VIRTUAL_ENV=.venv $(UV) pip install --quiet --compile-bytecode -r requirements.txt
	VIRTUAL_ENV=.venv $(UV) pip install --quiet --compile-bytecode --no-deps -e .   # the ha_endpoint package, from components/
	$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), "ha_endpoint_lab.pth").write_text("$(CURDIR)/lab\n")'   # the lab's packages (localcloud, bench): `.venv/bin/python -m localcloud.k8s up`
	rm -f .venv/.installed-* && touch $@

test:                      ## every test: unit, policy, integration (local cloud), end-to-end (real engine), the docs build
	scripts/test.sh

# The offline tiers are their folders (tests/integration and tests/e2e mark every test of theirs), so only those are
# collected: no worker imports a cloud or engine test module (scripts/test.sh's offline phase runs the same). _bytecode:
# every worker and every Python the tests start loads the project's modules compiled (where PYTHONDONTWRITEBYTECODE is
# set, as on this machine, nothing else writes them). Its time against its 60 s budget: lab/bench/unit_budget_figures.py.
test-unit: _venv _capi-crds _bytecode   ## the fast tests only (mocks, policies; no cloud, no engine)
	$(PY) -m pytest -n 2 -m "not integration and not e2e" -q tests/unit tests/policies   # smaller Hypothesis budgets: tests/budget.py

# The property tests at their full Hypothesis example budgets (tests/budget.py; `make test` and `make test-unit` run
# a tenth): every test file that takes its budget from tests/budget.py. CI (.ci/run) runs it after `make test`.
BUDGET_FILES = $(filter-out tests/budget.py,$(shell grep -rlF --include='*.py' 'tests.budget' tests))
.PHONY: test-budgets
test-budgets: _venv _capi-crds   ## the property tests at their full Hypothesis budgets (CI runs it after make test)
	HA_ENDPOINT_FULL_BUDGETS=1 HA_ENDPOINT_RECORD_DURATIONS=0 $(PY) -m pytest -n 2 -m "not integration and not e2e" -q $(BUDGET_FILES)

# Members at scale with real traffic (issue 27; per-member, the one member path since issue 47): 30 serving members
# per zone, rotated under real clients, on request (SCALE_MEMBERS=5: the same at 5). Not in CI since issue 47 (the
# drains of several members of one pool under ovn: docs/lab.md). Not in make test: beside it on 2 cores it does not fit the suite's 20 minutes.
SCALE_MEMBERS ?= 30
.PHONY: test-scale
test-scale: _venv _engine-and-localcloud   ## 30 members per zone rotated under real clients, on request (SCALE_MEMBERS=5: at 5)
	HA_ENDPOINT_TEST_SCALE_MEMBERS=$(SCALE_MEMBERS) HA_ENDPOINT_RECORD_DURATIONS=0 \
		$(PY) -m pytest -s -p no:cacheprovider tests/e2e/test_members_at_scale.py

# The agents' least privilege (issue 52, docs/security.md), alone: their scoped OpenStack credentials on the local
# cloud (each call allowed or refused, the table `call | expected | seen`), their ServiceAccount on the local API
# server (`kubectl auth can-i`), the credential's wiring under mocks and the Machines' untrusted input. All of it also
# runs in make test. -rP prints the tables (the passed tests' output; -s is not seen through xdist).
SECURITY_TESTS := tests/integration/test_scoped_credentials.py \
	tests/e2e/test_k8s_member_agent.py::test_the_agents_service_account_may_make_its_calls_and_is_refused_everything_else \
	tests/unit/kubernetes/test_k8s_credential.py tests/unit/agent/test_agent_machines_properties.py \
	tests/e2e/test_credential_state.py
.PHONY: test-security
test-security: _venv _engine-and-localcloud _k8s _capi-crds   ## the agents' least privilege on the local cloud and API server; prints the refusal tables (also in make test)
	$(PY) -m pytest -n 1 -rP --show-capture=stdout -q -p no:cacheprovider -W ignore::DeprecationWarning $(SECURITY_TESTS)

# The project's own sources and both virtualenvs compiled (`make test` runs it at set-up, `make test-unit` before its
# tests): a clone's sources and a virtualenv installed before --compile-bytecode load compiled too. The local cloud's
# daemons (system python3, the same 3.11 bytecode) import lab/localcloud/ from here. In one process: with everything
# compiled already (the usual case: uv compiles the virtualenvs as it installs them) it checks the 12,000 files in
# 1.1 s and 1 CPU-second, where -j0's process pool took 6.5-8 s and 8-10 CPU-seconds for the same check (2026-12-06).
BYTECODE_DIRS := components policies stacks lab scripts tests $(wildcard .venv/lib .venv-component/lib)
.PHONY: _bytecode
_bytecode: _venv
	$(PY) -m compileall -q $(BYTECODE_DIRS) >/dev/null

# Five scripts take what another run made, a command to run or a revision (a keepalived zone's address and VIP
# holder; a py-spy profile; the command whose CPU is told by process: cpu_by_process.py -- make test; the tests whose
# CPU is told one by one: cpu_by_test.py tests/e2e/...; what a change costs one `up`: up_cost_figures.py --against
# REV): each one's docstring says how to run it, and `make bench` names them instead of failing on their missing
# arguments.
BENCH_WITH_INPUT := lab/bench/keepalived_failover.py lab/bench/octavia_profile_summary.py lab/bench/cpu_by_process.py \
	lab/bench/cpu_by_test.py lab/bench/record.py lab/bench/up_cost_figures.py
bench: _venv _engine-and-localcloud   ## run every benchmark script in lab/bench/, each run recorded in docs/results/
	for script in $(filter-out $(BENCH_WITH_INPUT),$(wildcard lab/bench/*.py)); do echo "== $$script"; $(PY) lab/bench/record.py -- $$script || exit 1; done
	@echo "not run (each takes what another run made; its docstring says how): $(BENCH_WITH_INPUT)"

# The documentation site (mkdocs.yml, docs/; MkDocs with the Material theme, pinned in requirements.txt): --strict
# fails on a broken link or anchor and on a page missing from the nav. `make test` runs it at set-up (scripts/test.sh).
DOCS_SITE ?= site
docs: _venv                ## build the documentation site (docs/, mkdocs build --strict) into site/
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir $(DOCS_SITE)

include $(wildcard mk/*.mk)
