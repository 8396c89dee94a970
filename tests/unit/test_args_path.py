"""Where HaEndpoint's arguments travel stays inside issue 47's bound: a call given them (or a model of them) runs in
at most 10 modules of the package, with at most 5 returns to a module already left (``lab/bench/args_path.py``
prints the path; this test holds it, so a change that sends the arguments through one more module fails here, with
the path, not only in the bench's figures)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "lab" / "bench" / "args_path.py"


def _bench():
    spec = importlib.util.spec_from_file_location("args_path_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_arguments_visit_at_most_ten_modules_with_at_most_five_returns():
    bench = _bench()
    from tests.mocks.configs import amphora_endpoint

    stays, returns = bench.fold(bench.trace(amphora_endpoint()))
    path = " -> ".join(stays)
    assert len(set(stays)) <= 10, f"{len(set(stays))} modules: {path}"
    assert returns <= 5, f"{returns} returns: {path}"


def test_a_return_is_a_stay_in_a_module_the_path_had_left():
    stays, returns = _bench().fold([("a", "f"), ("a", "g"), ("b", "h"), ("a", "i"), ("c", "j"), ("b", "k")])
    assert stays == ["a", "b", "a", "c", "b"] and returns == 2
