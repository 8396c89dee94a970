"""Which cloud and region a gate or drain polls: the same as the OpenStack provider of the resources it waits for.

Inputs (stored in state): ``cloud`` and ``region`` (optional) and ``cloud_source``, how the component decided them
(see :class:`ha_endpoint.core.plan.PollTarget`): ``readiness`` (given explicitly), ``provider`` (the explicit OpenStack
provider's own ``cloud``/``region``) or ``stack`` (the default provider's: the stack's ``openstack:cloud`` and
``openstack:region``, which the dynamic provider reads from the stack configuration it is configured with, then
``OS_CLOUD``). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .inputs import InputError

SOURCES = ("readiness", "provider", "stack")


@dataclass(frozen=True)
class CloudTarget:
    """A clouds.yaml entry and region; None leaves the choice to the environment (``OS_CLOUD``, ``OS_REGION_NAME``)."""

    cloud: Optional[str] = None
    region: Optional[str] = None


def stack_defaults(config: Any) -> CloudTarget:
    """The default provider's cloud and region from the stack configuration a dynamic provider is configured with."""
    if config is None:
        return CloudTarget()
    return CloudTarget(_text(config.get("openstack:cloud")), _text(config.get("openstack:region")))


def resolve(props: Mapping[str, Any], stack: CloudTarget) -> CloudTarget:
    """The cloud and region to poll for a gate's or drain's inputs; :class:`InputError` when it cannot be told."""
    cloud, region = _text(props.get("cloud")), _text(props.get("region"))
    source = props.get("cloud_source") or "stack"
    if source not in SOURCES:
        raise InputError("cloud_source", f"must be one of {', '.join(SOURCES)}, got {source!r}")
    if source == "provider" and cloud is None:
        raise InputError("cloud", "the OpenStack provider given to the endpoint names no clouds.yaml entry "
                          "(its `cloud` is unset), so the readiness gates and drains cannot poll the same cloud as "
                          "its resources; give that provider `cloud` (and `region`), or set readiness.cloud and "
                          "readiness.region to the clouds.yaml entry and region of that cloud")
    if source == "stack":
        return CloudTarget(cloud or stack.cloud, region or stack.region)
    return CloudTarget(cloud, region)


class StackConfigured:
    """Mixin for the dynamic providers: keeps the stack's default cloud and region from ``configure``, and checks
    that a bag of inputs says where to poll (a failure as ``(property, reason)``, or None)."""

    stack = CloudTarget()
    """The default provider's cloud and region (``openstack:cloud``/``openstack:region``), set by ``configure``."""

    def configure(self, req: Any) -> None:
        self.stack = stack_defaults(getattr(req, "config", None))

    def target_failure(self, news: Mapping[str, Any], unknown: Any) -> Optional[tuple[str, str]]:
        """Why ``news`` cannot say which cloud to poll (None when it can, or when ``unknown`` says a value is not
        known yet, at preview)."""
        if any(unknown(news.get(key)) for key in ("cloud", "region", "cloud_source")):
            return None
        try:
            resolve(news, self.stack)
        except InputError as exc:
            return exc.property, exc.reason
        return None


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None
