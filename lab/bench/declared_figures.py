"""What the component declares to its policy pack, beside what its plan would weigh in its place.

    .venv/bin/python lab/bench/declared_figures.py

A zone has its plan (``core/plan.py``'s ``ZonePlan``, what its backend builds the zone's resources from) and the part
of it the pack checks, declared in the component's ``facts`` output (``core/facts.py``'s ``ZoneFact``). Issue 47 asks
for one shape per concept; these figures are why the pack does not read the plan itself. For generated endpoints
(``tests/mocks/configs.py``'s ``sized_endpoint`` with client networks, previewed under Pulumi mocks), the script prints the size of the
``facts`` output as declared (its ``zones`` and in all), and the size of the zone plans and the members' plans of the
same run, dumped as they are (each dataclass field as JSON; an Output or a resource, which cannot be declared, as
null). The facts output is written into the stack's state and read by the pack at every preview.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import ha_endpoint.pipeline as pipeline  # noqa: E402
from tests.mocks import FakeCloud, run_component  # noqa: E402
from tests.mocks.configs import sized_endpoint  # noqa: E402

CASES = ((3, 1, 2), (6, 50, 1), (20, 500, 1))
"""zones, members per zone, listeners (scale_figures.py's cases)."""


def plain(value: Any) -> Any:
    """``value`` as JSON would hold it: dataclasses field by field, pydantic models dumped, anything else null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(each) for each in value]
    if isinstance(value, dict):
        return {str(key): plain(each) for key, each in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return None


def kib(value: Any) -> float:
    return len(json.dumps(value)) / 1024


def main() -> None:
    plans = []
    declare = pipeline.endpoint_facts
    pipeline.endpoint_facts = lambda plan: (plans.append(plan), declare(plan))[1]
    print("KiB of JSON, per generated endpoint (preview under Pulumi mocks)")
    print(f"  {'zones x members x listeners':28s} {'facts':>9s} {'facts.zones':>12s} {'zone plans':>11s} "
          f"{'member plans':>13s} {'zone plans / facts.zones':>25s}")
    for zones, members, listeners in CASES:
        plans.clear()
        raw = {**sized_endpoint(zones, members, listeners, wide=True), "allowedCidrs": ["10.0.0.0/8"]}
        run = run_component(raw, FakeCloud.topology(preview=True, zones=zones, fip_count=zones + 5, wide=True),
                            preview=True)
        facts = next(r for r in run.registrations if r["type"] == "haendpoint:index:HaEndpoint")["outputs"]["facts"]
        plan = plans[-1]
        zone_plans = kib({zone.az: plain(zone) for zone in plan.zones})
        print(f"  {f'{zones} x {members} x {listeners}':28s} {kib(facts):9.1f} {kib(facts['zones']):12.1f} "
              f"{zone_plans:11.1f} {kib(plain(plan.members)):13.1f} {zone_plans / kib(facts['zones']):24.1f}x")


if __name__ == "__main__":
    main()
