"""What `make up` prints after the outputs (scripts/reach_endpoint.py): the name, the local cloud's DNS server, and a
curl line that resolves the name there; nothing of the local cloud for a stack on another cloud."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import reach_endpoint  # noqa: E402

OUTPUTS = {"fqdn": "api.example.test.", "ports": [6443], "addresses": ["172.24.4.11", "172.24.4.12"]}


def test_the_curl_line_resolves_the_name_at_the_local_clouds_dns_server():
    text = "\n".join(reach_endpoint.lines(OUTPUTS, ("127.0.0.1", 5300)))
    assert "endpoint: api.example.test port 6443 (published in DNS: 172.24.4.11, 172.24.4.12)" in text
    assert "DNS server: 127.0.0.1 port 5300" in text
    assert ("curl -sk --resolve api.example.test:6443:$(dig @127.0.0.1 -p 5300 +short api.example.test | head -n1) "
            "https://api.example.test:6443/") in text


def test_another_cloud_gets_the_name_only():
    assert reach_endpoint.lines(OUTPUTS, None) == [
        "endpoint: api.example.test port 6443 (published in DNS: 172.24.4.11, 172.24.4.12)"]


def test_a_stack_without_outputs_prints_nothing():
    assert reach_endpoint.lines({}, ("127.0.0.1", 5300)) == []


def test_the_script_reads_the_outputs_on_stdin(tmp_path):
    import json
    env = {"PATH": "/usr/bin:/bin", "OS_CLIENT_CONFIG_FILE": str(tmp_path / "elsewhere.yaml")}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "reach_endpoint.py")], input=json.dumps(OUTPUTS),
                          capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "endpoint: api.example.test port 6443 (published in DNS: 172.24.4.11, 172.24.4.12)"
