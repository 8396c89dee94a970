"""Where HaEndpoint's arguments travel: the modules a call given them (or a part of them) runs in, in call order.

    .venv/bin/python lab/bench/args_path.py            # the amphora shape's endpoint (Pulumi.amphora.yaml)
    .venv/bin/python lab/bench/args_path.py --calls    # and every call, in order

The amphora shape's endpoint (the mocks' baseline: three zones, a member each, an HTTPS monitor) is built once under the mocks of tests/mocks (``pulumi up`` mode, the fake cloud's standard topology). A profile
hook sees every Python call of the package (``components/ha_endpoint``); a call counts when one of its arguments is the
mapping the caller gave, or a model of :mod:`ha_endpoint.core.args` (the validated arguments: ``EndpointArgs``, a
zone's, a listener's, a member's...). The counted calls' modules, in order, are folded into stays (consecutive calls
in one module); a stay in a module the path had already left is a return. Issue 47's goal: at most 10 modules, at most 5
returns (on b552ca7: 43 stays in 19 modules, 24 returns).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from tests.mocks import FakeCloud, run_component  # noqa: E402
from tests.mocks.configs import amphora_endpoint  # noqa: E402

PACKAGE = str(ROOT / "components" / "ha_endpoint")


def trace(raw: dict) -> list[tuple[str, str]]:
    """(module, function) of every call of the package given ``raw`` or an argument model, in call order."""
    from ha_endpoint.core.args import _Model

    calls: list[tuple[str, str]] = []

    def carries(value) -> bool:
        return value is raw or isinstance(value, _Model) or (
            isinstance(value, (list, tuple)) and any(isinstance(item, _Model) for item in value[:3]))

    def hook(frame, event, _arg):
        if event != "call" or not frame.f_code.co_filename.startswith(PACKAGE):
            return
        code = frame.f_code
        given = [frame.f_locals.get(name) for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
        if any(carries(value) for value in given):
            module = frame.f_globals.get("__name__", "?").removeprefix("ha_endpoint.")
            calls.append((module, code.co_name))

    sys.setprofile(hook)
    try:
        run_component(raw, FakeCloud.topology(), preview=False)
    finally:
        sys.setprofile(None)
    return calls


def fold(calls: list[tuple[str, str]]) -> tuple[list[str], int]:
    """The stays (consecutive calls in one module, folded) and how many of them return to a module left before."""
    stays: list[str] = []
    for module, _ in calls:
        if not stays or stays[-1] != module:
            stays.append(module)
    returns = sum(1 for index, module in enumerate(stays) if module in stays[:index])
    return stays, returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", action="store_true", help="print every counted call, in order")
    options = parser.parse_args()
    calls = trace(amphora_endpoint())
    stays, returns = fold(calls)
    if options.calls:
        for module, function in calls:
            print(f"  {module}.{function}")
    print("path: " + " -> ".join(stays))
    print(f"args path: {len(calls)} calls, {len(stays)} stays in {len(set(stays))} modules, {returns} returns "
          "(issue 47's goal: at most 10 modules, at most 5 returns)")


if __name__ == "__main__":
    main()
