"""Pulumi's state in the local cloud's object storage (STATE=swift): the self-managed backend on Swift's S3 API, under
the real engine, with the environment scripts/env.sh gives it (the s3:// URL, the EC2 credential the cloud wrote).

A small program of its own (two security groups of the local cloud, tagged with the stack's identity; the second
waits ``pause`` seconds after the first is created, so a test can act while an update is under way with nothing in
flight) shows what a team sharing one bucket relies on:

1. two `pulumi up`s of one stack at once: the second is refused with Pulumi's lock message naming the first's lock
   object, and the first completes;
2. an update killed mid-way leaves its lock object: the next `up` is refused the same way; `scripts/recover.py` (what
   `make recover` runs) removes the dead lock, and `up` completes;
3. Swift's proxy stopped mid-update (localcloud's fault tools), then started again: the update fails naming the
   object storage, the state still parses, `scripts/recover.py` clears what the failed run left, and `up` completes.

After each case `pulumi stack export` parses and the security groups of the stack in the cloud are exactly those its
state records (none lost, none orphaned).
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from localcloud.swift import server as swift_server
from localcloud.testing import Cleanup, eventually
from tests.e2e.openstack_client import openstack_client_bin
from tests.e2e.pulumi_cli import REPO, PulumiStack

# Swift's proxy is stopped in test 3: every S3 request of the cloud fails meanwhile.
pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.exclusive]

LOCK_MESSAGE = "the stack is currently locked by 1 lock(s)"
PAUSE = 10  # seconds between the two security groups: the window in which each test acts

PROGRAM = '''
import time

import pulumi
import pulumi_openstack as openstack

from ha_endpoint.core.identity import StackIdentity

config = pulumi.Config()
prefix, pause = config.require("prefix"), config.get_float("pause") or 0
tag = StackIdentity(pulumi.get_project(), pulumi.get_stack()).tag
first = openstack.networking.SecGroup("first", name=f"{prefix}-first", tags=[tag], description="swift state test")


def after_pause(_):
    time.sleep(pause)
    return f"{prefix}-second"


second = openstack.networking.SecGroup("second", name=first.id.apply(after_pause), tags=[tag],
                                       description="swift state test")
pulumi.export("groups", [first.name, second.name])
'''


def swift_environment(pulumi_environment: dict[str, str], state: Path) -> tuple[dict[str, str], str]:
    """The environment and backend URL of STATE=swift, as scripts/env.sh gives them for the cloud at ``state``."""
    output = subprocess.run(["bash", "-c", ". scripts/env.sh >/dev/null && env -0"], cwd=REPO, check=True,
                            capture_output=True, env={**pulumi_environment, "STATE": "swift",
                                                      "HA_ENDPOINT_STATE": str(state)}).stdout
    pairs = dict(entry.split("=", 1) for entry in output.decode().split("\0") if "=" in entry)
    url = pairs["PULUMI_BACKEND_URL"]
    assert url.startswith("s3://pulumi-state?endpoint=http://127.0.0.1:"), url
    return {**pulumi_environment, **{k: pairs[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}}, url


@pytest.fixture()
def cloud_cleanup(localcloud):
    """A name prefix of this test's own; whatever carries it is deleted from the cloud afterwards."""
    cleanup = Cleanup(localcloud)
    yield cleanup
    leftovers = cleanup.run()
    assert not leftovers, leftovers


@pytest.fixture()
def stack(localcloud, pulumi_environment, cloud_cleanup, tmp_path):
    """A stack of the program in the shared bucket, its project and stack named for this test only; removed from the
    bucket afterwards (its groups are deleted by their prefix, cloud_cleanup)."""
    assert swift_server.read_env(localcloud.paths), "the cloud wrote no state-backend.env: run lab/localcloud/up"
    environment, url = swift_environment(pulumi_environment, localcloud.paths.root)
    name = f"swift-{uuid.uuid4().hex[:6]}"
    instance = PulumiStack.program(tmp_path / "program", f"state-{name}", name, PROGRAM, environment, backend_url=url)
    configure(instance, cloud_cleanup.name("sg"), PAUSE)
    yield instance
    localcloud.faults.clear_swift()
    instance.run("cancel", "--yes", check=False)
    instance.run("stack", "rm", "--yes", "--force", check=False)


