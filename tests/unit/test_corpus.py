"""The corpus of bad configurations (tests/unit/corpus/*.yaml): each refused at preview, before anything exists.

Each case runs the stack program (``__main__.py``) under mocks in preview mode, against the dev stack's fake cloud,
and asserts what the user would notice: the run fails with a :class:`ConfigError` or :class:`CloudLookupError` (a
``pulumi.RunError``: the engine prints its message, no traceback), nothing is registered, and the problems listed are
exactly the case's, each naming its key and the fix in the user's words (no pydantic phrase). ``python -m
tests.unit.corpus.runner`` prints the counts.
"""

from __future__ import annotations

import pytest

from ha_endpoint.core.messages import raw_phrases
from tests.unit.corpus.runner import FIX_WORDS, load_cases, run_case

CASES = load_cases()


def test_the_corpus_holds_at_least_120_bad_configurations():
    assert len(CASES) >= 120


@pytest.mark.parametrize("case", CASES, ids=[f"{case.source[:-5]}:{case.id}" for case in CASES])
def test_refused_at_preview_with_the_key_and_the_fix(case):
    outcome = run_case(case)
    assert type(outcome.error).__name__ == case.refused, \
        f"{case.what}: expected {case.refused}, got {type(outcome.error).__name__}: {outcome.error}"
    assert outcome.problems == case.problems
    assert outcome.refused_at_preview, f"{case.what}: registered {len(outcome.registered)} resources"
    text = str(outcome.error)
    assert "Traceback" not in text and not any(phrase in text for phrase in raw_phrases())
    shown = case.spec.get("shown")
    if shown is not None:
        lines = text.splitlines()
        assert len(lines) == shown + 2 and lines[-1].startswith(f"  ... and {len(case.problems) - shown} more")
    for problem in outcome.problems:
        assert problem.startswith(case.root) and FIX_WORDS.search(problem.split(": ", 1)[-1]), problem


def test_two_endpoints_with_one_name_register_no_urn_twice():
    """Before: 62 duplicate child URNs. Now the second endpoint registers nothing, and the first stands whole."""
    case = next(case for case in CASES if case.id == "two-endpoints-one-name")
    outcome = run_case(case)
    assert outcome.duplicate_urns == [] and outcome.second_registered == 0
    assert len(outcome.registered) > 60 and all("::first" in r["urn"] or r["name"].startswith("k8s-api")
                                                for r in outcome.registered)


def test_names_are_remembered_per_program_run():
    """The mock harness runs many programs in one process: an endpoint name used in one run is free in the next."""
    from ha_endpoint import HaEndpoint
    from tests.mocks import FakeCloud, run_program
    from tests.mocks.configs import amphora_endpoint

    for _ in range(2):
        run_program(lambda: HaEndpoint("k8s-api", amphora_endpoint()), FakeCloud.dev(), preview=True,
                    outputs=lambda _: {})
