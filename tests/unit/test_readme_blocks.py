"""tests/e2e/readme_blocks.py: the README walk pastes each block as it is, except for the facts of the cloud it runs on
(its ports, its public network, its state directory), which it rewrites from the first cloud's to its own."""

import re
from pathlib import Path

import pytest

from localcloud.settings import BASE_PORTS
from tests.e2e.readme_blocks import FIRST, Cloud, NotRewritten, for_cloud, runnable, sh_blocks

REPO = Path(__file__).resolve().parents[2]
LANE2 = Cloud(ports={service: port + 5000 for service, port in BASE_PORTS.items()}, public_cidr="172.24.9.0/24",
              state="/cache/localcloud-exclusive")
PAGES = [REPO / "README.md", REPO / "docs" / "getting-started.md"]


def test_the_dns_port_the_public_network_and_the_state_directory_are_rewritten_and_nothing_else():
    block = ("dig @127.0.0.1 -p 5300 +short api.example.test          # the published floating IPs\n"
             "curl -sk --resolve api.example.test:6443:$(dig @127.0.0.1 -p 5300 +short api.example.test | head -n1) "
             "https://api.example.test:6443/\n"
             "curl -s http://127.0.0.1:9696/ http://localhost:9876/v2 && nc -z 127.0.0.1 5000 --port=8774\n"
             "ping -c1 172.24.4.11 && ip route get 172.24.4.0/24 # 10.172.24.4.9 is no address of it\n"
             "export OS_CLIENT_CONFIG_FILE=~/.cache/ha-endpoint/localcloud/clouds.yaml OS_CLOUD=localcloud\n"
             "ls $HOME/.cache/ha-endpoint/localcloud-exclusive ~/.cache/ha-endpoint/engine && mkdir -p ~/my-platform\n")
    with pytest.raises(NotRewritten, match=r"5000 \(the first cloud's keystone port\).*nc -z 127.0.0.1 5000"):
        for_cloud(block, LANE2)   # `nc HOST PORT`: not a form the walk knows, so not pasted against the first cloud
    block = block.replace("nc -z 127.0.0.1 5000", "nc -z 127.0.0.1:5000")
    assert for_cloud(block, LANE2) == (
        "dig @127.0.0.1 -p 10300 +short api.example.test          # the published floating IPs\n"
        "curl -sk --resolve api.example.test:6443:$(dig @127.0.0.1 -p 10300 +short api.example.test | head -n1) "
        "https://api.example.test:6443/\n"
        "curl -s http://127.0.0.1:14696/ http://localhost:14876/v2 && nc -z 127.0.0.1:10000 --port=13774\n"
        "ping -c1 172.24.9.11 && ip route get 172.24.9.0/24 # 10.172.24.4.9 is no address of it\n"
        "export OS_CLIENT_CONFIG_FILE=/cache/localcloud-exclusive/clouds.yaml OS_CLOUD=localcloud\n"
        "ls $HOME/.cache/ha-endpoint/localcloud-exclusive ~/.cache/ha-endpoint/engine && mkdir -p ~/my-platform\n")
    assert for_cloud(block, FIRST) == block   # on the first cloud, as pasted


def test_a_first_clouds_fact_in_a_form_not_rewritten_fails_the_walk_rather_than_reach_the_first_cloud():
    for line, named in (("dig @127.0.0.1 -p5300 x", None), ("dig -p 53 x", None), ("sleep 5300", "named port"),
                        ("nc 127.0.0.1 5300", "named port"), ("ls $HA_ENDPOINT_CACHE/localcloud/", "state directory"),
                        ("cat /root/.cache/ha-endpoint/localcloud/env.sh", "state directory")):
        if named is None:
            for_cloud(line, LANE2)
        else:
            with pytest.raises(NotRewritten, match=named):
                for_cloud(line, LANE2)


def test_the_pages_blocks_name_the_first_clouds_dns_port_which_is_what_the_walk_rewrites():
    """The pages' blocks as they are today: the DNS port is the one fact they name (the `dig` and `curl` lines), it is
    rewritten in each place, and the walk's blocks on another cloud differ from the pasted ones in nothing else."""
    blocks = [runnable(block) for page in PAGES for block in sh_blocks(page.read_text())]
    assert blocks and not any(block.lstrip().startswith("make test") for block in blocks)
    rewritten = [for_cloud(block, LANE2) for block in blocks]
    changed = [(a, b) for a, b in zip(blocks, rewritten) if a != b]
    assert changed, "no block names the DNS server's port any more: is the rewriting still needed?"
    for pasted, walked in changed:
        assert walked.replace("-p 10300", "-p 5300") == pasted, (pasted, walked)
        assert "5300" not in walked
    # what the blocks run names no port or address of an instance (the scripts find the cloud through
    # HA_ENDPOINT_STATE, which the walk sets; the stack files name it `localcloud`): nothing there to rewrite
    for name in ("Pulumi.dev.yaml", "examples/python/__main__.py", "scripts/env.sh", "scripts/stack.sh"):
        text = (REPO / name).read_text()
        assert not re.search(r"172\.24\.\d+\.|\b5300\b", text), name
        if name.endswith((".yaml", ".py")):
            assert for_cloud(text, LANE2) == text, name
