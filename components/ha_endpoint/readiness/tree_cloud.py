"""The openstacksdk side of a LoadBalancerTree: Octavia's load balancer, listener, pool and health-monitor calls over
one connection (:class:`~.cloud.OctaviaStatusSource`'s, with its re-authentication and failure classification).

openstacksdk has no call for Octavia's fully populated create, so every call here goes through the load-balancer
service's adapter with the API's own JSON; an error status becomes openstacksdk's exception, classified like every
other call (:func:`ha_endpoint.cloud.connection.classify`: 409, 5xx and lost connections transient; 404 terminal).
"""

from __future__ import annotations

from typing import Any, Optional

import openstack.exceptions as os_exc

from ..cloud.connection import http_status
from .cloud import OctaviaStatusSource, translated
from .errors import FetchFailed

KINDS = {"loadbalancer": "loadbalancers", "listener": "listeners", "pool": "pools",
         "healthmonitor": "healthmonitors"}
"""An Octavia object kind -> its collection in ``/v2/lbaas``."""


class OctaviaTreeSource(OctaviaStatusSource):
    """The calls a LoadBalancerTree makes. Attributes as :class:`~.cloud.OctaviaStatusSource`'s."""

    def _call(self, method: str, path: str, action: str, body: Optional[dict[str, Any]] = None,
              params: Optional[dict[str, Any]] = None) -> Any:
        conn = self._connection()
        self.calls += 1
        with translated(action):
            response = getattr(conn.load_balancer, method)(path, json=body, params=params or {}, raise_exc=False)
            os_exc.raise_from_response(response)
            return response.json() if response.content else None

    def get(self, kind: str, object_id: str) -> Optional[dict[str, Any]]:
        """One object (``GET /v2/lbaas/<kind>s/{id}``); none when Octavia does not know it (404) or lists it
        DELETED."""
        try:
            found = self._call("get", f"/lbaas/{KINDS[kind]}/{object_id}", f"fetching {kind} {object_id}")[kind]
        except FetchFailed as exc:
            if exc.__cause__ is not None and http_status(exc.__cause__) == 404:
                return None
            raise
        return None if found.get("provisioning_status") == "DELETED" else found

    def list(self, kind: str, **filters: Any) -> list[dict[str, Any]]:
        """Objects of ``kind`` matching ``filters`` (``GET /v2/lbaas/<kind>s?...``)."""
        described = ", ".join(f"{key} {value}" for key, value in filters.items())
        return [found for found in self._call("get", f"/lbaas/{KINDS[kind]}", f"listing {kind}s ({described})",
                                              params=filters)[KINDS[kind]]
                if found.get("provisioning_status") != "DELETED"]

    def create(self, kind: str, body: dict[str, Any], action: str) -> dict[str, Any]:
        """``POST /v2/lbaas/<kind>s``: the created object as Octavia answered it."""
        return self._call("post", f"/lbaas/{KINDS[kind]}", action, body={kind: body})[kind]

    def update(self, kind: str, object_id: str, attributes: dict[str, Any], action: str) -> None:
        """``PUT /v2/lbaas/<kind>s/{id}`` with ``attributes``."""
        self._call("put", f"/lbaas/{KINDS[kind]}/{object_id}", action, body={kind: attributes})

    def delete_load_balancer(self, load_balancer_id: str) -> bool:
        """``DELETE /v2/lbaas/loadbalancers/{id}?cascade=true`` (its listeners, pools, monitors and members with
        it); ``False`` when it was gone already."""
        try:
            self._call("delete", f"/lbaas/loadbalancers/{load_balancer_id}",
                       f"deleting load balancer {load_balancer_id} with everything under it",
                       params={"cascade": "true"})
        except FetchFailed as exc:
            if exc.__cause__ is not None and http_status(exc.__cause__) == 404:
                return False
            raise
        return True
