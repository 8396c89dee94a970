"""The README walked as a newcomer walks it: every shell block README.md tells a user to paste, then every one of the
getting-started page it leads to (docs/getting-started.md, its next steps), run as pasted, in that order, against the
local cloud, then the examples in the combination the pages suggest.

The blocks are read from the two files themselves (a ``sh`` block added to either is run here; the other pages'
blocks are shown, not walked): each runs in ``bash -eo pipefail`` in a
copy of this checkout's tracked files (the blocks write stack files such as ``Pulumi.second.yaml``, and
``pulumi stack select --create`` writes a salt into ``Pulumi.dev.yaml``: never into the checkout under test), with a
home of its own (``~/my-platform``), the engine and cloud state of this machine (``HA_ENDPOINT_CACHE``) and a Pulumi
file backend of its own, so the ``dev`` stack here is not the user's. The one command not run is ``make test``: it
is the suite this test is part of.

What each block's comment promises is checked on what it printed (the published addresses, the member that
answered, the outputs); then the README's combination: ``examples/stack-reference`` reading the stack of
``examples/python`` (which exports the program's output names for that purpose) and reading the dev stack, as its
docstring suggests. Everything is destroyed at the end, also when a block fails.

The cloud: one of its own, never the first one (marker ``own_cloud``: a `make test` lane 2.. runs it, on that lane's
cloud instance, tests/schedule.py). The first cloud is the user's: `make up` keeps the dev stack there, under the very
names the walk creates (``api.example.test.``, load balancers ``k8s-api-*``), and the walk stops its node cp-1. So the
blocks run as pasted except for one rewriting, of exactly the facts that differ between the first cloud and the one
the walk runs on (tests/e2e/readme_blocks.py ``for_cloud``): its ports (the DNS server's 5300 in the ``dig`` and
``curl`` lines becomes 5300 + the cloud's port offset), its public network's prefix (172.24.4. becomes that cloud's,
e.g. 172.24.9.) and its state directory (``~/.cache/ha-endpoint/localcloud``); the environment points every script at
that cloud as a user's shell would (``HA_ENDPOINT_STATE``, ``LOCALCLOUD_PORT_OFFSET``), and what the blocks print
(`make up`'s DNS server line, the addresses) is checked against that cloud's facts.

Run on the first cloud (``HA_ENDPOINT_TEST_CLOUDS=1``, or pytest by hand) it runs when none of the README's endpoints
exists there, and is skipped, saying why, when one does (your dev stack: it is never touched). On a cloud of its own,
an endpoint of the README's already there is a failure (an interrupted walk's leftovers), never a skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from localcloud.settings import PORT_OFFSET, PORTS
from localcloud.testing import Cleanup
from tests.e2e.cloud_checks import loadbalancers_named
from tests.e2e.pulumi_cli import REPO
from tests.e2e.readme_blocks import Cloud, for_cloud, runnable, sh_blocks

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.own_cloud]  # never the user's (first) cloud

README = (REPO / "README.md").read_text()
GETTING_STARTED = (REPO / "docs" / "getting-started.md").read_text()
SH_BLOCKS = sh_blocks(README) + sh_blocks(GETTING_STARTED)
PREFIXES = ("k8s-api", "my-api", "kube-api")
"""The README's endpoint names: the dev stack's (and its second stack's, k8s-api-2), the Python example's and the k8s
stack's."""
NAMES = ("api.example.test.", "api-2.example.test.", "my-api.example.test.", "readme-reader.example.test.",
         "readme-dev-reader.example.test.", "kube.example.test.")


class Walk:
    """The sandbox the blocks run in: a copy of the checkout, a home, a backend."""

    def __init__(self, root: Path, cloud_state: Path):
        self.checkout, self.home, self.state = root / "checkout", root / "home", root / "state"
        for path in (self.home, self.state):
            path.mkdir()
        files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        for name in files.decode().split("\0"):
            if name and (REPO / name).is_file():
                (self.checkout / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, self.checkout / name)
        # this checkout's virtualenv, brought up to date here first: the blocks' `make up` runs `make _venv` in the
        # copy, which would otherwise reinstall the editable ha_endpoint into it from the copy's components/ (gone with
        # tmp_path) whenever its stamp is older than requirements.txt or pyproject.toml
        subprocess.run(["make", "--no-print-directory", "-s", "_venv"], cwd=REPO, check=True, timeout=900)
        (self.checkout / ".venv").symlink_to(REPO / ".venv")
        self.environment = {key: value for key, value in os.environ.items()
                            if not key.startswith(("PULUMI_", "PYTEST_", "OS_"))}
        self.environment.update(
            HOME=str(self.home), HA_ENDPOINT_CACHE=os.environ.get("HA_ENDPOINT_CACHE",
                                                                  str(Path.home() / ".cache/ha-endpoint")),
            HA_ENDPOINT_STATE=str(cloud_state), LOCALCLOUD_PORT_OFFSET=str(PORT_OFFSET),   # the cloud it runs on
            PULUMI_BACKEND_URL=f"file://{self.state}", PIP_CACHE_DIR=str(Path.home() / ".cache/pip"),
            PULUMI_SKIP_UPDATE_CHECK="true", MAKEFLAGS="", CI="true")
        self.log: list[str] = []

    def run(self, script: str, timeout: float = 900, cwd: Path | None = None) -> str:
        """Run ``script`` as a user pastes it (bash, stop at the first failing command); its output."""
        started = time.monotonic()
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd or self.checkout,
                              env=self.environment, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        output = done.stdout + done.stderr
        self.log.append(f"$ {script.strip()}\n[{done.returncode}, {time.monotonic() - started:.0f} s]")
        assert done.returncode == 0, f"README block failed (exit {done.returncode}):\n{script}\n--- output ---\n" \
                                     f"{output[-6000:]}"
        return output

    def pulumi(self, project: Path, *args: str) -> str:
        """A Pulumi command in ``project`` in the README's shell (scripts/env.sh sourced, the passphrase set)."""
        quoted = " ".join(f"'{arg}'" for arg in args)
        return self.run(f'. "{self.checkout}/scripts/env.sh" && export PULUMI_CONFIG_PASSPHRASE=choose-one && '
                        f'pulumi {quoted}', cwd=project)


def _objects_named(localcloud) -> list[str]:
    conn = localcloud.conn
    found = [lb.name for prefix in PREFIXES for lb in loadbalancers_named(conn, prefix)]
    for zone in conn.dns.zones(name="example.test."):
        found += [f"{r.name} {r.type}" for r in conn.dns.recordsets(zone) if r.name in NAMES]
    return found


def test_the_readme_has_the_blocks_a_newcomer_pastes():
    """The README's first screen: the two commands and what `make up` leaves (dig, curl); then the getting-started
    page's next steps (the walk below runs whatever blocks there are)."""
    first = SH_BLOCKS[0].splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make up", "make test"], first
    assert len(sh_blocks(README)) == 2 and sh_blocks(README)[1].startswith("dig "), sh_blocks(README)
    assert "docs/getting-started.md#next-steps" in README
    assert GETTING_STARTED.index("## Next steps") < GETTING_STARTED.index(SH_BLOCKS[2])
    assert len(SH_BLOCKS) == 6, [block.splitlines()[0] for block in SH_BLOCKS]  # the walk's checks name six


def this_cloud(localcloud) -> Cloud:
    """The facts of the cloud this test runs on, as the blocks name them: its ports, its public network (read from the
    cloud's seeded subnet), its state directory."""
    public = localcloud.admin.network.find_subnet("public-subnet", ignore_missing=False)
    return Cloud(ports=dict(PORTS), public_cidr=public.cidr, state=str(localcloud.paths.root))


def test_every_pasted_block_runs_and_the_examples_run_together(tmp_path, localcloud, pulumi_environment):
    before = _objects_named(localcloud)
    if before and PORT_OFFSET == 0:
        pytest.skip(f"the README's endpoints exist on the first cloud (your dev stack, from `make up`?): {before[:6]}; "
                    "the walk creates the same names and stops node cp-1, so it runs on a cloud of its own "
                    "(`make test` with HA_ENDPOINT_TEST_CLOUDS=2 or 3, the default) or here after `make down`")
    assert not before, (f"the README's endpoints already exist on this test cloud ({localcloud.paths.root}, a walk "
                        f"that was interrupted?): {before}; `HA_ENDPOINT_STATE={localcloud.paths.root} "
                        "lab/localcloud/reset` wipes it")
    cloud = this_cloud(localcloud)
    blocks = [for_cloud(runnable(block), cloud) for block in SH_BLOCKS]   # the one change to what is pasted
    address = re.compile(rf"(?<![\d.]){re.escape(cloud.public_prefix)}\d+\b")
    walk = Walk(tmp_path, localcloud.paths.root)
    platform, readers = walk.home / "my-platform", []
    try:
        outputs = [walk.run(block) for block in blocks]
        first, query, next_steps, shell, second, consumer = outputs[:6]

        # make up: the outputs, the name, this cloud's DNS server (the port the walk's dig lines ask) and the curl line
        assert "api.example.test" in first and f"127.0.0.1 port {cloud.ports['named']}" in first, first[-3000:]
        assert f"-p {cloud.ports['named']} " in first and "curl" in first, first[-3000:]
        # dig: the three zones' floating IPs, on this cloud's public network; curl: a control-plane node answering
        # with its name and AZ
        assert len(set(address.findall(query))) == 3, query
        assert re.search(r"^cp-\d az[123]$", query, re.M), query
        # next steps: the outputs as JSON, the cloud's status with its chassis
        assert '"fqdn": "api.example.test."' in next_steps and "chassis az2" in next_steps, next_steps[-3000:]
        # the CLI of this project in the user's shell
        assert shell.strip().splitlines()[-1] == "api.example.test.", shell
        # a second stack of this program, up then down
        assert "api-2.example.test" in second and "k8s-api-2" in second, second[-3000:]
        assert not loadbalancers_named(localcloud.conn, "k8s-api-2-"), "the second stack's make down left LBs"
        # your own project: its stack's outputs are the program's output names
        platform_outputs = json.loads(walk.pulumi(platform, "stack", "output", "--json"))
        assert platform_outputs["fqdn"] == "my-api.example.test." and len(platform_outputs["addresses"]) == 3

        # the combination: examples/stack-reference reads the Python example's stack, and the dev stack
        for stack, reads in (("readme-reader", "organization/my-platform/dev"),
                             ("readme-dev-reader", "organization/ha-endpoint/dev")):
            reader = walk.home / stack
            reader.mkdir()
            for name in ("Pulumi.yaml", "__main__.py", "requirements.txt"):
                shutil.copy2(walk.checkout / "examples/stack-reference" / name, reader / name)
            (reader / "venv").symlink_to(platform / "venv")  # the same two SDKs its requirements.txt names
            walk.pulumi(reader, "stack", "init", stack, "--non-interactive")
            readers.append(reader)
            walk.pulumi(reader, "config", "set", "endpointStack", reads)
            walk.pulumi(reader, "config", "set", "openstack:cloud", "localcloud")
            walk.pulumi(reader, "up", "--yes", "--non-interactive")
            got = json.loads(walk.pulumi(reader, "stack", "output", "--json"))
            endpoint = "my-api" if "my-platform" in reads else "api"
            assert got["apiUrl"] == f"https://{endpoint}.example.test:6443", got
            assert got["alias"] == f"{stack}.example.test.", got
            published = platform_outputs["addresses"] if endpoint == "my-api" else \
                json.loads(walk.run("scripts/stack.sh outputs"))["addresses"]
            assert {rule.split("/")[0] for rule in got["egress"]} >= set(published), got
    finally:
        for reader in reversed(readers):
            _quietly(walk.pulumi, reader, "destroy", "--yes", "--non-interactive")
        if (platform / "Pulumi.dev.yaml").exists() or (walk.state / ".pulumi/stacks/my-platform").exists():
            _quietly(walk.pulumi, platform, "destroy", "--yes", "--non-interactive")
        if (walk.checkout / "Pulumi.second.yaml").exists():
            _quietly(walk.run, "STACK=second PULUMI_CONFIG_PASSPHRASE=choose-one make down")
        _quietly(walk.run, "make down")
        _quietly(walk.run, "lab/localcloud/fault member-up cp-1")
        print("\n".join(walk.log))
    left = _objects_named(localcloud)
    sweep = Cleanup(localcloud)
    for prefix in (*PREFIXES, "readme-"):
        sweep.prefix = prefix
        left += sweep.run()
    assert not left, f"the walk's destroys left: {left}"


def _quietly(call, *args) -> None:
    """A clean-up step: its failure is logged (the walk's own failure is what the test reports)."""
    try:
        call(*args)
    except AssertionError as failed:
        print(f"clean-up step failed: {str(failed)[:2000]}")
