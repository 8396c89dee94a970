"""Cluster API's own CRD schemas (v1.9.0, fetched from its Go module by capi/fetch.sh into the cache), as JSON-schema
validators that also refuse unknown fields (the API server would silently prune them: a misspelled field is lost)."""

from __future__ import annotations

import copy
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

HERE = Path(__file__).resolve().parent
FETCH = HERE / "capi" / "fetch.sh"


def crd_dir() -> Path:
    """The cached CRD directory; fetched now if absent (make test fetches it first: mk/kubernetes.mk)."""
    done = subprocess.run([str(FETCH)], capture_output=True, text=True, timeout=600, env=dict(os.environ))
    if done.returncode != 0:
        raise RuntimeError(f"{FETCH} failed ({done.returncode}): {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that lists its properties (and does not say
    it keeps unknown fields)."""
    if isinstance(schema, dict):
        schema = {key: closed(value) for key, value in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    return schema


@lru_cache(maxsize=None)
def validator(crd_file: str, version: str) -> jsonschema.Draft7Validator:
    """The validator of ``version``'s openAPIV3Schema in the cached CRD file ``crd_file``."""
    crd = yaml.safe_load((crd_dir() / crd_file).read_text())
    (served,) = [entry for entry in crd["spec"]["versions"] if entry["name"] == version]
    schema = closed(copy.deepcopy(served["schema"]["openAPIV3Schema"]))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def cluster_errors(manifest: dict) -> list[str]:
    """What Cluster API v1.9.0's Cluster v1beta1 schema refuses in ``manifest`` (empty when valid)."""
    found = validator("cluster.x-k8s.io_clusters.yaml", "v1beta1").iter_errors(manifest)
    return sorted(f"{'.'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}" for error in found)
