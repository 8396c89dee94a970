"""The package's errors: one root class, and the errors a user can act on that name where the problem is (a config key
path) and how to fix it.

Every exception the package raises is a :class:`HaEndpointError` (a caller can catch them all with it): the
configuration's and the lookups' problems here, the cloud layer's (:mod:`ha_endpoint.cloud.errors`), the readiness
gates' (:mod:`ha_endpoint.gates.errors`) and the Kubernetes add-on's. Those the user fixes are a :class:`UserError`.
"""

from __future__ import annotations

from dataclasses import dataclass


class HaEndpointError(Exception):
    """The root of every exception of the ha_endpoint package."""


class UserError(HaEndpointError):
    """An error the user fixes (the configuration, the cloud, the program's environment), whose message says how: the
    Pulumi engine prints it alone, without a Python traceback, which would only point into this package.

    The engine tells such an error by its class, ``pulumi.RunError``; the core imports no Pulumi, so the package's
    entry (:mod:`ha_endpoint.pulumi_types`, which every import of the package runs first) puts ``pulumi.RunError``
    among this class's bases."""


class MissingKubernetesSdk(UserError, ImportError):
    """``ha_endpoint.kubernetes`` was imported without pulumi-kubernetes installed. Defined here, not there, so that a
    caller can name it although that package cannot be imported; still an ``ImportError`` (the idiom for an optional
    dependency: ``except ImportError``) and a :class:`UserError` (the engine prints the message without a
    traceback)."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: the key path it is at and a message that says how to fix it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


SHOWN = 20
"""The most problems a message lists; ``problems`` keeps them all."""


class ProblemsError(UserError):
    """An error that lists problems: a heading with their count, at most :data:`SHOWN` of them, then how many more.

    A :class:`UserError`, so that the Pulumi engine prints the message alone, without a Python traceback.
    """

    HEADING = "problems"

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        count = len(self.problems)
        heading = f"{self.HEADING} ({count} problem{'s' if count != 1 else ''}):"
        shown = [f"  - {problem}" for problem in self.problems[:SHOWN]]
        if count > SHOWN:
            shown.append(f"  ... and {count - SHOWN} more (fix these first; the same check lists the rest)")
        super().__init__("\n".join([heading, *shown]))


class ConfigError(ProblemsError):
    """Invalid endpoint configuration. Raised before any resource is registered."""

    HEADING = "invalid endpoint configuration"


class CloudLookupError(ProblemsError):
    """A name or id in the configuration does not exist in the cloud (or is ambiguous there). Raised before any
    resource is registered."""

    HEADING = "cloud lookup failed"
