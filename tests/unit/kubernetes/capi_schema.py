"""The CRD schemas of Cluster API (v1.14.2) and CAPO (v0.14.7), fetched from their Go modules by capi/fetch.sh into the
cache, as JSON-schema validators that also refuse unknown fields (the API server would silently prune them: a
misspelled field is lost). CEL rules (x-kubernetes-validations) are the API server's: tests/e2e/test_k8s_cluster.py
applies the objects to a real one."""

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


CRD_FILES = {"Cluster": "cluster.x-k8s.io_clusters.yaml",
             "OpenStackCluster": "infrastructure.cluster.x-k8s.io_openstackclusters.yaml"}


@lru_cache(maxsize=None)
def crd(kind: str) -> dict:
    """The cached CRD of ``kind`` (a key of CRD_FILES), parsed by libyaml when PyYAML has it (the same data as
    ``yaml.safe_load``, a tenth of the time: 0.5 s -> 0.05 s for the Cluster CRD)."""
    return yaml.load((crd_dir() / CRD_FILES[kind]).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def storage_version(kind: str) -> str:
    """``group/version`` of the version the CRD of ``kind`` stores: the one new objects should be written in."""
    (stored,) = [entry["name"] for entry in crd(kind)["spec"]["versions"] if entry["storage"]]
    return f"{crd(kind)['spec']['group']}/{stored}"


@lru_cache(maxsize=None)
def validator(kind: str, version: str) -> jsonschema.Draft7Validator:
    """The validator of ``version``'s openAPIV3Schema in the cached CRD of ``kind``."""
    (served,) = [entry for entry in crd(kind)["spec"]["versions"] if entry["name"] == version and entry["served"]]
    schema = closed(copy.deepcopy(served["schema"]["openAPIV3Schema"]))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def errors(manifest: dict) -> list[str]:
    """What the CRD of ``manifest``'s kind, at its apiVersion, refuses in ``manifest`` (empty when valid)."""
    group, version = manifest["apiVersion"].split("/")
    assert group == crd(manifest["kind"])["spec"]["group"], manifest["apiVersion"]
    found = validator(manifest["kind"], version).iter_errors(manifest)
    return sorted(f"{'.'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}" for error in found)
