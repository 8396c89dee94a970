"""The configuration page's tables (docs/configuration.md) are the ones the component's schema gives
(scripts/config_table.py): a key, a type, a default or a description changed in the typed arguments or outputs (and so
in components/schema.json) without regenerating the page (`make schema`, or `.venv/bin/python scripts/config_table.py
--write` from the checked-in schema) fails here, so the docs never document a configuration the component does not
take, or outputs it does not give."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import config_table  # noqa: E402


@pytest.mark.parametrize("which", list(config_table.MARKERS))
def test_the_configuration_pages_tables_are_generated_from_the_schema(which):
    generated = config_table.table(json.loads(config_table.SCHEMA.read_text()), which)
    written = config_table.page_table(config_table.PAGE.read_text(), which)
    if written != generated:
        diff = "\n".join(difflib.unified_diff(written.splitlines(), generated.splitlines(), "docs/configuration.md",
                                              "components/schema.json", lineterm=""))
        raise AssertionError(f"docs/configuration.md's {which} table is not the schema's; run "
                             f"`.venv/bin/python scripts/config_table.py --write` (or `make schema`):\n{diff}")


def test_every_configuration_key_of_the_schema_has_a_row_and_a_meaning():
    schema = json.loads(config_table.SCHEMA.read_text())
    rows = list(config_table.rows(schema))
    keys = [key for key, *_ in rows]
    assert {"name", "zones", "zones.<az>.subnet", "listeners[].port", "listeners[].monitor.type", "members[].az",
            "dns.ttl", "readiness.timeoutSeconds"} <= set(keys)
    assert len(keys) == len(set(keys)) and all(meaning for *_, meaning in rows)
    assert dict((key, value) for key, _, _, value, _ in rows)["dns.ttl"] == "`30`"


def test_every_output_of_the_schema_has_a_row_and_a_meaning_whatever_its_backend():
    rows = list(config_table.rows(json.loads(config_table.SCHEMA.read_text()), "outputs"))
    keys = [key for key, *_ in rows]
    assert {"fqdn", "addresses", "zones", "zones.<az>.loadbalancerId", "zones.<az>.poolIds", "zones.<az>.vipPortId",
            "zones.<az>.keepalived", "zones.<az>.ready"} <= set(keys)
    assert len(keys) == len(set(keys)) and all(meaning for *_, meaning in rows)
