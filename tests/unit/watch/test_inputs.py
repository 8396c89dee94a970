"""The watcher's command line refuses what would make it misbehave (a busy loop, a stack it cannot compare), with
argparse's exit status 2 and a message that says what to give; the checks the Kubernetes Deployment runs are these."""

from __future__ import annotations

import pytest

from ha_endpoint.watch.__main__ import main
from ha_endpoint.watch.inputs import default, refusal


@pytest.mark.parametrize("argv, message", [
    (["--interval", "0"], "argument --interval: must be a number of seconds above 0, e.g. 5 (got 0)"),
    (["--connect-timeout", "nan"], "argument --connect-timeout: must be a number of seconds above 0, e.g. 5 (got nan)"),
    (["--unhealthy-polls", "0"], "argument --unhealthy-polls: must be a whole number of polls, at least 1, e.g. 3 "
                                 "(got 0)"),
    (["--healthy-polls", "two"], "argument --healthy-polls: must be a whole number of polls, at least 1, e.g. 3 "
                                 "(got two)"),
    (["--stack", "prod"], "argument --stack: must be <project>/<stack>, e.g. ha-endpoint/dev (got 'prod')"),
])
def test_a_value_the_watcher_cannot_run_with_stops_it_before_it_starts(capsys, argv, message):
    with pytest.raises(SystemExit) as stopped:
        main(["--outputs", "-", *argv])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().endswith(f"error: {message}")
    option = argv[0][2:].replace("-", "_")
    assert refusal(option, argv[1]) == message.split(": ", 1)[1]  # the same words, without exiting


def test_what_it_takes_and_its_defaults():
    assert refusal("interval", "0.5") is None and refusal("dry_run", True) is None
    assert refusal("stack", "ha-endpoint/dev") is None
    assert refusal("no_such_option", "1") == "unrecognized arguments: --no-such-option 1"
    assert (default("interval"), default("unhealthy_polls"), default("connect_timeout")) == (5.0, 3, 2.0)


@pytest.mark.parametrize("command", ["ha_endpoint.watch", "ha_endpoint.agent"])
def test_outputs_that_are_not_json_are_refused_naming_the_option(command, tmp_path):
    """What a user pastes by mistake (a table instead of `pulumi stack output --json`): exit 2, one line naming
    --outputs and the command to run, no traceback; the watcher and the agent read the outputs one way."""
    import subprocess
    import sys

    pasted = tmp_path / "outputs.txt"
    pasted.write_text("Current stack outputs (2):\n    OUTPUT  VALUE\n")
    extra = ["--cluster", "c", "--namespace", "n"] if command.endswith("agent") else []
    done = subprocess.run([sys.executable, "-m", command, "--outputs", str(pasted), *extra], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"--outputs {pasted}: not JSON" in done.stderr and "pulumi stack output --json" in done.stderr


def test_outputs_a_program_cannot_serve_are_refused_naming_what_to_give(tmp_path, capsys):
    """The watcher keeps an A record, so outputs without ``fqdn`` are refused; the member agent writes members through
    its ``--backend``'s client, so zones of another backend are refused: exit 2 before anything is asked."""
    import json

    from ha_endpoint.agent.__main__ import main as agent_main

    octavia = tmp_path / "octavia.json"
    octavia.write_text(json.dumps({"zones": {"az1": {"loadbalancerId": "lb1", "poolIds": {"6443": "p1"}}}}))
    assert main(["--outputs", str(octavia)]) == 2
    assert "the outputs have no fqdn: the watcher keeps the endpoint's A record" in capsys.readouterr().err
    keepalived = tmp_path / "keepalived.json"
    keepalived.write_text(json.dumps({"fqdn": "api.example.", "ports": [6443],
                                      "zones": {"az1": {"vipPortId": "vip1", "floatingIp": "172.24.4.11"}}}))
    assert agent_main(["--outputs", str(keepalived), "--cluster", "c"]) == 2
    assert "--backend octavia: the outputs' zones (az1) are the keepalived backend's" in capsys.readouterr().err