def configure(stack: PulumiStack, prefix: str, pause: float) -> None:
    """The stack's settings, written into its file (its passphrase salt kept): no CLI run for each."""
    settings = yaml.safe_load(stack.config_file.read_text()) or {}
    project = yaml.safe_load((stack.workdir / "Pulumi.yaml").read_text())["name"]
    settings["config"] = {"openstack:cloud": "localcloud", f"{project}:prefix": prefix, f"{project}:pause": str(pause)}
    stack.config_file.write_text(yaml.safe_dump(settings))


def recorded_groups(stack: PulumiStack) -> set[str]:
    """The security groups the stack's state records (`pulumi stack export` must parse)."""
    deployment = stack.export()["deployment"]
    return {r["outputs"]["name"] for r in deployment.get("resources", [])
            if r["type"] == "openstack:networking/secGroup:SecGroup"}


def assert_state_matches_cloud(stack: PulumiStack, cloud, prefix: str) -> None:
    in_cloud = sorted(g.name for g in cloud.network.security_groups() if g.name.startswith(prefix))
    assert sorted(recorded_groups(stack)) == in_cloud, ("the state and the cloud differ", in_cloud)


def assert_nothing_lost(stack: PulumiStack, cloud, prefix: str) -> None:
    """After an interrupted update: the state parses, and every group of the stack in the cloud is in it, recorded or
    as a pending creation (the interruption came between the cloud's answer and the state's write): recovery rolls
    those back."""
    deployment = stack.export()["deployment"]
    known = {r["outputs"]["name"] for r in deployment.get("resources", [])
             if r["type"] == "openstack:networking/secGroup:SecGroup"}
    known |= {op["resource"]["inputs"].get("name") for op in deployment.get("pending_operations") or []}
    in_cloud = {g.name for g in cloud.network.security_groups() if g.name.startswith(prefix)}
    assert in_cloud <= known, ("in the cloud but not in the state", in_cloud - known, deployment)


def spawn_up(stack: PulumiStack, log: Path):
    return subprocess.Popen(["pulumi", "up", "--yes", "--non-interactive", "--skip-preview", "--stack", stack.stack],
                            cwd=stack.workdir, env=stack.env, stdin=subprocess.DEVNULL, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def first_created(cloud, prefix: str) -> None:
    """Wait until the update created the first group: it is then in its pause, nothing in flight."""
    eventually(f"{prefix}-first created", lambda: list(cloud.network.security_groups(name=f"{prefix}-first")), 120)


def recover(stack: PulumiStack) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / ".venv/bin/python"), str(REPO / "scripts/recover.py"), "--stack", stack.stack,
                           "--cwd", str(stack.workdir)], env=stack.env, capture_output=True, text=True, timeout=600)


def test_a_second_up_of_the_stack_is_refused_while_the_first_runs(stack, cloud, cloud_cleanup, tmp_path):
    prefix = cloud_cleanup.name("sg")
    first = spawn_up(stack, tmp_path / "first.log")
    first_created(cloud, prefix)
    second = stack.up(policy=False, check=False)
    assert first.wait(timeout=300) == 0, (tmp_path / "first.log").read_text()[-3000:]
    assert second.returncode != 0 and LOCK_MESSAGE in second.output, second.output[-2000:]
    assert ".pulumi/locks/" in second.output, second.output[-2000:]  # names the lock object
    assert recorded_groups(stack) == {f"{prefix}-first", f"{prefix}-second"}
    assert_state_matches_cloud(stack, cloud, prefix)


def test_a_killed_update_leaves_a_lock_that_recovery_clears(stack, cloud, cloud_cleanup, tmp_path):
    prefix = cloud_cleanup.name("sg")
    killed = spawn_up(stack, tmp_path / "killed.log")
    first_created(cloud, prefix)
    PulumiStack.kill(killed)
    refused = stack.up(policy=False, check=False)
    assert refused.returncode != 0 and LOCK_MESSAGE in refused.output, refused.output[-2000:]
    assert_nothing_lost(stack, cloud, prefix)
    recovered = recover(stack)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert "1 stale lock(s) removed" in recovered.stdout, recovered.stdout
    configure(stack, prefix, 0)
    stack.up(policy=False)
    assert recorded_groups(stack) == {f"{prefix}-first", f"{prefix}-second"}
    assert_state_matches_cloud(stack, cloud, prefix)


