"""The state backend scripts/env.sh chooses (STATE=file or STATE=swift), and scripts/recover.py reading the locks of
the s3 backend (the local cloud's Swift behind it: tests/e2e/test_swift_state_engine.py)."""

import json
import subprocess
from pathlib import Path

import pytest

from tests import recover_script

REPO = Path(__file__).resolve().parents[2]
recover = recover_script.load()


def sourced(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A bash that sourced scripts/env.sh, printing its backend and S3 key id."""
    return subprocess.run(["bash", "-c", '. scripts/env.sh && echo "$PULUMI_BACKEND_URL $AWS_ACCESS_KEY_ID"'],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HA_ENDPOINT_CACHE": str(tmp_path),
                               **env})


def test_swift_state_is_the_bucket_the_local_cloud_wrote(tmp_path):
    state = tmp_path / "localcloud"
    state.mkdir()
    (state / "state-backend.env").write_text(
        "HA_ENDPOINT_S3_ENDPOINT=http://127.0.0.1:8080\nHA_ENDPOINT_S3_BUCKET=pulumi-state\n"
        "HA_ENDPOINT_S3_REGION=RegionOne\nAWS_ACCESS_KEY_ID=abc\nAWS_SECRET_ACCESS_KEY=def\n")
    out = sourced(tmp_path, STATE="swift", HA_ENDPOINT_STATE=str(state))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["s3://pulumi-state?endpoint=http://127.0.0.1:8080&region=RegionOne&use_path_style=true"
                                  "&response_checksum_validation=when_required", "abc"]


def test_a_teams_variables_win_over_the_local_cloud(tmp_path):
    out = sourced(tmp_path, STATE="swift", HA_ENDPOINT_S3_ENDPOINT="https://swift.example.com",
                  HA_ENDPOINT_S3_BUCKET="team", AWS_ACCESS_KEY_ID="team-key", HA_ENDPOINT_STATE="/nonexistent")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("s3://team?endpoint=https://swift.example.com&region=RegionOne&"), out.stdout
    assert out.stdout.split()[1] == "team-key"


def test_the_default_is_a_folder_here(tmp_path):
    out = sourced(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == f"file://{tmp_path}/pulumi-state"


@pytest.mark.parametrize("env, names", [
    ({"STATE": "swift", "HA_ENDPOINT_STATE": "/nonexistent"}, ["HA_ENDPOINT_S3_ENDPOINT", "make localcloud"]),
    ({"STATE": "s3"}, ["STATE=s3 is not a state backend", "STATE=swift"]),
])
def test_a_backend_that_cannot_be_set_stops_with_the_fix(tmp_path, env, names):
    out = sourced(tmp_path, **env)
    assert out.returncode == 2 and all(name in out.stderr for name in names), out.stderr


LISTING = """<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>pulumi-state</Name>
<Contents><Key>team/.pulumi/locks/organization/p/dev/1111.json</Key></Contents>
<Contents><Key>team/.pulumi/locks/organization/p/dev/2222.json</Key></Contents>
<IsTruncated>false</IsTruncated></ListBucketResult>"""


def test_the_s3_backends_lock_objects_are_read_under_its_prefix(monkeypatch):
    requests = []

    def get(self, path, query):
        requests.append((path, query))
        if query:
            return LISTING.encode()
        return json.dumps({"pid": 7, "hostname": path.rsplit("/", 1)[1]}).encode()
    monkeypatch.setattr(recover.S3Bucket, "_get", get)
    url = "s3://pulumi-state/team?endpoint=http://127.0.0.1:8080&region=RegionOne&use_path_style=true"
    holders = recover.lock_holders("dev", "p", url)
    assert holders == [(".pulumi/locks/organization/p/dev/1111.json", {"pid": 7, "hostname": "1111.json"}),
                       (".pulumi/locks/organization/p/dev/2222.json", {"pid": 7, "hostname": "2222.json"})]
    assert requests[0] == ("/pulumi-state", {"list-type": "2", "prefix": "team/.pulumi/locks/organization/p/dev/"})
    assert requests[1] == ("/pulumi-state/team/.pulumi/locks/organization/p/dev/1111.json", {})


def test_an_s3_backend_without_an_endpoint_is_refused_naming_the_option():
    with pytest.raises(SystemExit, match="no endpoint= option"):
        recover.S3Bucket.from_url("s3://pulumi-state?region=RegionOne")
