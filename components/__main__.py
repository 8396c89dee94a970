"""The component package's provider host: serves HaEndpoint to every Pulumi language (PulumiPlugin.yaml).

Pulumi's Python component provider host (``pulumi.provider.experimental``), with the schema inferred from
HaEndpoint's typed arguments (checked in as ``schema.json``), under the package name of the component's type token
(``haendpoint``), so an endpoint has one type in every language and the policy pack finds it by that token. What it
adds to ``component_provider_host`` (integer inputs, the readiness gates and drains served here): ha_endpoint.hosting.
"""

import sys

from ha_endpoint.hosting import serve

if __name__ == "__main__":
    serve(sys.argv[1:])
