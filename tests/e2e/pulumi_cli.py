"""The real Pulumi CLI, driven from tests: one stack of a private copy of the project.

The copy holds the program, the component and the policy pack as they are in the work tree, and links the
project's virtualenv; the stack's state lives in a file backend of its own, so a test run never touches the dev
stack. The environment is the one `scripts/env.sh` gives every Pulumi command of the project (the engine built by
lab/engine/build.sh, the local cloud's clouds.yaml).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import yaml

from tests import recover_script

REPO = Path(__file__).resolve().parents[2]
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "components", "stacks", "policies")
CONFIG_KEY = "ha-endpoint:endpoint"


def project_environment() -> dict[str, str]:
    """The environment of `scripts/env.sh`, read once from a bash that sourced it, without its backend: that one
    (``$HA_ENDPOINT_CACHE/pulumi-state``) is the user's, where `make up` keeps the dev stack. Every test stack brings
    a backend of its own (:class:`PulumiStack`); a command run without one fails rather than write there."""
    output = subprocess.run(
        ["bash", "-c", ". scripts/env.sh >/dev/null && env -0"], cwd=REPO, check=True, capture_output=True
    ).stdout
    pairs = dict(entry.split("=", 1) for entry in output.decode().split("\0") if "=" in entry)
    pairs.pop("PULUMI_BACKEND_URL", None)
    return {**pairs, "PULUMI_CONFIG_PASSPHRASE": "e2e-only-passphrase"}  # the test stacks' own


@dataclass
class Result:
    """What one CLI command printed, and how it ended."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class CommandFailed(AssertionError):
    def __init__(self, result: Result):
        errors = [line for line in result.output.splitlines() if "error" in line.lower() or "mandatory" in line]
        super().__init__(f"`pulumi {' '.join(result.args)}` exited {result.returncode} after "
                         f"{result.seconds:.1f}s:\n" + "\n".join(errors[:40]) + f"\n...\n{result.output[-3000:]}")
        self.result = result


