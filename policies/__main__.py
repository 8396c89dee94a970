"""Serve the ha-endpoint policy pack (the Pulumi CLI runs this for `pulumi preview --policy-pack policies`)."""

import sys
from pathlib import Path

# The CLI runs `python policies/`: put the project root on the path for `policies.*` (the shared `ha_endpoint`
# package is installed in the project's virtualenv).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.pack import PACK_NAME, policies  # noqa: E402

PolicyPack(name=PACK_NAME, policies=policies(), enforcement_level=EnforcementLevel.MANDATORY)
