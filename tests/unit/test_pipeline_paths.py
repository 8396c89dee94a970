"""One pipeline, two paths: every bad configuration of the corpus (tests/unit/corpus) refused with the same problems
whether the pipeline is called directly (plain arguments) or inside one ``apply`` (arguments known only as Outputs).

:class:`ha_endpoint.HaEndpoint` calls :func:`ha_endpoint.pipeline.run` directly when its arguments are plain, and
inside one ``apply`` of the resolved arguments when some are Outputs; the two must never diverge again (the Output
flow once skipped Octavia's checks). The cases refused by the stack-wide name claim (``via: two-endpoints``) are not
the pipeline's and are left out.
"""

from __future__ import annotations

import pulumi
import pytest

from ha_endpoint import CloudLookupError, ConfigError
from ha_endpoint.pipeline import Context, run
from tests.mocks import run_program
from tests.unit.corpus.runner import KEY, cloud_for, configuration, load_cases

CASES = [case for case in load_cases() if case.via != "two-endpoints"]
CLOUD = "localcloud"
"""The dev stack's ``openstack:cloud``, which the stack program names to HaEndpoint (Pulumi.amphora.yaml)."""


def refusal(case, deferred: bool) -> tuple[str, list[str]]:
    """The error type and problems the pipeline gives for the case, called directly or inside one apply."""
    seen: list[tuple[str, list[str]]] = []
    context = Context(root=KEY, cloud=CLOUD)

    def judged(raw) -> None:
        try:
            run(raw, context)
            seen.append(("", []))
        except (ConfigError, CloudLookupError) as error:
            seen.append((type(error).__name__, [str(problem) for problem in error.problems]))

    def program() -> None:
        raw = configuration(case)
        if deferred and _text_keys(raw):
            pulumi.Output.from_input(raw).apply(judged)  # the configuration itself resolved from an Output
        elif deferred:  # an Output cannot carry a mapping with keys that are not text: the raw value, in an apply
            pulumi.Output.from_input(KEY).apply(lambda _: judged(raw))
        else:
            judged(raw)

    run_program(program, cloud_for(case), preview=True, outputs=lambda _: {})
    assert len(seen) == 1, f"{case.id}: the pipeline ran {len(seen)} times"
    return seen[0]


def _text_keys(value) -> bool:
    if isinstance(value, dict):
        return all(isinstance(key, str) and _text_keys(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_text_keys(item) for item in value)
    return True


@pytest.mark.parametrize("case", CASES, ids=[f"{case.source[:-5]}:{case.id}" for case in CASES])
def test_the_pipeline_refuses_a_bad_configuration_alike_directly_and_inside_an_apply(case):
    direct = refusal(case, deferred=False)
    assert direct[1], f"{case.id}: the pipeline accepted a configuration the corpus says is refused"
    assert refusal(case, deferred=True) == direct
