"""A stack of your own using the HA endpoint from its Python package (its own components/ folder stays its own).

    venv/bin/pip install <path or git URL of ha-endpoint> -r requirements.txt && pulumi up
"""

import pulumi

from ha_endpoint import DnsArgs, EndpointArgs, HaEndpoint, ListenerArgs, MemberArgs, MonitorArgs, ZoneArgs
from ha_endpoint.args import MonitorType

azs = ["az1", "az2", "az3"]
endpoint = HaEndpoint("my-api", EndpointArgs(
    name="my-api",  # its own name and record: it runs beside the dev stack
    floating_network="public",  # names or ids; Outputs of resources declared beside work too (examples/same-stack)
    zones={az: ZoneArgs(subnet=f"cp-{az}") for az in azs},
    listeners=[ListenerArgs(port=6443, monitor=MonitorArgs(type=MonitorType.HTTPS, path="/readyz"))],
    members=[MemberArgs(name=f"cp-{n}", az=az, address=f"10.10.{n}.10") for n, az in enumerate(azs, start=1)],
    dns=DnsArgs(dns_zone="example.test.", record="my-api"),
))

# the stack program's output names, so that examples/stack-reference reads this stack as it reads the dev stack
pulumi.export("fqdn", endpoint.fqdn)
pulumi.export("ports", endpoint.ports)
pulumi.export("addresses", endpoint.addresses)
pulumi.export("zones", endpoint.zones)
