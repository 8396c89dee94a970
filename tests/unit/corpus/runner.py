"""The corpus of bad configurations: each run through the stack program under mocks, in preview, as a user would.

Each ``*.yaml`` file here holds cases; a case changes the amphora shape's endpoint (Pulumi.amphora.yaml) and says what the
user must read::

    - id: terminated-https-without-certificate
      what: a TERMINATED_HTTPS listener without a certificate (Octavia refuses it)
      set: {listeners[0].protocol: TERMINATED_HTTPS, listeners[0].monitor: {type: HTTP}}
      unset: [dns]                       # keys removed
      append: {members: {name: cp-3, address: 10.10.1.11, az: az1}}
      replace: [az1]                     # the whole endpoint setting instead of the dev one
      cloud: {remove_azs: [az3], disable_azs: [az2], key_manager: false, certificates: [<ref>], ports: [<id>],
              subnets: [{name: cp-v6, network: cp, cidr: 'fd00:10::/64'}], router_subnets: [cp-v6]}
      via: stack                         # stack (default): __main__.py with the setting; component: HaEndpoint
                                         # from Python (for what YAML cannot say); two-endpoints: the dev endpoint,
                                         # then this one, in one program
      refused: ConfigError               # or CloudLookupError
      problems:                          # every problem, in order, without the "ha-endpoint:endpoint." prefix
        - "listeners[0].certificateRef: a TERMINATED_HTTPS listener needs ..."

``python -m tests.unit.corpus.runner`` prints, for the closing note, how many cases are refused at preview with
nothing registered and no traceback, how many of those read clearly (every problem names its key, says what is
wrong without pydantic's own phrases, and gives a fix), and the total.
"""

from __future__ import annotations

import copy
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pulumi
import yaml

ROOT_DIR = Path(__file__).resolve().parents[3]
if str(ROOT_DIR) not in sys.path:
    sys.path.insert(0, str(ROOT_DIR))

from ha_endpoint import CloudLookupError, ConfigError  # noqa: E402
from ha_endpoint.core.messages import raw_phrases  # noqa: E402
from tests.mocks import FakeCloud, run_program, run_stack  # noqa: E402
from tests.mocks.configs import amphora_endpoint  # noqa: E402

CORPUS = Path(__file__).resolve().parent
KEY = "ha-endpoint:endpoint"
# How each way of running a case names the arguments: the stack program its config key, a program's HaEndpoint the
# arguments as written there (HaEndpoint("endpoint", raw), or the second of two endpoints).
ROOTS = {"stack": KEY, "component": "HaEndpoint('endpoint').args", "two-endpoints": "HaEndpoint('second').args"}
FIX_WORDS = re.compile(r"\b(add|remove|give|set|use|write|rename|shorten|fix|list|make|ask|attach|pick|lower|raise|"
                       r"bring|allocate|create|percent-encode|change|move|hint|split)\b", re.IGNORECASE)
"""A problem says how to fix it: one of these verbs is in its message."""


@dataclass
class Case:
    id: str
    what: str
    source: str
    spec: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    refused: str = "ConfigError"
    via: str = "stack"

    @property
    def root(self) -> str:
        """What the problems' key paths start with (:data:`ROOTS`)."""
        return ROOTS[self.via]


@dataclass
class Outcome:
    """What a user saw: the error (None when the preview passed), what was registered, the problems listed."""

    error: Optional[BaseException]
    registered: list[dict]
    problems: list[str]
    second_registered: int = 0
    duplicate_urns: list[str] = field(default_factory=list)
    two_endpoints: bool = False
    root: str = KEY

    @property
    def refused_at_preview(self) -> bool:
        """Refused before anything exists: a RunError (the engine prints its message, no traceback) listing the
        problems, and nothing registered (for two endpoints: nothing of the second, no URN twice)."""
        if not isinstance(self.error, (ConfigError, CloudLookupError)) or not self.problems:
            return False
        if "Traceback" in str(self.error) or not isinstance(self.error, pulumi.RunError):
            return False
        if self.two_endpoints:  # the first endpoint stands; the second registers nothing, no URN twice
            return self.second_registered == 0 and not self.duplicate_urns
        return not self.registered

    @property
    def clear(self) -> bool:
        """Every problem names its key (under the configuration's root), has none of pydantic's phrases, and
        says how to fix it."""
        return bool(self.problems) and all(
            problem.startswith(self.root) and not any(phrase in problem for phrase in raw_phrases())
            and FIX_WORDS.search(problem.split(": ", 1)[-1]) for problem in self.problems)


SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""``yaml.safe_load``'s loader, in libyaml when PyYAML has it: the same cases, a seventh of the time (every test
worker loads the corpus twice while it collects)."""


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for spec in yaml.load(path.read_text(), Loader=SAFE_LOADER) or []:
            via = spec.get("via", "stack")
            root = ROOTS[via]
            cases.append(Case(id=spec["id"], what=spec.get("what", ""), source=path.name, spec=spec,
                              problems=[f"{root}.{p}" if not p.startswith(root) else p for p in spec.get("problems", [])],
                              refused=spec.get("refused", "ConfigError"), via=via))
    ids = [case.id for case in cases]
    duplicates = sorted({case for case in ids if ids.count(case) > 1})
    assert not duplicates, f"corpus ids used twice: {duplicates}"
    return cases


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _steps(path: str) -> list[Any]:
    return [int(index) if index else key for key, index in _STEP.findall(path)]


def _container(raw: Any, steps: list[Any]) -> Any:
    for step in steps:
        if isinstance(raw, dict) and isinstance(step, str) and step not in raw:
            raw[step] = {}
        raw = raw[step]
    return raw


def configuration(case: Case) -> Any:
    """The dev endpoint with the case's changes."""
    spec = case.spec
    if "replace" in spec:
        return copy.deepcopy(spec["replace"])
    raw = amphora_endpoint()
    for path in spec.get("unset", []):
        *head, last = _steps(path)
        del _container(raw, head)[last]
    for path, value in (spec.get("set") or {}).items():
        *head, last = _steps(path)
        _container(raw, head)[last] = copy.deepcopy(value)
    for path, value in (spec.get("append") or {}).items():
        _container(raw, _steps(path)).append(copy.deepcopy(value))
    return raw


def cloud_for(case: Case) -> FakeCloud:
    """The dev stack's fake cloud, in preview mode, with the case's changes."""
    cloud = FakeCloud.dev(preview=True)
    tweaks = case.spec.get("cloud") or {}
    for az in tweaks.get("remove_azs", []):
        cloud.azs.discard(az)
    cloud.azs.update(tweaks.get("add_azs", []))
    cloud.disabled_azs.update(tweaks.get("disable_azs", []))
    cloud.certificates.update(tweaks.get("certificates", []))
    cloud.key_manager = tweaks.get("key_manager", True)
    for subnet in tweaks.get("subnets", []):
        cloud.add_subnet(cloud.network_id(subnet["network"]), subnet["name"], subnet["cidr"])
    for name in tweaks.get("router_subnets", []):
        subnet = cloud.subnets[cloud.subnet_id(name)]
        cloud.add_port(subnet.network_id, [(subnet.id, subnet.gateway_ip)], "network:ha_router_replicated_interface",
                       cloud.router_id)
    for port_id in tweaks.get("ports", []):
        cloud.ports[port_id] = {"id": port_id, "network_id": cloud.network_id("cp"), "fixed_ips": [],
                                "device_owner": "compute:az1", "device_id": "vm", "security_groups": set()}
    return cloud


def run_case(case: Case) -> Outcome:
    """Run the case's configuration as a user would, in preview; what they saw."""
    outcome = _run(case)
    outcome.root = case.root
    return outcome


def _run(case: Case) -> Outcome:
    from ha_endpoint import HaEndpoint

    cloud = cloud_for(case)
    raw = configuration(case)
    first: list[int] = []
    try:
        if case.via == "stack":
            run_stack(cloud, config={"endpoint": raw}, preview=True)
        elif case.via == "component":
            run_program(lambda: HaEndpoint("endpoint", raw), cloud, preview=True, outputs=lambda _: {})
        elif case.via == "two-endpoints":
            def program():
                HaEndpoint("first", amphora_endpoint())
                first.append(True)
                HaEndpoint("second", raw)
            run_program(program, cloud, preview=True, outputs=lambda _: {})
        else:
            raise ValueError(f"corpus case {case.id}: unknown via {case.via!r}")
    except (ConfigError, CloudLookupError) as error:
        return _outcome(error, cloud, first)
    except Exception as error:  # anything else is what a user must never see
        return Outcome(error, list(cloud.registrations), [])
    return Outcome(None, list(cloud.registrations), [])


def _outcome(error: BaseException, cloud: FakeCloud, first: list[bool]) -> Outcome:
    registered = list(cloud.registrations)
    urns = [record["urn"] for record in registered]
    duplicates = sorted({urn for urn in urns if urns.count(urn) > 1})
    # the second endpoint registers its component (named "second") before any child: none means nothing of it
    second = sum(1 for record in registered if record["name"] == "second")
    return Outcome(error, registered, [str(problem) for problem in getattr(error, "problems", [])], second,
                   duplicates, bool(first))


def main() -> int:
    cases = load_cases()
    refused = clear = 0
    for case in cases:
        outcome = run_case(case)
        refused += outcome.refused_at_preview
        clear += outcome.refused_at_preview and outcome.clear
        if not (outcome.refused_at_preview and outcome.clear):
            print(f"  {case.source} {case.id}: {type(outcome.error).__name__ if outcome.error else 'passed'} "
                  f"{outcome.problems or str(outcome.error)[:200]}")
    print(f"bad configurations: {len(cases)} total, {refused} refused at preview (nothing registered, no "
          f"traceback), {clear} of them with clear messages (key, what is wrong, fix; no pydantic wording)")
    print(f"corpus: clear {clear} / refused at preview {refused} / total {len(cases)}")
    return 0 if clear == refused == len(cases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