def test_object_storage_stopped_mid_update_fails_it_clearly_and_loses_nothing(stack, cloud, cloud_cleanup, localcloud,
                                                                             tmp_path):
    prefix = cloud_cleanup.name("sg")
    log = tmp_path / "faulted.log"
    faulted = spawn_up(stack, log)
    first_created(cloud, prefix)
    localcloud.faults.swift_proxy_stop()
    try:
        assert faulted.wait(timeout=300) != 0, log.read_text()[-3000:]
    finally:
        localcloud.faults.swift_proxy_start()
    output = log.read_text()
    endpoint = swift_server.read_env(localcloud.paths)["HA_ENDPOINT_S3_ENDPOINT"].split("//")[1]
    assert endpoint in output and "connection refused" in output, output[-3000:]
    assert_nothing_lost(stack, cloud, prefix)
    recovered = recover(stack)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    configure(stack, prefix, 0)
    stack.up(policy=False)
    assert recorded_groups(stack) == {f"{prefix}-first", f"{prefix}-second"}
    assert_state_matches_cloud(stack, cloud, prefix)
    stack.preview("--expect-no-changes", policy=False)


def team_setup_blocks() -> list[str]:
    """The shell blocks of docs/team-state.md's "A team's setup from zero": the cloud's side, then each member's
    variables."""
    page = (REPO / "docs" / "team-state.md").read_text()
    section = page.split("## A team's setup from zero", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def test_the_team_setup_from_zero_pastes_and_reaches_the_teams_bucket(stack, localcloud, tmp_path):
    """docs/team-state.md's setup as a member of the team pastes it (python-openstackclient, the project user's
    credentials of the local cloud, no admin role): the bucket, an EC2 credential and the S3 endpoint; then the
    variables block filled with what those printed, `. scripts/env.sh` and `pulumi stack ls --all` list the stack
    that another test's credentials created in the bucket."""
    cloud_side, variables = team_setup_blocks()[:2]
    shell = {**stack.env, "PATH": f"{openstack_client_bin()}:{stack.env['PATH']}",
             "OS_CLIENT_CONFIG_FILE": str(localcloud.clouds_yaml), "OS_CLOUD": "localcloud"}
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "PULUMI_BACKEND_URL", "STATE"):
        shell.pop(key, None)     # what the pasted blocks set, nothing inherited
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", cloud_side], cwd=tmp_path, env=shell,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cloud_side}\n--- output ---\n{done.stdout}{done.stderr}"
    credential = json.loads(re.search(r"^\{.*?^\}", done.stdout, re.M | re.S).group(0))
    endpoint = done.stdout.strip().splitlines()[-1]
    assert endpoint == swift_server.read_env(localcloud.paths)["HA_ENDPOINT_S3_ENDPOINT"], done.stdout
    filled = {"HA_ENDPOINT_S3_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": credential["access"],
              "AWS_SECRET_ACCESS_KEY": credential["secret"], "PULUMI_CONFIG_PASSPHRASE": "team-passphrase"}
    pasted = "\n".join(_filled(line, filled) for line in variables.splitlines())
    try:
        listed = subprocess.run(["bash", "-eo", "pipefail", "-c", f"{pasted}\n. scripts/env.sh\npulumi stack ls --all"],
                                cwd=REPO, env=shell, capture_output=True, text=True, timeout=300)
        assert listed.returncode == 0, f"{pasted}\n--- output ---\n{listed.stdout}{listed.stderr}"
        assert stack.stack in listed.stdout, listed.stdout
    finally:
        subprocess.run(["openstack", "ec2", "credentials", "delete", credential["access"]], env=shell, check=True,
                       capture_output=True, timeout=120)


def _filled(line: str, values: dict[str, str]) -> str:
    """A line of the variables block with its placeholder replaced, as a member fills it in."""
    export = re.match(r"export (\w+)=\S+(.*)", line)
    if export is None or export.group(1) not in values:
        return line
    return f"export {export.group(1)}={values[export.group(1)]}{export.group(2)}"
