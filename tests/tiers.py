"""Where the suite's time goes, per tier: a pytest plugin (loaded from ``-p tests.tiers``, see pyproject.toml).

Each test belongs to the tier of its folder (``tests/unit``, ``tests/policies``, ``tests/integration``,
``tests/e2e``). At the end of a run the plugin prints one line with the test time per tier (set-up, call and
tear-down of each test, summed; under ``-n`` the workers' times add up, so the sum can exceed the wall time) and the
run's wall time, and, when ``HA_ENDPOINT_TIMINGS`` names a file, appends the same figures to it as one JSON line:
``scripts/test.sh`` (``make test``) runs pytest more than once and prints the whole run's summary from that file,
with the slowest tests of the whole run (each test's set-up, call and tear-down, in ``"tests"``), and each failed
test's report (its last lines, in ``"failures"``): ``make test`` keeps that file after the run, so a CI run's failures
can be read when its printed output is gone.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import PurePosixPath

TIERS = ("unit", "policies", "integration", "e2e")


def tier_of(nodeid: str) -> str:
    """The tier of a test id (``tests/<tier>/...``); ``other`` for a test outside the four folders."""
    parts = PurePosixPath(nodeid.split("::", 1)[0]).parts
    return parts[1] if len(parts) > 2 and parts[0] == "tests" and parts[1] in TIERS else "other"


def summarize(reports) -> tuple[dict[str, float], dict[str, int]]:
    """(seconds per tier, outcomes) of a run's test reports (set-up, call and tear-down each count)."""
    seconds: dict[str, float] = defaultdict(float)
    outcomes: dict[str, int] = defaultdict(int)
    for report in reports:
        seconds[tier_of(report.nodeid)] += float(getattr(report, "duration", 0.0) or 0.0)
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            outcomes[report.outcome] += 1
    return dict(seconds), dict(outcomes)


def per_test(reports) -> dict[str, float]:
    """Seconds per test id (its set-up, call and tear-down together)."""
    seconds: dict[str, float] = defaultdict(float)
    for report in reports:
        seconds[report.nodeid] += float(getattr(report, "duration", 0.0) or 0.0)
    return {nodeid: round(value, 2) for nodeid, value in seconds.items()}


FAILURE_LINES = 80


def failures(reports) -> dict[str, str]:
    """The last ``FAILURE_LINES`` lines of each failed test's report (set-up, call or tear-down), by test id."""
    found: dict[str, str] = {}
    for report in reports:
        if report.outcome == "failed":
            text = "\n".join(str(getattr(report, "longreprtext", "") or "").splitlines()[-FAILURE_LINES:])
            found[report.nodeid] = (found.get(report.nodeid, "") + f"[{report.when}]\n{text}\n").strip()
    return found


def slowest(tests: dict[str, float], count: int = 10) -> list[tuple[str, float]]:
    """The ``count`` slowest of ``tests`` (id -> seconds), slowest first."""
    return sorted(tests.items(), key=lambda item: (-item[1], item[0]))[:count]


def format_tiers(seconds: dict[str, float]) -> str:
    return ", ".join(f"{tier} {seconds[tier]:.0f} s" for tier in (*TIERS, "other") if seconds.get(tier))


_started = time.monotonic()


def pytest_sessionstart(session):
    global _started
    _started = time.monotonic()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return
    reports = [report for values in terminalreporter.stats.values() for report in values
               if hasattr(report, "nodeid") and hasattr(report, "when")]
    seconds, outcomes = summarize(reports)
    wall = time.monotonic() - _started
    terminalreporter.write_line(f"time per tier (test time, summed over workers): {format_tiers(seconds) or 'none'}; "
                                f"wall {wall:.0f} s")
    target = os.environ.get("HA_ENDPOINT_TIMINGS")
    if target:
        label = os.environ.get("HA_ENDPOINT_PHASE", "pytest")
        with open(target, "a") as out:
            out.write(json.dumps({"phase": label, "wall": round(wall, 1), "tiers": seconds, "outcomes": outcomes,
                                  "exit": int(exitstatus), "tests": per_test(reports),
                                  "failures": failures(reports)}) + "\n")