class PulumiStack:
    """A stack of a private copy of the project, with its own file backend."""

    def __init__(self, workdir: Path, stack: str, environment: dict[str, str], backend: Optional[Path] = None,
                 backend_url: Optional[str] = None):
        """``backend``: the file backend's directory (default: ``workdir/.backend``); two stacks given the same one
        can read each other through a StackReference. ``backend_url``: another backend instead (e.g. the s3:// one of
        STATE=swift, its credentials in ``environment``)."""
        self.workdir = workdir
        self.stack = stack
        self.backend = backend or workdir / ".backend"
        if backend_url is None:
            self.backend.mkdir(parents=True, exist_ok=True)
        # TMPDIR: the Kubernetes provider leaves a kubeconfig file there at each run (scripts/stack.sh says why); the
        # stack's own, inside the test's directory
        (workdir / ".tmp").mkdir(parents=True, exist_ok=True)
        self.env = {**environment, "PULUMI_BACKEND_URL": backend_url or f"file://{self.backend}",
                    "PULUMI_SKIP_CONFIRMATIONS": "true", "PULUMI_DEBUG_COMMANDS": "true",  # enables `--event-log`
                    "TMPDIR": str(workdir / ".tmp")}
        self.prefix: list[str] = []
        """A command prefix every CLI command runs under (e.g. ``ip netns exec <client namespace>``)."""

    @classmethod
    def create(cls, workdir: Path, stack: str, environment: dict[str, str]) -> "PulumiStack":
        workdir.mkdir(parents=True, exist_ok=True)
        for name in PROJECT_FILES:
            source, target = REPO / name, workdir / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, target)
        (workdir / ".venv").symlink_to(REPO / ".venv")
        instance = cls(workdir, stack, environment)
        instance.run("stack", "init", stack, "--non-interactive")
        return instance

    @classmethod
    def program(cls, workdir: Path, project: str, stack: str, source: str, environment: dict[str, str],
                backend_url: Optional[str] = None) -> "PulumiStack":
        """A stack of a small Python program of its own (``source`` as its ``__main__.py``) in the project's
        virtualenv, rather than of a copy of the project (``backend_url``: as in the constructor)."""
        workdir.mkdir(parents=True)
        (workdir / "Pulumi.yaml").write_text(yaml.safe_dump({
            "name": project, "runtime": {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}}))
        (workdir / "__main__.py").write_text(source)
        (workdir / ".venv").symlink_to(REPO / ".venv")
        instance = cls(workdir, stack, environment, backend_url=backend_url)
        instance.run("stack", "init", stack, "--non-interactive")
        return instance

    def set_secret(self, key: str, value: str, path: bool = False) -> None:
        """``pulumi config set --secret`` (``--path`` for a structured key), the value after ``--`` (it may start
        with dashes, as PEM text does)."""
        subprocess.run([*self.prefix, "pulumi", "config", "set", "--secret", *(["--path"] if path else []), "--stack", self.stack,
                        key, "--", value], cwd=self.workdir, env=self.env, check=True, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=120)

    @property
    def config_file(self) -> Path:
        return self.workdir / f"Pulumi.{self.stack}.yaml"

    def write_config(self, endpoint: dict[str, Any], extra: Optional[dict[str, Any]] = None) -> None:
        """Replace the stack's configuration with this endpoint setting (plus provider settings)."""
        config = {"openstack:cloud": self.env.get("OS_CLOUD", "localcloud"), CONFIG_KEY: endpoint, **(extra or {})}
        self.config_file.write_text(yaml.safe_dump({"config": config}, sort_keys=False))

    def run(self, *args: str, check: bool = True, timeout: float = 900) -> Result:
        argv = [*args, "--stack", self.stack] if args[:2] != ("stack", "init") else list(args)
        started = time.monotonic()
        # in a session of its own: on timeout the whole group goes (the CLI's language host, plugins and dynamic
        # providers were left running as orphans when only the CLI was killed)
        proc = subprocess.Popen([*self.prefix, "pulumi", *argv], cwd=self.workdir, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        result = Result(argv, proc.returncode, stdout, stderr, time.monotonic() - started)
        if check and result.returncode != 0:
            (self.workdir / "last-failure.log").write_text(result.output)
            raise CommandFailed(result)
        return result

    def preview(self, *extra: str, policy: bool = True, check: bool = True) -> Result:
        return self.run("preview", "--non-interactive", "--diff", *self._policy(policy), *extra, check=check)

    def up(self, *extra: str, policy: bool = True, check: bool = True) -> Result:
        return self.run("up", "--yes", "--non-interactive", "--skip-preview", *self._policy(policy), *extra,
                        check=check)

    def refresh(self, *extra: str, check: bool = True) -> Result:
        return self.run("refresh", "--yes", "--non-interactive", "--skip-preview", *extra, check=check)

    def destroy(self, check: bool = True) -> Result:
        return self.run("destroy", "--yes", "--non-interactive", "--skip-preview", check=check)

    def outputs(self) -> dict[str, Any]:
        return json.loads(self.run("stack", "output", "--json", "--show-secrets").stdout)

    def export(self) -> dict[str, Any]:
        return json.loads(self.run("stack", "export").stdout)

    def export_after_kill(self) -> dict[str, Any]:
        """The state a killed `pulumi up` left, read as `make recover` reads it: a kill while the file backend writes
        can leave an empty `.attrs` sidecar or a truncated checkpoint (every CLI command then fails with "failed to
        load checkpoint: EOF", seen once in CI); scripts/recover.py's `repair_checkpoint` puts the files right first
        (the pending operations stay as the kill left them)."""
        recover = recover_script.load()
        recover.repair_checkpoint(self.stack, recover.project_name(self.workdir), self.env["PULUMI_BACKEND_URL"])
        return self.export()

    def resources(self) -> list[dict[str, Any]]:
        return self.export()["deployment"].get("resources", [])

    def spawn_up(self, event_log: Path) -> subprocess.Popen:
        """Start `pulumi up` in its own process group (so that a test can kill it whole) writing an event log."""
        argv = ["pulumi", "up", "--yes", "--non-interactive", "--skip-preview", "--stack", self.stack,
                "--event-log", str(event_log)]
        return subprocess.Popen(argv, cwd=self.workdir, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        """SIGKILL the CLI and every plugin it started (they run in process groups of their own, so the whole
        process tree is collected first): an interruption as abrupt as a lost machine, leaving no process behind."""
        tree = [process.pid, *_descendants(process.pid)]
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait(timeout=30)

    def _policy(self, enabled: bool) -> list[str]:
        return ["--policy-pack", str(self.workdir / "policies")] if enabled else []


ENDPOINT_KEY = "ha-endpoint:endpoint"


def refused(stack: PulumiStack, raw: dict, *expected: str) -> Result:
    """A real preview of the endpoint ``raw`` on ``stack``, refused naming ``ha-endpoint:endpoint.<e>`` (the key, then
    the message and its fix) for every ``e`` of ``expected`` (one preview reports every problem of a configuration
    at once), without a traceback; what it printed."""
    stack.write_config(raw)
    result = stack.preview(check=False)
    assert result.returncode != 0
    text = " ".join(result.output.split())
    missing = [e for e in expected if f"{ENDPOINT_KEY}.{e}" not in text]
    assert not missing, f"not reported: {missing}\n{result.output[-4000:]}"
    assert "Traceback" not in result.output
    return result


def patched_openstack_plugin() -> Path:
    """The OpenStack plugin built with lab/engine/openstack/patches: the opt-in engine part "openstack-patched", which
    lab/engine/build.sh builds (or reuses from its cache) and whose cache dir it prints last."""
    out = subprocess.run(["lab/engine/build.sh", "--part", "openstack-patched"], cwd=REPO, check=True,
                         capture_output=True, text=True, timeout=3600)
    return Path(out.stdout.strip().splitlines()[-1]) / "plugins" / "pulumi-resource-openstack"


def with_openstack_plugin(environment: dict[str, str], plugin: Path, home: Path) -> dict[str, str]:
    """``environment`` with a PULUMI_HOME of its own (``home``) in which ``plugin`` is the OpenStack plugin, under the
    version its build recorded (both variants report 5.5.3: a stack moves between them with no change)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**environment, "PULUMI_HOME": str(home)}
    version = (plugin.parents[1] / "openstack-plugin-version").read_text().strip()
    subprocess.run(["pulumi", "plugin", "install", "resource", "openstack", version, "--file", str(plugin),
                    "--reinstall"], env=env, check=True, capture_output=True)
    return env


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), children first."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, queue = [], list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def read_events(event_log: Path) -> list[dict[str, Any]]:
    """The engine events of an `--event-log` file, in order; a partly written last line is ignored."""
    events = []
    if not event_log.exists():
        return events
    for line in event_log.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


SDK_SHUTDOWN = ("KeyboardInterrupt", "Resource monitor has terminated")
"""How the Pulumi SDK's own shutdown ends: once a step has failed, the CLI (v3.274.1) interrupts the program
(SIGINT, so ``KeyboardInterrupt`` wherever it was) or closes the resource monitor under registrations still in
flight (the SDK's "Resource monitor has terminated")."""


CHAIN_LINKS = ("During handling of the above exception", "The above exception was the direct cause")


def program_failures(output: str) -> list[str]:
    """The exceptions that ended a Python traceback in ``output`` other than the SDK's own shutdown: the last
    exception of each chain (``During handling ...``/``... direct cause ...`` link a chain), as printed. An empty
    list means the program raised nothing of its own, whatever the CLI cut short."""
    lines = output.splitlines()
    finals: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() != "Traceback (most recent call last):":
            index += 1
            continue
        indent = len(line) - len(line.lstrip())
        index += 1
        while index < len(lines) and (not lines[index].strip()
                                      or len(lines[index]) - len(lines[index].lstrip()) > indent):
            index += 1
        exception = lines[index].strip() if index < len(lines) else "(cut off)"
        after = lines[index + 1:]
        next_traceback = next((at for at, later in enumerate(after)
                               if later.strip() == "Traceback (most recent call last):"), len(after))
        linking = [later.strip() for later in after[:next_traceback] if later.strip()][-1:]
        chained = bool(linking) and linking[0].startswith(CHAIN_LINKS)
        if not chained:
            finals.append(exception)
        index += 1
    return [final for final in finals if not any(mark in final for mark in SDK_SHUTDOWN)]
